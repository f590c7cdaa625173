"""Restore tells the truth and never overwrites a newer save (issue 41, class 4).

Real files, real `memd restore` processes, a real saver process that saves
by rename as an editor does, and (where the daemon matters) a real `memd run`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memd.history.store import History
from tests.daemon.conftest import Starter, _start_daemon  # noqa: F401 -- fixture
from tests.history.helpers import memd, record_now, state_dir

FILES = 6

# Saves `save K` into one file after another every 30 ms, by rename, until
# the stop file appears; before each save it logs what the file held, so the
# test knows which of its saves something other than itself took away.
SAVER = textwrap.dedent(
    """
    import os, sys, time
    memory, stop, log, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    k = 0
    with open(log, "w") as out:
        while not os.path.exists(stop):
            name = f"f{k % count}.md"
            path = os.path.join(memory, name)
            try:
                with open(path, "rb") as f:
                    seen = f.read().decode()
            except FileNotFoundError:
                seen = ""
            temp = os.path.join(memory, ".save-tmp")
            with open(temp, "w") as f:
                f.write(f"save {k}\\n")
            os.rename(temp, path)
            out.write(f"{k}\\t{name}\\t{seen.strip()}\\n")
            out.flush()
            k += 1
            time.sleep(0.03)
    """
)


@pytest.mark.parametrize("daemon", [False, True])
def test_a_save_during_restore_all_is_never_lost(
    memory: Path, git_repo: Path, tmp_path: Path, start_daemon: Starter, daemon: bool
) -> None:
    """Saving by rename every 30 ms while `restore --all` runs loses no save
    (with `memd run` recording the same saves meanwhile, or without)."""
    if daemon:
        start_daemon()
    for i in range(FILES):
        (memory / f"f{i}.md").write_text(f"first {i}\n")
    first = record_now(memory)
    stop, log = tmp_path / "stop", tmp_path / "saves.log"
    saver = subprocess.Popen(
        [sys.executable, "-c", SAVER, str(memory), str(stop), str(log), str(FILES)]
    )
    restored = 0
    try:
        time.sleep(0.2)
        deadline = time.monotonic() + 6.0
        while time.monotonic() < deadline:
            done = memd("restore", "--all", "--rev", str(first), cwd=git_repo)
            restored += done.stdout.count("modify ")
            assert done.returncode in (0, 1), done.stderr
            assert "Traceback" not in done.stderr
            for line in done.stderr.splitlines():  # the truth: what it left
                assert "not restored" in line, done.stderr
    finally:
        stop.touch()
        saver.wait(timeout=30)
    record_now(memory)
    with History.open(state_dir()) as history:
        kept = {blob.decode().strip() for blob in history.every_blob()}
    saves = [line.split("\t") for line in log.read_text().splitlines()]
    last: dict[str, str] = {}
    lost = []
    for k, name, seen in saves:
        previous = last.get(name)
        # the saver's own next save replacing its last is no loss of memd's
        if previous is not None and seen != previous and previous not in kept:
            lost.append(previous)
        last[name] = f"save {k}"
    assert len(saves) > 100
    assert restored > 10  # the restores did write, between the saves
    assert not lost, f"{len(lost)} saves overwritten and recorded nowhere: {lost}"


@pytest.mark.parametrize("scope", ["file", "all"])
def test_a_file_replaced_by_a_link_is_not_reported_restored(
    memory: Path, git_repo: Path, tmp_path: Path, scope: str
) -> None:
    (memory / "a.md").write_text("mine\n")
    (memory / "b.md").write_text("other\n")
    rev = record_now(memory)
    outside = tmp_path / "outside.md"
    outside.write_text("not memory\n")
    (memory / "a.md").unlink()
    (memory / "a.md").symlink_to(outside)
    (memory / "b.md").write_text("changed\n")
    record_now(memory)
    which = ("a.md",) if scope == "file" else ("--all",)
    done = memd("restore", *which, "--rev", str(rev), cwd=git_repo)
    assert done.returncode == 2, done.stdout
    assert done.stderr.count("\n") == 1, done.stderr
    assert "a.md is a link now" in done.stderr
    assert "nothing restored" in done.stderr
    assert "restored" not in done.stdout
    assert (memory / "a.md").is_symlink()
    assert outside.read_text() == "not memory\n"
    assert (memory / "b.md").read_text() == "changed\n"  # all or nothing


def _swap(memory: Path, relpath: str, data: bytes | None, was: bytes | None) -> str:
    """Run restore's put of one file against what the disk really holds."""
    import hashlib

    from memd.fsread import open_dir
    from memd.history import restore

    with History.open(state_dir()) as history:
        root = open_dir(str(memory))
        try:
            return restore._put(
                history,
                str(memory),
                root,
                relpath,
                data,
                None if was is None else hashlib.sha256(was).digest(),
            )
        finally:
            os.close(root)


