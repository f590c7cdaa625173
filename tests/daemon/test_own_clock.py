"""`memd run` on its own clock: libfaketime moves the wall clock, nothing is forged.

Each test starts a real daemon under Debian's `faketime` with a wall clock a
few seconds before midnight or a dream time, and lets the daemon's own
APScheduler jobs fire. `FAKETIME_DONT_FAKE_MONOTONIC=1` keeps the monotonic
clock real, as it is on a machine whose wall clock is set. The fake start is
an offset from a UTC instant, so an ambiguous local time (fall-back) is
never parsed. Deadlines count from READY and allow 5x the expected wait.

Python 3.11's `time.sleep` fails with EINVAL under this libfaketime
(wolfcw/libfaketime#426: clock_nanosleep on CLOCK_MONOTONIC with
TIMER_ABSTIME); memd's daemon waits on events only, which these tests prove.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.kairos.daily_log import append_entry
from tests.conftest import Home
from tests.daemon.conftest import Daemon, Starter, backdate, topic, wait_for

LEAD_SECONDS = 20.0  # fake start before the instant: 5x a 4 s start-up under load
HEADROOM = 5.0
NEW_YORK = "America/New_York"


def _memory(home: Home) -> Path:
    memory = home.claude / "projects" / "-work-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text(topic("user_role"))
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    return memory


def _config(home: Home, dream_time: str) -> None:
    (home.config / "memd").mkdir(parents=True, exist_ok=True)
    (home.config / "memd" / "config.toml").write_text(
        f'[dream]\ntime = "{dream_time}"\ngrace_hours = 12\n\n[prompt]\nkairos = true\n'
    )


def libfaketime() -> str:
    """Path of Debian's multi-threaded libfaketime (package faketime)."""
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketimeMT.so.1")) + sorted(
        glob.glob("/usr/lib/faketime/libfaketimeMT.so.1")
    )
    if not found:
        pytest.skip("libfaketime (Debian package faketime) is not installed")
    return found[0]


def _faked(instant: dt.datetime, tz: str) -> dict[str, str]:
    """The environment that puts a process's wall clock at `instant`, zone `tz`."""
    return {
        "LD_PRELOAD": libfaketime(),
        "FAKETIME": f"{instant.timestamp() - time.time():+.3f}",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "TZ": tz,
    }


def _start_at(start_daemon: Starter, instant: dt.datetime, tz: str) -> Daemon:
    """Start `memd run` with its wall clock at `instant` (aware), zone `tz`.

    LD_PRELOAD directly, not the `faketime` wrapper: the wrapper forks, so a
    SIGTERM would stop it and leave the daemon running.
    """
    launched = time.monotonic()
    daemon = start_daemon(**_faked(instant, tz))
    startup = time.monotonic() - launched
    if startup >= LEAD_SECONDS - 1:
        pytest.fail(f"memd run took {startup:.1f} s to be READY; the test needs less")
    return daemon


def _dreams(daemon: Daemon) -> list[dict[str, object]]:
    return daemon.events("dream_completed")


def _last_run(home: Home) -> str:
    data = json.loads((home.state / "memd" / "dreams.json").read_text())
    (record,) = data.values()
    return str(record["last_run"])


def _next_dream(daemon: Daemon) -> str:
    """The next dream `memd status` reports, once there is one."""
    value = wait_for(
        lambda: daemon.status().get("next_dream"), what="next_dream in memd status"
    )
    return str(value)


def _wait_past(instant: dt.datetime, started_at: dt.datetime) -> float:
    """The timeout for an event at `instant` on a clock that read `started_at`."""
    return HEADROOM * max(1.0, (instant - started_at).total_seconds())


