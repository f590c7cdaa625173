"""`memd run`: the composition root. Builds the parts, wires them, decides nothing.

The daemon is a map of `WatchedDir`s (memd.daemon.watched), one per memory
directory, plus the wiring: the watcher, the scheduler, the status file and
the telemetry sink. All memory work runs on the watcher's one settle thread,
so there is one writer and no locks. Two exceptions, each touching only its
own directory's object: a rebuild of many directories (start-up, rescans)
fans out to a short-lived pool, and durability work (snapshot fsyncs, the
status file) runs in order on one flusher thread, so a save never waits
behind the last batch's fsyncs. Observer threads only route events, and the
main thread only waits for signals (and pings the systemd watchdog).
memd never writes into a memory directory here: only into its cache and state.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from concurrent import futures
from concurrent.futures import ThreadPoolExecutor

from memd.daemon.discovery import Discovery, discover
from memd.daemon.history_feed import HISTORY_RETRY_SECONDS, HistoryFeed
from memd.daemon.notify import notify, watchdog_interval_seconds
from memd.daemon.rebuild import (
    REBUILD_BUDGET_SECONDS,
    changed_relpaths,
    plan_rebuilds,
    plan_rescan,
    slow_seconds,
)
from memd.daemon.recall_feed import RecallFeed
from memd.daemon.reload import is_reload_due, profile_switch, reload_of
from memd.daemon.status import (
    STATUS_HEARTBEAT_SECONDS,
    StatusWriter,
    daemon_status,
    status_line,
)
from memd.daemon.sweep import SweepSchedule
from memd.daemon.truth_feed import TruthFeed
from memd.daemon.watched import REBUILD_RETRY_SECONDS, Rebuild, WatchedDir
from memd.statkey import stat_key
from memd.ui.server import NoViewer, start_viewer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.claude_code.choice import ProfileChoice
    from memd.config import Config
    from memd.daemon.watcher import Batch
    from memd.kairos.scheduler import DreamScheduler
    from memd.snapshot.build import Snapshot
    from memd.snapshot.publish import Published
    from memd.snapshot.telemetry_sink import TelemetrySink
    from memd.ui.server import Viewer

# Handled on the main thread only (see `_signals_held`).
HANDLED_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})


def run(
    config: Config, log: FilteringBoundLogger, *, env: Mapping[str, str] | None = None
) -> int:
    """Run the daemon until SIGTERM/SIGINT; return the exit code (0 on a clean stop).

    Raises:
        LockHeldError: another `memd run` holds the single-instance lock.
    """
    from memd.dirs import runtime_dir
    from memd.locks import acquire_instance_lock
    from memd.logconfig import routed_warnings

    environ = dict(os.environ if env is None else env)
    lock_dir = runtime_dir(environ, state_dir=config.state_dir)
    claims = (config.cache_dir, config.state_dir)
    for directory in claims:  # claimed by real path: make it exist first
        with contextlib.suppress(OSError):
            os.makedirs(directory, mode=0o700, exist_ok=True)
    # Libraries' warnings (watchdog's, from its threads) go through `log`,
    # throttled and cut, never straight to stderr: under systemd that is the journal.
    with (
        routed_warnings(log.bind(component="library")),
        acquire_instance_lock(lock_dir, claims=claims),
        _signals_held(),
    ):
        return _Daemon(config, log, environ).serve()


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Block the daemon's signals while it starts threads; restore the mask after.

    Linux gives a process-directed signal to any thread that does not block
    it, and Python runs handlers only when the main thread wakes. A SIGTERM
    that lands on a watchdog or scheduler thread would leave the main thread
    asleep in its wait for good. Every thread started under this block
    inherits the mask (and so do the threads they start); `_wait_for_stop`
    unblocks the signals on the main thread alone.
    """
    before = signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _Daemon:
    def __init__(self, config: Config, log: FilteringBoundLogger, env: dict[str, str]):
        from memd.daemon.hook_lint_server import HookLinter, HookLintServer
        from memd.daemon.watcher import Watcher
        from memd.dirs import config_path
        from memd.hook_lint import lint_settings, socket_path
        from memd.snapshot.publish import SnapshotStore

        self.config = config
        self.log = log
        self.env = env
        self.config_file = config_path(env)
        self.config_stat = stat_key(self.config_file)
        # What the hooks must match for the daemon to lint for them; None
        # while the config file on disk is one the daemon could not load.
        self.lint_settings: list[object] | None = lint_settings(env)
        self.store = SnapshotStore(config.cache_dir)
        self.watcher = Watcher(
            settle_seconds=config.settle_seconds, on_batch=self._on_batch, log=log
        )
        self.discovery: Discovery | None = None
        self.dirs: dict[str, WatchedDir] = {}  # memory dir -> all known about it
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
        self.sweeps = SweepSchedule(
            sweep_seconds=config.sweep_seconds, now=time.monotonic()
        )
        self.sweep_catches = 0  # directories a sweep found stale
        self._ignore_own_files()
        self.choice = self._choose_profile(None)
        self.recall = RecallFeed(config.cache_dir, log)
        self.history = HistoryFeed(config.state_dir, log)
        self.truth = TruthFeed(
            lambda: self.config, env, log, profile=lambda: self.choice.profile
        )
        # When the settle thread last reported (monotonic: a suspend is no stall).
        self.last_round: float | None = None
        self.hook_linter = HookLinter(
            lambda: (self.config, self.lint_settings),
            lambda memory_dir: memory_dir in self._known(),
            lambda: (
                None if self.last_round is None else time.monotonic() - self.last_round
            ),
        )
        self.hook_lint_server = HookLintServer(
            socket_path(env, state_dir=config.state_dir), self.hook_linter.answer, log
        )
        self.viewer: Viewer | NoViewer = NoViewer()  # `memd ui` (memd.ui.server)

    # -- the story ---------------------------------------------------------

    def serve(self) -> int:
        """Sweep, watch, scan, schedule; then wait for a signal and shut down."""
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
            self.hook_lint_server.start()
            self.viewer = start_viewer(
                lambda: self.config,
                self.env,
                self.log,
                discovery=lambda: self.discovery,
                profile=lambda: self.choice.profile,
            )
            self.watcher.start()
            # The first batch: discovery, then the watches, then the full scan.
            self.watcher.request(rediscover=True, rescan_all=True)
            self._start_scheduler()
            self._wait_for_stop()
        finally:
            notify("STOPPING=1", env=self.env)
            self.log.info("daemon_stopping")
            self.hook_lint_server.stop()
            self.viewer.stop()
            self.watcher.stop()
            self.flusher.shutdown(wait=True)
            self._stop_scheduler()
            if self.sink is not None:
                self.sink.close()
            self.recall.close()
            self.history.close()
            self.truth.close()
            self._write_status(force=True, running=False)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        self.log.info("daemon_stopped")
        return 0

    def _wait_for_stop(self) -> None:
        """Wait for SIGTERM/SIGINT, pinging the systemd watchdog when it asks."""
        ping = watchdog_interval_seconds(self.env)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED_SIGNALS)
        while not self.stopping.is_set():
            self.stopping.wait(ping)
            if ping is not None and not self.stopping.is_set():
                notify("WATCHDOG=1", env=self.env)

    def _on_stop_signal(self, signum: int, frame: object) -> None:
        self.stopping.set()

    def _on_hup(self, signum: int, frame: object) -> None:
        # Work happens on the settle thread; a signal only asks for it.
        self.watcher.request(reload_config=True, rediscover=True)

    # -- the settle thread's work ------------------------------------------

    def _on_batch(self, batch: Batch) -> float | None:
        """Handle one settled batch; return how long the watcher may sleep."""
        self._maybe_reload_config(batch)
        stores_before = self._stores()
        dirs, changed = self._dirs_to_rebuild(batch)
        self._rebuild_all(dirs, changed)
        stores = self._stores_to_record(batch, stores_before)
        self.history.record([*dirs, *stores], self.config)
        for path in dirs:  # a file page's timeline shows the change just recorded
            self.viewer.changed(path)
        self._follow_team_changes(batch)
        self._report()
        waits = [
            w.recheck_at - time.monotonic()
            for w in self.dirs.values()
            if w.recheck_at is not None
        ]
        waits.append(STATUS_HEARTBEAT_SECONDS)
        if self.history.pending:
            waits.append(HISTORY_RETRY_SECONDS)
        waits.append(self.sweeps.seconds_to_next(time.monotonic()))
        return max(0.0, min(waits))

    def _follow_team_changes(self, batch: Batch) -> None:
        """A save under a team/ dir, or any save once personal sync is on:
        have the scheduler sync once it settles."""
        from memd.sync.engine import is_enabled
        from memd.sync.schedule import is_personal_change
        from memd.team.schedule import is_team_change

        personal = is_enabled(self.config.state_dir)
        if self.scheduler is not None and any(
            is_team_change(change.relpath)
            or (personal and is_personal_change(change.relpath))
            for change in batch.changes
        ):
            self.scheduler.team_dir_settled()

    def _maybe_reload_config(self, batch: Batch) -> None:
        config_stat = stat_key(self.config_file)
        if is_reload_due(
            asked=batch.reload_config,
            touched=self.config_file in batch.touched_files,
            rediscovering=batch.rediscover,
            stat_before=self.config_stat,
            stat_now=config_stat,
        ):
            self.config_stat = config_stat
            self._reload_config()

    def _dirs_to_rebuild(
        self, batch: Batch
    ) -> tuple[list[str], dict[str, frozenset[str] | None]]:
        """Return the watched directories this batch touches, and what changed."""
        dirs = set(batch.memory_dirs)
        changed = changed_relpaths(batch.changes)
        if batch.rediscover or batch.rescan_all or batch.recheck_all:
            before = self._known()
            added_watches = self._rediscover()
            now_dirs = self._known()
            # A watch just added, failed, or a new directory whose watches the
            # kernel may have refused: check soon, so a gap is swept from then on.
            if added_watches or now_dirs - before or self.watcher.has_failed():
                self.sweeps.watches_changed()
            dirs |= now_dirs - before
            for gone in before - now_dirs:
                self.history.pending.add(
                    gone
                )  # a deleted dir is recorded, not forgotten
                self.dirs.pop(gone, None)
                self.recall.forget(gone)
                self.hook_linter.forget(gone)
            rescan = plan_rescan(
                known=now_dirs,
                added_watches=added_watches,
                rescan_all=batch.rescan_all,
                recheck_all=batch.recheck_all,
                stale=self._stale(now_dirs) if batch.recheck_all else (),
            )
            if rescan.is_logged and self.ready.is_set():
                self.rescans += 1
                self.log.info(
                    "rescan_started", dirs=len(rescan.dirs), reason=rescan.reason
                )
            dirs |= rescan.dirs
            for path in rescan.dirs:
                changed.pop(path, None)  # a rescan reads everything
        now = time.monotonic()
        if not self.ready.is_set():
            self._remove_stale_memory_temp_files()  # what killed dreams left
        if self.sweeps.is_due(now, is_ready=self.ready.is_set()):
            for stale in self._sweep(now):
                dirs.add(stale)
                changed.pop(stale, None)
        for watched in self.dirs.values():
            if watched.take_due(now):
                dirs.add(watched.path)
                changed.pop(watched.path, None)  # re-read in full once settled
        return sorted(dirs & self._known()), changed

    def _sweep(self, now: float) -> list[str]:
        """Stat-sweep the watched directories; return those found out of date.

        Every `sweep_seconds` all of them, and the watch health is checked;
        while a watch is deaf, the directories under it every
        `DEAF_SWEEP_SECONDS`, and native watching is retried with backoff.
        """
        step = self.sweeps.begin(
            now, is_ready=self.ready.is_set(), sweep_seconds=self.config.sweep_seconds
        )
        if step.is_full:
            self._check_profile()
            self._remove_stale_memory_temp_files()
            # Off the settle thread: memory against each project's HEAD.
            self.truth.poll(self._known())
        if step.checks_health:
            self._check_watch_health(now)
        stale = self._stale(self.sweeps.to_sweep(now, list(self.dirs), step))
        if stale:
            self.sweep_catches += len(stale)
            self.log.info("sweep_found_stale", dirs=len(stale))
        return stale

    def _stale(self, paths: Iterable[str]) -> list[str]:
        """The watched directories among `paths` whose snapshots no longer stat so."""
        extra = self.env.get("CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES") or None
        return [
            path
            for path in paths
            if (watched := self.dirs.get(path)) is not None
            and watched.is_stale(self.store, self.config.modes, extra)
        ]

    def _remove_stale_memory_temp_files(self) -> None:
        """Remove `.memd-tmp-*` files a killed dream or fix left in memory dirs."""
        from memd.atomic import remove_stale_temp_files_tree

        for memory_dir in sorted(self._known()):
            removed = remove_stale_temp_files_tree(memory_dir)
            if removed:
                self.log.info(
                    "stale_temp_files_removed", memory_dir=memory_dir, count=removed
                )

    def _check_watch_health(self, now: float) -> None:
        """Find deaf watches, log each once, and retry native watching with backoff."""
        verdict = self.sweeps.health_checked(now, self.watcher.health())
        for problem in verdict.newly_deaf:
            self.watcher.count_fallback()
            self.log.warning("watch_deaf", **problem, fallback="stat sweep")
        if verdict.restart_retry_in is not None:
            self.log.info("watch_restarting", retry_in=verdict.restart_retry_in)
            self.watcher.restart()

    def _ignore_own_files(self) -> None:
        """Never react to memd's own writes, even when they lie in a watched tree."""
        from memd.dirs import runtime_dir

        own = (self.config.cache_dir, self.config.state_dir)
        runtime = runtime_dir(self.env, state_dir=self.config.state_dir)
        self.watcher.ignore((*own, runtime))

    def _known(self) -> set[str]:
        return set(self.discovery.memory_dirs) if self.discovery else set()

    def _stores(self) -> set[str]:
        """Other agents' stores: kept in history, never rebuilt (memd.agents)."""
        return set(self.discovery.stores) if self.discovery else set()

    def _stores_to_record(self, batch: Batch, before: set[str]) -> list[str]:
        """The stores this batch touched, those new or gone since, and at start all."""
        now = self._stores()
        wanted = (set(batch.memory_dirs) & (now | before)) | (before ^ now)
        if not self.ready.is_set() or batch.rescan_all:
            wanted |= now
        return sorted(wanted)

    def _report(self) -> None:
        """Tell systemd and daemon.json how things stand (READY=1 the first time)."""
        line = self._status_line()
        self.last_round = time.monotonic()
        if not self.ready.is_set():
            self.ready.set()
            self._write_status(force=True, wait=True)
            notify(f"READY=1\nSTATUS={line}", env=self.env)
            self.log.info(
                "daemon_ready",
                dirs=len(self._known()),
                seconds=round(time.time() - self.started, 3),
            )
        else:
            self._write_status()
            if line != self.last_status_line:
                notify(f"STATUS={line}", env=self.env)
        self.last_status_line = line

    def _rediscover(self) -> list[str]:
        """Discover and watch; return the watch roots (re)added."""
        from memd.state import known_projects

        added: list[str] = []
        # Watch first, then look again: nothing created in between is missed.
        for _ in range(3):
            discovery = discover(
                self.config,
                env=self.env,
                known_projects=known_projects,
                config_file=self.config_file,
                profile=self.choice.profile,
            )
            self.discovery = discovery
            new = self.watcher.watch(discovery)
            if not new:
                break
            added.extend(new)
        self._emit_disabled(discovery.disabled)
        return added

    def _emit_disabled(self, disabled: tuple[tuple[str, str], ...]) -> None:
        """Emit `memdir_disabled` once for each project newly found switched off."""
        new = [item for item in disabled if item not in self.disabled_reported]
        self.disabled_reported = set(disabled)
        if self.sink is None or not new:
            return
        from memd.claude_code.enablement import Enablement
        from memd.snapshot.telemetry import memdir_disabled_event

        for project_root, rule in new:
            event = memdir_disabled_event(
                Enablement(enabled=False, reason=rule), project_root, env=self.env
            )
            self.sink.emit(event)

    def _reload_config(self) -> None:
        from memd.config import load_config
        from memd.errors import ConfigError
        from memd.hook_lint import lint_settings

        settings = lint_settings(self.env)  # before the read: a later save differs
        try:
            config = load_config(self.env)
        except ConfigError as error:
            self.lint_settings = None
            self.log.warning(
                "config_reload_failed", error=str(error), path=self.config_file
            )
            return
        self.lint_settings = settings
        changes = reload_of(self.config, config)
        if changes is None:
            return
        self.config = config
        self.watcher.set_settle_seconds(config.settle_seconds)
        self._ignore_own_files()
        self.log.info("config_reloaded", path=self.config_file)
        if changes.rewrites_all:
            self._rewrite_all()
        if changes.moves_recall:
            self.recall.close()
            self.history.close()
            self.recall = RecallFeed(config.cache_dir, self.log)
            self._rewrite_all()
        self._check_profile()

    def _choose_profile(self, previous: ProfileChoice | None) -> ProfileChoice:
        """Choose the agent profile in force; log the first choice and each change."""
        from memd.claude_code.choice import in_force

        choice = in_force(self.config, self.env)
        if profile_switch(previous, choice).is_logged:
            version, reason = choice.profile.version, choice.reason
            self.log.info("agent_profile_chosen", version=version, reason=reason)
        return choice

    def _check_profile(self) -> None:
        """Re-choose the agent profile (a Claude Code upgrade, a new pin); re-render."""
        previous = self.choice
        self.choice = self._choose_profile(previous)
        if profile_switch(previous, self.choice).rerenders:
            self._rewrite_all()
            self.watcher.request(rediscover=True)

    def _rewrite_all(self) -> None:
        """Forget every written snapshot, so the next full scan writes them all."""
        for watched in self.dirs.values():
            watched.forget_written()
        self.watcher.request(rescan_all=True)

    # -- rebuilding ----------------------------------------------------------

    def _rebuild_all(
        self, memory_dirs: list[str], changed: Mapping[str, frozenset[str] | None]
    ) -> None:
        """Rebuild each directory in worker threads; wait for slow ones only a while.

        `memd.daemon.rebuild` decides which start, on how many threads, and
        when a rebuild is slow: it then finishes in the background, shown in
        `memd status`, and never holds up the others' snapshots.
        """
        shared = Rebuild(
            config=self.config,
            extra_guidelines=self.env.get("CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES")
            or None,
            store=self.store,
            emit_loaded=self._emit_loaded,
            log=self.log,
            profile=self.choice.profile,
            on_read=self.recall.update,
        )
        for path in memory_dirs:
            self.dirs.setdefault(path, WatchedDir(path))
        plan = plan_rebuilds(
            memory_dirs,
            changed,
            busy={p for p in memory_dirs if self.dirs[p].busy},
            pending={p for p in memory_dirs if self.dirs[p].pending},
        )
        for path in plan.wait:  # still on its last rebuild: read it again after
            if self.dirs[path].wait_for_rebuild():
                self.watcher.wake_in(0.0)
        if not plan.start:
            return
        pool = ThreadPoolExecutor(plan.threads, "memd-rebuild")
        running = set()
        for path, relpaths in plan.start:
            watched = self.dirs[path]
            watched.start_rebuild()
            running.add(
                pool.submit(
                    self._guarded_rebuild,
                    watched,
                    relpaths,
                    shared,
                    background=plan.is_background,
                )
            )
        pool.shutdown(wait=False)  # slow rebuilds finish on their own threads
        while running:
            done, running = futures.wait(
                running,
                timeout=REBUILD_BUDGET_SECONDS,
                return_when=futures.FIRST_COMPLETED,
            )
            if not done:
                break
        for path, _ in plan.start:
            watched = self.dirs[path]
            if watched.busy:
                watched.mark_slow()
                self.log.warning(
                    "memory_dir_rebuild_slow",
                    memory_dir=watched.path,
                    budget_seconds=REBUILD_BUDGET_SECONDS,
                )

    def _guarded_rebuild(
        self,
        watched: WatchedDir,
        changed: frozenset[str] | None,
        shared: Rebuild,
        *,
        background: bool = False,
    ) -> None:
        """Rebuild one directory; a failure is logged and retried, never spread."""
        took = None
        try:
            if self.stopping.is_set():
                return
            started = time.monotonic()
            try:
                watched.rebuild(
                    changed,
                    shared,
                    source=self._source(watched.path),
                    flush_later=self._flush_later if background else None,
                )
            except Exception as error:  # one guard per directory rebuild
                self.log.exception("memory_dir_rebuild_failed", memory_dir=watched.path)
                watched.failed(error)
            took = slow_seconds(time.monotonic() - started)
        finally:
            if watched.end_rebuild(slow_seconds=took):
                self.watcher.wake_in(0.0)  # pick up what waited, report the end
            self.viewer.changed(watched.path)  # open pages refresh (SSE)

    def _flush_later(
        self, watched: WatchedDir, mode: str, published: Published
    ) -> None:
        self.flusher.submit(self._flush, watched, mode, published)

    def _flush(self, watched: WatchedDir, mode: str, published: Published) -> None:
        """Make a published snapshot durable; on failure, write it again later."""
        from memd.errors import SnapshotError

        try:
            self.store.flush(published)
        except SnapshotError as error:  # the old snapshot is back in place
            self.log.warning(
                "snapshot_flush_failed", memory_dir=watched.path, error=str(error)
            )
            watched.flush_failed(mode)
            self.watcher.wake_in(REBUILD_RETRY_SECONDS)

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
        from memd.sync.schedule import (
            job_interval_seconds,
            job_settle_seconds,
            may_dream_here,
        )

        def memory_dirs() -> tuple[str, ...]:
            return self.discovery.memory_dirs if self.discovery else ()

        def team_sync(reason: str) -> object:
            from memd.sync.schedule import sync_if_due
            from memd.team.schedule import sync_teams

            log = self.log.bind(component="team")
            teams = sync_teams(memory_dirs(), self.config, log=log, reason=reason)
            personal = self.log.bind(component="sync")
            return teams, sync_if_due(self.config, log=personal, reason=reason)

        try:
            scheduler = DreamScheduler(
                self.config,
                memory_dirs=memory_dirs,
                log=self.log,
                telemetry=self.sink,
                # After a job, daemon.json must show the next dream, not the last.
                on_dream=lambda result: self.watcher.wake_in(0.0),
                on_rotate=lambda memory_dir, closed: self.watcher.wake_in(0.0),
                team_sync=team_sync,
                team_interval_seconds=job_interval_seconds(self.config),
                team_settle_seconds=job_settle_seconds(self.config),
                may_dream=lambda memory_dir, now: may_dream_here(
                    self.config, memory_dir, now, log=self.log.bind(component="sync")
                ),
            )
            scheduler.start()
            scheduler.team_dir_settled()  # one sync soon after start-up
        except Exception:  # a broken scheduler must not stop lint
            self.log.exception("scheduler_failed")
            return
        self.scheduler = scheduler
        # daemon.json may have gone out before the scheduler had a next dream:
        # an empty batch on the settle thread writes it again with one.
        self.watcher.wake_in(0.0)

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

    def _source(self, memory_dir: str) -> str:
        return self.discovery.sources.get(memory_dir, "") if self.discovery else ""

    # -- status --------------------------------------------------------------

    def _status_line(self) -> str:
        return status_line(
            dirs=len(self.dirs),
            slow=sum(1 for w in self.dirs.values() if w.busy),
            lint_errors=sum(w.status.lint_errors or 0 for w in self.dirs.values()),
        )

    def _write_status(
        self, *, force: bool = False, running: bool = True, wait: bool = False
    ) -> None:
        """Write daemon.json if it changed: on the flusher unless `wait` or stopped."""
        data = daemon_status(
            pid=os.getpid(),
            running=running,
            ready=self.ready.is_set(),
            started=self.started,
            config_file=self.config_file,
            dirs={
                path: watched.status.to_dict(is_slow=watched.is_slow)
                for path, watched in self.dirs.items()
            },
            disabled=self.discovery.disabled if self.discovery else (),
            rescans=self.rescans,
            queue_overflows=self.watcher.overflows,
            fallbacks=self.watcher.fallbacks,
            deaf=self.sweeps.deaf,
            sweep_catches=self.sweep_catches,
            hook_lint={
                "socket": self.hook_lint_server.path,
                "listening": self.hook_lint_server.listening,
                "crashes": self.hook_lint_server.crashes,
            },
            telemetry_dropped=int(getattr(self.sink, "dropped", 0)),
            watched_roots=self.watcher.watched_roots(),
            agent_profile=(self.choice.profile.version, self.choice.reason),
            scheduler=self._scheduler_status(),
        )
        self.status.write(data, force=force, inline=wait or not running)
