"""The history survives its own store being damaged (issue 41, class 7).

A real `memd run`, real commands, a store broken on disk by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemon.conftest import (  # noqa: F401 -- the fixture, registered here
    Daemon,
    Starter,
    _start_daemon,
    topic,
    wait_for,
)

MEMD = (sys.executable, "-m", "memd")


@pytest.fixture(name="project")
def _project(isolated_home: object) -> Path:
    memory = isolated_home.claude / "projects" / "-work-app" / "memory"  # type: ignore[attr-defined]
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text(topic("user_role"))
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    return memory


def store_path() -> Path:
    return Path(os.environ["XDG_STATE_HOME"], "memd", "history", "history.sqlite3")


def recorded(daemon: Daemon, memory: Path) -> list[dict[str, object]]:
    done = daemon.memd("history", "--project", str(memory), "--format", "json")
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout else []


def one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_corrupt_first_page_is_one_line_each_and_the_daemon_goes_on(
    start_daemon: Starter, project: Path
) -> None:
    daemon = start_daemon()
    wait_for(lambda: recorded(daemon, project), what="the first record")
    daemon.stop()
    with open(store_path(), "r+b") as store:  # the header and the schema page
        store.write(b"\x00not a database\x00" * 256)
    daemon = start_daemon()
    where = ("--project", str(project))
    for args in (
        ("history", *where),
        ("history", "show", "1"),
        ("history", "user_role.md", *where),
        ("restore", "user_role.md", "--rev", "1", *where),
        ("restore", "--all", "--rev", "1", *where),
        ("history", "purge", "user_role.md", *where),
        ("history", "purge", "--secret", "0123456789abcdef"),
    ):
        done = daemon.memd(*args)
        assert done.returncode == 2, (args, done.stdout)
        one_line(done, "damaged", f"mv '{store_path()}'")
    status = daemon.memd("status")
    assert status.returncode == 0, status.stderr
    assert "Traceback" not in status.stderr
    assert "history: the history store" in status.stdout
    assert "damaged" in status.stdout
    as_json = json.loads(daemon.memd("status", "--format", "json").stdout)
    assert "damaged" in as_json["history_error"]
    (project / "user_role.md").write_text(topic("user_role", body="Changed.\n"))
    daemon.wait_fresh(project)  # the daemon goes on serving the prompt
    daemon.assert_alive()
    # the way out it names works
    os.rename(store_path(), f"{store_path()}.damaged")
    (project / "user_role.md").write_text(topic("user_role", body="Again.\n"))
    wait_for(lambda: recorded(daemon, project), what="a record in a new store")
    daemon.assert_alive()


@pytest.mark.parametrize("name", ["history.sqlite3", "history.sqlite3-wal", "."])
def test_a_store_replaced_by_a_link_is_never_followed(
    start_daemon: Starter, project: Path, tmp_path: Path, name: str
) -> None:
    daemon = start_daemon()
    wait_for(lambda: recorded(daemon, project), what="the first record")
    daemon.stop()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for side in ("history.sqlite3", "history.sqlite3-wal", "history.sqlite3-shm"):
        (store_path().parent / side).unlink(missing_ok=True)
    if name == ".":  # the history folder itself
        shutil.rmtree(store_path().parent)
        store_path().parent.symlink_to(outside)
    else:
        (store_path().parent / name).symlink_to(outside / "planted.sqlite3")
    daemon = start_daemon()
    (project / "user_role.md").write_text(topic("user_role", body="Changed.\n"))
    daemon.wait_fresh(project)
    for args in (
        ("history", "--project", str(project)),
        ("restore", "user_role.md", "--rev", "1", "--project", str(project)),
    ):
        done = daemon.memd(*args)
        assert done.returncode == 2
        one_line(done, "is a link, which memd never follows", "mv ")
    status = daemon.memd("status")
    assert "is a link" in status.stdout
    daemon.assert_alive()
    assert list(outside.iterdir()) == []  # no database made outside
    assert daemon.events("history_record_failed")


def test_a_name_that_is_not_utf8_is_recorded_and_restorable(
    start_daemon: Starter, project: Path
) -> None:
    daemon = start_daemon()
    wait_for(lambda: recorded(daemon, project), what="the first record")
    raw = os.path.join(os.fsencode(project), b"caf\xe9 notes.md")
    with open(raw, "wb") as handle:
        handle.write(b"---\nname: cafe\n---\nlatin-1 name\n")
    kept = "caf\\xe9 notes.md"
    wait_for(
        lambda: any(
            f["relpath"] == kept for c in recorded(daemon, project) for f in c["files"]
        ),
        what="the odd name recorded",
    )
    rev = max(int(c["rev"]) for c in recorded(daemon, project))  # type: ignore[call-overload]
    os.unlink(raw)
    wait_for(
        lambda: any(
            f["kind"] == "deleted"
            for c in recorded(daemon, project)[:1]
            for f in c["files"]
        ),
        what="the deletion recorded",
    )
    listed = daemon.memd("history", "--project", str(project), "--no-patch")
    assert f"deleted  {kept}" in listed.stdout
    # as the listing prints it, or as the bytes the shell passes
    for typed in (kept, os.fsdecode(b"caf\xe9 notes.md")):
        done = daemon.memd(
            "restore", typed, "--rev", str(rev), "--project", str(project)
        )
        assert done.returncode == 0, done.stderr
        with open(raw, "rb") as handle:
            assert handle.read() == b"---\nname: cafe\n---\nlatin-1 name\n"
        os.unlink(raw)
    daemon.assert_alive()


def test_a_corrupt_version_is_one_line(memory: Path, git_repo: Path) -> None:
    """A blob that no longer inflates: the commands that read it say so."""
    import sqlite3

    from tests.history.helpers import memd, record_now

    (memory / "a.md").write_text("one\n" * 50)
    first = record_now(memory)
    (memory / "a.md").write_text("two\n" * 50)
    record_now(memory)
    with sqlite3.connect(store_path()) as db:
        db.execute("UPDATE blobs SET data=x'78da0000'")
    for args in (
        ("history", "a.md"),
        ("history", "show", str(first)),
        ("restore", "a.md", "--rev", str(first)),
    ):
        done = memd(*args, cwd=git_repo)
        assert done.returncode == 2, (args, done.stdout)
        one_line(done, "damaged (corrupt history blob")
    assert (memory / "a.md").read_text() == "two\n" * 50
