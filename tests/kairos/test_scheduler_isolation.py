"""One bad directory never stops the others, in every job of the real scheduler.

Bad directories come first in the list: a `logs/<year>` that is a regular
file, a `logs` that is a symlink out of the memory directory, and a FIFO
where MEMORY.md should be. The good directory after them must still rotate
and dream, and each bad one is counted in `status()["failures"]`.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry
from memd.kairos.scheduler import DreamScheduler

LOG = structlog.get_logger()
UTC = dt.UTC


def _wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


class Dirs:
    def __init__(self, root: Path):
        now = dt.datetime.now(UTC)
        self.today = now.date()
        self.year_file = root / "year-file" / "memory"
        (self.year_file / "logs").mkdir(parents=True)
        (self.year_file / "logs" / f"{now.year}").write_text("not a directory\n")
        self.outside = root / "outside"
        self.outside.mkdir()
        self.linked = root / "linked" / "memory"
        self.linked.mkdir(parents=True)
        (self.linked / "logs").symlink_to(self.outside)
        self.fifo = root / "fifo" / "memory"
        self.fifo.mkdir(parents=True)
        append_entry(str(self.fifo), "#fifo never filed", now=now.astimezone())
        os.mkfifo(self.fifo / "MEMORY.md")
        self.good = root / "good" / "memory"
        self.good.mkdir(parents=True)
        append_entry(str(self.good), "#good first", now=now.astimezone())
        self.bad = (self.year_file, self.linked, self.fifo)

    def all(self) -> list[str]:
        return [str(p) for p in (*self.bad, self.good)]

    def today_log(self, memory: Path) -> Path:
        d = self.today
        return memory / f"logs/{d.year}/{d.month:02}/{d:%Y-%m-%d}.md"


@pytest.fixture(name="rig")
def _rig(tmp_path: Path) -> Iterator[tuple[Dirs, DreamScheduler]]:
    dirs = Dirs(tmp_path)
    slot = dt.datetime.now(UTC) - dt.timedelta(hours=1)
    config = Config(
        cache_dir=str(tmp_path / "cache"),
        state_dir=str(tmp_path / "state"),
        dream_time=f"{slot:%H:%M}",
        dream_timezone="UTC",
        dream_grace_hours=6.0,
        telemetry="off",
    )
    scheduler = DreamScheduler(config, memory_dirs=dirs.all, log=LOG)
    scheduler.start()
    yield dirs, scheduler
    scheduler.shutdown()


def _fire_now(scheduler: DreamScheduler, job: str) -> None:
    """Make the real APScheduler run `job` now, on its own thread."""
    aps = scheduler._scheduler
    aps.modify_job(job, next_run_time=dt.datetime.now(UTC))  # type: ignore[attr-defined]


def test_startup_job(rig: tuple[Dirs, DreamScheduler]) -> None:
    """Start-up rotation and catch-up dream reach the good directory."""
    dirs, scheduler = rig
    assert scheduler.startup_finished.wait(30)

    assert dirs.today_log(dirs.good).is_file()
    assert "first" in (dirs.good / "project_good.md").read_text()
    failures = scheduler.status()["failures"]
    assert isinstance(failures, dict)
    assert {str(dirs.year_file), str(dirs.linked), str(dirs.fifo)} <= set(failures)
    assert [] == os.listdir(dirs.outside)  # nothing created through the symlink


def test_rotate_job(rig: tuple[Dirs, DreamScheduler]) -> None:
    """The midnight rotation job goes past the bad directories to the good one."""
    dirs, scheduler = rig
    assert scheduler.startup_finished.wait(30)
    dirs.today_log(dirs.good).unlink()
    before = dict(scheduler.failures)

    _fire_now(scheduler, "rotate")

    assert _wait_for(lambda: dirs.today_log(dirs.good).is_file())
    assert _wait_for(
        lambda: (
            scheduler.failures.get(str(dirs.linked), 0)
            > before.get(str(dirs.linked), 0)
        )
    )
    assert scheduler.failures[str(dirs.year_file)] > before[str(dirs.year_file)]


def test_dream_job(rig: tuple[Dirs, DreamScheduler], tmp_path: Path) -> None:
    """The nightly dream job fails the FIFO directory and still files the good one."""
    dirs, scheduler = rig
    assert scheduler.startup_finished.wait(30)
    os.unlink(tmp_path / "state" / "dreams.json")  # every slot undone again
    append_entry(str(dirs.good), "#good second", now=dt.datetime.now().astimezone())
    before = scheduler.failures.get(str(dirs.fifo), 0)

    _fire_now(scheduler, "dream")

    assert _wait_for(lambda: "second" in (dirs.good / "project_good.md").read_text())
    assert scheduler.dream_job_fires >= 1
    assert scheduler.failures[str(dirs.fifo)] > before


def test_clock_job(rig: tuple[Dirs, DreamScheduler], tmp_path: Path) -> None:
    """After a clock jump over midnight, the good directory still dreams."""
    dirs, scheduler = rig
    assert scheduler.startup_finished.wait(30)
    os.unlink(tmp_path / "state" / "dreams.json")
    append_entry(str(dirs.good), "#good third", now=dt.datetime.now().astimezone())
    # As after a resume from suspend: the last check saw yesterday's wall clock.
    scheduler._last_clock = (time.time() - 86_400, time.monotonic())

    _fire_now(scheduler, "clock")

    assert _wait_for(lambda: "third" in (dirs.good / "project_good.md").read_text())
    assert 1 <= scheduler.clock_jumps
