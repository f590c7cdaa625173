"""memd.daemon.rebuild: what a batch rebuilds, how, and when a rebuild is slow."""

from __future__ import annotations

from memd.daemon.rebuild import (
    PARALLEL_FROM_DIRS,
    REBUILD_BUDGET_SECONDS,
    REBUILD_THREADS,
    changed_relpaths,
    is_under_any,
    plan_rebuilds,
    plan_rescan,
    slow_seconds,
)
from memd.daemon.settle import CLOSED, CREATED, RESCAN, Change

A, B, C = "/m/-a/memory", "/m/-b/memory", "/m/-c/memory"


class TestChangedRelpaths:
    def test_each_directory_gets_its_relpaths(self) -> None:
        """Changes group by memory dir, each relpath once."""
        changes = [
            Change(A, "x.md", CLOSED),
            Change(A, "x.md", CREATED),
            Change(B, "y.md", CLOSED),
        ]

        assert {A: frozenset({"x.md"}), B: frozenset({"y.md"})} == changed_relpaths(
            changes
        )

    def test_a_rescan_or_the_directory_itself_means_a_full_read(self) -> None:
        """A RESCAN change or an empty relpath turns the directory's set into None."""
        changes = [
            Change(A, "x.md", CLOSED),
            Change(A, "", CREATED),
            Change(B, "y.md", RESCAN),
            Change(B, "z.md", CLOSED),
        ]

        assert {A: None, B: None} == changed_relpaths(changes)


class TestUnderAny:
    def test_inside_equal_and_above_count_but_a_sibling_prefix_does_not(self) -> None:
        """A root covers what is inside it and what holds it; `-ab` is not in `-a`."""
        assert is_under_any(A, ["/m/-a"])
        assert is_under_any("/m", [A])
        assert is_under_any(A, [A + "/"])
        assert not is_under_any("/m/-ab/memory", ["/m/-a"])
        assert not is_under_any(A, [])


class TestPlanRescan:
    def test_rescan_all_reads_every_known_directory(self) -> None:
        """`rescan_all` reads everything, whatever the watches did."""
        rescan = plan_rescan(
            known={A, B}, added_watches=[], rescan_all=True, recheck_all=False
        )

        assert (frozenset({A, B}), "rescan", True) == (
            rescan.dirs,
            rescan.reason,
            rescan.is_logged,
        )

    def test_an_added_watch_rescans_only_what_it_covers(self) -> None:
        """Events before a watch was added are lost: only its directories."""
        rescan = plan_rescan(
            known={A, B}, added_watches=["/m/-a"], rescan_all=False, recheck_all=False
        )

        assert (frozenset({A}), "watch_added", True) == (
            rescan.dirs,
            rescan.reason,
            rescan.is_logged,
        )

    def test_lost_events_add_the_stale_and_are_logged_even_when_none_is(
        self,
    ) -> None:
        """After an overflow the stale directories are read; an empty one is logged."""
        found = plan_rescan(
            known={A, B, C},
            added_watches=[],
            rescan_all=False,
            recheck_all=True,
            stale=[C],
        )
        nothing = plan_rescan(
            known={A, B}, added_watches=[], rescan_all=False, recheck_all=True
        )

        assert (frozenset({C}), "events_lost") == (found.dirs, found.reason)
        assert (frozenset(), True) == (nothing.dirs, nothing.is_logged)

    def test_a_quiet_rediscovery_rescans_nothing_and_says_nothing(self) -> None:
        """No watch added, nothing lost: no rescan line."""
        rescan = plan_rescan(
            known={A}, added_watches=[], rescan_all=False, recheck_all=False
        )

        assert (frozenset(), False) == (rescan.dirs, rescan.is_logged)


class TestPlanRebuilds:
    def test_a_busy_directory_waits_and_a_pending_one_reads_in_full(self) -> None:
        """Busy: wait for it; pending (changes came while busy): no relpaths."""
        plan = plan_rebuilds(
            [A, B, C],
            {A: frozenset({"x.md"}), B: frozenset({"y.md"})},
            busy={C},
            pending={B},
        )

        assert ((A, frozenset({"x.md"})), (B, None)) == plan.start
        assert (C,) == plan.wait

    def test_a_save_rebuilds_in_the_background_on_few_threads(self) -> None:
        """A few directories: their fsyncs go to the flusher, one thread each."""
        plan = plan_rebuilds([A, B], {}, busy=set(), pending=set())

        assert (True, 2) == (plan.is_background, plan.threads)

    def test_many_directories_share_the_pool_and_flush_inline(self) -> None:
        """Start-up or a rescan: the pool's size, fsyncs on the workers."""
        dirs = [f"/m/-{i}/memory" for i in range(PARALLEL_FROM_DIRS)]

        plan = plan_rebuilds(dirs, {}, busy=set(), pending=set())

        assert (False, REBUILD_THREADS) == (plan.is_background, plan.threads)
        assert len(dirs) == len(plan.start)

    def test_nothing_to_start_when_all_are_busy(self) -> None:
        """Every directory still rebuilding: no pool at all."""
        plan = plan_rebuilds([A], {}, busy={A}, pending=set())

        assert ((), 0) == (plan.start, plan.threads)


class TestSlowSeconds:
    def test_only_past_the_budget_is_slow(self) -> None:
        """Within the budget: nothing to show; past it: the seconds, rounded."""
        assert slow_seconds(REBUILD_BUDGET_SECONDS) is None
        assert 1.235 == slow_seconds(1.23456)
