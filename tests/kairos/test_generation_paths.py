"""A generation writes only relpaths the one path rule (memd.relpath) accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.errors import DreamError
from memd.kairos.generations import apply_generation

REFUSED = (
    "../x.md",
    ".git/config",
    ".GIT./x.md",
    "a\\b.md",
    "sub\u2215x.md",
    "/abs.md",
)


@pytest.mark.parametrize("relpath", REFUSED)
def test_a_path_the_rule_refuses_changes_nothing(tmp_path: Path, relpath: str) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [a](a.md) - a\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    with pytest.raises(DreamError, match="refusing to write"):
        apply_generation(
            str(tmp_path / "state"),
            str(memory),
            {relpath: (None, b"x\n")},
            {},
            created="2026-12-01T00:00:00",
        )

    after = sorted(
        p.relative_to(tmp_path)
        for p in tmp_path.rglob("*")
        if "state" not in p.relative_to(tmp_path).parts
    )
    assert before == after
    assert "- [a](a.md) - a\n" == (memory / "MEMORY.md").read_text()
