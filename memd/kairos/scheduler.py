"""The nightly dream and midnight rotation inside `memd run`, on APScheduler 3.

This is the only module that talks to APScheduler, and it imports it inside
`DreamScheduler.start` so `memd dream` can share `dream_zone` and `run_due`
without paying for it. Jobs live in memory only: the last dream per memory
directory is in the plain state file dreams.json, never a pickled job store.

Whether a directory dreams is always decided by `dream_schedule.should_catch_up`
over that state, so every trigger is idempotent. That matters because:
- APScheduler's cron fires twice on a fall-back night (01:30 EDT, then
  01:30 EST, measured with 3.11); the second finds the slot already done;
- APScheduler does not wake on resume from suspend, so a cheap periodic
  check compares `time.time` with `time.monotonic` and runs the catch-up
  after a jump (or when the latest slot changed under it, e.g. across DST).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time

from memd.kairos.schedule import (
    detect_clock_jump,
    latest_slot,
    next_dream_time,
    parse_dream_time,
    should_catch_up,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.kairos.dream import DreamResult

CLOCK_CHECK_SECONDS = 60.0
CLOCK_JUMP_TOLERANCE_SECONDS = 10.0


def dream_zone(config: Config) -> dt.tzinfo:
    """Return the dream's time zone: the configured IANA zone, else the local one."""
    from zoneinfo import ZoneInfo

    if config.dream_timezone:
        return ZoneInfo(config.dream_timezone)
    try:
        import tzlocal  # an APScheduler dependency; gives a real zone, DST included

        zone: dt.tzinfo = tzlocal.get_localzone()
        return zone
    except (ImportError, LookupError, ValueError):
        local = dt.datetime.now().astimezone().tzinfo
        return local if local is not None else dt.UTC


def _parse_time(raw: object) -> dt.datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        return dt.datetime.fromisoformat(raw)
    except ValueError:
        return None


def is_due(config: Config, memory_dir: str, now: dt.datetime) -> bool:
    """Return True when the catch-up rule says `memory_dir` should dream at `now`."""
    from memd.kairos.daily_log import memory_key
    from memd.kairos.dream import dream_status

    record = dream_status(config.state_dir).get(memory_key(memory_dir), {})
    grace = dt.timedelta(hours=config.dream_grace_hours)
    last = _parse_time(record.get("last_run"))
    return should_catch_up(last, now, config.dream_time, dream_zone(config), grace)


