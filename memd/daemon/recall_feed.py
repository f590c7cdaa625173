"""The daemon's feed into the recall index: every directory it reads, one at a time.

Rebuilds run on worker threads and the index holds one SQLite connection,
so updates take turns under a lock. A failure is logged, never raised: the
snapshots matter more, and that directory is compared in full next time.
"""

from __future__ import annotations

import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from memd.memory.memdir import MemDir


class RecallFeed:
    """Feeds every directory the daemon reads into the recall index, one at a time."""

    def __init__(self, cache_dir: str, log: FilteringBoundLogger) -> None:
        from memd.recall.index import RecallUpdater

        self.cache_dir = cache_dir
        self.log = log
        self.updater = RecallUpdater(cache_dir)
        self.lock = threading.Lock()

    def update(self, memdir: MemDir, changed: frozenset[str] | None) -> None:
        try:
            with self.lock:
                error = self.updater.update(memdir, changed)
        except Exception as failure:  # noqa: BLE001 -- recall must never cost a snapshot
            error = f"{type(failure).__name__}: {failure}"
        if error is not None:
            self.log.warning(
                "recall_index_update_failed", memory_dir=memdir.path, error=error
            )

    def forget(self, memory_dir: str) -> None:
        with self.lock:
            self.updater.forget(memory_dir)

    def close(self) -> None:
        with self.lock:
            self.updater.close()
