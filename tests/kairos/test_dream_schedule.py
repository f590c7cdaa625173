"""Tests for memd.kairos.schedule: slots, catch-up, DST and clock jumps (pure)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.kairos.schedule import (
    detect_clock_jump,
    latest_slot,
    next_dream_time,
    parse_dream_time,
    should_catch_up,
    slot_for_date,
)

NY = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")
GRACE = timedelta(hours=12)


class TestParseDreamTime:
    def test_valid(self) -> None:
        """HH:MM parses into hour and minute."""
        parsed = parse_dream_time("03:30")

        assert (3, 30) == (parsed.hour, parsed.minute)

    @pytest.mark.parametrize("raw", ["3", "25:00", "03:60", "ab:cd", "03:5"])
    def test_invalid(self, raw: str) -> None:
        """Anything but a real HH:MM is a ValueError."""
        with pytest.raises(ValueError, match="dream time"):
            parse_dream_time(raw)


class TestSlotForDate:
    def test_ordinary_day(self) -> None:
        """On an ordinary day the slot is the wall time in the zone."""
        slot = slot_for_date(date(2026, 6, 1), "03:30", BERLIN)

        assert datetime(2026, 6, 1, 1, 30, tzinfo=UTC) == slot

    def test_spring_forward_gap_moves_forward(self) -> None:
        """02:30 does not exist on New York's spring-forward day: it is 03:30 EDT."""
        slot = slot_for_date(date(2026, 3, 8), "02:30", NY).astimezone(NY)

        assert (3, 30, timedelta(hours=-4)) == (
            slot.hour,
            slot.minute,
            slot.utcoffset(),
        )

    def test_fall_back_overlap_takes_first(self) -> None:
        """01:30 happens twice on New York's fall-back day: the first (EDT) counts."""
        slot = slot_for_date(date(2026, 11, 1), "01:30", NY)

        assert datetime(2026, 11, 1, 5, 30, tzinfo=UTC) == slot

    def test_berlin_gap(self) -> None:
        """Berlin's 02:30 on its spring-forward day lands on 03:30 CEST."""
        slot = slot_for_date(date(2026, 3, 29), "02:30", BERLIN)

        assert datetime(2026, 3, 29, 1, 30, tzinfo=UTC) == slot


class TestNextDreamTime:
    def test_later_today(self) -> None:
        """Before today's slot, the next dream is today."""
        now = datetime(2026, 6, 1, 1, 0, tzinfo=BERLIN)

        assert datetime(2026, 6, 1, 3, 30, tzinfo=BERLIN) == next_dream_time(
            now, "03:30", BERLIN
        )

    def test_tomorrow(self) -> None:
        """After today's slot, the next dream is tomorrow."""
        now = datetime(2026, 6, 1, 3, 30, tzinfo=BERLIN)

        assert datetime(2026, 6, 2, 3, 30, tzinfo=BERLIN) == next_dream_time(
            now, "03:30", BERLIN
        )

    def test_across_spring_forward(self) -> None:
        """The night New York skips 02:30, the next dream is at 03:30 EDT."""
        now = datetime(2026, 3, 7, 12, 0, tzinfo=NY)

        expected = datetime(2026, 3, 8, 7, 30, tzinfo=UTC)

        assert expected == next_dream_time(now, "02:30", NY)

    def test_fall_back_night_only_once(self) -> None:
        """After the first 01:30 on fall-back night, the next dream is the next day."""
        first = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)

        expected = datetime(2026, 11, 2, 6, 30, tzinfo=UTC)

        assert expected == next_dream_time(first, "01:30", NY)


