"""Hostile inputs against one running `memd run`: it lives, says why, stays correct."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.paths import resolve_memory_location
from memd.state import remember_project
from tests.daemon.conftest import Daemon, Starter, topic, wait_for
from tests.reliability.conftest import scale

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nMEMD-SECRET-b3f1c9e2d4a7\n"
SECRET_TOKEN = b"MEMD-SECRET-b3f1c9e2d4a7"
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n"
    for a, b in zip("abcdefghi", "bcdefghij", strict=True)
)


def _diagnosed(daemon: Daemon, memory: Path, relpath: str) -> list[str]:
    """Return the codes of the published snapshot's findings about `relpath`."""
    return [
        d.code
        for d in daemon.store.read_diagnostics(str(memory), "standard")
        if d.path == relpath
    ]


def _status(daemon: Daemon) -> dict[str, object]:
    result = daemon.memd("status", "--format", "json")
    assert 0 == result.returncode, result.stderr
    status = json.loads(result.stdout)
    assert isinstance(status, dict)
    return status


def _dir_status(daemon: Daemon, memory: Path, pid: int) -> dict[str, object] | None:
    """Return the status entry of `memory` once it counts lint errors, else None."""
    status = _status(daemon)
    assert pid == status["pid"]
    dirs = status["dirs"]
    assert isinstance(dirs, dict)
    entry = dirs.get(str(memory)) or dirs.get(str(memory) + "/")
    return entry if entry and entry.get("lint_errors", 0) >= 1 else None


def _settle(daemon: Daemon, memory: Path, relpath: str) -> list[str]:
    """Wait for a fresh snapshot that has findings about `relpath`; return them."""
    daemon.wait_fresh(memory)
    wait_for(
        lambda: daemon.is_fresh(memory) and _diagnosed(daemon, memory, relpath),
        what=f"a finding about {relpath!r}",
    )
    daemon.assert_alive()
    return _diagnosed(daemon, memory, relpath)


def _alias_bomb(memory: Path) -> str:
    (memory / "bomb.md").write_text(f"---\n{BOMB}---\nbody\n")
    return "bomb.md"


def _huge(memory: Path) -> str:
    with open(memory / "huge.md", "w") as f:
        f.write(topic("huge", body=""))
        line = "x" * 1023 + "\n"
        f.write(line * (50 * 1024))  # 50 MiB written at test time
    return "huge.md"


def _binary(memory: Path) -> str:
    (memory / "binary.md").write_bytes(bytes(range(256)) * 64)
    return "binary.md"


def _invalid_utf8(memory: Path) -> str:
    (memory / "latin1.md").write_bytes(
        b"---\nname: caf\xe9\ndescription: d\xff\xfe\ntype: user\n---\n\xc3\x28\n"
    )
    return "latin1.md"


def _odd_name(memory: Path) -> str:
    # NUL cannot occur in a POSIX file name (the kernel ends the path there),
    # so the oddest bytes possible are control characters and bad UTF-8.
    name = os.fsdecode(b"odd\x01\x7fname\xff.md")
    (memory / name).write_text("no frontmatter\n")
    return name


def _symlink_loop(memory: Path) -> str:
    (memory / "loop_a.md").symlink_to("loop_b.md")
    (memory / "loop_b.md").symlink_to("loop_a.md")
    return "loop_a.md"


def _bad_links(memory: Path) -> str:
    (memory / "MEMORY.md").write_text(
        "- [Role](user_role.md) — who the user is\n"
        "- [Up](../../secret.md) — escapes the directory\n"
        "- [Passwd](/etc/passwd) — absolute\n"
        "- [File](file:///etc/passwd) — a file URL\n"
    )
    return "MEMORY.md"


STEPS: tuple[Callable[[Path], str], ...] = (
    _alias_bomb,
    _huge,
    _binary,
    _invalid_utf8,
    _odd_name,
    _symlink_loop,
    _bad_links,
)


class TestHostileSequence:
    def test_each_input_survived_diagnosed_and_fresh(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """Seven hostile inputs, one daemon: after each it lives, reports, renders right."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        pid = daemon.proc.pid
        for step in STEPS:
            relpath = step(project)
            codes = _settle(daemon, project, relpath)
            assert codes, f"{step.__name__}: no finding"
            entry = wait_for(
                lambda: _dir_status(daemon, project, pid), what="status with errors"
            )
            assert isinstance(entry, dict)
            assert "error" not in entry, step.__name__
        (project / "user_role.md").write_text(topic("user_role", body="Still here.\n"))
        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")

    def test_newline_in_a_name_is_never_served_warm(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A name with a line break is reported, and its snapshot is never served warm."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        name = "two\nlines.md"
        (project / name).write_text(topic("two"))
        wait_for(
            lambda: _diagnosed(daemon, project, name), what="a finding about the name"
        )
        # meta.txt cannot record the path, so the store refuses to serve it warm.
        assert None is daemon.store.read(str(project), "standard")
        assert None is daemon.store.read_fresh(str(project), "standard")
        (project / name).unlink()
        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")


class TestUndecodableNameRegression:
    def test_snapshot_json_readable_with_undecodable_file_name(
        self, tmp_path: Path
    ) -> None:
        """A name that is not UTF-8 keeps diagnostics.json and meta.json readable."""
        from memd.pipeline import load_and_build
        from memd.snapshots import SnapshotStore

        memory = tmp_path / "memory"
        memory.mkdir()
        name = os.fsdecode(b"odd\xff.md")
        (memory / name).write_text("no frontmatter\n")
        (memory / "MEMORY.md").write_text("- [Odd](odd.md) — odd\n")
        store = SnapshotStore(str(tmp_path / "cache"))
        store.write(load_and_build(str(memory), "standard"))

        found = {
            d.code
            for d in store.read_diagnostics(str(memory), "standard")
            if d.path == name
        }
        meta = store.read_meta(str(memory), "standard")

        assert {"M001", "I006"} <= found
        assert meta is not None
        assert str(memory / name) in {i["path"] for i in meta["inputs"]}  # type: ignore[index,union-attr]
