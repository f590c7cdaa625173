"""What a settled batch rebuilds, how, and when a rebuild is slow: pure decisions.

The settle thread (memd.daemon.run) asks these and does what they say: it
runs the pool, waits, logs. Nothing here reads a file or starts a thread.

- A batch names changed relpaths per memory directory; a rescan, or an
  event with no relpath (the directory itself), means a full read.
- A rediscovery rescans what a watch just added covers (events before the
  watch were lost), everything on `rescan_all`, and after lost events
  (an overflow, a restarted observer) the directories whose snapshots no
  longer stat as recorded.
- A directory still rebuilding from the last batch is not started again:
  it is read once more, in full, when that rebuild ends.
- Many directories at once (start-up, rescans) share `REBUILD_THREADS`
  workers; fsync releases the GIL, so their snapshot writes overlap. A few
  (a save) rebuild with their fsyncs left to the flusher, off the save's path.
- The settle thread waits until every rebuild is done, or until
  `REBUILD_BUDGET_SECONDS` pass with none finishing: a rebuild still
  running then is slow, finishes in the background and is shown as such.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memd.daemon.settle import RESCAN

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping

    from memd.daemon.settle import Change

REBUILD_BUDGET_SECONDS = 1.0  # past this a rebuild is slow and runs on alone
PARALLEL_FROM_DIRS = 8  # fewer directories: a save, its fsyncs on the flusher
REBUILD_THREADS = 4

Changed = dict[str, frozenset[str] | None]  # memory dir -> relpaths; None: read all


@dataclass(frozen=True, slots=True, kw_only=True)
class RebuildPlan:
    """Which directories start a rebuild now, with what to re-read, and how."""

    start: tuple[tuple[str, frozenset[str] | None], ...]  # (dir, relpaths | None)
    wait: tuple[str, ...]  # still rebuilding: read again in full once done
    threads: int  # workers for `start`
    is_background: bool  # few directories: their fsyncs go to the flusher


@dataclass(frozen=True, slots=True, kw_only=True)
class Rescan:
    """The directories a rediscovery reads in full, and why (for the log)."""

    dirs: frozenset[str]
    reason: str  # "rescan" | "watch_added" | "events_lost"
    is_logged: bool  # worth a `rescan_started` line (lost events always are)


def changed_relpaths(changes: Iterable[Change]) -> Changed:
    """Return each directory's changed relpaths; None where only a full read will do."""
    found: dict[str, set[str] | None] = {}
    for change in changes:
        paths = found.setdefault(change.memory_dir, set())
        if paths is not None:
            if change.kind == RESCAN or not change.relpath:
                found[change.memory_dir] = None
            else:
                paths.add(change.relpath)
    return {d: None if p is None else frozenset(p) for d, p in found.items()}


def is_under_any(path: str, roots: Iterable[str]) -> bool:
    """Whether `path` is one of `roots`, inside one, or contains one."""
    a = path.rstrip(os.sep) + os.sep
    for root in roots:
        b = root.rstrip(os.sep) + os.sep
        if a.startswith(b) or b.startswith(a):
            return True
    return False


def plan_rescan(
    *,
    known: Collection[str],
    added_watches: Collection[str],
    rescan_all: bool,
    recheck_all: bool,
    stale: Iterable[str] = (),
) -> Rescan:
    """Return what a rediscovery must read in full among the `known` directories.

    `stale` (asked only on `recheck_all`) are the directories whose
    snapshots no longer stat as recorded.
    """
    if rescan_all:
        dirs = frozenset(known)
        return Rescan(dirs=dirs, reason="rescan", is_logged=bool(dirs) or recheck_all)
    found = {d for d in known if is_under_any(d, added_watches)}
    reason = "watch_added"
    if recheck_all:
        found |= set(stale)
        reason = "events_lost"
    return Rescan(
        dirs=frozenset(found), reason=reason, is_logged=bool(found) or recheck_all
    )


def plan_rebuilds(
    memory_dirs: Iterable[str],
    changed: Mapping[str, frozenset[str] | None],
    *,
    busy: Collection[str],
    pending: Collection[str],
) -> RebuildPlan:
    """Return which of `memory_dirs` start now and which wait for a busy rebuild.

    A directory `pending` (changes came while it was busy) is read in full.
    """
    start = tuple(
        (path, None if path in pending else changed.get(path))
        for path in memory_dirs
        if path not in busy
    )
    wait = tuple(path for path in memory_dirs if path in busy)
    return RebuildPlan(
        start=start,
        wait=wait,
        threads=min(REBUILD_THREADS, len(start)),
        is_background=len(start) < PARALLEL_FROM_DIRS,
    )


def slow_seconds(took_seconds: float) -> float | None:
    """How long a finished rebuild took, if past its budget (for `memd status`)."""
    if took_seconds > REBUILD_BUDGET_SECONDS:
        return round(took_seconds, 3)
    return None