@pytest.mark.slow
class TestMidnight:
    def test_rotates_once_and_dreams_once(
        self, isolated_home: Home, start_daemon: Starter
    ) -> None:
        """Across 00:00 in Paris (dream time 00:00): one rotation, one dream."""
        memory = _memory(isolated_home)
        _config(isolated_home, "00:00")
        paris = dt.timezone(dt.timedelta(hours=1))  # CET: no DST in November
        append_entry(
            str(memory),
            "#testing use a real database",
            now=dt.datetime(2026, 11, 21, 9),
        )
        backdate(memory)
        midnight = dt.datetime(2026, 11, 22, 0, 0, tzinfo=paris)
        start = midnight - dt.timedelta(seconds=LEAD_SECONDS)
        daemon = _start_at(start_daemon, start, "Europe/Paris")
        assert [] == _dreams(daemon), "no catch-up: the last slot is 24 h old"
        assert [] == daemon.events("logs_closed")

        timeout = _wait_past(midnight, start)
        wait_for(lambda: _dreams(daemon), timeout=timeout, what="the midnight dream")
        closed = wait_for(
            lambda: daemon.events("logs_closed"), timeout=timeout, what="rotation"
        )
        # Written by hand: the log the rotation created, and the one it closed.
        today = memory / "logs" / "2026" / "11" / "2026-11-22.md"
        assert b"# 2026-11-22\n\n" == today.read_bytes()
        assert isinstance(closed, list)
        assert [["logs/2026/11/2026-11-21.md"]] == [e["logs"] for e in closed]
        assert _last_run(isolated_home).startswith("2026-11-22T00:00:0")
        assert "2026-11-23T00:00:00+01:00" == _next_dream(daemon)

        time.sleep(2.0)  # the clock check and any second fire would land here
        assert 1 == len(daemon.events("logs_closed"))
        assert 1 == len(_dreams(daemon))
        assert 0 == daemon.stop()


@pytest.mark.slow
class TestDaylightSaving:
    def test_fall_back_dreams_once(
        self, isolated_home: Home, start_daemon: Starter
    ) -> None:
        """New York, 1 Nov 2026: 01:30 happens twice (EDT, then EST); one dream."""
        memory = _memory(isolated_home)
        _config(isolated_home, "01:30")
        append_entry(
            str(memory), "#first a first rule", now=dt.datetime(2026, 10, 31, 9)
        )
        backdate(memory)
        first = dt.datetime(2026, 11, 1, 5, 30, tzinfo=dt.UTC)  # 01:30 EDT
        second = dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC)  # 01:30 EST

        lead = dt.timedelta(seconds=LEAD_SECONDS)
        # The first 01:30 is dreamed by `memd dream` on the same fake clock.
        done = subprocess.run(
            [sys.executable, "-m", "memd", "dream", "--all"],
            env=isolated_home.env(**_faked(first + dt.timedelta(minutes=1), NEW_YORK)),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert 0 == done.returncode, done.stderr
        assert _last_run(isolated_home).startswith("2026-11-01T01:31:0")
        assert _last_run(isolated_home).endswith("-04:00")

        append_entry(
            str(memory), "#second a second rule", now=dt.datetime(2026, 11, 1, 1)
        )
        daemon = _start_at(start_daemon, second - lead, NEW_YORK)
        # APScheduler fires the cron job again at 01:30 EST; the slot is done.
        assert "2026-11-02T01:30:00-05:00" == wait_for(
            lambda: (
                _next_dream(daemon) == "2026-11-02T01:30:00-05:00"
                and "2026-11-02T01:30:00-05:00"
            ),
            timeout=_wait_past(second, second - lead),
            what="the scheduler passing 01:30 EST",
        )
        time.sleep(2.0)
        assert [] == _dreams(daemon)
        assert _last_run(isolated_home).endswith("-04:00")
        assert 0 == daemon.stop()

    def test_spring_forward_dreams_once(
        self, isolated_home: Home, start_daemon: Starter
    ) -> None:
        """New York, 14 Mar 2027: 02:00 never happens; that dream runs at 03:00 EDT."""
        memory = _memory(isolated_home)
        _config(isolated_home, "02:00")
        append_entry(str(memory), "#spring a rule", now=dt.datetime(2027, 3, 13, 9))
        backdate(memory)
        jump = dt.datetime(2027, 3, 14, 7, 0, tzinfo=dt.UTC)  # 02:00 EST = 03:00 EDT
        start = jump - dt.timedelta(seconds=LEAD_SECONDS)
        daemon = _start_at(start_daemon, start, NEW_YORK)
        assert [] == _dreams(daemon)
        wait_for(
            lambda: _dreams(daemon),
            timeout=_wait_past(jump, start),
            what="the dream after the jump",
        )
        assert _last_run(isolated_home).startswith("2027-03-14T03:00:0")
        assert _last_run(isolated_home).endswith("-04:00")
        time.sleep(2.0)
        assert 1 == len(_dreams(daemon))
        assert 0 == daemon.stop()
