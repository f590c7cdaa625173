"""The daemon's feed into memory history: every settled change, with its cause.

After each settled batch the directories it touched are recorded as one
change each ("edit", with the agent session the hooks last saw); the first
batch records each directory's difference from its last recorded state as
"stopped" (what happened while memd was not running), after finishing any
restore a kill interrupted. A directory whose record could not take the
history lock (memd's own writer held it) stays pending, with the rest of
the batch (the lock is one for every directory: waiting on each in turn
would stall the settle thread), and is tried again with the same cause.
Retention runs at most hourly per directory. A failure is logged, never
raised: history must never cost a snapshot.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.history.store import History

PRUNE_EVERY_SECONDS = 3600.0
HISTORY_RETRY_SECONDS = 1.0


class HistoryFeed:
    """Records every watched directory's settled changes into `memd.history`."""

    def __init__(self, state_dir: str, log: FilteringBoundLogger) -> None:
        self.state_dir = state_dir
        self.log = log
        self.store: History | None = None
        self.started = False
        self.not_yet_recorded: set[str] = set()  # of the first batch: "stopped"
        self.pending: set[str] = set()
        self.failed = False

    def record(self, dirs: Iterable[str], config: Config) -> None:
        """Record each of `dirs` and those still pending (the first call: "stopped")."""
        if not config.history_enabled or self.failed:
            return
        wanted = sorted(set(dirs) | self.pending)
        if not self.started:
            self.not_yet_recorded = set(wanted)
        try:
            store = self._open()
            for at, memory_dir in enumerate(wanted):
                stopped = memory_dir in self.not_yet_recorded
                cause = "stopped" if stopped else "edit"
                if not self._record_one(store, memory_dir, cause, config):
                    self.pending.update(wanted[at:])
                    break
                self.not_yet_recorded.discard(memory_dir)
        except Exception as error:  # noqa: BLE001 -- one guard for the whole feed
            self.log.warning(
                "history_record_failed", error=f"{type(error).__name__}: {error}"
            )
        self.started = True

    def _open(self) -> History:
        from memd.history.restore import recover
        from memd.history.store import History

        if self.store is None:
            self.store = History.open(self.state_dir)
            recovered = recover(self.state_dir, self.store)
            if recovered is not None:
                self.log.info("history_restore_finished", rev=recovered.rev)
        return self.store

    def _record_one(
        self, store: History, memory_dir: str, cause: str, config: Config
    ) -> bool:
        """Record one directory; False when the history lock was held."""
        from memd.history.record import record_edit
        from memd.history.store import Retention

        change = record_edit(
            store, self.state_dir, memory_dir, cause=cause, log=self.log
        )
        if change is False:
            return False
        self.pending.discard(memory_dir)
        if change is not None and not isinstance(change, bool):
            self.log.debug(
                "history_recorded",
                memory_dir=memory_dir,
                rev=change.rev,
                cause=change.cause,
                files=len(change.files),
            )
        if time.time() - store.pruned_at(memory_dir) >= PRUNE_EVERY_SECONDS:
            dropped = store.prune(
                memory_dir,
                Retention(
                    keep_all_days=config.history_keep_all_days,
                    keep_daily_days=config.history_keep_daily_days,
                    max_bytes=config.history_max_bytes,
                ),
            )
            if dropped:
                self.log.info("history_pruned", memory_dir=memory_dir, versions=dropped)
        return True

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
