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
