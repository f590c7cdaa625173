"""A real `memd run` re-checks memory when the project's HEAD moves (off saves)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memd.state import remember_project
from memd.truth.notice import read_report
from tests.truth.conftest import Project
from tests.truth.test_check import history

pytestmark = pytest.mark.daemon


def wait_for(predicate: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    pytest.fail("timed out")


def test_head_moving_is_rechecked(tmp_path: Path, start_daemon: object) -> None:
    """A commit removing a path a memory names shows in the report within a sweep."""
    from memd.claude_code.paths import auto_mem_path
    from tests.conftest import git

    root = tmp_path / "code" / "webshop"
    root.mkdir(parents=True)
    git("init", "-q", cwd=root)
    memory = Path(auto_mem_path(str(root)))
    memory.mkdir(parents=True)
    project = Project(root=root, memory=memory)
    history(project)
    project.memory_file("project_k.md", "Kept: `src/keep.py`.\n")
    state = os.path.join(os.environ["XDG_STATE_HOME"], "memd")
    cache = os.path.join(os.environ["XDG_CACHE_HOME"], "memd")
    remember_project(state, str(project.root))
    daemon = start_daemon(MEMD_SWEEP_SECONDS="1")  # type: ignore[operator]

    wait_for(lambda: read_report(cache, str(project.memory)) is not None)
    before = read_report(cache, str(project.memory))
    (project.root / "src" / "keep.py").unlink()
    project.commit("drop keep")
    wait_for(lambda: (read_report(cache, str(project.memory)) or {}).get("gone_files"))
    after = read_report(cache, str(project.memory))
    checked = daemon.events("truth_checked")  # type: ignore[attr-defined]

    assert before is not None
    assert after is not None
    assert [] == before["gone_files"]
    assert ["project_k.md"] == after["gone_files"]
    assert 2 <= len(checked)
    assert json.dumps(after)