@pytest.mark.parametrize("exchange", [True, False])
def test_a_newer_save_met_by_the_swap_is_recorded_and_kept(
    memory: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    """The file no longer holds what the plan checked: the save stays, recorded."""
    import errno

    from memd.history import restore

    if not exchange:  # a filesystem without RENAME_EXCHANGE

        def unsupported(*_: object) -> None:
            raise OSError(errno.EINVAL, "not here")

        monkeypatch.setattr(restore, "exchange_at", unsupported)
    (memory / "a.md").write_text("checked\n")
    record_now(memory)
    (memory / "a.md").write_text("newer save, not yet recorded\n")
    why = _swap(memory, "a.md", b"restored\n", b"checked\n")
    assert why == restore.LEFT_SAVED
    assert (memory / "a.md").read_text() == "newer save, not yet recorded\n"
    with History.open(state_dir()) as history:
        assert b"newer save, not yet recorded\n" in list(history.every_blob())
    assert [p.name for p in memory.iterdir()] == ["a.md"]  # no temp left


def test_a_removal_that_meets_a_newer_save_keeps_it(memory: Path) -> None:
    (memory / "a.md").write_text("checked\n")
    record_now(memory)
    (memory / "a.md").write_text("newer\n")
    assert _swap(memory, "a.md", None, b"checked\n") is not None
    assert (memory / "a.md").read_text() == "newer\n"
    with History.open(state_dir()) as history:
        assert b"newer\n" in list(history.every_blob())
    (memory / "a.md").write_text("checked\n")
    assert _swap(memory, "a.md", None, b"checked\n") is None
    assert not (memory / "a.md").exists()


def test_what_restore_overwrites_is_in_the_history_first(
    memory: Path, git_repo: Path
) -> None:
    """An edit nothing recorded yet (no daemon) is recorded before the restore."""
    (memory / "a.md").write_text("old\n")
    rev = record_now(memory)
    (memory / "a.md").write_text("typed while memd was not running\n")
    done = memd("restore", "a.md", "--rev", str(rev), cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert (memory / "a.md").read_text() == "old\n"
    with History.open(state_dir()) as history:
        blobs = list(history.every_blob())
    assert b"typed while memd was not running\n" in blobs


def test_a_save_a_killed_restore_held_aside_is_recorded(
    memory: Path, git_repo: Path
) -> None:
    """Killed between its swap and its record, a restore leaves the save it
    took in a held file; the next command records it before dropping it."""
    import hashlib
    import json

    from memd.history.restore import HELD_PREFIX, JOURNAL

    (memory / "a.md").write_text("checked\n")
    rev = record_now(memory)
    (memory / "a.md").write_text("restored\n")
    record_now(memory)
    sha = {
        t: hashlib.sha256(t.encode()).hexdigest() for t in ("checked\n", "restored\n")
    }
    journal = {
        "memory_dir": str(memory.resolve()),
        "rev": rev,
        "steps": [["a.md", sha["checked\n"], sha["restored\n"]]],
    }
    Path(state_dir(), "history", JOURNAL).write_text(json.dumps(journal))
    # the swap had put "checked" in and held what it took: a save made in the gap
    (memory / "a.md").write_text("checked\n")
    (memory / f"{HELD_PREFIX}0-0123456789abcdef").write_text("a save in the gap\n")
    (memory / f"{HELD_PREFIX}0-fedcba9876543210").write_text("restored\n")
    done = memd("history", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in memory.iterdir()) == ["a.md"]
    with History.open(state_dir()) as history:
        assert b"a save in the gap\n" in list(history.every_blob())
    assert (
        "saved during a restore"
        in memd("history", "--format", "json", cwd=git_repo).stdout
    )
