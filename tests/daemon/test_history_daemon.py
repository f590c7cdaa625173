"""History with the real `memd run`: the loss case end to end, five writers at once."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

from memd.claude_code.paths import resolve_memory_location
from memd.history.store import History
from tests.daemon.conftest import MEMD, TIMEOUT, Starter, backdate, topic, wait_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Home


def _memory_of(project: Path) -> Path:
    memory = Path(resolve_memory_location(str(project)).memory_dir)
    memory.mkdir(parents=True, exist_ok=True)
    return memory


def _files(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(memory).parts)
    }


def _changes(home: Home, memory: Path) -> list[object]:
    state = home.state / "memd"
    if not (state / "history").exists():
        return []
    with History.open(str(state)) as history:
        return list(history.changes(str(memory)))


def _session_start(env: dict[str, str], project: Path, session: str) -> str:
    payload = {
        "session_id": session,
        "cwd": str(project),
        "hook_event_name": "SessionStart",
    }
    done = subprocess.run(
        [*MEMD, "hook", "session-start"],
        input=json.dumps(payload),
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


DELETER = """
import os, sys
memory = sys.argv[1]
for i in range(2, 25):
    os.unlink(os.path.join(memory, f"topic_{i:02}.md"))
with open(os.path.join(memory, "MEMORY.md"), "w") as index:
    index.write("- [T0](topic_00.md) - kept\\n- [T1](topic_01.md) - kept\\n")
