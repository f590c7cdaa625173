"""Faults: SIGKILL mid-edit, a full disk, a memory base that vanishes and returns."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.daemon.conftest import Daemon, Starter, topic, wait_for
from tests.reliability.conftest import hash_tree, scale

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

SEED = int(os.environ.get("MEMD_RELIABILITY_SEED", "20261129"))
TOPICS = 8


def _edit_storm(memory: Path, rng: random.Random, stop: threading.Event) -> int:
    """Rewrite topics and the index, in place and by rename, until `stop`; count."""
    count = 0
    while not stop.is_set():
        i = rng.randrange(TOPICS)
        path = memory / f"topic_{i}.md"
        text = topic(f"topic_{i}", body=f"Edit {count}.\n" * rng.randint(1, 40))
        if rng.random() < 0.5:
            temp = memory / f".topic_{i}.md.swp"
            temp.write_text(text)
            os.replace(temp, path)
        else:
            path.write_text(text)
        if count % 5 == 0:
            listed = rng.sample(range(TOPICS), rng.randint(1, TOPICS))
            (memory / "MEMORY.md").write_text(
                "".join(f"- [T{j}](topic_{j}.md) — edit {count}\n" for j in listed)
            )
        count += 1
    return count


def _record(
    counts: list[int], memory: Path, rng: random.Random, stop: threading.Event
) -> None:
    counts.append(_edit_storm(memory, rng, stop))


def _temp_files(cache: Path) -> list[str]:
    """Temp files outside a version directory (inside one, it goes as a whole)."""
    found = []
    for directory, _, names in os.walk(cache):  # walk: the daemon deletes as we look
        if Path(directory).name.count(".") < 2:
            found += [os.path.join(directory, n) for n in names if ".memd-tmp-" in n]
    return found


def _left_by(cache: Path, pids: set[int]) -> list[str]:
    """Unpublished snapshot versions, link temps and temp files of dead writers."""
    found = []
    for key_dir in (cache / "memd" / "snapshots").glob("*"):
        for path in key_dir.iterdir():
            parts = path.name.split(".")  # .<mode>.[link-]<built_ns>-<pid>-<rand>
            if len(parts) == 3 and int(parts[2].split("-")[-2]) in pids:
                found.append(str(path))
    return found


def _status(daemon: Daemon) -> dict[str, object]:
    return daemon.status()


def _dir_entry(daemon: Daemon, memory: Path) -> dict[str, object]:
    dirs = _status(daemon)["dirs"]
    assert isinstance(dirs, dict)
    entry = dirs.get(str(memory)) or dirs.get(str(memory) + "/") or {}
    assert isinstance(entry, dict)
    return entry


class TestKill:
    def test_sigkill_during_heavy_editing(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """SIGKILL at seeded random moments; each restart is right at READY."""
        daemon = start_daemon()
        rounds = scale(4)
        edits = 0
        dead: set[int] = set()
        for round_ in range(rounds):
            rng = random.Random(SEED + round_)  # noqa: S311 -- reproducible faults
            stop = threading.Event()
            counts: list[int] = []
            editor = threading.Thread(target=_record, args=(counts, project, rng, stop))
            editor.start()
            time.sleep(rng.uniform(0.05, 1.0))  # the random moment of the fault
            daemon.proc.kill()
            daemon.proc.wait()
            dead.add(daemon.proc.pid)
            stop.set()
            editor.join()
            edits += counts[0]
            before = hash_tree(project)

            daemon = start_daemon()

            # Right at READY, not eventually: the first scan rebuilt everything.
            assert daemon.is_fresh(project), f"round {round_}: stale after READY"
            assert [] == _temp_files(isolated_home.cache)
            assert before == hash_tree(project), "the daemon wrote a memory file"
        # Versions a killed writer left are collected once past the grace period.
        wait_for(
            lambda: _touch_and_clean(daemon, project, isolated_home.cache, dead),
            what="leftover snapshot versions to be collected",
        )
        print(f"SIGKILL rounds: {rounds}, saves during them: {edits}")
        assert edits > rounds
        assert [] == daemon.events("memory_dir_rebuild_failed")


def _touch_and_clean(daemon: Daemon, memory: Path, cache: Path, dead: set[int]) -> bool:
    (memory / "user_role.md").write_text(topic("user_role", body=f"{time.time()}\n"))
    daemon.wait_fresh(memory)
    if not _left_by(cache, dead):
        return True
    time.sleep(1.0)  # the grace period is measured in seconds
    return False


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    """Mount a small tmpfs on `path`, or skip when this process may not mount."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(f"mount -t tmpfs not permitted here: {result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(directory: Path) -> Path:
    """Write one file until the filesystem is full; return it."""
    filler = directory / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
    with contextlib.suppress(OSError):
        while True:  # use up the last partial block and any inodes too
            (directory / f"filler-{os.urandom(4).hex()}").write_bytes(b"x" * 512)
    return filler


class TestDiskFull:
    def test_previous_snapshot_survives_and_catches_up(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """ENOSPC on a snapshot write keeps the old one; status says so; it recovers."""
        cache = isolated_home.cache / "memd"
        with _tmpfs(cache, "1m"):
            daemon = start_daemon()
            daemon.wait_fresh(project)
            old = daemon.store.read(str(project), "standard")
            assert old is not None
            filler = _fill(cache)

            (project / "user_role.md").write_text(topic("user_role", body="New.\n"))
            entry = wait_for(
                lambda: _dir_entry(daemon, project).get("error"),
                what="status to report the failed write",
            )

            assert "space" in str(entry).lower()
            daemon.assert_alive()
            assert old[1] == daemon.store.read(str(project), "standard")[1]  # type: ignore[index]
            for path in cache.glob("filler*"):
                path.unlink()
            assert not filler.exists()
            daemon.wait_fresh(project)
            wait_for(
                lambda: "error" not in _dir_entry(daemon, project),
                what="status to clear the error",
            )


class TestBaseVanishes:
    def test_memory_base_deleted_and_back(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """`~/.claude` removed entirely, then restored with new memory: it follows."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        shutil.rmtree(isolated_home.claude)
        wait_for(
            lambda: (
                not _dir_entry(daemon, project)
                or _dir_entry(daemon, project).get("missing")
            ),
            what="the memory dir to be reported gone",
        )
        daemon.assert_alive()

        project.mkdir(parents=True)
        (project / "back.md").write_text(topic("back"))
        (project / "MEMORY.md").write_text("- [Back](back.md) — it came back\n")

        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")
