"""memd.daemon.flood: when a watch floods, and whether it is split or shed."""

from __future__ import annotations

from memd.daemon.discovery import WatchRoot
from memd.daemon.flood import (
    FLOOD_CALM_SECONDS,
    FLOOD_EVENTS_PER_SECOND,
    FLOOD_RECENT_SECONDS,
    FLOOD_WINDOW_SECONDS,
    FloodMeter,
    Shed,
    flood_action,
    floods_to_take,
)

PROJECTS = WatchRoot("/b/projects", recursive=True)
PROJECT = WatchRoot("/b/projects/-a", recursive=True)


def _hot(now: float) -> FloodMeter:
    """A meter whose last window closed hot at `now`, at about 2,000 events/s."""
    meter = FloodMeter(now - 1.0)
    for i in range(1, 2001):
        meter.hit(now - 1.0 + i / 2000)
    return meter


class TestFloodMeter:
    def test_a_meter_trips_on_a_sustained_rate_not_on_a_burst(self) -> None:
        """Fed by hand: 5,000 events in 0.2 s never trip; 2,000/s for 1.5 s does."""
        burst = FloodMeter(0.0)
        start = burst.start
        tripped = [burst.hit(start + i * 0.2 / 5000) for i in range(5000)]
        tripped += [burst.hit(start + 0.2 + i * 0.1) for i in range(1, 30)]  # then calm
        assert not any(tripped)

        storm = FloodMeter(0.0)
        start = storm.start
        rates = [storm.hit(start + i / 2000) for i in range(1, 3000)]
        found = [rate for rate in rates if rate is not None]
        assert 1 == len(found), "trips once"
        assert 1900 < found[0] < 2100
        first = next(i for i, rate in enumerate(rates) if rate is not None)
        # Four hot windows of 0.25 s (the first one starting at the meter's birth).
        assert 0.9 < first / 2000 < 1.4

    def test_a_flat_meter_names_what_stormed(self) -> None:
        """Of a flat watch's events, the entries with a twentieth of the flood each."""
        meter = FloodMeter(0.0, by_name=True)
        born = meter.start
        for i in range(300):  # calm first: a save now and then, forgotten
            meter.hit(born + i * 0.01, f"/p/quiet{i}", "")
        found = None
        for i in range(1, 6000):
            now = born + 3.0 + i / 3000
            if i % 100 == 0:
                rate = meter.hit(now, "/p/one-save", "")
            else:
                pair = ("/p/s0", "/p/s0.moving") if i % 2 else ("/p/s1.moving", "/p/s1")
                rate = meter.hit(now, *pair)
            found = found or rate
        assert found is not None
        assert ["s0", "s0.moving", "s1", "s1.moving"] == meter.hot_names()

    def test_the_threshold_is_what_the_meter_uses(self) -> None:
        """Just under the rate for a long while never trips; just over does."""
        below, above = FloodMeter(0.0), FloodMeter(0.0)
        born_below, born_above = below.start, above.start
        step_below = 1 / (FLOOD_EVENTS_PER_SECOND * 0.9)
        step_above = 1 / (FLOOD_EVENTS_PER_SECOND * 1.1)
        assert not any(
            below.hit(born_below + i * step_below)
            for i in range(1, int(10 / step_below))
        )
        assert any(
            above.hit(born_above + i * step_above)
            for i in range(1, int(10 / step_above))
        )
        assert 0.1 <= FLOOD_WINDOW_SECONDS <= 0.5


class TestFloodsToTake:
    def test_tripped_meters_are_taken_as_they_are(self) -> None:
        """A live reader: only what tripped."""
        meters = {PROJECT: _hot(100.0), PROJECTS: FloodMeter(0.0)}

        taken = floods_to_take(
            {PROJECT: 2000.0},
            meters,
            now=100.0,
            reader_died=False,
            projects=PROJECTS,
        )

        assert {PROJECT: 2000.0} == taken

    def test_a_dead_reader_takes_the_watch_hot_of_late(self) -> None:
        """Killed before any meter tripped: the recently hot watch is the storm."""
        meters = {PROJECT: _hot(100.0), PROJECTS: FloodMeter(0.0)}

        taken = floods_to_take(
            {}, meters, now=100.0 + 1.0, reader_died=True, projects=PROJECTS
        )

        assert [PROJECT] == list(taken)
        assert 1900 < taken[PROJECT] < 2100

    def test_a_dead_reader_with_nothing_hot_splits_projects(self) -> None:
        """Nothing hot lately: the recursive `projects/` watch, rate unknown."""
        meters = {PROJECT: _hot(100.0), PROJECTS: FloodMeter(0.0)}
        later = 100.0 + FLOOD_RECENT_SECONDS + 1.0

        taken = floods_to_take(
            {}, meters, now=later, reader_died=True, projects=PROJECTS
        )

        assert {PROJECTS: 0.0} == taken


class TestFloodAction:
    def test_a_root_above_the_memory_dirs_is_split(self) -> None:
        """Split: nothing deaf, the rate in the reason."""
        action = flood_action("/b/projects", 2500.0, can_split=True, hot_names=[])

        assert (True, "event flood: 2,500 events/s", ()) == (
            action.is_split,
            action.reason,
            action.deaf,
        )

    def test_a_flat_watch_is_shed_for_what_stormed_in_it(self) -> None:
        """The hot entries are deaf, not the whole directory."""
        action = flood_action(
            "/b/projects", 2500.0, can_split=False, hot_names=["-x", "-x.moving"]
        )

        assert not action.is_split
        assert ("/b/projects/-x", "/b/projects/-x.moving") == action.deaf
        assert "event flood: 2,500 events/s in /b/projects" == action.reason

    def test_a_watch_with_no_names_is_shed_whole(self) -> None:
        """A reader that died under it: the whole root is deaf."""
        action = flood_action("/b/m", 0.0, can_split=False, hot_names=[])

        assert (("/b/m",), "the inotify reader died under it") == (
            action.deaf,
            action.reason,
        )


class TestShed:
    def test_calm_is_counted_from_the_last_change_seen(self) -> None:
        """Any change by stat restarts the calm; unchanged long enough is calm."""
        shed = Shed("event flood", ("/b/m",), signature=1, now=0.0)

        shed.observe(2, now=3.0)
        calm_too_soon = shed.is_calm(3.0 + FLOOD_CALM_SECONDS - 0.1)
        shed.observe(2, now=3.0 + FLOOD_CALM_SECONDS)

        assert not calm_too_soon
        assert shed.is_calm(3.0 + FLOOD_CALM_SECONDS)