class DreamScheduler:
    """Runs rotation at local midnight and each due dream, with sleep-aware catch-up."""

    def __init__(
        self,
        config: Config,
        *,
        memory_dirs: Callable[[], Iterable[str]],
        log: FilteringBoundLogger,
        on_rotate: Callable[[str, tuple[str, ...]], None] | None = None,
        on_dream: Callable[[DreamResult], None] | None = None,
        clock_check_seconds: float = CLOCK_CHECK_SECONDS,
        telemetry: object | None = None,
        dream_second: int = 0,
        team_sync: Callable[[str], object] | None = None,
        team_interval_seconds: float = 300.0,
        team_settle_seconds: float = 10.0,
        may_dream: Callable[[str, dt.datetime], bool] | None = None,
    ):
        parse_dream_time(config.dream_time)  # fail at construction, not at 03:30
        self._config = config
        self._memory_dirs = memory_dirs
        self._log = log
        self._on_rotate = on_rotate
        self._on_dream = on_dream
        self._clock_check_seconds = clock_check_seconds
        self._telemetry = telemetry
        self._dream_second = dream_second  # tests fire the cron job seconds ahead
        self._zone = dream_zone(config)
        self._run_lock = threading.Lock()
        # The local day the logs were last rotated for: a dream on a new day
        # rotates first, whichever job the scheduler happens to run first.
        self._rotate_lock = threading.Lock()
        self._rotated_on: dt.date | None = None
        self._scheduler: object | None = None
        self._last_clock = (time.time(), time.monotonic())
        self._seen_slot: dt.datetime | None = None
        self._last_results: dict[str, dict[str, object]] = {}
        self.clock_jumps = 0
        self.catch_up_runs = 0
        self.dream_job_fires = 0
        # memory dir -> failed rotations and dreams: one bad directory is
        # logged and counted here, and the job goes on to the next one.
        self.failures: dict[str, int] = {}
        self.startup_finished = threading.Event()
        # team_sync(reason) syncs the due team dirs (memd.team.schedule.sync_teams).
        self._team_sync = team_sync
        self._team_interval_seconds = team_interval_seconds
        self._team_settle_seconds = team_settle_seconds
        self.team_sync_runs = 0
        # may_dream(memory_dir, now): False when another machine dreams this
        # night (memd.sync.schedule.may_dream_here); None: always.
        self._may_dream = may_dream

    def start(self) -> None:
        """Start the background scheduler and queue the start-up catch-up check."""
        from apscheduler.schedulers.background import BackgroundScheduler
        from apscheduler.triggers.cron import CronTrigger
        from apscheduler.triggers.interval import IntervalTrigger

        parsed = parse_dream_time(self._config.dream_time)
        grace = max(1, int(self._config.dream_grace_hours * 3600))
        scheduler = BackgroundScheduler(timezone=self._zone)
        common = {"coalesce": True, "max_instances": 1, "replace_existing": True}
        scheduler.add_job(
            self._dream_job,
            CronTrigger(
                hour=parsed.hour,
                minute=parsed.minute,
                second=self._dream_second,
                timezone=self._zone,
            ),
            id="dream",
            misfire_grace_time=grace,
            **common,
        )
        scheduler.add_job(
            self._rotate_job,
            CronTrigger(hour=0, minute=0, timezone=self._zone),
            id="rotate",
            misfire_grace_time=grace,
            **common,
        )
        scheduler.add_job(
            self._clock_job,
            IntervalTrigger(seconds=self._clock_check_seconds, timezone=self._zone),
            id="clock",
            misfire_grace_time=None,
            **common,
        )
        if self._team_sync is not None:
            scheduler.add_job(
                self._team_job,
                IntervalTrigger(
                    seconds=self._team_interval_seconds, timezone=self._zone
                ),
                args=("interval",),
                id="team-sync",
                misfire_grace_time=None,
                **common,
            )
        # Runs once, right away, on the scheduler's thread: start() never blocks.
        scheduler.add_job(self._startup_job, id="startup", **common)
        self._last_clock = (time.time(), time.monotonic())
        scheduler.start()
        self._scheduler = scheduler
        self._log.info("dream_scheduler_started", next_dream=self._next_iso())

    def team_dir_settled(self) -> None:
        """Sync team memory `team_settle_seconds` from now; later calls push it back.

        The daemon calls this for every settled batch with a change under a
        ``team/`` folder, so a burst of saves ends in one sync.
        """
        import datetime as _dt

        scheduler = self._scheduler
        if scheduler is None or self._team_sync is None:
            return
        run_at = _dt.datetime.now(self._zone) + _dt.timedelta(
            seconds=self._team_settle_seconds
        )
        scheduler.add_job(  # type: ignore[attr-defined]
            self._team_job,
            "date",
            run_date=run_at,
            args=("settled",),
            id="team-sync-settled",
            replace_existing=True,
            misfire_grace_time=None,
        )

    def _team_job(self, reason: str) -> None:
        if self._team_sync is None:
            return
        # A dream and a team sync never run at once: skip while a dream pass runs
        # (the next trigger syncs); the sync also checks each directory's
        # .consolidate-lock, for dreams run by other processes. A dream that
        # finds a sync running is caught up by the clock job's slot check.
        if not self._run_lock.acquire(blocking=False):
            self._log.info("team_sync_skipped", reason=reason, why="dream_running")
            return
        try:
            self._team_sync(reason)
        except Exception:  # noqa: BLE001 -- one guard per unit of work (a sync pass)
            self._log.exception("team_sync_crashed", reason=reason)
        finally:
            self._run_lock.release()
        self.team_sync_runs += 1

    def shutdown(self) -> None:
        """Stop the scheduler, waiting for a running dream to finish its writes."""
        scheduler, self._scheduler = self._scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=True)  # type: ignore[attr-defined]

    def next_dream_time(self) -> dt.datetime | None:
        """Return the next scheduled dream (None when the scheduler is not running)."""
        if self._scheduler is None:
            return None
        job = self._scheduler.get_job("dream")  # type: ignore[attr-defined]
        fire: dt.datetime | None = getattr(job, "next_run_time", None)
        return fire

    def _next_iso(self) -> str | None:
        fire = self.next_dream_time()
        return fire.isoformat() if fire is not None else None

    def status(self) -> dict[str, object]:
        """Return the next dream (ISO time) and the last result per memory directory."""
        from memd.kairos.dream import dream_status

        fire = self.next_dream_time()
        now = dt.datetime.now(self._zone)
        # While the dream job runs, APScheduler may not have moved the job's
        # next run past the slot that just fired: never report a past time.
        if fire is None or fire <= now:
            fire = next_dream_time(now, self._config.dream_time, self._zone).astimezone(
                self._zone
            )
        return {
            "next_dream": fire.isoformat(),
            "dream_time": self._config.dream_time,
            "timezone": str(self._zone),
            "running": self._scheduler is not None,
            "clock_jumps": self.clock_jumps,
            "catch_up_runs": self.catch_up_runs,
            "failures": dict(self.failures),
            "last_results": dream_status(self._config.state_dir),
        }

    def run_due(
        self, now: dt.datetime | None = None, *, reason: str = "schedule"
    ) -> int:
        """Dream each directory whose latest slot is undone; return how many ran."""
        from memd.kairos.dream import run_dream

        now = now or dt.datetime.now(self._zone)
        if self._rotated_on != now.date():
            self.rotate_all(now.date())  # yesterday's logs are closed before any dream
        if not self._run_lock.acquire(blocking=False):
            return 0  # a dream pass is running; it applies the same rule
        ran = 0
        try:
            self._seen_slot = latest_slot(now, self._config.dream_time, self._zone)
            for memory_dir in self._dirs():
                # No logs/, nothing to consolidate: leave the directory untouched.
                if not os.path.isdir(os.path.join(memory_dir, "logs")):
                    continue
                if not is_due(self._config, memory_dir, now):
                    continue
                log = self._log.bind(memory_dir=memory_dir, reason=reason)
                if self._may_dream is not None and not self._may_dream(memory_dir, now):
                    log.info("dream_left_to_another_machine")
                    continue
                try:
                    result = run_dream(
                        memory_dir,
                        self._config,
                        now=now,
                        log=log,
                        telemetry=self._telemetry,
                    )
                except Exception:
                    log.exception("dream_crashed")
                    self._count_failure(memory_dir)
                    continue
                ran += 1
                if not result.ok and result.status != "locked":
                    self._count_failure(memory_dir)
                self._last_results[result.memory_dir] = result.to_dict()
                if self._on_dream is not None:
                    self._on_dream(result)
            if reason != "schedule":
                self.catch_up_runs += ran
        finally:
            self._run_lock.release()
        return ran

    def rotate_all(self, today: dt.date | None = None) -> None:
        """Create today's log where KAIROS logs are kept and queue the closed ones."""
        today = today or dt.datetime.now(self._zone).date()
        with self._rotate_lock:
            self._rotated_on = today
            self._rotate_each(today)

    def _rotate_each(self, today: dt.date) -> None:
        from memd.kairos.daily_log import rotate

        for memory_dir in self._dirs():
            try:
                if not (
                    self._config.kairos
                    or os.path.lexists(os.path.join(memory_dir, "logs"))
                ):
                    continue
                queued = rotate(memory_dir, self._config.state_dir, today=today)
            except Exception as error:  # noqa: BLE001 -- one directory never stops the rest
                self._log.warning(
                    "log_rotation_failed", memory_dir=memory_dir, error=str(error)
                )
                self._count_failure(memory_dir)
                continue
            if queued:
                self._log.info("logs_closed", memory_dir=memory_dir, logs=queued)
            if self._on_rotate is not None:
                self._on_rotate(memory_dir, queued)

    def _count_failure(self, memory_dir: str) -> None:
        self.failures[memory_dir] = self.failures.get(memory_dir, 0) + 1

    def _dirs(self) -> tuple[str, ...]:
        return tuple(self._memory_dirs())

    def _dream_job(self) -> None:
        self.dream_job_fires += 1
        self.run_due(reason="schedule")

    def _rotate_job(self) -> None:
        self.rotate_all()

    def _startup_job(self) -> None:
        try:
            try:
                self.rotate_all()
            finally:  # a rotation that failed outright still leaves the dreams
                self.run_due(reason="startup")
        finally:
            self.startup_finished.set()

    def _clock_job(self) -> None:
        wall, mono = time.time(), time.monotonic()
        prev_wall, prev_mono = self._last_clock
        self._last_clock = (wall, mono)
        now = dt.datetime.now(self._zone)
        jumped = detect_clock_jump(
            prev_wall, prev_mono, wall, mono, CLOCK_JUMP_TOLERANCE_SECONDS
        )
        slot = latest_slot(now, self._config.dream_time, self._zone)
        if jumped:
            self.clock_jumps += 1
            self._log.info(
                "clock_jump_detected",
                wall_delta=wall - prev_wall,
                mono_delta=mono - prev_mono,
            )
        if jumped or slot != self._seen_slot:
            # Slept through midnight: run_due rotates for the new day first.
            self.run_due(now, reason="clock" if jumped else "slot")
