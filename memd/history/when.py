"""The one parser of WHEN (`--at`, `--since`): ISO and relative times. Pure, linear.

Forms (local time unless the ISO form names a zone):
- `now`
- `N UNIT ago`, UNIT one of s, sec, second(s), m, min, minute(s), h, hour(s),
  d, day(s), w, week(s): `10 minutes ago`, `2 hours ago`, `3 days ago`
- `HH:MM` or `HH:MM:SS`: today at that time
- `today`, `yesterday`, `tomorrow` (midnight), each with ` [at ]HH:MM[:SS]`
- `on Sat 05 Dec [at HH:MM[:SS]]` (as `memd dream` says a day further off)
- ISO 8601: `2026-12-04`, `2026-12-04T03:11`, `2026-12-04 03:11:30`,
  with `Z` or `+01:00` for another zone
Every time memd prints (`memd.times`) is one of these, so a person can paste
it back. `through=True` (for `--at`) reads a time as the end of what it names:
`today 23:08:13` covers that whole second, `18:02` that whole minute, as the
printed time of a change at 23:08:13.696 must still select that change.
Each is split with `str` methods and parsed by `datetime`; nothing backtracks.
"""

from __future__ import annotations

from datetime import datetime, timedelta

MAX_WHEN_CHARS = 64
_UNITS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
FORMS = (
    "now, 'N minutes|hours|days|weeks ago', HH:MM[:SS],"
    " today|yesterday|tomorrow [HH:MM[:SS]],"
    " or an ISO time (2026-12-04T03:11)"
)


_DAYS = {"today": 0, "yesterday": -1, "tomorrow": 1}


def parse_when(text: str, *, now: float, through: bool = False) -> float:
    """Return `text` as epoch seconds (`now` anchors the relative forms).

    `through`: the last instant of the second or minute a clock time names.

    Raises `ValueError` saying which forms are understood.
    """
    words = text.strip().lower().split()
    iso_text = text.strip()
    if len(words) == 3 and words[0] in _DAYS and words[1] == "at":
        words = [words[0], words[2]]  # "today at 03:30", as `memd dream` says it
    elif words[:1] == ["on"] and len(words) in (4, 6):  # "on Sat 05 Dec [at 03:30]"
        words = _dated(words[1:], now)
        iso_text = " ".join(words)
    if not words or len(text) > MAX_WHEN_CHARS:
        raise ValueError(f"cannot read the time {text!r}: expected {FORMS}")
    unit = 0.0  # how long the named time lasts: 1 s, 60 s, or 0 (an instant)
    current = datetime.fromtimestamp(now)
    midnight = current.replace(hour=0, minute=0, second=0, microsecond=0)
    found: float | None = None
    if words == ["now"]:
        found = now
    elif len(words) == 3 and words[2] == "ago" and words[1] in _UNITS:
        amount = _number(words[0])
        if amount is not None:
            found = now - amount * _UNITS[words[1]]
    elif words[0] in _DAYS and len(words) <= 2:
        day = midnight + timedelta(days=_DAYS[words[0]])
        clock = _clock(words[1]) if len(words) == 2 else (0, 0, 0)
        if clock is not None:
            found = day.replace(
                hour=clock[0], minute=clock[1], second=clock[2]
            ).timestamp()
            unit = _unit(words[1]) if len(words) == 2 else 0.0
    elif len(words) == 1 and _clock(words[0]) is not None:
        hour, minute, second = _clock(words[0]) or (0, 0, 0)
        found = midnight.replace(hour=hour, minute=minute, second=second).timestamp()
        unit = _unit(words[0])
    else:
        found = _iso(iso_text)
        unit = _iso_unit(iso_text) if found is not None else 0.0
    if found is None:
        raise ValueError(f"cannot read the time {text!r}: expected {FORMS}")
    return found + unit - _EPSILON if through and unit else found


_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_MONTHS = (
    "jan", "feb", "mar", "apr", "may", "jun",
    "jul", "aug", "sep", "oct", "nov", "dec",
)  # fmt: skip


def _dated(words: list[str], now: float) -> list[str]:
    """`sat 05 dec [at 03:30]` as `2026-12-05 03:30`: the year that puts it
    nearest `now`, and only if the weekday agrees; else words that fail."""
    weekday, day, month = words[:3]
    at = [words[4]] if len(words) == 5 and words[3] == "at" else []
    if len(words) not in (3, 5) or month not in _MONTHS or not day.isdigit():
        return ["?"]
    if weekday not in _WEEKDAYS or len(day) > 2:
        return ["?"]
    current = datetime.fromtimestamp(now)
    for year in (current.year, current.year - 1, current.year + 1):
        try:
            moment = datetime(year, _MONTHS.index(month) + 1, int(day))
        except ValueError:
            continue
        if abs((moment - current).days) <= 183 and moment.weekday() == _WEEKDAYS.index(
            weekday
        ):
            return [moment.strftime("%Y-%m-%d"), *at]
    return ["?"]


_EPSILON = 1e-6  # one microsecond, the finest a recorded time holds


def _unit(clock: str) -> float:
    return 1.0 if clock.count(":") == 2 else 60.0


def _iso_unit(text: str) -> float:
    """How long an ISO time names: its last written field (no fraction), else 0."""
    body = text.replace("T", " ").replace("t", " ").split(" ", 1)
    if len(body) == 1:
        return 0.0  # a date alone: its midnight, as `today` is
    clock = body[1]
    for sign in ("+", "-", "Z", "z"):
        clock = clock.split(sign, 1)[0]
    if "." in clock or "," in clock:
        return 0.0
    return _unit(clock) if clock.count(":") in (1, 2) else 3600.0


def _number(word: str) -> float | None:
    if not word.replace(".", "", 1).isdigit() or len(word) > 9:
        return None
    return float(word)


def _clock(word: str) -> tuple[int, int, int] | None:
    parts = word.split(":")
    if len(parts) not in (2, 3) or not all(p.isdigit() and len(p) == 2 for p in parts):
        return None
    hour, minute, second = (int(p) for p in (*parts, "00")[:3])
    if hour > 23 or minute > 59 or second > 59:
        return None
    return hour, minute, second


def _iso(text: str) -> float | None:
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.timestamp()
