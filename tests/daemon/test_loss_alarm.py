"""The loss alarm with the real `memd run` and real files (issue 41, classes 2 and 3).

memd's own work (fix moving entries into hubs, fix --undo, a dream and its
undo) raises no alarm; files cut to almost nothing do; the count is exactly
the files the loss took; the command it names restores exactly those, byte
for byte, and nothing written after; a loss restored or dismissed is shown
as such and no longer told.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from memd.history.store import History
from memd.kairos.daily_log import append_entry
from tests.daemon.conftest import MEMD, Daemon, Starter, backdate, wait_for
from tests.daemon.test_history_daemon import _files, _memory_of, _session_start

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Home

TYPES = ("user", "feedback", "project", "reference")


def _corpus(memory: Path, count: int) -> None:
    """`count` topic files, each a distinct fact, and an index linking every one."""
    lines = []
    for i in range(count):
        name = f"topic_{i:03}.md"
        (memory / name).write_text(
            f"---\nname: Topic {i}\ndescription: A memory about subject {i}\n"
            f"type: {TYPES[i % 4]}\n---\nFact number {i}: subject {i} matters.\n"
        )
        lines.append(f"- [Topic {i}]({name}) — subject {i} and what it means\n")
    (memory / "MEMORY.md").write_text("".join(lines))


def _history(home: Home) -> History:
    return History.open(str(home.state / "memd"))


def _causes(home: Home, memory: Path) -> list[str]:
    if not (home.state / "memd" / "history").exists():
        return []
    with _history(home) as history:
        return [c.cause for c in history.changes(str(memory))]


def _settled(home: Home, memory: Path) -> bool:
    """The history holds the directory exactly as it is on disk."""
    on_disk = _files(memory)
    with _history(home) as history:
        rev = history.last_rev(str(memory))
        tree = history.recorded_tree(str(memory))
        return set(tree) == set(on_disk) and all(
            history.file_at(str(memory), rel, rev) == data
            for rel, data in on_disk.items()
        )


def _run(daemon: Daemon, *args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [*MEMD, *args],
        env=daemon.env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _no_alarm(daemon: Daemon, home: Home, memory: Path, project: Path) -> None:
    """Nothing anywhere says memory was lost: log, history, status, SessionStart."""
    wait_for(lambda: _settled(home, memory), what="every change recorded")
    time.sleep(0.5)  # a settle the daemon might still be judging
    assert daemon.events("memory_loss") == []
    with _history(home) as history:
        assert history.changes(str(memory), losses_only=True) == []
        assert history.losses() == []
    assert daemon.status()["losses"] == []
    said = _session_start(daemon.env, project, "s-no-alarm")
    assert "memd restore" not in said


def _watched(
    start: Starter, project: Path, home: Home, count: int, *, more: str = ""
) -> tuple[Path, Daemon]:
    """A memory of `count` topic files (and `more` index lines), `memd run` on it."""
    memory = _memory_of(project)
    _corpus(memory, count)
    with open(memory / "MEMORY.md", "a") as index:
        index.write(more)
    backdate(memory)
    daemon = start()
    wait_for(lambda: _causes(home, memory), what="the first record")
    return memory, daemon


def _own_change(
    daemon: Daemon, home: Home, memory: Path, project: Path, cause: str, *argv: str
) -> str:
    """Run memd's own change `argv`, recorded as `cause`; it must raise nothing."""
    said = _run(daemon, *argv)
    wait_for(lambda: _causes(home, memory)[:1] == [cause], what=f"the {cause} recorded")
    _no_alarm(daemon, home, memory, project)
    return said


def test_fix_on_a_213_entry_index_and_its_undo_raise_no_alarm(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 213)
    own = (daemon, isolated_home, memory, git_repo)

    said = _own_change(*own, "fix", "fix", str(memory))
    assert "entries moved into 4 hub file(s)" in said, said
    assert len(list(memory.glob("index-*.md"))) == 4

    _own_change(*own, "fix-undo", "fix", "--undo", str(memory))
    assert not list(memory.glob("index-*.md"))
    daemon.assert_alive()


