"""The daemon's history feed (memd.daemon.history_feed) against a held history lock."""

from __future__ import annotations

import os
from pathlib import Path

import structlog

from memd.config import Config
from memd.daemon.history_feed import HistoryFeed
from memd.history.lock import write_lock
from memd.history.store import History

TOPIC = "---\nname: N\ndescription: A note for the feed test\ntype: user\n---\nN.\n"


def test_a_held_lock_keeps_the_whole_batch_pending_with_its_cause(
    tmp_path: Path,
) -> None:
    """memd's own writer holds the lock at start: the first batch waits once, not
    once per directory, and is recorded later as "stopped", not as an edit."""
    dirs = []
    for name in ("a", "b", "c"):
        memory = tmp_path / name / "memory"
        memory.mkdir(parents=True)
        (memory / "note.md").write_text(TOPIC)
        dirs.append(str(memory))
    state = str(tmp_path / "state")
    config = Config(state_dir=state, cache_dir=str(tmp_path / "cache"))
    feed = HistoryFeed(state, structlog.get_logger())

    with write_lock(state) as held:
        assert held
        feed.record(dirs, config)
        assert set(dirs) == feed.pending
    feed.record([], config)

    with History.open(state) as history:
        changes = history.changes()
    recorded = {(os.path.realpath(c.memory_dir), c.cause) for c in changes}
    assert {(os.path.realpath(d), "stopped") for d in dirs} == recorded
    assert set() == feed.pending
