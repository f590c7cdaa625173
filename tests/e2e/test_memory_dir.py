"""The memory dir the real agent uses equals `memd paths`, in every setting.

Read from the "Contents of <dir>/MEMORY.md" header of the first request, so
each case writes a one-line index where memd says memory lives. The cases
of a release run two at a time, each in its own HOME and repository.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import git
from tests.e2e.harness import Project, agent_index, two_at_a_time
from tests.e2e.releases import Release

CASES = ("root", "subdir", "worktree", "config-dir", "settings-dir", "disabled")


def _settings(home: Path, data: dict[str, object]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@dataclass(frozen=True, slots=True)
class Seen:
    """One case's run: memd's memory dir and whether memory is on, and the agent's."""

    memory_dir: Path
    enabled: bool
    loaded: tuple[str, str] | None


def _run(project: Project, case: str) -> Seen:
    """Set `case` up around `project` and run the release once."""
    root = project.root.parent
    env, cwd = project.env, project.root
    if case == "subdir":
        cwd = project.root / "src" / "deep"
        cwd.mkdir(parents=True)
    elif case == "worktree":
        cwd = root / "wt"
        git("worktree", "add", "-q", str(cwd), cwd=project.root, env=env)
    elif case == "config-dir":
        env = {**env, "CLAUDE_CONFIG_DIR": str(root / "config")}
    elif case == "settings-dir":
        _settings(Path(env["HOME"]), {"autoMemoryDirectory": str(root / "chosen")})
    elif case == "disabled":
        _settings(Path(env["HOME"]), {"autoMemoryEnabled": False})
    paths = json.loads(
        project.memd("paths", "--format", "json", env=env, cwd=cwd).stdout
    )
    memory = Path(paths["memory_dir"])
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "MEMORY.md").write_text(f"- [{case}]({case}.md) marker\n")
    model, _ = project.run_agent([], env=env, cwd=cwd)
    return Seen(memory, paths["enabled"], agent_index(model))


@pytest.fixture(name="seen", scope="module")
def _seen(
    release: Release, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Future[Seen]]:
    return two_at_a_time(release, tmp_path_factory, CASES, _run)


@pytest.mark.parametrize("case", CASES)
def test_memory_dir_equals(seen: dict[str, Future[Seen]], case: str) -> None:
    """The agent loads MEMORY.md from the dir memd names (or none when off)."""
    run = seen[case].result()

    assert (case != "disabled") == run.enabled
    if not run.enabled:
        assert run.loaded is None
    else:
        assert run.loaded is not None
        marker = f"- [{case}]({case}.md) marker"
        assert (str(run.memory_dir).rstrip(os.sep), marker) == run.loaded
