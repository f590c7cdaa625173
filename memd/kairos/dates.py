"""The dream's one date resolver: every date kairos reads or computes (pure).

A date in memd's hands comes from a log's name (`logs/YYYY/MM/YYYY-MM-DD.md`),
from a fact's marks in a topic file (`<!-- memd:fact FIRST LAST N -->`, which
a person may edit), or from arithmetic on one of those ("tomorrow", "last
Monday", "3 weeks ago", "next week"). Each goes through `parse_day` or
`shift`, which check the range Python's `datetime.date` can hold (years 1 to
9999) and the calendar: a bad or overflowing date is None, never an
exception. Callers keep the text as written and report the problem, so
one odd date never stops a dream and never freezes a fact.
"""

from __future__ import annotations

import datetime as dt
import re

_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(text: str) -> dt.date | None:
    """Return the date `YYYY-MM-DD` names, or None (not that shape, or no such day)."""
    if _ISO_DAY.fullmatch(text) is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def shift(day: dt.date, days: int) -> dt.date | None:
    """Return `day` moved by `days`, or None past year 1 or year 9999."""
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        return None


def valid_day(text: str) -> bool:
    """Return True when `text` is a real `YYYY-MM-DD` date."""
    return parse_day(text) is not None


# --- relative dates ---------------------------------------------------------

_WEEKDAYS = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7}
_RELATIVE = re.compile(
    r"\b(?:(?P<simple>today|tonight|this morning|this afternoon|this evening|"
    r"yesterday|tomorrow)"
    r"|(?P<which>last|next|this|coming|on)\s+(?P<day>" + "|".join(_WEEKDAYS) + r"|week)"
    r"|in\s+(?P<ahead>\d{1,3})\s+(?P<ahead_unit>days?|weeks?)"
    r"|(?P<ago>\d{1,3})\s+(?P<ago_unit>days?|weeks?)\s+ago)\b",
    re.IGNORECASE,
)


def _resolve(match: re.Match[str], today: dt.date) -> str | None:
    """Return the date phrase for one relative phrase, or None when out of range."""
    simple = match.group("simple")
    if simple:
        word = simple.lower()
        when = shift(today, {"yesterday": -1, "tomorrow": 1}.get(word, 0))
        if when is None:
            return None
        return (
            str(when)
            if word in ("today", "yesterday", "tomorrow")
            else f"{word} ({when})"
        )
    if match.group("ahead"):
        days = int(match.group("ahead")) * _UNITS[match.group("ahead_unit").lower()]
        return _on(shift(today, days))
    if match.group("ago"):
        days = int(match.group("ago")) * _UNITS[match.group("ago_unit").lower()]
        return _on(shift(today, -days))
    which, day = match.group("which").lower(), match.group("day").lower()
    if day == "week":
        if which == "on":
            return match.group(0)
        moved = shift(today, {"last": -7, "next": 7, "coming": 7}.get(which, 0))
        monday = None if moved is None else shift(moved, -moved.weekday())
        return None if monday is None else f"the week of {monday}"
    delta = _WEEKDAYS.index(day) - today.weekday()
    if which == "last":
        delta = delta - 7 if delta >= 0 else delta
    elif which in ("next", "coming"):
        delta = delta + 7 if delta <= 0 else delta
    elif which == "this":
        delta = delta if delta >= 0 else delta + 7
    else:  # "on Monday" in a log: the most recent one, today included
        delta = delta if delta <= 0 else delta - 7
    return _on(shift(today, delta))


def _on(day: dt.date | None) -> str | None:
    return None if day is None else f"on {day}"


def resolve_relative_dates(
    text: str, day: str, problems: list[str] | None = None
) -> str:
    """Replace "today", "last Monday", "next week", "3 days ago"... with dates.

    `day` is the log's own date (YYYY-MM-DD). A phrase whose date falls
    outside years 1-9999, or every phrase when `day` is no real date, is kept
    as written and described in `problems`. One pass of one regex: linear.
    """
    today = parse_day(day)

    def replace(match: re.Match[str]) -> str:
        resolved = None if today is None else _resolve(match, today)
        if resolved is None:
            if problems is not None:
                reason = (
                    f"the log date {day!r} is not a real date"
                    if today is None
                    else f"it falls outside years 1-9999 from {day}"
                )
                problems.append(f"{match.group(0)!r} kept as written: {reason}")
            return match.group(0)
        return resolved

    return _RELATIVE.sub(replace, text)
