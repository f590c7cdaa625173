"""memd.daemon.watched: one directory's rebuild, and when it must run again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import structlog

from memd.config import load_config
from memd.daemon.watched import Rebuild, WatchedDir
from memd.memory.memdir import MemDir
from memd.snapshot.publish import SnapshotStore
from tests.conftest import Home
from tests.daemon.conftest import backdate, topic

HOUR_AGO_NS = (int(time.time()) - 3600) * 1_000_000_000


def _rebuild(home: Home, on_read: object = None) -> Rebuild:
    config = load_config()
    return Rebuild(
        config=config,
        extra_guidelines=None,
        store=SnapshotStore(str(home.cache / "memd")),
        emit_loaded=lambda snapshot: None,
        log=structlog.get_logger(),
        **({} if on_read is None else {"on_read": on_read}),
    )


@pytest.fixture(name="memory")
def _memory(tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_role.md").write_text(topic("user_role"))
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    backdate(memory, seconds=3600)  # nothing racy: no re-check is due for that
    return memory


class TestChangedWhileBuilt:
    def test_a_touch_between_read_and_publish_asks_for_a_rebuild_now(
        self, isolated_home: Home, memory: Path
    ) -> None:
        """The recorded stat is not the file's any more: rebuild at once."""
        target = memory / "user_role.md"

        def touch_after_the_read(memdir: MemDir, changed: object) -> None:
            os.utime(target, ns=(HOUR_AGO_NS + 7, HOUR_AGO_NS + 7))

        watched = WatchedDir(str(memory))
        watched.rebuild(None, _rebuild(isolated_home, touch_after_the_read), source="")

        assert watched.recheck_at is not None
        assert watched.due(time.monotonic())

    def test_a_quiet_build_asks_for_nothing(
        self, isolated_home: Home, memory: Path
    ) -> None:
        """Nothing moved and nothing racy: no re-check."""
        watched = WatchedDir(str(memory))
        watched.rebuild(None, _rebuild(isolated_home), source="")

        assert watched.recheck_at is None

    def test_a_lasting_mismatch_asks_once(
        self, isolated_home: Home, memory: Path
    ) -> None:
        """An input that always stats otherwise is the sweep's, not a rebuild loop."""
        target = memory / "user_role.md"
        stamp = iter(range(1, 1000))

        def same_touch(memdir: MemDir, changed: object) -> None:
            os.utime(target, ns=(HOUR_AGO_NS, HOUR_AGO_NS))

        def new_touch(memdir: MemDir, changed: object) -> None:
            at = HOUR_AGO_NS + next(stamp)
            os.utime(target, ns=(at, at))

        watched = WatchedDir(str(memory))
        os.utime(target, ns=(HOUR_AGO_NS + 500_000, HOUR_AGO_NS + 500_000))
        watched.rebuild(None, _rebuild(isolated_home, same_touch), source="")
        first = watched.recheck_at
        watched.recheck_at = None
        os.utime(target, ns=(HOUR_AGO_NS + 500_000, HOUR_AGO_NS + 500_000))
        watched.rebuild(None, _rebuild(isolated_home, same_touch), source="")
        again = watched.recheck_at
        watched.rebuild(None, _rebuild(isolated_home, new_touch), source="")

        assert first is not None
        assert again is None
        assert watched.recheck_at is not None


class TestRebuildTurns:
    def test_a_slow_mark_lasts_until_the_rebuild_ends_and_asks_for_a_report(
        self,
    ) -> None:
        """Marked slow while busy; its end clears the mark and wakes the daemon."""
        watched = WatchedDir("/m/-a/memory")
        watched.start_rebuild()
        watched.mark_slow()

        assert (True, True) == (watched.busy, watched.is_slow)
        assert watched.end_rebuild(slow_seconds=1.5)
        assert (False, False) == (watched.busy, watched.is_slow)
        assert 1.5 == watched.status.slow_seconds

    def test_a_slow_mark_after_the_end_does_not_stick(self) -> None:
        """The rebuild ended before the settle thread marked it: no stale SLOW."""
        watched = WatchedDir("/m/-a/memory")
        watched.start_rebuild()
        assert not watched.end_rebuild(slow_seconds=None)

        watched.mark_slow()

        assert not watched.is_slow

    def test_changes_while_busy_are_read_in_full_once_it_ends(self) -> None:
        """Pending while busy: due as soon as the rebuild is done, then cleared."""
        watched = WatchedDir("/m/-a/memory")
        watched.start_rebuild()

        assert not watched.wait_for_rebuild()  # still busy: the end wakes it
        assert not watched.take_due(time.monotonic())
        assert watched.end_rebuild(slow_seconds=None)
        assert watched.take_due(time.monotonic())
        watched.start_rebuild()
        assert not watched.pending

    def test_pending_set_after_the_end_asks_for_a_wake(self) -> None:
        """Ended just before `pending` was set: the caller must wake the thread."""
        watched = WatchedDir("/m/-a/memory")

        assert watched.wait_for_rebuild()
