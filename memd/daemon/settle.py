"""Settling: coalesce a memory directory's changes until it has been quiet a while.

The watcher's observer threads `add` changes here; the one settle thread hands
them to the daemon as `Batch`es, each directory settling on its own, and runs
the daemon's work itself (never on an observer thread). Nothing here knows
watchdog: `memd.daemon.watcher` turns its events into `Change`s.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from structlog.typing import FilteringBoundLogger


# Change.kind, each named once: watchdog's event types (as the watcher's
# event filter lets them through), a move split into its two halves, and a
# directory's own events apart from a file's.
CLOSED = "closed"
CREATED = "created"
DELETED = "deleted"
MODIFIED = "modified"  # the polling observer's only news of an in-place save
MOVED_FROM = "moved_from"
MOVED_TO = "moved_to"
ATTRIB = "attrib"  # a touch or chmod: a recorded stat changed, nothing written
DIR_CREATED = "dir_created"
DIR_DELETED = "dir_deleted"
DIR_MODIFIED = "dir_modified"
DIR_MOVED_FROM = "dir_moved_from"
DIR_MOVED_TO = "dir_moved_to"
DIR_ATTRIB = "dir_attrib"
RESCAN = "rescan"  # re-read the whole directory
_TABLE = (  # watchdog's event type, the half of a move, a file's kind, a directory's
    ("closed", "", CLOSED, None),
    ("created", "", CREATED, DIR_CREATED),
    ("deleted", "", DELETED, DIR_DELETED),
    ("modified", "", MODIFIED, DIR_MODIFIED),
    ("moved", "from", MOVED_FROM, DIR_MOVED_FROM),
    ("moved", "to", MOVED_TO, DIR_MOVED_TO),
    ("attrib", "", ATTRIB, DIR_ATTRIB),
)
_KINDS = {  # (event type, is a directory, half of a move) -> kind
    (event, is_dir, half): kind
    for event, half, file_kind, dir_kind in _TABLE
    for is_dir, kind in ((False, file_kind), (True, dir_kind))
    if kind is not None
}


ATTRIBUTE_KINDS = frozenset({ATTRIB, DIR_ATTRIB})


def change_kind(event_type: str, *, is_directory: bool, half: str = "") -> str:
    """Return the Change.kind of a watchdog event (`half`: "from"/"to" of a move).

    An event type the filter should not let through reads as a modification:
    the directory is re-read either way.
    """
    return _KINDS.get(
        (event_type, is_directory, half), DIR_MODIFIED if is_directory else MODIFIED
    )


@dataclass(frozen=True, slots=True)
class Change:
    """Something happened at `relpath` ("" for the directory itself) in `memory_dir`."""

    memory_dir: str
    relpath: str
    kind: str  # one of the names above: CLOSED, CREATED, ..., RESCAN


@dataclass(frozen=True, slots=True, kw_only=True)
class Batch:
    """Settled work for the daemon: changed directories and what else to redo."""

    changes: tuple[Change, ...] = ()
    touched_files: frozenset[str] = frozenset()  # watched settings/config files
    rediscover: bool = False
    rescan_all: bool = False
    recheck_all: bool = False  # events were lost: rebuild whatever stats out of date
    reload_config: bool = False

    @property
    def memory_dirs(self) -> tuple[str, ...]:
        """Return the memory directories with changes, sorted."""
        return tuple(sorted({change.memory_dir for change in self.changes}))


class Settler(threading.Thread):
    """Coalesces changes per memory directory until `settle_seconds` pass quietly.

    Like watchdog's EventDebouncer, one thread; unlike it, each directory
    settles on its own, and `max_delay_seconds` bounds the wait under a
    never-ending stream. The daemon's work runs here, never on an observer thread.
    """

    def __init__(
        self,
        *,
        settle_seconds: float,
        max_delay_seconds: float,
        on_batch: Callable[[Batch], float | None],
        log: FilteringBoundLogger,
    ):
        super().__init__(name="memd-settle", daemon=True)
        self.settle_seconds = settle_seconds
        self._max_delay = max_delay_seconds
        self._on_batch = on_batch
        self._log = log
        self._cond = threading.Condition()
        self._pending: dict[str, list[Change]] = {}
        self._first: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._files: set[str] = set()
        self._flags = dict.fromkeys(
            ("rediscover", "rescan_all", "recheck_all", "reload_config"), False
        )
        self._flag_due: float | None = None
        self._tick_due: float | None = None
        self._stopping = False

    def add(self, change: Change) -> None:
        now = time.monotonic()
        with self._cond:
            self._pending.setdefault(change.memory_dir, []).append(change)
            self._first.setdefault(change.memory_dir, now)
            self._last[change.memory_dir] = now
            self._cond.notify()

    def touch_file(self, path: str) -> None:
        with self._cond:
            self._files.add(path)
        self.flag(rediscover=True, urgent=False)

    def flag(
        self,
        *,
        rediscover: bool = False,
        rescan_all: bool = False,
        recheck_all: bool = False,
        reload_config: bool = False,
        urgent: bool = True,
    ) -> None:
        due = time.monotonic() + (0.0 if urgent else self.settle_seconds)
        with self._cond:
            for name, value in (
                ("rediscover", rediscover),
                ("rescan_all", rescan_all),
                ("recheck_all", recheck_all),
                ("reload_config", reload_config),
            ):
                self._flags[name] |= value
            if self._flag_due is None:
                self._flag_due = due
            else:
                # Urgent work jumps the queue; settling work waits for the last event.
                self._flag_due = (
                    min(self._flag_due, due) if urgent else max(self._flag_due, due)
                )
            self._cond.notify()

    def tick(self, seconds: float) -> None:
        due = time.monotonic() + seconds
        with self._cond:
            self._tick_due = due if self._tick_due is None else min(self._tick_due, due)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self.is_alive():
            self.join()

    def run(self) -> None:
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            try:
                wake = self._on_batch(batch)
            except Exception:  # noqa: BLE001 -- one guard per unit of work; the daemon goes on
                self._log.exception("batch_failed")
                wake = None
            if wake is not None:
                self.tick(wake)

    def _next_batch(self) -> Batch | None:
        with self._cond:
            while True:
                if self._stopping:
                    return None
                now = time.monotonic()
                ready = [
                    d
                    for d in self._pending
                    if now - self._last[d] >= self.settle_seconds
                    or now - self._first[d] >= self._max_delay
                ]
                flags_ready = self._flag_due is not None and now >= self._flag_due
                tick_ready = self._tick_due is not None and now >= self._tick_due
                if ready or flags_ready or tick_ready:
                    break
                deadlines = [
                    min(
                        self._last[d] + self.settle_seconds,
                        self._first[d] + self._max_delay,
                    )
                    for d in self._pending
                ]
                deadlines += [
                    t for t in (self._flag_due, self._tick_due) if t is not None
                ]
                self._cond.wait(max(0.0, min(deadlines) - now) if deadlines else None)
            changes: list[Change] = []
            for d in ready:
                changes.extend(self._pending.pop(d))
                del self._first[d], self._last[d]
            flags = dict.fromkeys(self._flags, False)
            files: frozenset[str] = frozenset()
            if flags_ready:
                flags, self._flags = self._flags, dict.fromkeys(self._flags, False)
                files, self._files = frozenset(self._files), set()
                self._flag_due = None
            if tick_ready:
                self._tick_due = None
            return Batch(changes=tuple(changes), touched_files=files, **flags)
