"""The memory dir the real agent uses equals `memd paths`, in every setting.

Read from the "Contents of <dir>/MEMORY.md" header of the first request, so
each case writes a one-line index where memd says memory lives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.e2e.harness import Project, agent_index


def _settings(home: Path, data: dict[str, object]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "case", ["root", "subdir", "worktree", "config-dir", "settings-dir", "disabled"]
)
def test_memory_dir_equals(project: Project, case: str, tmp_path: Path) -> None:
    """The agent loads MEMORY.md from the dir memd names (or none when off)."""
    env = project.env
    cwd = project.root
    home = Path(env["HOME"])
    if case == "subdir":
        cwd = project.root / "src" / "deep"
        cwd.mkdir(parents=True)
    elif case == "worktree":
        cwd = tmp_path / "wt"
        git("worktree", "add", "-q", str(cwd), cwd=project.root)
    elif case == "config-dir":
        env = {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "config")}
    elif case == "settings-dir":
        _settings(home, {"autoMemoryDirectory": str(tmp_path / "chosen")})
    elif case == "disabled":
        _settings(home, {"autoMemoryEnabled": False})
    memory = project.memory_dir(env=env, cwd=cwd)
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "MEMORY.md").write_text(f"- [{case}]({case}.md) marker\n")
    enabled = json.loads(
        project.memd("paths", "--format", "json", env=env, cwd=cwd).stdout
    )["enabled"]

    model, _ = project.run_agent([], env=env, cwd=cwd)
    loaded = agent_index(model)

    assert (case != "disabled") == enabled
    if not enabled:
        assert loaded is None
    else:
        assert loaded is not None
        assert (str(memory).rstrip(os.sep), f"- [{case}]({case}.md) marker") == loaded
