"""The history tests' project: a git repo and its (empty) memory directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location


@pytest.fixture(name="memory")
def _memory(git_repo: Path) -> Path:
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    return path