def test_a_dream_and_its_undo_raise_no_alarm(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    # A topic file an older memd filed: one fact repeated day after day, which
    # the dream merges into one (the file shrinks by 90 %; nothing is lost).
    memory = _memory_of(git_repo)
    (memory / "ops.md").write_bytes(
        b"---\nname: Ops\ndescription: How the project is run\ntype: project\n"
        b"---\nIntro.\n"
        + b"".join(
            f"\n## 2026-{1 + n // 28:02}-{1 + n % 28:02}\n\n- 09:00 the wiki is at"
            f" w.example <!-- memd:entry {n:016x} -->\n".encode()
            for n in range(150)
        )
    )
    memory, daemon = _watched(
        start_daemon,
        git_repo,
        isolated_home,
        30,
        more="- [Ops](ops.md) — how the project is run\n",
    )
    own = (daemon, isolated_home, memory, git_repo)
    day = datetime.now().replace(hour=9, minute=0, second=0, microsecond=0)
    append_entry(str(memory), "#ops the wiki is at w.example", now=day)
    for tag in ("feedback", "project", "reference", "user"):
        for n in range(3):
            append_entry(
                str(memory),
                f"[{tag}] #{tag}-topic {tag} fact {n}: the detail worth keeping",
                now=day,
            )
    wait_for(lambda: _settled(isolated_home, memory), what="the log recorded")
    before = _files(memory)

    _own_change(*own, "dream", "dream", "--now", "--project", str(git_repo))
    created = set(_files(memory)) - set(before)
    assert len(created) >= 3, created  # the undo deletes as many files
    assert len((memory / "ops.md").read_bytes()) * 5 < len(before["ops.md"])

    _own_change(*own, "dream-undo", "dream", "undo", "--project", str(git_repo))
    assert _files(memory) == before
    daemon.assert_alive()


def test_five_of_twenty_files_cut_to_one_character_are_a_loss(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 20)

    for i in range(5):
        (memory / f"topic_{i:03}.md").write_text("x")
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    [loss] = daemon.events("memory_loss")
    assert loss["loss"] == "5 memory files were emptied"
    with _history(isolated_home) as history:
        [kept] = history.losses()
    assert [rel for rel, _ in kept.taken] == [f"topic_{i:03}.md" for i in range(5)]
    daemon.assert_alive()


DELETER = """
import os, sys
memory = sys.argv[1]
for i in range(int(sys.argv[2]), int(sys.argv[3])):
    os.unlink(os.path.join(memory, f"topic_{i:03}.md"))
"""


def test_the_count_is_the_files_this_loss_took_not_an_earlier_undos(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 213)
    _run(daemon, "fix", str(memory))
    _run(daemon, "fix", "--undo", str(memory))  # deletes the 4 hubs: memd's own
    wait_for(lambda: _settled(isolated_home, memory), what="the undo recorded")

    subprocess.run([sys.executable, "-c", DELETER, str(memory), "0", "23"], check=True)
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    wait_for(lambda: _settled(isolated_home, memory), what="the deletion recorded")
    time.sleep(0.3)
    losses = daemon.events("memory_loss")
    assert losses[-1]["loss"] == "23 memory files were deleted", losses
    report = daemon.status()["losses"]
    assert [entry["loss"] for entry in report] == ["23 memory files were deleted"]
    daemon.assert_alive()


def test_the_command_it_names_restores_exactly_what_the_loss_took(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 25)
    today = datetime.now()
    for tag in ("feedback", "project", "reference"):
        append_entry(str(memory), f"[{tag}] #{tag}-notes a {tag} fact", now=today)
    _run(daemon, "dream", "--now", "--project", str(git_repo))
    dreamed = {
        rel
        for rel in _files(memory)
        if rel.endswith(".md") and not rel.startswith(("topic_", "logs/", "MEMORY"))
    }
    assert len(dreamed) >= 3, dreamed
    wait_for(lambda: _settled(isolated_home, memory), what="the dream recorded")
    before_loss = _files(memory)

    # The loss: 20 topic files and the dream's files, deleted over two seconds.
    subprocess.run([sys.executable, "-c", DELETER, str(memory), "0", "10"], check=True)
    time.sleep(1.0)
    for rel in dreamed:
        (memory / rel).unlink()
    subprocess.run([sys.executable, "-c", DELETER, str(memory), "10", "20"], check=True)
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    wait_for(lambda: _settled(isolated_home, memory), what="the loss recorded")
    time.sleep(0.3)
    took = 20 + len(dreamed)
    assert daemon.events("memory_loss")[-1]["loss"] == (
        f"{took} memory files were deleted"
    )

    # After the loss: a new file, today's log written on, and one lost file
    # written anew (a newer save the restore must never overwrite).
    (memory / "later.md").write_text("---\nname: Later\n---\nWritten after.\n")
    (memory / "topic_015.md").write_text("---\nname: Again\n---\nWritten anew.\n")
    append_entry(str(memory), "[project] #later a fact after the loss", now=today)
    wait_for(lambda: _settled(isolated_home, memory), what="the later writes recorded")
    after_loss = _files(memory)

    said = _session_start(daemon.env, git_repo, "s-loss")
    context = json.loads(said)["hookSpecificOutput"]["additionalContext"]
    match = re.search(
        rf"memd: in {git_repo}, {took} memory files were deleted at \S+ \(by an edit\);"
        r" `(memd restore --loss \d+)` brings them back\.",
        context,
    )
    assert match is not None, context
    restored = daemon.memd(*shlex.split(match.group(1))[1:])
    assert restored.returncode == 0, restored.stderr
    assert restored.stderr == (
        "memd: topic_015.md: changed since the loss: left as it is\n"
    )
    assert f"restored {took - 1} files" in restored.stdout

    expected = dict(after_loss)
    expected.update(
        (rel, data) for rel, data in before_loss.items() if rel not in after_loss
    )
    assert _files(memory) == expected  # taken back byte for byte, the rest untouched
    assert (memory / "later.md").exists()
    daemon.assert_alive()


def test_a_restored_and_a_dismissed_loss_are_shown_as_such_and_not_told(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 12)

    subprocess.run([sys.executable, "-c", DELETER, str(memory), "0", "4"], check=True)
    wait_for(lambda: daemon.events("memory_loss"), what="the first loss")
    first = int(daemon.events("memory_loss")[-1]["rev"])  # type: ignore[arg-type]
    _run(daemon, "restore", "--loss", str(first))
    wait_for(lambda: _settled(isolated_home, memory), what="the restore recorded")
    [restored] = daemon.status()["losses"]  # type: ignore[misc]
    assert restored["state"] == "restored"
    assert ": restored at " in restored["message"]
    text = daemon.memd("status").stdout
    assert "4 memory files were deleted at" in text
    assert "restored at" in text
    assert "memd restore" not in _session_start(daemon.env, git_repo, "s-one")

    subprocess.run([sys.executable, "-c", DELETER, str(memory), "4", "8"], check=True)
    wait_for(lambda: len(daemon.events("memory_loss")) >= 2, what="the second loss")
    second = int(daemon.events("memory_loss")[-1]["rev"])  # type: ignore[arg-type]
    assert second != first
    _run(daemon, "history", "dismiss", str(second))
    report = daemon.status()["losses"]
    assert [(e["rev"], e["state"]) for e in report] == [  # type: ignore[index]
        (second, "dismissed"),
        (first, "restored"),
    ]
    assert "memd restore" not in _session_start(daemon.env, git_repo, "s-two")
    assert "dismissed at" in daemon.memd("status").stdout
    daemon.assert_alive()


def test_a_deleted_memory_directory_comes_back_whole_by_its_loss(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    import shutil

    memory, daemon = _watched(start_daemon, git_repo, isolated_home, 6)
    before = _files(memory)
    shutil.rmtree(memory)
    wait_for(lambda: daemon.events("memory_loss"), what="the loss alarm")
    [loss] = daemon.events("memory_loss")
    assert loss["loss"] == "6 memory files were deleted"  # the index is not a fact
    assert loss["restore"] == f"memd restore --loss {loss['rev']}"
    _run(daemon, "restore", "--loss", str(loss["rev"]))
    assert _files(memory) == before  # MEMORY.md too: it went with them
    daemon.assert_alive()
