"""watchdog at the boundary: events in, memd's own `Change` batches out.

Behaviour relied on (watchdog 7.1, Linux inotify; SPEC §7):

- Without an `event_filter` watchdog also reports opens and close-without-write,
  so a handler that reads files on any event triggers itself forever. We ask
  for close-after-write, create, delete, move and attribute changes only
  (reading changes no attribute inotify reports: atime is IN_ACCESS).
- One recursive watch on `<base>/projects/` costs a few threads; one watch per
  project costs a thread each. `Discovery.watch_roots` is already minimal.
- Unpaired renames are held by watchdog for up to 0.5 s; settling is per
  memory directory so one slow pair does not delay the others' batches.
- `schedule()` raises `OSError` ENOSPC / EMFILE when inotify watches or
  instances run out (inotify_c.py); that root then goes to a `PollingObserver`.
- A recursive watch adds every directory below one that appears by walking
  it, and also when the creation events of the directories the walk already
  found arrive: a chain made while watchdog walks is added again level by
  level (`inotify.py`, `InotifyWatchGroup.on_event`). Each re-add warns with
  the repr of the whole watch group (700 KB under a 400-level chain, since
  `short_str` is formatted uncalled). memd's inotify reader treats the same
  callback added again to the same watch as the no-op it is.
- On IN_Q_OVERFLOW watchdog rebuilds its watches and logs a warning on
  `watchdog.observers.inotify_c`, emitting no event: we listen to that log
  record and rescan everything.

watchdog can go deaf without a sound: its one shared inotify thread dies on an
exception (a rename storm's KeyError, a RecursionError under a deep chain), a
recursive watch silently skips subdirectories it could not add (ENOSPC), and
warnings can flood the log. `health()` looks for each of these; the daemon
then sweeps the affected directories by stat and calls `restart()` with
backoff to get native watching back.

One watch can also flood (a loop renaming project directories): the policy
is `memd.daemon.flood`'s; the watcher splits or sheds as it says, and
`health()` reports a shed watch for the daemon's stat sweep until it is calm.

Only this module and `memd.daemon.watchdog_probes` (every reach into
watchdog's private attributes) import watchdog; nothing past `Change` knows
its types. `Change`, `Batch` and the settle thread live in
`memd.daemon.settle` (re-exported here).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import os
import sys
import threading
import time

from watchdog.events import (
    DirAttribEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from memd.daemon.discovery import Discovery, WatchRoot, memory_dir_of
from memd.daemon.flood import FloodMeter, Shed, flood_action, floods_to_take
from memd.daemon.settle import (
    ATTRIBUTE_KINDS,
    Batch,
    Change,
    Settler,
    change_kind,
)
from memd.daemon.watch_plan import (
    MAX_WATCH_DEPTH,
    TOO_DEEP,
    bounded_subdirectories,
    can_split,
    coverage_problems,
    expand_roots,
    stat_signature,
    subdirs,
)
from memd.daemon.watchdog_probes import (
    inotify_alive,
    memd_inotify_observer,
    natively_watched,
    reset_shared_inotify,
)

__all__ = ["Batch", "Change", "Watcher"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from structlog.typing import FilteringBoundLogger
    from watchdog.observers.api import ObservedWatch

_EXHAUSTED = frozenset({errno.ENOSPC, errno.EMFILE})
OVERFLOW_COALESCE_SECONDS = 1.0  # overflow warnings this close are one overflow
RUNAWAY_RECORDS_PER_MINUTE = 200  # watchdog log records; more means it is thrashing
_VANISHED = frozenset({errno.ENOENT, errno.ENOTDIR})
_OVERFLOW_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")


class Watcher:
    """Native observer (polling where it must) plus one settle thread."""

    def __init__(
        self,
        *,
        settle_seconds: float,
        on_batch: Callable[[Batch], float | None],
        log: FilteringBoundLogger,
        polling_interval_seconds: float = 2.0,
        max_delay_seconds: float = 2.0,
    ):
        self._log = log
        self._polling: BaseObserver | None = None
        self._polling_interval = polling_interval_seconds
        self.overflows = 0
        self.fallbacks = 0
        self.events = 0
        self._observer, self._kind = self._main_observer()
        self._settler = Settler(
            settle_seconds=settle_seconds,
            max_delay_seconds=max(max_delay_seconds, settle_seconds),
            on_batch=on_batch,
            log=log,
        )
        self._lock = threading.RLock()
        self._watches: dict[WatchRoot, tuple[ObservedWatch, str, BaseObserver]] = {}
        self._dirs: frozenset[str] = frozenset()
        self._files: frozenset[str] = frozenset()
        self._wanted: tuple[str, ...] = ()
        self._projects_root = ""
        self._ignored: tuple[str, ...] = ()
        self._failed: dict[str, str] = {}  # root path -> why it could not be watched
        # Recursive roots watched as parts: a flat watch plus one per subdirectory.
        self._split: set[str] = set()
        self._gaps: set[WatchRoot] = set()  # live recursive watches `health` saw miss
        # Memory dirs too deep to hand to watchdog: only their top level is watched.
        self._shallow: set[str] = set()
        # Watches shed for flooding, swept by stat until calm; what the
        # observer threads found flooding, applied on the settle thread.
        self._shed: dict[WatchRoot, Shed] = {}
        self._meters: dict[WatchRoot, FloodMeter] = {}
        self._flood_lock = threading.Lock()  # never held while calling out
        self._flooded: dict[WatchRoot, float] = {}
        self._previous_excepthook = threading.excepthook
        self._overflow = _OverflowHandler(self._on_overflow)
        self._runaway = _RunawayFilter(RUNAWAY_RECORDS_PER_MINUTE)

    def start(self) -> None:
        """Start the observer and the settle thread (no watches yet)."""
        self._previous_excepthook = threading.excepthook
        threading.excepthook = self._on_thread_death
        for name in _OVERFLOW_LOGGERS:
            logging.getLogger(name).addHandler(self._overflow)
        for name in _watchdog_loggers():
            logging.getLogger(name).addFilter(self._runaway)
        self._observer.start()
        self._settler.start()

    def stop(self) -> None:
        """Finish the batch in progress, then stop every thread this watcher started."""
        self._settler.stop()
        for observer in {self._observer, self._polling}:
            if observer is not None and observer.is_alive():
                observer.stop()
                observer.join(timeout=10)
        for name in _OVERFLOW_LOGGERS:
            logging.getLogger(name).removeHandler(self._overflow)
        for name in _watchdog_loggers():
            logging.getLogger(name).removeFilter(self._runaway)
        if threading.excepthook == self._on_thread_death:
            threading.excepthook = self._previous_excepthook

    def _on_thread_death(self, args: threading.ExceptHookArgs) -> None:
        """A thread died of an exception (watchdog's reader, in a storm): look now.

        The rediscovery this asks for finds the dead reader (`has_failed`),
        so the daemon checks health at once instead of at the full sweep.
        """
        self._previous_excepthook(args)
        self._settler.flag(rediscover=True)

    def ignore(self, paths: tuple[str, ...]) -> None:
        """Drop events at or below `paths` (memd's own cache, state and runtime)."""
        forms = {os.path.abspath(p) for p in paths} | {
            os.path.realpath(p) for p in paths
        }
        self._ignored = tuple(sorted(f.rstrip(os.sep) for f in forms if f))

    def count_fallback(self) -> None:
        """Count one more watch left to the stat sweep (a deaf one the daemon found)."""
        self.fallbacks += 1

    def health(self) -> list[dict[str, object]]:
        """Return each watch root that is not fully watched, and why.

        Looks for a dead inotify reader thread or emitter, a root whose
        schedule failed, subdirectories a recursive watch skipped, trees deeper
        than `MAX_WATCH_DEPTH`, a runaway stream of watchdog warnings, and
        watches shed for flooding.
        """
        with self._lock:
            problems: list[dict[str, object]] = [
                {"root": r, "reason": why} for r, why in self._failed.items()
            ]
            problems.extend(
                {"root": path, "reason": TOO_DEEP} for path in sorted(self._shallow)
            )
            problems.extend(self._shed_problems())
            thread_dead = self._reader_dead()
            runaway = self._runaway.tripped
            if (
                thread_dead
                or runaway
                or any(r.path not in self._dirs for r in self._shed)
            ):
                # Rediscovered, a new memory dir is found by listing, and the
                # daemon checks health again a second later: a retry is due
                # on time, and a reader dead again is seen.
                self._settler.flag(rediscover=True, urgent=False)
            self._gaps.clear()
            alive = self._alive_watches()
            for root, (watch, kind, observer) in sorted(
                self._watches.items(), key=lambda item: item[0].path
            ):
                reason = ""
                if kind == "native" and thread_dead:
                    reason = "inotify thread stopped"
                elif kind == "native" and runaway:
                    reason = "runaway watchdog warnings"
                elif watch not in alive:
                    reason = "watch thread stopped"
                elif root.recursive:
                    # Only the directories a gap leaves deaf, not the whole root.
                    gaps = coverage_problems(
                        root.path,
                        self._dirs,
                        watched=natively_watched(observer, watch)
                        if kind == "native"
                        else None,
                    )
                    problems.extend({"root": p, "reason": why} for p, why in gaps)
                    if gaps:
                        self._gaps.add(root)
                if reason:
                    problems.append({"root": root.path, "reason": reason})
            return problems

    def has_failed(self) -> bool:
        """Whether a root failed to schedule or was shed, or the reader died.

        Cheap, unlike `health`: the daemon asks after each rediscovery, so a
        reader a storm killed is found by the one `_on_thread_death` asks for.
        """
        with self._lock:
            return bool(self._failed or self._shed) or self._reader_dead()

    def restart(self) -> None:
        """Retry native watching for what `health` found deaf.

        A dead shared inotify thread or a runaway warning stream takes a
        fresh observer with every watch again, then a rescan of everything.
        Otherwise a root that failed, lost its emitter or had gaps is only
        scheduled again, by the rediscovery this asks for, and only the
        directories it covers are rescanned. A shed watch is scheduled again
        only once it has been calm (`FLOOD_CALM_SECONDS`).
        """
        with self._lock:
            reader_dead = self._reader_dead()
            whole = self._runaway.tripped or reader_dead
            gaps, self._gaps = self._gaps, set()
            self._failed.clear()  # tried again by the next `watch`
            self._shallow.clear()
            self._unshed_calm()
            if whole:
                self._take_floods(reader_died=reader_dead)
                self._restart_observer()
            else:
                for root in gaps & set(self._watches):
                    self._unschedule(root)
        self._settler.flag(recheck_all=whole, rediscover=True)

    def _reader_dead(self) -> bool:
        return self._kind == "native" and not inotify_alive(self._observer)

    def _restart_observer(self) -> None:
        old = self._observer
        with contextlib.suppress(Exception):  # it may be half dead already
            old.unschedule_all()
            old.stop()
        reset_shared_inotify()
        self._runaway.reset()
        self._observer, self._kind = self._main_observer()
        self._observer.start()
        roots = list(self._watches)
        self._watches.clear()
        self._meters.clear()
        for root in sorted(roots, key=lambda r: (not r.recursive, r.path)):
            self._schedule(root)

    def watch(self, discovery: Discovery) -> list[str]:
        """Make the watches match `discovery`; return the roots (re)added."""
        with self._lock:
            # Other agents' stores route their changes like memory dirs do.
            self._dirs = frozenset(discovery.memory_dirs) | frozenset(discovery.stores)
            self._files = discovery.files
            self._projects_root = discovery.projects_root
            self._wanted = (
                discovery.projects_root,
                *discovery.memory_dirs,
                *discovery.stores,
                *discovery.files,
            )
            self._take_floods()
            wanted = set(self._expand(discovery.watch_roots))
            for path in set(self._failed) - {root.path for root in wanted}:
                del self._failed[path]
            alive = self._alive_watches()
            for root, (watch, _, _) in list(self._watches.items()):
                if root not in wanted or watch not in alive:
                    self._unschedule(root)
            added: list[str] = []
            # A root that failed waits for `restart` (with backoff): each try
            # of a tree watchdog cannot walk leaks the watches it added.
            for root in sorted(
                {r for r in wanted - set(self._watches) if r.path not in self._failed},
                key=lambda r: (not r.recursive, r.path),
            ):
                added.extend(self._schedule(root))
            return added

    def set_settle_seconds(self, seconds: float) -> None:
        """Use a new settle time from the next event on (a config reload)."""
        self._settler.settle_seconds = seconds

    def request(
        self,
        *,
        rediscover: bool = False,
        rescan_all: bool = False,
        reload_config: bool = False,
    ) -> None:
        """Ask the settle thread for work now (a signal, a timer, an overflow)."""
        self._settler.flag(
            rediscover=rediscover, rescan_all=rescan_all, reload_config=reload_config
        )

    def wake_in(self, seconds: float) -> None:
        """Have the settle thread call `on_batch` (empty) within `seconds`."""
        self._settler.tick(seconds)

    def watched_roots(self) -> list[dict[str, object]]:
        """Return each watch: path, recursive, native or polling."""
        with self._lock:
            return [
                {"path": root.path, "recursive": root.recursive, "observer": kind}
                for root, (_, kind, _) in sorted(
                    self._watches.items(), key=lambda i: i[0].path
                )
            ]

    # -- watches ---------------------------------------------------------

    def _main_observer(self) -> tuple[BaseObserver, str]:
        """The native observer; polling when inotify cannot even start (EMFILE)."""
        try:
            return _native_observer(), "native"
        except OSError as error:
            if error.errno not in _EXHAUSTED:
                raise
            self.fallbacks += 1
            self._log.warning("watch_fell_back_to_polling", path="*", error=str(error))
            return self._polling_observer(start=False), "polling"

    def _expand(self, roots: Iterable[WatchRoot]) -> list[WatchRoot]:
        """`roots`, each split or shallow one replaced by its parts, less the shed."""
        return expand_roots(
            roots,
            split=self._split,
            shallow=self._shallow,
            shed=self._shed.keys(),
            stormed={part for shed in self._shed.values() for part in shed.parts},
            projects_root=self._projects_root,
            memory_dirs=self._dirs,
            list_subdirs=subdirs,
        )

    def _watch_in_parts(self, root: WatchRoot) -> list[str]:
        """Watch a tree too deep to watch whole; return the paths now watched.

        A memory dir goes shallow, a directory above one is split, anything
        else is left unwatched (memd.daemon.watch_plan).
        """
        if root.path in self._dirs:
            self._shallow.add(root.path)
            self._log.warning("watch_shallow", path=root.path, reason=TOO_DEEP)
        elif self._can_split(root.path):
            self._split.add(root.path)
            self._log.info("watch_split", path=root.path, reason=TOO_DEEP)
        else:
            return []
        added: list[str] = []
        for part in sorted(self._expand([root]), key=lambda r: r.path):
            if part not in self._watches:
                added.extend(self._schedule(part))
        return added

    def _can_split(self, path: str) -> bool:
        return can_split(
            path, projects_root=self._projects_root, memory_dirs=self._dirs
        )

    def _schedule(self, root: WatchRoot) -> list[str]:
        """Watch `root`; return the paths now watched anew (its parts, if split)."""
        self._failed.pop(root.path, None)
        if root.recursive and bounded_subdirectories(root.path, MAX_WATCH_DEPTH)[1]:
            return self._watch_in_parts(root)
        meter = FloodMeter(time.monotonic(), by_name=not root.recursive)
        self._meters[root] = meter
        handler = _Handler(self._route, meter, lambda rate: self._on_flood(root, rate))
        try:
            watch = self._observer.schedule(
                handler,
                root.path,
                recursive=root.recursive,
                event_filter=_event_filter(polling=self._kind == "polling"),
            )
        except RecursionError:
            # Deepened since the check above: swept until `restart` tries again.
            self.fallbacks += 1
            self._failed[root.path] = "directory tree too deep to watch"
            self._log.warning("watch_failed", path=root.path, error="too deep")
            return []
        except OSError as error:
            if error.errno in _VANISHED:
                # Gone between planning and scheduling: look again after it
                # settles (while a watch is shed, `health` asks every second).
                self._log.warning("watch_failed", path=root.path, error=str(error))
                if not self._shed:
                    self._settler.flag(rediscover=True, urgent=False)
                return []
            # Exhausted watches (ENOSPC) or an unreadable subdirectory (EACCES):
            # polling still sees what it can read.
            self.fallbacks += 1
            self._log.warning(
                "watch_fell_back_to_polling",
                path=root.path,
                error=str(error),
                recursive=root.recursive,
            )
            polling = self._polling_observer()
            try:
                watch = polling.schedule(
                    handler,
                    root.path,
                    recursive=root.recursive,
                    event_filter=_event_filter(polling=True),
                )
            except (OSError, RecursionError) as again:
                self._failed[root.path] = str(again) or type(again).__name__
                self._log.warning("watch_failed", path=root.path, error=str(again))
                return []
            self._watches[root] = (watch, "polling", polling)
            return [root.path]
        self._watches[root] = (watch, self._kind, self._observer)
        return [root.path]

    def _unschedule(self, root: WatchRoot) -> None:
        self._meters.pop(root, None)
        watch, _, observer = self._watches.pop(root)
        # Its emitter may already have died with the directory.
        with contextlib.suppress(KeyError, OSError, RuntimeError):
            observer.unschedule(watch)

    def _alive_watches(self) -> set[ObservedWatch]:
        """The watches whose emitter thread runs: one pass, not one per watch."""
        observers = {self._observer, self._polling} - {None}
        return {
            emitter.watch
            for observer in observers
            if observer is not None
            for emitter in list(observer.emitters)
            if emitter.is_alive()
        }

    def _polling_observer(self, *, start: bool = True) -> BaseObserver:
        if self._polling is None:
            self._polling = PollingObserver(timeout=self._polling_interval)
            if start:
                self._polling.start()
        return self._polling

    def _on_overflow(self) -> None:
        self.overflows += 1
        self._log.warning("watch_queue_overflowed")
        self._settler.flag(recheck_all=True, rediscover=True)

    # -- floods ------------------------------------------------------------

    def _on_flood(self, root: WatchRoot, rate: float) -> None:
        """An observer thread found `root` flooding: have the settle thread act."""
        with self._flood_lock:
            self._flooded[root] = rate
        self._settler.flag(rediscover=True)  # `watch` applies it

    def _take_floods(self, *, reader_died: bool = False) -> None:
        """Split or shed each watch found flooding.

        A recursive root above the memory dirs is split, so its parts are
        metered apart and only the one that storms is shed next. Anything
        else is unscheduled at once and left to the stat sweep.

        A storm can kill the reader (`reader_died`) before any meter trips:
        then a watch hot of late is taken for the storm, or else the
        recursive watch of `projects/` is split, where renames break
        watchdog's bookkeeping (its KeyError).
        """
        with self._flood_lock:
            flooded, self._flooded = self._flooded, {}
        now = time.monotonic()
        projects = WatchRoot(self._projects_root.rstrip(os.sep), recursive=True)
        flooded = floods_to_take(
            flooded,
            self._meters,
            now=now,
            reader_died=reader_died,
            projects=projects,
        )
        for root, rate in sorted(flooded.items(), key=lambda item: item[0].path):
            if root not in self._watches:
                continue  # gone meanwhile
            action = flood_action(
                root.path,
                rate,
                can_split=root.recursive and self._can_split(root.path),
                hot_names=[] if root.recursive else self._meters[root].hot_names(),
            )
            if action.is_split:
                self._split.add(root.path)
                self._log.info("watch_split", path=root.path, reason=action.reason)
                self._unschedule(root)
                continue
            shed = Shed(action.reason, action.deaf, stat_signature(root), now)
            self._shed[root] = shed
            self._log.warning(
                "watch_shed",
                path=root.path,
                reason=action.reason,
                deaf=list(shed.parts),
                fallback="stat sweep",
            )
            self._unschedule(root)

    def _shed_problems(self) -> list[dict[str, object]]:
        """Report the shed watches, noting by stat which ones are still busy.

        A flat watch names what stormed in it, so that only those are swept.
        """
        now = time.monotonic()
        problems: list[dict[str, object]] = []
        for root, shed in sorted(self._shed.items(), key=lambda item: item[0].path):
            shed.observe(stat_signature(root), now)
            problems.extend(
                {"root": part, "reason": shed.reason} for part in shed.parts
            )
        return problems

    def _unshed_calm(self) -> None:
        """Forget each shed watch calm `FLOOD_CALM_SECONDS`: `watch` adds it back."""
        now = time.monotonic()
        for root, shed in list(self._shed.items()):
            shed.observe(stat_signature(root), now)
            if shed.is_calm(now):
                del self._shed[root]
                self._log.info("watch_flood_calm", path=root.path)

    # -- events (observer threads: keep it cheap) --------------------------

    def _route(self, path: str, kind: str, is_directory: bool) -> None:
        self.events += 1
        if path in self._files:  # settings, config, memd's list of known projects
            self._settler.touch_file(path)
            return
        for ignored in self._ignored:
            if path == ignored or path.startswith(ignored + os.sep):
                return
        dirs = self._dirs
        memory_dir = memory_dir_of(path, dirs)
        if memory_dir is None and kind in ATTRIBUTE_KINDS:
            return  # a chmod or touch outside memory changes nothing memd reads
        if memory_dir is not None:
            relpath = os.path.relpath(path, memory_dir).replace(os.sep, "/")
            self._settler.add(
                Change(memory_dir, "" if relpath == "." else relpath, kind)
            )
            if path == memory_dir and is_directory:
                self._settler.flag(rediscover=True, urgent=False)
            return
        if is_directory and self._is_structural(path):
            self._settler.flag(rediscover=True, urgent=False)

    def _is_structural(self, path: str) -> bool:
        """A directory event that can add or remove a memory dir or a watch root."""
        prefix = path.rstrip(os.sep) + os.sep
        if any(wanted.startswith(prefix) or wanted == path for wanted in self._wanted):
            return True
        root = self._projects_root.rstrip(os.sep) + os.sep
        if path.startswith(root):
            parts = path[len(root) :].split(os.sep)
            return len(parts) == 1 or (len(parts) == 2 and parts[1] == "memory")
        return False


def _native_observer() -> BaseObserver:
    """The platform's native observer; memd's own where watchdog allows it."""
    if sys.platform.startswith("linux"):
        memd_observer = memd_inotify_observer()
        if memd_observer is not None:
            return memd_observer()
    return Observer()


def _event_filter(*, polling: bool = False) -> list[type[FileSystemEvent]]:
    # Polling reports content changes as "modified"; it stats, so reading cannot loop.
    extra: list[type[FileSystemEvent]] = [FileModifiedEvent] if polling else []
    # Attributes: a `touch` (utime) changes a recorded stat and writes nothing,
    # so without them only the sweep would see it.
    return [
        FileAttribEvent,
        DirAttribEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileMovedEvent,
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        *extra,
    ]


def _watchdog_loggers() -> list[str]:
    """watchdog's loggers (a logger's filters do not apply to its children)."""
    known = logging.root.manager.loggerDict
    return ["watchdog", *(n for n in list(known) if n.startswith("watchdog."))]


class _Handler(FileSystemEventHandler):
    """Meters one watch and turns each event into one or two `_route` calls."""

    def __init__(
        self,
        route: Callable[[str, str, bool], None],
        meter: FloodMeter,
        on_flood: Callable[[float], None],
    ):
        super().__init__()
        self._route = route
        self._meter = meter
        self._on_flood = on_flood

    def dispatch(self, event: FileSystemEvent) -> None:
        is_dir = event.is_directory
        src = os.fsdecode(event.src_path)
        dest = os.fsdecode(event.dest_path) if event.dest_path else ""
        flood = self._meter.hit(time.monotonic(), src, dest)
        if flood is not None:
            self._on_flood(flood)
        if event.event_type == "moved":
            if src:
                self._route(
                    src, change_kind("moved", is_directory=is_dir, half="from"), is_dir
                )
            if dest:
                self._route(
                    dest, change_kind("moved", is_directory=is_dir, half="to"), is_dir
                )
            return
        if src:
            self._route(src, change_kind(event.event_type, is_directory=is_dir), is_dir)


def _is_overflow(record: logging.LogRecord) -> bool:
    return "overflow" in str(record.msg).lower()


class _OverflowHandler(logging.Handler):
    """Hears watchdog's "queue overflowed" warning, the only sign of lost events."""

    def __init__(self, callback: Callable[[], None]):
        super().__init__(level=logging.WARNING)
        self._callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        if _is_overflow(record):
            self._callback()


class _RunawayFilter(logging.Filter):
    """Lets watchdog's log records through until they come faster than a limit.

    Past `per_minute` in a minute the rest are dropped and `tripped` is set:
    watchdog is thrashing (a deep tree re-added over and over), so the daemon
    treats the native watches as deaf instead of logging hundreds of MiB.
    """

    def __init__(self, per_minute: int):
        super().__init__()
        self.per_minute = per_minute
        self.reset()

    def reset(self) -> None:
        self.window_start = time.monotonic()
        self.count = 0
        self.tripped = False
        self.last_overflow = -math.inf

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if _is_overflow(record):
            # One kernel overflow reaches every emitter of the shared inotify
            # reader, each of which logs it: one rescan answers them all.
            first = now - self.last_overflow >= OVERFLOW_COALESCE_SECONDS
            self.last_overflow = now if first else self.last_overflow
            return first
        if now - self.window_start > 60.0:
            self.window_start, self.count = now, 0
        self.count += 1
        if self.count > self.per_minute:
            self.tripped = True
            return False
        return True
