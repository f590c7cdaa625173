"""`memd run`: the composition root. Builds the parts, wires them, decides nothing.

All memory work (discovery, loading, linting, rendering, publishing
snapshots) runs on the watcher's one settle thread, so there is one writer and
no locks. Two exceptions, each touching only its own directory's entries: a
rebuild of many directories (start-up, rescans) fans out to a short-lived
pool, and durability work (snapshot fsyncs, writing the status file through
`memd.daemon.status`) runs in order on one flusher thread, so a save never
waits behind the last batch's fsyncs. A directory is re-read in full at start,
on rescans, after a racy build and every `FULL_READ_EVERY` batches; otherwise
only the paths its events name are re-read. Observer threads only route events,
and the main thread only waits for signals (and pings the systemd watchdog when
asked to).
memd never writes into a memory directory here: only into its cache and state.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from memd.daemon.discovery import Discovery, discover
from memd.daemon.notify import notify, watchdog_interval_seconds
from memd.daemon.status import STATUS_HEARTBEAT_SECONDS, StatusWriter
from memd.diagnostics import Severity, count_by_severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.daemon.watcher import Batch
    from memd.diagnostics import Diagnostic
    from memd.kairos.scheduler import DreamScheduler
    from memd.lint.engine import LintCache
    from memd.memory.memdir import MemDir, ParseCache
    from memd.snapshot.build import Snapshot
    from memd.snapshot.publish import Published
    from memd.snapshot.telemetry_sink import TelemetrySink

SLOW_REBUILD_SECONDS = 5.0
REBUILD_RETRY_SECONDS = 5.0
INCREMENTAL_FROM_FILES = 50  # smaller directories are re-read and linted whole
FULL_READ_EVERY = 100  # incremental reads trust events; re-read in full now and then
PARALLEL_FROM_DIRS = 8  # fewer directories rebuild on the settle thread itself
REBUILD_THREADS = 4


def run(
    config: Config, log: FilteringBoundLogger, *, env: Mapping[str, str] | None = None
) -> int:
    """Run the daemon until SIGTERM/SIGINT; return the exit code (0 on a clean stop).

    Raises:
        LockHeldError: another `memd run` holds the single-instance lock.
    """
    from memd.config import runtime_dir
    from memd.locks import acquire_instance_lock

    environ = dict(os.environ if env is None else env)
    with acquire_instance_lock(runtime_dir(environ, state_dir=config.state_dir)):
        return _Daemon(config, log, environ).serve()


class _Daemon:
    def __init__(self, config: Config, log: FilteringBoundLogger, env: dict[str, str]):
        from memd.config import config_path
        from memd.daemon.watcher import Watcher
        from memd.snapshot.publish import SnapshotStore

        self.config = config
        self.log = log
        self.env = env
        self.config_file = config_path(env)
        self.config_stat = _stat_key(self.config_file)
        self.store = SnapshotStore(config.cache_dir)
        self.watcher = Watcher(
            settle_seconds=config.settle_seconds, on_batch=self._on_batch, log=log
        )
        self.discovery: Discovery | None = None
        self.caches: dict[str, ParseCache] = {}
        self.lint_caches: dict[str, LintCache] = {}
        self.memdirs: dict[str, MemDir] = {}  # the last read, for incremental ones
        self.reloads: dict[str, int] = {}  # incremental reads since the last full one
        self.written: dict[
            tuple[str, str], tuple[str, object]
        ] = {}  # (dir, mode) -> (sha, inputs)
        self.dirs: dict[str, dict[str, object]] = {}  # status per memory dir
        self.broken: dict[
            str, dict[str, tuple[str, ...]]
        ] = {}  # dir -> relpath -> error codes
        self.racy: dict[str, float] = {}  # dir -> monotonic time to re-check
        self.disabled_reported: set[tuple[str, str]] = set()  # (project, rule)
        self.sink = self._make_sink(config)
        self.scheduler: DreamScheduler | None = None
        self.started = time.time()
        self.ready = threading.Event()
        self.stopping = threading.Event()
        # Durability work (snapshot fsyncs, the status file) runs here, in order,
        # so a save's snapshot never waits behind the last batch's fsyncs.
        self.flusher = ThreadPoolExecutor(1, "memd-flush")
        self.status = StatusWriter(lambda: self.config.state_dir, self.flusher, log)
        self.rescans = 0
        self.last_status_line = ""

    # -- process ---------------------------------------------------------

    def serve(self) -> int:
        previous = {
            signum: signal.signal(signum, handler)
            for signum, handler in (
                (signal.SIGTERM, self._on_stop_signal),
                (signal.SIGINT, self._on_stop_signal),
                (signal.SIGHUP, self._on_hup),
            )
        }
        try:
            self._remove_stale_temp_files()
            # Made now, the state dir is in the first discovery's watches; made
            # by the first status write, it would add a watch and a rescan later.
            with contextlib.suppress(OSError):
                os.makedirs(self.config.state_dir, mode=0o700, exist_ok=True)
            self.log.info(
                "daemon_starting", pid=os.getpid(), config_file=self.config_file
            )
            self.watcher.start()
            # The first batch: discovery, then the watches, then the full scan.
            self.watcher.request(rediscover=True, rescan_all=True)
            self._start_scheduler()
            ping = watchdog_interval_seconds(self.env)
            while not self.stopping.is_set():
                self.stopping.wait(ping)
                if ping is not None and not self.stopping.is_set():
                    notify("WATCHDOG=1", env=self.env)
        finally:
            notify("STOPPING=1", env=self.env)
            self.log.info("daemon_stopping")
            self.watcher.stop()
            self.flusher.shutdown(wait=True)
            self._stop_scheduler()
            if self.sink is not None:
                self.sink.close()
            self._write_status(force=True, running=False)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        self.log.info("daemon_stopped")
        return 0

    def _on_stop_signal(self, signum: int, frame: object) -> None:
        self.stopping.set()

    def _on_hup(self, signum: int, frame: object) -> None:
        # Work happens on the settle thread; a signal only asks for it.
        self.watcher.request(reload_config=True, rediscover=True)

    # -- the settle thread's work ------------------------------------------

    def _on_batch(self, batch: Batch) -> float | None:
        config_stat = _stat_key(self.config_file)
        # Saved before its directory was watched, the file shows up only as a new stat.
        if (
            batch.reload_config
            or self.config_file in batch.touched_files
            or (batch.rediscover and config_stat != self.config_stat)
        ):
            self.config_stat = config_stat
            self._reload_config()
        dirs = set(batch.memory_dirs)
        changed = _changed_relpaths(batch)
        if batch.rediscover or batch.rescan_all:
            before = set(self.discovery.memory_dirs) if self.discovery else set()
            added_watch = self._rediscover()
            now_dirs = set(self.discovery.memory_dirs) if self.discovery else set()
            dirs |= now_dirs - before
            for gone in before - now_dirs:
                self._forget(gone)
            if batch.rescan_all or added_watch:
                if self.ready.is_set():
                    self.rescans += 1
                    self.log.info(
                        "rescan_started",
                        dirs=len(now_dirs),
                        reason="rescan" if batch.rescan_all else "watch_added",
                    )
                dirs |= now_dirs
                changed.clear()  # a rescan reads everything
        known = set(self.discovery.memory_dirs) if self.discovery else set()
        now = time.monotonic()
        for memory_dir, due in list(self.racy.items()):
            if due <= now:
                del self.racy[memory_dir]
                dirs.add(memory_dir)
                changed.pop(memory_dir, None)  # re-read in full once settled
        self._rebuild_all(sorted(dirs & known), changed)
        if not self.ready.is_set():
            self.ready.set()
            self._write_status(force=True, wait=True)
            notify(f"READY=1\nSTATUS={self._status_line()}", env=self.env)
            self.log.info(
                "daemon_ready",
                dirs=len(known),
                seconds=round(time.time() - self.started, 3),
            )
        else:
            self._write_status()
            line = self._status_line()
            if line != self.last_status_line:
                notify(f"STATUS={line}", env=self.env)
        self.last_status_line = self._status_line()
        waits = [due - time.monotonic() for due in self.racy.values()]
        waits.append(STATUS_HEARTBEAT_SECONDS)
        return max(0.0, min(waits))

    def _rediscover(self) -> bool:
        from memd.state import known_projects

        added = False
        # Watch first, then look again: nothing created in between is missed.
        for _ in range(3):
            discovery = discover(
                self.config,
                env=self.env,
                known_projects=known_projects,
                config_file=self.config_file,
            )
            self.discovery = discovery
            if not self.watcher.watch(discovery):
                break
            added = True
        self._emit_disabled(discovery.disabled)
        return added

    def _emit_disabled(self, disabled: tuple[tuple[str, str], ...]) -> None:
        """Emit `memdir_disabled` once for each project newly found switched off."""
        new = [item for item in disabled if item not in self.disabled_reported]
        self.disabled_reported = set(disabled)
        if self.sink is None or not new:
            return
        from memd.agent.enablement import Enablement
        from memd.snapshot.telemetry import memdir_disabled_event

        for project_root, rule in new:
            event = memdir_disabled_event(
                Enablement(enabled=False, reason=rule), project_root, env=self.env
            )
            self.sink.emit(event)

    def _reload_config(self) -> None:
        from memd.config import load_config
        from memd.errors import ConfigError

        try:
            config = load_config(self.env)
        except ConfigError as error:
            self.log.warning(
                "config_reload_failed", error=str(error), path=self.config_file
            )
            return
        if config == self.config:
            return
        modes_changed = config.modes != self.config.modes
        self.config = config
        self.watcher.set_settle_seconds(config.settle_seconds)
        self.log.info("config_reloaded", path=self.config_file)
        if modes_changed:
            self.written.clear()
            self.watcher.request(rescan_all=True)

    def _forget(self, memory_dir: str) -> None:
        self.caches.pop(memory_dir, None)
        self.lint_caches.pop(memory_dir, None)
        self.memdirs.pop(memory_dir, None)
        self.dirs.pop(memory_dir, None)
        self.broken.pop(memory_dir, None)
        self.racy.pop(memory_dir, None)
        for key in [key for key in self.written if key[0] == memory_dir]:
            del self.written[key]

    def _rebuild_all(
        self, memory_dirs: list[str], changed: Mapping[str, frozenset[str] | None]
    ) -> None:
        """Rebuild each directory: many at once (start-up, rescans) in a few threads.

        The settle thread waits for them all. Each rebuild touches only its own
        directory's entries in the daemon's dicts, and fsync releases the GIL,
        so 1,000 projects' snapshot writes overlap instead of queueing.
        """
        if len(memory_dirs) < PARALLEL_FROM_DIRS:
            for memory_dir in memory_dirs:
                self._guarded_rebuild(memory_dir, changed.get(memory_dir), True)
            return
        with ThreadPoolExecutor(REBUILD_THREADS, "memd-rebuild") as pool:
            for _ in pool.map(
                self._guarded_rebuild,
                memory_dirs,
                [changed.get(d) for d in memory_dirs],
            ):
                pass

    def _guarded_rebuild(
        self,
        memory_dir: str,
        changed: frozenset[str] | None = None,
        background: bool = False,
    ) -> None:
        if self.stopping.is_set():
            return
        started = time.monotonic()
        try:
            self._rebuild(memory_dir, changed, background=background)
        except Exception as error:  # one guard per directory rebuild
            self.log.exception("memory_dir_rebuild_failed", memory_dir=memory_dir)
            self.dirs.setdefault(memory_dir, {})["error"] = (
                f"{type(error).__name__}: {error}"
            )
            # Retry on its own (a full disk frees up without touching the memory dir).
            self.racy[memory_dir] = time.monotonic() + REBUILD_RETRY_SECONDS
        took = time.monotonic() - started
        if took > SLOW_REBUILD_SECONDS:
            self.log.warning(
                "memory_dir_rebuild_slow", memory_dir=memory_dir, seconds=round(took, 3)
            )

    def _rebuild(
        self, memory_dir: str, changed: frozenset[str] | None, *, background: bool
    ) -> None:
        """Re-read (only `changed` relpaths when known), re-render, write if new.

        With `background`, the new snapshot is flushed on the flusher thread.
        """
        from memd.lint.engine import LintCache
        from memd.memory.memdir import ParseCache
        from memd.memory.reader import load_memdir
        from memd.snapshot.build import build_snapshot

        log = self.log.bind(memory_dir=memory_dir)
        status: dict[str, object] = {"source": self._source(memory_dir)}
        self.dirs[memory_dir] = status
        if not os.path.isdir(memory_dir):
            status["missing"] = True
            self.caches.pop(memory_dir, None)
            self.lint_caches.pop(memory_dir, None)
            self.memdirs.pop(memory_dir, None)
            return
        cache = self.caches.get(memory_dir)
        if cache is None:
            cache = self.caches[memory_dir] = ParseCache()
        started_ns = time.time_ns()  # before reading: the racy-input rule needs it
        last_read = self.memdirs.get(memory_dir)
        reloads = self.reloads.get(memory_dir, 0) + 1
        if last_read is None or changed is None or reloads >= FULL_READ_EVERY:
            last_read, changed, reloads = None, None, 0
        memdir = load_memdir(
            memory_dir,
            cache=cache,
            max_file_bytes=self.config.max_topic_file_bytes,
            previous=last_read,
            changed=changed,
        )
        if last_read is None:  # forget files gone since
            cache.prune(os.path.join(memdir.path, f.relpath) for f in memdir.files)
        lint_cache: LintCache | None = None
        if len(memdir.files) >= INCREMENTAL_FROM_FILES:
            # Only a big directory repays keeping its last read and findings.
            self.memdirs[memory_dir], self.reloads[memory_dir] = memdir, reloads
            lint_cache = self.lint_caches.setdefault(memory_dir, LintCache())
        else:
            self.memdirs.pop(memory_dir, None)
            self.lint_caches.pop(memory_dir, None)
        extra = self.env.get("CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES") or None
        first: Snapshot | None = None
        built: dict[str, float] = {}
        window_ns = self._racy_window_ns()
        for mode in self.config.modes:
            snapshot = build_snapshot(
                memdir,
                mode,
                extra_guidelines=extra,
                severities=self.config.lint_severities,
                started_ns=started_ns,
                lint_cache=lint_cache,
            )
            first = first or snapshot
            key = (memory_dir, mode)
            fingerprint = (snapshot.sha256, snapshot.inputs)
            previous = self.written.get(key)
            if previous is None:  # start-up: a warm cache may already hold it
                stale = not self.store.matches(snapshot)
            elif previous == fingerprint:  # a racy re-stamp, or the cache was wiped
                stale = (
                    self.store.read_fresh(memory_dir, mode, extra_guidelines=extra)
                    is None
                )
            else:
                stale = True
            if previous is None and not stale:
                self.written[key] = fingerprint
                self._emit_loaded(snapshot)
            elif stale:
                published = self.store.publish(snapshot)
                if background:
                    self.flusher.submit(self._flush, memory_dir, key, published)
                else:
                    self.store.flush(published)
                self.written[key] = fingerprint
                if previous is None or previous[0] != snapshot.sha256:
                    self._emit_loaded(snapshot)  # a re-stamp is not a new prompt
                log.debug("snapshot_written", mode=mode, sha256=snapshot.sha256)
                if _is_racy(snapshot, window_ns):
                    self.racy[memory_dir] = time.monotonic() + window_ns / 1e9 + 0.05
            built[mode] = snapshot.built_ns / 1e9
        if first is None:  # no modes configured: lint only
            from memd.lint.engine import lint_memdir

            diagnostics = lint_memdir(
                memdir, severities=self.config.lint_severities, cache=lint_cache
            )
        else:
            diagnostics = first.diagnostics
        errors, warnings, _ = count_by_severity(diagnostics)
        status.update(
            lint_errors=errors,
            lint_warnings=warnings,
            snapshots=built,
            modes=list(self.config.modes),
            files=len(memdir.files),
        )
        self._log_transitions(memory_dir, memdir, diagnostics, log)

    def _flush(
        self, memory_dir: str, key: tuple[str, str], published: Published
    ) -> None:
        """Make a published snapshot durable; on failure, write it again later."""
        from memd.errors import SnapshotError

        try:
            self.store.flush(published)
        except SnapshotError as error:  # the old snapshot is back in place
            self.log.warning(
                "snapshot_flush_failed", memory_dir=memory_dir, error=str(error)
            )
            self.written.pop(key, None)
            self.racy[memory_dir] = time.monotonic() + REBUILD_RETRY_SECONDS
            self.watcher.wake_in(REBUILD_RETRY_SECONDS)

    def _log_transitions(
        self,
        memory_dir: str,
        memdir: MemDir,
        diagnostics: tuple[Diagnostic, ...],
        log: FilteringBoundLogger,
    ) -> None:
        """Log a file turning invalid once, and again only when it is fixed."""
        by_file: dict[str, list[Diagnostic]] = {}
        for diagnostic in diagnostics:
            if diagnostic.severity == Severity.ERROR:
                path = _relpath(memory_dir, diagnostic.path or "")
                by_file.setdefault(path, []).append(diagnostic)
        before = self.broken.get(memory_dir, {})
        for path in sorted(set(by_file) - set(before)):
            log.warning(
                "memory_file_broken",
                file=path,
                diagnostics=[d.to_dict() for d in by_file[path]],
            )
        present = {f.relpath for f in memdir.files}
        for path in sorted(set(before) - set(by_file)):
            if path in present or os.path.lexists(os.path.join(memory_dir, path)):
                log.info("memory_file_fixed", file=path)
        self.broken[memory_dir] = {
            path: tuple(sorted(d.code for d in found))
            for path, found in by_file.items()
        }

    # -- parts -------------------------------------------------------------

    def _make_sink(self, config: Config) -> TelemetrySink | None:
        if config.telemetry == "off":
            return None
        from memd.snapshot.telemetry_sink import TelemetrySink, default_path

        return TelemetrySink(
            default_path(config.state_dir), max_bytes=config.telemetry_max_bytes
        )

    def _emit_loaded(self, snapshot: Snapshot) -> None:
        if self.sink is None:
            return
        from memd.snapshot.telemetry import memdir_loaded_event

        types = ("auto", "team") if snapshot.mode == "team" else ("auto",)
        for memory_type in types:
            self.sink.emit(memdir_loaded_event(snapshot, memory_type))

    def _start_scheduler(self) -> None:
        from memd.kairos.scheduler import DreamScheduler

        def memory_dirs() -> tuple[str, ...]:
            return self.discovery.memory_dirs if self.discovery else ()

        try:
            scheduler = DreamScheduler(
                self.config, memory_dirs=memory_dirs, log=self.log, telemetry=self.sink
            )
            scheduler.start()
        except Exception:  # a broken scheduler must not stop lint
            self.log.exception("scheduler_failed")
            return
        self.scheduler = scheduler

    def _stop_scheduler(self) -> None:
        if self.scheduler is not None:
            try:
                self.scheduler.shutdown()
            except Exception:  # stopping goes on regardless
                self.log.exception("scheduler_shutdown_failed")

    def _scheduler_status(self) -> dict[str, object]:
        if self.scheduler is None:
            return {}
        try:
            return dict(self.scheduler.status())
        except Exception:  # noqa: BLE001 -- status is informational
            return {}

    def _remove_stale_temp_files(self) -> None:
        from memd.atomic import remove_stale_temp_files
        from memd.snapshot.publish import sweep_versions

        removed = 0
        for directory, _, _ in os.walk(
            os.path.join(self.config.cache_dir, "snapshots")
        ):
            removed += remove_stale_temp_files(directory)
        if removed:
            self.log.info("stale_temp_files_removed", count=removed)
        sweep_versions(self.config.cache_dir, now_ns=time.time_ns())

    def _racy_window_ns(self) -> int:
        from memd.snapshot.store import RACY_WINDOW_NS

        return RACY_WINDOW_NS

    def _source(self, memory_dir: str) -> str:
        return self.discovery.sources.get(memory_dir, "") if self.discovery else ""

    # -- status --------------------------------------------------------------

    def _status_line(self) -> str:
        errors = sum(int(s.get("lint_errors", 0)) for s in self.dirs.values())  # type: ignore[call-overload]
        return f"watching {len(self.dirs)} memory dirs, {errors} lint errors"

    def _write_status(
        self, *, force: bool = False, running: bool = True, wait: bool = False
    ) -> None:
        """Write daemon.json if it changed: on the flusher unless `wait` or stopped."""
        scheduler = self._scheduler_status()
        data: dict[str, object] = {
            "pid": os.getpid(),
            "running": running,
            "ready": self.ready.is_set(),
            "started": self.started,
            "config_file": self.config_file,
            "dirs": {d: self.dirs[d] for d in sorted(self.dirs)},
            "disabled": [
                list(item)
                for item in (self.discovery.disabled if self.discovery else ())
            ],
            "rescans": self.rescans,
            "queue_overflows": self.watcher.overflows,
            "fallbacks": self.watcher.fallbacks,
            "telemetry_dropped": int(getattr(self.sink, "dropped", 0)),
            "watched_roots": self.watcher.watched_roots(),
            "next_dream": scheduler.get("next_dream"),
            "scheduler": scheduler,
        }
        self.status.write(data, force=force, inline=wait or not running)


def _changed_relpaths(batch: Batch) -> dict[str, frozenset[str] | None]:
    """Return each directory's changed relpaths; None where only a full read will do."""
    found: dict[str, set[str] | None] = {}
    for change in batch.changes:
        paths = found.setdefault(change.memory_dir, set())
        if paths is not None:
            if change.kind == "rescan" or not change.relpath:
                found[change.memory_dir] = None
            else:
                paths.add(change.relpath)
    return {d: None if p is None else frozenset(p) for d, p in found.items()}


def _is_racy(snapshot: Snapshot, window_ns: int) -> bool:
    return any(
        item.mtime_ns >= snapshot.built_ns - window_ns for item in snapshot.inputs
    )


def _stat_key(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, 0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _relpath(memory_dir: str, path: str) -> str:
    if os.path.isabs(path):
        return os.path.relpath(path, memory_dir).replace(os.sep, "/")
    return path
