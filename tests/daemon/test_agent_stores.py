"""Other agents' own memory with the real `memd run`: recorded, the loss alarm, restore.

Codex CLI's `$CODEX_HOME/memories/`, Gemini CLI's `~/.gemini/GEMINI.md` and a
project's `~/.gemini/tmp/<id>/memory/` are real directories in the test's
HOME. Emptying Codex's memory summary, deleting Gemini's project store and
emptying its GEMINI.md each fire the loss alarm; `memd restore` brings each
back byte for byte; memd never wrote any of them meanwhile.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from memd.history.store import History
from tests.daemon.conftest import MEMD, Starter, backdate, wait_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Home


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _recorded(home: Home) -> set[str]:
    state = home.state / "memd"
    if not (state / "history").exists():
        return set()
    with History.open(str(state)) as history:
        return {c.memory_dir for c in history.changes()}


def _first_rev(home: Home, directory: Path) -> int:
    with History.open(str(home.state / "memd")) as history:
        return min(c.rev for c in history.changes(str(directory)))


def _session_start(env: dict[str, str], cwd: Path, agent: str) -> str:
    payload = {"session_id": f"s-{agent}", "cwd": str(cwd), "hook_event_name": "x"}
    done = subprocess.run(
        [*MEMD, "hook", "session-start", "--agent", agent],
        input=json.dumps(payload),
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_other_agents_stores_are_kept_lost_and_restored(
    start_daemon: Starter, isolated_home: Home, git_repo: Path
) -> None:
    codex = isolated_home.home / ".codex" / "memories"
    (codex / "rollout_summaries").mkdir(parents=True)
    (codex / "memory_summary.md").write_text("- uses pnpm\n- deploys to alpha-7\n" * 4)
    (codex / "MEMORY.md").write_text("# Codex memory\n" + "- a fact\n" * 40)
    (codex / "raw_memories.md").write_text("raw notes\n" * 60)
    (codex / "rollout_summaries" / "one.md").write_text("what happened\n")
    gemini = isolated_home.home / ".gemini"
    project = gemini / "tmp" / "repo" / "memory"
    project.mkdir(parents=True)
    (project.parent / ".project_root").write_text(str(git_repo))
    (gemini / "projects.json").write_text(
        json.dumps({"projects": {str(git_repo): "repo"}})
    )
    (project / "MEMORY.md").write_text("- [Build](build.md) — make\n")
    (project / "build.md").write_text("Build with make.\n")
    (gemini / "GEMINI.md").write_text("## Gemini Added Memories\n- likes tabs\n")
    (gemini / "settings.json").write_text("{}\n")
    backdate(codex, project, gemini)
    before = {d: _files(d) for d in (codex, project)}
    gemini_md = (gemini / "GEMINI.md").read_bytes()

    daemon = start_daemon(CODEX_HOME=str(isolated_home.home / ".codex"))
    wait_for(
        lambda: {str(codex), str(project), str(gemini)} <= _recorded(isolated_home),
        what="the first record of each store",
    )
    status = daemon.memd("status")
    assert "Codex CLI memories" in status.stdout
    assert "Gemini CLI memory of ~/" in status.stdout or str(git_repo) in status.stdout

    (codex / "memory_summary.md").write_text("")  # the part Codex injects, emptied
    shutil.rmtree(project)
    (gemini / "GEMINI.md").write_text("\n")
    wait_for(lambda: len(daemon.events("memory_loss")) >= 3, what="three losses")
    losses = {
        str(e["memory_dir"]): str(e["loss"]) for e in daemon.events("memory_loss")
    }
    assert "memory_summary.md" in losses[str(codex)]
    assert "MEMORY.md" in losses[str(project)]
    assert "GEMINI.md" in losses[str(gemini)]
    # Each agent is told its own losses once, at its next session start.
    said = _session_start(daemon.env, git_repo, "codex")
    assert "memory_summary.md, all Codex CLI loads, was deleted or emptied" in said
    assert "`memd restore --loss " in said  # exactly what that loss took
    assert "GEMINI.md" not in said
    assert "memory_summary.md" not in _session_start(daemon.env, git_repo, "codex")
    told = _session_start(daemon.env, git_repo, "gemini")
    assert "GEMINI.md, all Gemini CLI loads" in told
    assert "MEMORY.md, all Gemini CLI loads" in told
    assert 2 == told.count("`memd restore --loss ")

    for directory in (codex, project, gemini):
        first = _first_rev(isolated_home, directory)
        done = daemon.memd(
            "restore", "--all", "--project", str(directory), "--rev", str(first)
        )
        assert done.returncode == 0, done.stderr
    assert {d: _files(d) for d in (codex, project)} == before
    assert (gemini / "GEMINI.md").read_bytes() == gemini_md
    assert (gemini / "settings.json").read_text() == "{}\n"  # not its to keep
    daemon.assert_alive()


def test_a_store_made_after_start_is_kept_too(
    start_daemon: Starter, isolated_home: Home
) -> None:
    """Codex turns memories on, Gemini registers a project: both are seen."""
    (isolated_home.home / ".codex").mkdir()
    registered = isolated_home.home / ".gemini" / "tmp" / "later"
    registered.mkdir(parents=True)
    daemon = start_daemon(CODEX_HOME=str(isolated_home.home / ".codex"))
    codex = isolated_home.home / ".codex" / "memories"
    codex.mkdir()
    (codex / "memory_summary.md").write_text("- uses pnpm\n")
    project = registered / "memory"
    project.mkdir()
    (project / "MEMORY.md").write_text("- [Build](build.md) — make\n")

    wait_for(
        lambda: {str(codex), str(project)} <= _recorded(isolated_home),
        what="the new stores recorded",
    )
    daemon.assert_alive()