"""


def test_a_mass_deletion_is_caught_told_once_and_restored(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory = _memory_of(git_repo)
    index = []
    for i in range(25):
        name = f"topic_{i:02}.md"
        (memory / name).write_text(topic(f"t{i}", body=f"Fact number {i}.\n" * 20))
        index.append(f"- [T{i}]({name}) — fact {i}\n")
    (memory / "MEMORY.md").write_text("".join(index))
    backdate(memory)
    before = _files(memory)
    daemon = start_daemon()
    wait_for(lambda: _changes(isolated_home, memory), what="the first record")
    first = _changes(isolated_home, memory)
    assert [c.cause for c in first] == ["stopped"]  # type: ignore[attr-defined]

    subprocess.run([sys.executable, "-c", DELETER, str(memory)], check=True)
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    loss = daemon.events("memory_loss")[0]
    assert loss["loss"] == "23 memory files were deleted"
    assert loss["cause"] == "edit"

    status = daemon.memd("status")
    assert "23 memory files were deleted" in status.stdout, status.stdout
    said = _session_start(daemon.env, git_repo, "session-one")
    context = json.loads(said)["hookSpecificOutput"]["additionalContext"]
    match = re.search(
        rf"memd: in {re.escape(str(git_repo.resolve()))}, 23 memory files were"
        r" deleted at \S+ \(by an edit\); `(memd restore [^`]+)`",
        context,
    )
    assert match is not None, context
    again = _session_start(daemon.env, git_repo, "session-two")
    assert "were deleted" not in again  # told once

    argv = shlex.split(match.group(1))
    assert argv[1:3] == ["restore", "--loss"]  # the loss's exact revision
    done = subprocess.run(
        [*MEMD, *argv[1:]],
        env=daemon.env,
        cwd=git_repo,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert _files(memory) == before
    wait_for(
        lambda: [c.cause for c in _changes(isolated_home, memory)][:1] == ["restore"],  # type: ignore[attr-defined]
        what="the restore recorded",
    )
    daemon.assert_alive()


def _team_remote(tmp_path: Path) -> Path:
    """A bare remote whose main branch already holds one team memory."""
    remote = tmp_path / "team.git"
    seed = tmp_path / "seed"
    run = {"check": True, "capture_output": True}
    subprocess.run(
        ["git", "init", "-q", "--bare", "--initial-branch=main", str(remote)], **run
    )
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(seed)], **run)
    (seed / "MEMORY.md").write_text(
        "- [Team fact](team_fact.md) — what the team knows\n"
    )
    (seed / "team_fact.md").write_text(
        topic(
            "team_fact",
            type_="project",
            body="The team fact.\n\n**Why:** shared.\n\n**How to apply:** always.\n",
        )
    )
    subprocess.run(["git", "-C", str(seed), "add", "-A"], **run)
    subprocess.run(["git", "-C", str(seed), "commit", "-qm", "seed"], **run)
    subprocess.run(["git", "-C", str(seed), "push", "-q", str(remote), "main"], **run)
    return remote


def test_a_file_history_survives_writers_at_once(
    start_daemon: Starter, git_repo: Path, isolated_home: Home, tmp_path: Path
) -> None:
    remote = _team_remote(tmp_path)
    memory = _memory_of(git_repo)
    (memory / "MEMORY.md").write_text(
        "- [Shared](shared.md) — the file everyone writes\n"
    )
    (memory / "shared.md").write_text(topic("shared"))
    backdate(memory)
    daemon = start_daemon()
    wait_for(lambda: _changes(isolated_home, memory), what="the first record")
    stop = threading.Event()

    def agent() -> None:  # direct writes, as the agent's Write tool makes them
        n = 0
        while not stop.is_set():
            (memory / "agent.md").write_text(topic("agent", body=f"Fact {n}.\n"))
            n += 1
            time.sleep(0.05)

    def by_hand() -> None:
        for n in range(10):
            with open(memory / "shared.md", "a") as out:
                out.write(f"hand edit {n}\n")
            time.sleep(0.07)

    writers = [threading.Thread(target=agent), threading.Thread(target=by_hand)]
    for writer in writers:
        writer.start()
    (memory / "crlf.md").write_bytes(topic("crlf").replace("\n", "\r\n").encode())
    team = daemon.memd(
        "team", "init", "--remote", str(remote), "--project", str(git_repo)
    )
    fix = daemon.memd("fix", str(memory))
    mcp = subprocess.run(
        [sys.executable, "-c", MCP_WRITE, str(git_repo)],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    stop.set()
    for writer in writers:
        writer.join()
    assert team.returncode == 0, team.stderr
    assert fix.returncode == 0, fix.stderr
    assert mcp.returncode == 0, mcp.stderr
    final = _files(memory)

    def settled() -> bool:
        with History.open(str(isolated_home.state / "memd")) as history:
            tree = history.recorded_tree(str(memory))
            rev = history.last_rev(str(memory))
            return all(
                history.file_at(str(memory), rel, rev) == data
                for rel, data in final.items()
            ) and set(tree) == set(final)

    wait_for(settled, what="every write recorded")
    changes = _changes(isolated_home, memory)
    causes: dict[str, set[str]] = {}
    for change in changes:
        for file in change.files:  # type: ignore[attr-defined]
            causes.setdefault(file.relpath, set()).add(change.cause)  # type: ignore[attr-defined]
    assert "fix" in causes["crlf.md"]
    assert causes["user_mcp-note.md"] == {"mcp"}
    assert causes["agent.md"] == {"edit"}
    assert causes["shared.md"] <= {"stopped", "edit"}
    assert causes["MEMORY.md"] <= {"stopped", "fix", "mcp"}
    assert causes["team/team_fact.md"] == {"team-sync"}
    with History.open(str(isolated_home.state / "memd")) as history:
        shared = [
            history.file_at(str(memory), "shared.md", c.rev)  # type: ignore[attr-defined]
            for c in reversed(history.changes(str(memory), relpath="shared.md"))
        ]
    assert shared[-1] == final["shared.md"]
    assert all(b"hand edit" in v for v in shared[1:] if v)  # type: ignore[operator]
    daemon.assert_alive()


MCP_WRITE = """
import os, sys
from memd.mcp_server.tools import open_project, write_memory
project = open_project(sys.argv[1], os.environ)
write_memory(project, "mcp note", "A note the MCP server wrote", "user", "Body.\\n")
"""


def test_a_deleted_memory_directory_is_a_loss_and_comes_back(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    import shutil

    memory = _memory_of(git_repo)
    for i in range(5):
        (memory / f"topic_{i}.md").write_text(topic(f"t{i}", body=f"Fact {i}.\n" * 20))
    (memory / "MEMORY.md").write_text("- [T0](topic_0.md) — fact\n")
    backdate(memory)
    before = _files(memory)
    daemon = start_daemon()
    wait_for(lambda: _changes(isolated_home, memory), what="the first record")
    [first] = _changes(isolated_home, memory)
    shutil.rmtree(memory)
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    assert daemon.events("memory_loss")[0]["loss"] == "5 memory files were deleted"
    done = daemon.memd(
        "restore",
        "--all",
        "--project",
        str(memory),
        "--rev",
        str(first.rev),  # type: ignore[attr-defined]
    )
    assert done.returncode == 0, done.stderr
    assert _files(memory) == before
    daemon.assert_alive()
