"""When the nightly dream runs, and whether a missed one runs now (pure).

A slot is the configured local wall time on one local date, in an explicit
zone. DST is resolved the way `zoneinfo` does it with ``fold=0``: a slot in
the spring-forward gap (02:30 on a day 02:00 jumps to 03:00) lands on the
same instant as 02:30 in the old offset, i.e. 03:30 local; a slot in the
fall-back overlap (01:30 twice) is the first occurrence. Each local date has
exactly one slot, so no night can dream twice and none is skipped.

Clock jumps: APScheduler does not wake when the machine resumes from sleep,
so the scheduler compares the wall clock with the monotonic clock (which
does not advance during suspend on Linux) to notice a resume or a clock set.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo


@dataclass(frozen=True, slots=True)
class DreamTime:
    """A local wall time of day, parsed from "HH:MM"."""

    hour: int
    minute: int


def parse_dream_time(text: str) -> DreamTime:
    """Return the `DreamTime` for "HH:MM"; raise `ValueError` for anything else."""
    hours, sep, minutes = text.strip().partition(":")
    if not sep or not hours.isdigit() or not minutes.isdigit() or len(minutes) != 2:
        raise ValueError(f"dream time must be HH:MM, got {text!r}")
    hour, minute = int(hours), int(minutes)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ValueError(f"dream time out of range: {text!r}")
    return DreamTime(hour, minute)


def slot_for_date(day: date, dream_time: str, tz: tzinfo) -> datetime:
    """Return the one dream instant of local date `day`, as an aware UTC datetime.

    UTC, because Python never considers a time in a fold equal to one in
    another zone (PEP 495), which would make "already ran" checks lie.
    """
    parsed = parse_dream_time(dream_time)
    naive = datetime.combine(day, time(parsed.hour, parsed.minute))
    # Converting to UTC moves a gap time forward by the DST offset.
    return naive.replace(tzinfo=tz, fold=0).astimezone(UTC)


def latest_slot(now: datetime, dream_time: str, tz: tzinfo) -> datetime:
    """Return the most recent slot at or before `now` (an aware datetime), in UTC."""
    local_day = now.astimezone(tz).date()
    for offset in (0, 1, 2):
        slot = slot_for_date(local_day - timedelta(days=offset), dream_time, tz)
        if slot <= now:
            return slot
    raise AssertionError("unreachable: a slot two days back is always in the past")


def next_dream_time(now: datetime, dream_time: str, tz: tzinfo) -> datetime:
    """Return the first slot strictly after `now` (an aware datetime), in UTC."""
    local_day = now.astimezone(tz).date()
    for offset in (0, 1, 2):
        slot = slot_for_date(local_day + timedelta(days=offset), dream_time, tz)
        if slot > now:
            return slot
    raise AssertionError("unreachable: a slot two days ahead is always in the future")


def should_catch_up(
    last_run: datetime | None,
    now: datetime,
    dream_time: str,
    tz: tzinfo,
    grace: timedelta,
) -> bool:
    """Return True when the latest slot has not been dreamed and is at most `grace` old.

    `last_run` is the last dream attempt for the directory (None: never). A
    slot counts as done once any dream ran after it, so a night runs once.
    """
    slot = latest_slot(now, dream_time, tz)
    if last_run is not None and last_run >= slot:
        return False
    return now - slot <= grace


def detect_clock_jump(
    prev_wall: float,
    prev_mono: float,
    wall: float,
    mono: float,
    tolerance: float,
) -> bool:
    """Return True when wall and monotonic clocks drifted over `tolerance` s.

    A resume from suspend shows as wall time racing ahead of monotonic time;
    a clock set shows as either direction.
    """
    return abs((wall - prev_wall) - (mono - prev_mono)) > tolerance
