"""memd.daemon.sweep: when the daemon sweeps, checks health, retries natively."""

from __future__ import annotations

import math

from memd.daemon.sweep import (
    DEAF_SWEEP_SECONDS,
    NATIVE_RETRY_SECONDS,
    SweepSchedule,
    SweepStep,
)

DEAF = {"root": "/m/-a", "reason": "inotify thread stopped"}


class TestWhenToSweep:
    def test_the_first_sweep_is_one_interval_after_start(self) -> None:
        """Nothing is due before `sweep_seconds`; then a full sweep."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=100.0)

        assert not sweeps.is_due(129.0, is_ready=True)
        assert sweeps.is_due(130.0, is_ready=True)
        assert SweepStep(is_full=True, checks_health=True) == sweeps.begin(
            130.0, is_ready=True, sweep_seconds=30.0
        )
        assert 160.0 == sweeps.next_full_sweep

    def test_before_readiness_only_a_health_check_sweeps(self) -> None:
        """A watch added at start makes a health check due at once, not a full sweep."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)

        assert not sweeps.is_due(31.0, is_ready=False)
        sweeps.watches_changed()

        assert sweeps.is_due(0.0, is_ready=False)
        assert SweepStep(is_full=False, checks_health=True) == sweeps.begin(
            0.0, is_ready=False, sweep_seconds=30.0
        )

    def test_a_changed_watch_waits_for_the_last_check_to_be_a_second_old(
        self,
    ) -> None:
        """Health checks walk every tree: at most one each DEAF_SWEEP_SECONDS."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)
        sweeps.health_checked(10.0, [])
        sweeps.to_sweep(10.0, [], SweepStep(is_full=False, checks_health=True))

        sweeps.watches_changed()

        assert 10.0 + DEAF_SWEEP_SECONDS == sweeps.next_sweep
        assert math.isclose(DEAF_SWEEP_SECONDS - 0.5, sweeps.seconds_to_next(10.5))


class TestDeafWatches:
    def test_a_deaf_watch_is_reported_once_and_swept_every_second(self) -> None:
        """The same problem twice is one report; its directories are swept often."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)

        first = sweeps.health_checked(1.0, [DEAF])
        again = sweeps.health_checked(2.0, [DEAF])
        step = SweepStep(is_full=False, checks_health=True)
        swept = sweeps.to_sweep(2.0, ["/m/-a/memory", "/m/-b/memory"], step)

        assert ((DEAF,), ()) == (first.newly_deaf, again.newly_deaf)
        assert ["/m/-a/memory"] == swept
        assert 2.0 + DEAF_SWEEP_SECONDS == sweeps.next_sweep

    def test_native_retries_back_off_and_reset_once_healthy(self) -> None:
        """Restart at once, then after 5 s, 10 s, ...; healthy again: 5 s again."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)
        first, second = NATIVE_RETRY_SECONDS[0], 2 * NATIVE_RETRY_SECONDS[0]

        at_once = sweeps.health_checked(0.0, [DEAF])
        too_soon = sweeps.health_checked(first - 0.1, [DEAF])
        later = sweeps.health_checked(first, [DEAF])
        sweeps.health_checked(100.0, [])
        after_reset = sweeps.health_checked(first + second, [DEAF])

        assert (second, None) == (
            at_once.restart_retry_in,
            too_soon.restart_retry_in,
        )
        assert 2 * second == later.restart_retry_in
        assert second == after_reset.restart_retry_in

    def test_the_backoff_stops_growing_at_its_longest(self) -> None:
        """The wait never passes NATIVE_RETRY_SECONDS[1]."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)
        waits = []
        now = 0.0
        for _ in range(12):
            verdict = sweeps.health_checked(now, [DEAF])
            assert verdict.restart_retry_in is not None
            waits.append(verdict.restart_retry_in)
            now = sweeps.native_retry_at

        assert NATIVE_RETRY_SECONDS[1] == max(waits) == waits[-1]

    def test_a_full_sweep_covers_every_directory_and_returns_to_the_interval(
        self,
    ) -> None:
        """Nothing deaf: all directories, and the next sweep is the next full one."""
        sweeps = SweepSchedule(sweep_seconds=30.0, now=0.0)
        step = sweeps.begin(30.0, is_ready=True, sweep_seconds=30.0)
        sweeps.health_checked(30.0, [])

        swept = sweeps.to_sweep(30.0, ["/m/-a/memory", "/m/-b/memory"], step)

        assert ["/m/-a/memory", "/m/-b/memory"] == swept
        assert 60.0 == sweeps.next_sweep
