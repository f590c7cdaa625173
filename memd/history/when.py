"""The one parser of WHEN (`--at`, `--since`): ISO and relative times. Pure, linear.

Forms (local time unless the ISO form names a zone):
- `now`
- `N UNIT ago`, UNIT one of s, sec, second(s), m, min, minute(s), h, hour(s),
  d, day(s), w, week(s): `10 minutes ago`, `2 hours ago`, `3 days ago`
- `HH:MM` or `HH:MM:SS`: today at that time
- `today`, `yesterday` (midnight), `today HH:MM[:SS]`, `yesterday HH:MM[:SS]`
- ISO 8601: `2026-12-04`, `2026-12-04T03:11`, `2026-12-04 03:11:30`,
  with `Z` or `+01:00` for another zone
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
    "now, 'N minutes|hours|days|weeks ago', HH:MM[:SS], today|yesterday [HH:MM[:SS]],"
    " or an ISO time (2026-12-04T03:11)"
)


def parse_when(text: str, *, now: float) -> float:
    """Return `text` as epoch seconds (`now` anchors the relative forms).

    Raises `ValueError` saying which forms are understood.
    """
    words = text.strip().lower().split()
    if not words or len(text) > MAX_WHEN_CHARS:
        raise ValueError(f"cannot read the time {text!r}: expected {FORMS}")
    current = datetime.fromtimestamp(now)
    midnight = current.replace(hour=0, minute=0, second=0, microsecond=0)
    found: float | None = None
    if words == ["now"]:
        found = now
    elif len(words) == 3 and words[2] == "ago" and words[1] in _UNITS:
        amount = _number(words[0])
        if amount is not None:
            found = now - amount * _UNITS[words[1]]
    elif words[0] in ("today", "yesterday") and len(words) <= 2:
        day = midnight - timedelta(days=1 if words[0] == "yesterday" else 0)
        clock = _clock(words[1]) if len(words) == 2 else (0, 0, 0)
        if clock is not None:
            found = day.replace(
                hour=clock[0], minute=clock[1], second=clock[2]
            ).timestamp()
    elif len(words) == 1 and _clock(words[0]) is not None:
        hour, minute, second = _clock(words[0]) or (0, 0, 0)
        found = midnight.replace(hour=hour, minute=minute, second=second).timestamp()
    else:
        found = _iso(text.strip())
    if found is None:
        raise ValueError(f"cannot read the time {text!r}: expected {FORMS}")
    return found


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