class TestShouldCatchUp:
    def test_never_dreamed_within_grace(self) -> None:
        """A directory that never dreamed catches up when the slot is recent."""
        now = datetime(2026, 6, 1, 8, 0, tzinfo=BERLIN)

        assert should_catch_up(None, now, "03:30", BERLIN, GRACE) is True

    def test_dreamed_yesterday(self) -> None:
        """A dream yesterday and today's slot passed: today's dream runs."""
        last = datetime(2026, 5, 31, 3, 30, tzinfo=BERLIN)
        now = datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN)

        assert should_catch_up(last, now, "03:30", BERLIN, GRACE) is True

    def test_already_dreamed_tonight(self) -> None:
        """A dream after tonight's slot means no second run."""
        last = datetime(2026, 6, 1, 3, 31, tzinfo=BERLIN)
        now = datetime(2026, 6, 1, 9, 0, tzinfo=BERLIN)

        assert should_catch_up(last, now, "03:30", BERLIN, GRACE) is False

    def test_beyond_grace(self) -> None:
        """A slot older than the grace period is skipped until the next night."""
        last = datetime(2026, 5, 30, 3, 30, tzinfo=BERLIN)
        now = datetime(2026, 6, 1, 20, 0, tzinfo=BERLIN)

        assert should_catch_up(last, now, "03:30", BERLIN, GRACE) is False

    def test_before_tonights_slot_after_yesterdays_run(self) -> None:
        """Between yesterday's dream and tonight's slot nothing is due."""
        last = datetime(2026, 5, 31, 3, 30, tzinfo=BERLIN)
        now = datetime(2026, 6, 1, 2, 0, tzinfo=BERLIN)

        assert should_catch_up(last, now, "03:30", BERLIN, GRACE) is False

    def test_second_fall_back_fire_does_not_rerun(self) -> None:
        """APScheduler's second 01:30 on fall-back night finds the night done."""
        first_fire = datetime(2026, 11, 1, 1, 30, tzinfo=NY)  # fold=0: EDT
        second_fire = datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=NY)  # EST

        assert should_catch_up(first_fire, second_fire, "01:30", NY, GRACE) is False

    def test_spring_forward_not_skipped(self) -> None:
        """The night 02:30 does not exist still dreams, at 03:30 EDT."""
        last = datetime(2026, 3, 7, 2, 30, tzinfo=NY)
        now = datetime(2026, 3, 8, 3, 30, tzinfo=NY)

        assert should_catch_up(last, now, "02:30", NY, GRACE) is True

    @given(
        start=st.datetimes(
            min_value=datetime(2025, 1, 1), max_value=datetime(2027, 12, 1)
        ),
        zone=st.sampled_from([NY, BERLIN, ZoneInfo("Australia/Lord_Howe")]),
        dream_time=st.sampled_from(["00:00", "01:30", "02:30", "03:00", "23:59"]),
        step_minutes=st.integers(min_value=7, max_value=180),
    )
    def test_at_most_one_run_per_night(
        self, start: datetime, zone: ZoneInfo, dream_time: str, step_minutes: int
    ) -> None:
        """Polling every few minutes over three days runs one dream per local date."""
        now = start.replace(tzinfo=UTC)
        last: datetime | None = now
        runs: list[datetime] = []
        for _ in range(3 * 24 * 60 // step_minutes):
            now += timedelta(minutes=step_minutes)
            if should_catch_up(last, now, dream_time, zone, GRACE):
                runs.append(now)
                last = now
        slots = [latest_slot(run, dream_time, zone) for run in runs]

        assert len(set(slots)) == len(slots)
        assert len(runs) >= 2


class TestDetectClockJump:
    def test_steady(self) -> None:
        """Wall and monotonic moving together is no jump."""
        assert detect_clock_jump(1000.0, 50.0, 1060.0, 110.0, 10.0) is False

    def test_resume_from_suspend(self) -> None:
        """Eight hours of wall time over one monotonic minute is a resume."""
        assert detect_clock_jump(1000.0, 50.0, 1000.0 + 8 * 3600, 110.0, 10.0) is True

    def test_clock_set_backwards(self) -> None:
        """A wall clock set back an hour is a jump too."""
        assert detect_clock_jump(5000.0, 50.0, 1460.0, 110.0, 10.0) is True

    def test_within_tolerance(self) -> None:
        """NTP-sized corrections stay below the tolerance."""
        assert detect_clock_jump(1000.0, 50.0, 1062.0, 110.0, 10.0) is False
