"""Tests for memd.kairos.scheduler with the real APScheduler BackgroundScheduler."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry, memory_key, update_dream_record
from memd.kairos.dream import dream_status
from memd.kairos.scheduler import DreamScheduler, dream_zone

LOG = structlog.get_logger()


def _wait_for(predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


@dataclass
class Rig:
    """A memory directory with one log entry and a UTC-scheduled config."""

    memory: Path
    config: Config
    started: list[DreamScheduler]

    def scheduler(self, **kwargs: int) -> DreamScheduler:
        scheduler = DreamScheduler(
            self.config, memory_dirs=lambda: [str(self.memory)], log=LOG, **kwargs
        )
        self.started.append(scheduler)
        return scheduler

    def record(self) -> dict[str, object]:
        status = dream_status(self.config.state_dir)
        return status.get(memory_key(str(self.memory)), {})


def _rig(tmp_path: Path, dream_time: str) -> Rig:
    memory = tmp_path / "memory"
    memory.mkdir()
    append_entry(str(memory), "#sched one", now=datetime.now().astimezone())
    config = Config(
        cache_dir=str(tmp_path / "cache"),
        state_dir=str(tmp_path / "state"),
        dream_time=dream_time,
        dream_timezone="UTC",
        dream_grace_hours=6.0,
    )
    return Rig(memory, config, [])


@pytest.fixture(name="cleanup")
def _cleanup() -> Iterator[list[Rig]]:
    rigs: list[Rig] = []
    yield rigs
    for rig in rigs:
        for scheduler in rig.started:
            scheduler.shutdown()


class TestDreamZone:
    def test_configured_zone(self, tmp_path: Path) -> None:
        """An IANA name in the config is the zone the cron uses."""
        config = Config(cache_dir="c", state_dir="s", dream_timezone="Europe/Berlin")

        assert "Europe/Berlin" == str(dream_zone(config))

    def test_local_zone_is_a_real_zone(self) -> None:
        """Without a configured zone the local zone is still a usable tzinfo."""
        zone = dream_zone(Config(cache_dir="c", state_dir="s"))

        assert zone.utcoffset(datetime(2026, 1, 1)) is not None


class TestCronJob:
    def test_job_seconds_ahead_fires(self, tmp_path: Path, cleanup: list[Rig]) -> None:
        """The real BackgroundScheduler fires the cron job set seconds ahead.

        APScheduler is imported first and the target taken just before
        start(), so a slow import never pushes the job to tomorrow.
        """
        import apscheduler.schedulers.background
        import apscheduler.triggers.cron  # noqa: F401

        rig = _rig(tmp_path, "00:00")
        cleanup.append(rig)
        target = datetime.now(UTC) + timedelta(seconds=3)
        rig.config = replace(rig.config, dream_time=f"{target:%H:%M}")
        scheduler = rig.scheduler(dream_second=target.second)

        scheduler.start()
        assert target.replace(microsecond=0) == scheduler.next_dream_time()
        fired = _wait_for(lambda: scheduler.dream_job_fires >= 1)
        scheduler.shutdown()

        assert fired is True
        assert rig.record()["last_success"] is not None
        assert 1 == (rig.memory / "project_sched.md").read_text().count(" one <!--")

    def test_status_reports_next_dream(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """status() names the next dream time in the configured zone."""
        rig = _rig(tmp_path, "03:30")
        cleanup.append(rig)
        scheduler = rig.scheduler()
        scheduler.start()

        status = scheduler.status()

        assert str(status["next_dream"]).endswith("03:30:00+00:00")
        assert "UTC" == status["timezone"]


class TestCatchUp:
    def test_missed_run_once_on_start_not_on_second_start(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """State says yesterday, the slot passed: one run at start, none at the next."""
        slot = datetime.now(UTC) - timedelta(hours=1)
        rig = _rig(tmp_path, f"{slot:%H:%M}")
        cleanup.append(rig)
        yesterday = (datetime.now(UTC) - timedelta(hours=25)).isoformat()

        def _seed(record: dict[str, object]) -> None:
            record["last_run"] = record["last_success"] = yesterday

        update_dream_record(rig.config.state_dir, str(rig.memory), _seed)

        first = rig.scheduler()
        first.start()
        assert first.startup_finished.wait(20)
        first.shutdown()
        after_first = rig.record()["last_run"]
        second = rig.scheduler()
        second.start()
        assert second.startup_finished.wait(20)
        second.shutdown()

        assert yesterday != after_first
        assert after_first == rig.record()["last_run"]
        assert (1, 0) == (first.catch_up_runs, second.catch_up_runs)
        assert 1 == (rig.memory / "project_sched.md").read_text().count(" one <!--")

    def test_beyond_grace_not_run(self, tmp_path: Path, cleanup: list[Rig]) -> None:
        """A slot older than the grace period is left for the next night."""
        slot = datetime.now(UTC) - timedelta(hours=7)
        rig = _rig(tmp_path, f"{slot:%H:%M}")
        cleanup.append(rig)
        scheduler = rig.scheduler()

        scheduler.start()
        assert scheduler.startup_finished.wait(20)
        scheduler.shutdown()

        assert rig.record().get("last_run") is None
        assert not (rig.memory / "project_sched.md").exists()

    def test_clock_jump_triggers_catch_up(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """A wall clock eight hours ahead of the monotonic one runs the missed dream."""
        slot = datetime.now(UTC) - timedelta(minutes=30)
        rig = _rig(tmp_path, f"{slot:%H:%M}")
        cleanup.append(rig)
        scheduler = rig.scheduler()
        # As after a resume: the last check saw a wall clock 8 h behind today's.
        scheduler._last_clock = (time.time() - 8 * 3600, time.monotonic())

        scheduler._clock_job()

        assert (1, 1) == (scheduler.clock_jumps, scheduler.catch_up_runs)
        assert (rig.memory / "project_sched.md").is_file()


class TestRotation:
    def test_rotate_all_only_where_logs_exist(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """Rotation creates today's log in a KAIROS dir and leaves others alone."""
        rig = _rig(tmp_path, "03:30")
        cleanup.append(rig)
        plain = tmp_path / "plain"
        plain.mkdir()
        scheduler = DreamScheduler(
            rig.config, memory_dirs=lambda: [str(rig.memory), str(plain)], log=LOG
        )
        today = datetime(2031, 1, 2).date()

        scheduler.rotate_all(today)

        assert (rig.memory / "logs/2031/01/2031-01-02.md").is_file()
        assert [] == os.listdir(plain)

    def test_a_dream_on_a_new_day_closes_yesterdays_log_first(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """At midnight the dream job may run before the rotation job, or without
        it (a late or missed fire): the dream itself rotates for the new day,
        and the rotation job then queues nothing twice."""
        rig = _rig(tmp_path, "00:00")
        cleanup.append(rig)
        rotated: list[tuple[str, tuple[str, ...]]] = []
        scheduler = DreamScheduler(
            rig.config,
            memory_dirs=lambda: [str(rig.memory)],
            log=LOG,
            on_rotate=lambda memory_dir, queued: rotated.append((memory_dir, queued)),
        )
        (written,) = [p.relative_to(rig.memory) for p in rig.memory.rglob("*.md")]
        after = datetime.now(UTC) + timedelta(days=1)
        tomorrow = after.replace(hour=0, minute=0, second=5)

        scheduler.run_due(tomorrow)

        closed = [(str(rig.memory), (str(written),))]
        assert closed == [r for r in rotated if r[1]]
        assert (rig.memory / tomorrow.strftime("logs/%Y/%m/%Y-%m-%d.md")).is_file()
        scheduler.rotate_all(tomorrow.date())  # the rotation job, firing late
        assert closed == [r for r in rotated if r[1]]

    def test_directory_without_logs_untouched(
        self, tmp_path: Path, cleanup: list[Rig]
    ) -> None:
        """A memory dir with no logs/ gets no dream, no lock and no state."""
        rig = _rig(tmp_path, "03:30")
        cleanup.append(rig)
        plain = tmp_path / "plain"
        plain.mkdir()
        scheduler = DreamScheduler(
            rig.config, memory_dirs=lambda: [str(plain)], log=LOG
        )

        ran = scheduler.run_due(datetime(2031, 1, 2, 4, 0, tzinfo=UTC))

        assert (0, []) == (ran, os.listdir(plain))
