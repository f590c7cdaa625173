"""A change right after a build always reaches the snapshot, at any settle (issue 22).

With `settle_seconds = 0.05` a `touch` on a topic file just after a snapshot
was built was never picked up: the snapshot kept the old stat, and every
reader rendered cold from then on. A touch (utime) writes nothing, so memd
saw no event for it, and a build no longer racy was never checked again.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.daemon.conftest import Daemon, Starter, topic, wait_for

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

ROUNDS = 8
FRESH_WITHIN_SECONDS = 10.0  # a racy build is re-checked about a second later


def _recorded_mtime_ns(daemon: Daemon, memory: Path, target: Path) -> int | None:
    """The mtime the published snapshot recorded for `target`."""
    found = daemon.store.read(str(memory), "standard")
    if found is None:
        return None
    inputs = found[0]["inputs"]
    assert isinstance(inputs, list)
    for _size, mtime_ns, _inode, path in inputs:
        if path == str(target):
            return int(mtime_ns)
    return None


def _wait_built_with(daemon: Daemon, memory: Path, target: Path, mtime_ns: int) -> None:
    """Return as soon as a snapshot that read `target` at `mtime_ns` is published."""
    wait_for(
        lambda: _recorded_mtime_ns(daemon, memory, target) == mtime_ns,
        what="the build of the first change",
    )


def _assert_served_warm(daemon: Daemon, memory: Path, round_: int) -> None:
    """The snapshot serves warm (inputs stat as recorded, none racy) a cold render."""
    cold = daemon.cold_prompt(memory)
    wait_for(
        lambda: daemon.store.read_fresh_bytes(str(memory), "standard") == cold,
        timeout=FRESH_WITHIN_SECONDS,
        what=f"round {round_}: the snapshot served warm and equal to a cold render",
    )


def _old_ns(round_: int, offset: int) -> int:
    """An mtime an hour back, distinct per round: never racy, always a change."""
    return (int(time.time()) - 3600 + 10 * round_ + offset) * 1_000_000_000


def _change_right_after_each_build(
    start_daemon: Starter,
    project: Path,
    settle: str,
    change: Callable[[Path, int, int], object],
) -> None:
    """Save, wait for the build that read it, `change(target, round, saved_ns)`.

    Each save's mtime is an hour back, so the build is never racy and the
    daemon's racy re-check cannot stand in for seeing the change itself.
    Each round the snapshot must then serve warm what a cold render holds.
    """
    daemon = start_daemon(settle=settle, MEMD_SWEEP_SECONDS="600")
    daemon.wait_fresh(project)
    target = project / "user_role.md"
    for round_ in range(ROUNDS):
        saved = _old_ns(round_, 0)
        target.write_text(topic("user_role", body=f"Round {round_:03}a.\n"))
        os.utime(target, ns=(saved, saved))
        _wait_built_with(daemon, project, target, saved)
        change(target, round_, saved)
        _assert_served_warm(daemon, project, round_)


def _utime(target: Path, round_: int, saved_ns: int) -> None:
    touched = _old_ns(round_, 1)
    os.utime(target, ns=(touched, touched))


def _touch_command(target: Path, round_: int, saved_ns: int) -> None:
    stamp = time.strftime("%Y%m%d%H%M.%S", time.localtime(_old_ns(round_, 1) / 1e9))
    subprocess.run(["touch", "-m", "-t", stamp, str(target)], check=True)


def _same_size_same_mtime(target: Path, round_: int, saved_ns: int) -> None:
    target.write_text(topic("user_role", body=f"Round {round_:03}b.\n"))
    os.utime(target, ns=(saved_ns, saved_ns))


@pytest.mark.parametrize("settle", ["0.0", "0.01", "0.05"])
class TestChangeRightAfterABuild:
    def test_a_touch_right_after_a_build_is_picked_up(
        self, start_daemon: Starter, project: Path, settle: str
    ) -> None:
        """`touch -d` (a utime, no write) just after the build of a save."""
        _change_right_after_each_build(start_daemon, project, settle, _utime)

    def test_a_touch_command_right_after_a_build_is_picked_up(
        self, start_daemon: Starter, project: Path, settle: str
    ) -> None:
        """The `touch` command itself (open for writing, set the time, close)."""
        _change_right_after_each_build(start_daemon, project, settle, _touch_command)

    def test_same_size_rewrite_with_the_same_mtime_is_picked_up(
        self, start_daemon: Starter, project: Path, settle: str
    ) -> None:
        """New bytes of the same size, the mtime set back to what the build recorded."""
        _change_right_after_each_build(
            start_daemon, project, settle, _same_size_same_mtime
        )
