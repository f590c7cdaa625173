"""The times a person reads: local, short, and each one `--at` reads back.

Text shows local time, to the second: `today 23:08:13`, `yesterday 18:02:40`,
`2026-12-04 09:15:00` further back, `tomorrow 03:30:00` ahead; `3 min ago`
where only the distance matters. The zone is said once per page or command
(`zone_note`). JSON keeps ISO 8601 with the offset (`iso`). Every form here
is one `memd.history.when.parse_when` accepts (a test pastes each back).

Pure: the standard library's `time` and `datetime`, no I/O.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

_MINUTE, _HOUR, _DAY = 60, 3600, 86400


def clock(epoch: float, *, now: float, seconds: bool = True) -> str:
    """Return `epoch` as `today 23:08:13`, `yesterday ...`, `tomorrow ...` or a date.

    `seconds=False` drops the seconds (`today 23:08`) where a minute is enough.
    """
    moment = datetime.fromtimestamp(epoch)
    days = (moment.date() - datetime.fromtimestamp(now).date()).days
    hour = moment.strftime("%H:%M:%S" if seconds else "%H:%M")
    day = {0: "today", -1: "yesterday", 1: "tomorrow"}.get(days)
    if day is None:
        day = moment.strftime("%Y-%m-%d")
    return f"{day} {hour}"


def ago(epoch: float, *, now: float) -> str:
    """Return how long before `now` `epoch` was: `12 s ago`, `3 min ago`, `5 h ago`.

    Past a day, and for a time ahead of `now`, `clock`'s form instead.
    """
    delta = now - epoch
    if delta < 0 or delta >= _DAY:
        return clock(epoch, now=now)
    if delta < _MINUTE:
        return f"{int(delta)} s ago"
    if delta < _HOUR:
        return f"{int(delta // _MINUTE)} min ago"
    return f"{int(delta // _HOUR)} h ago"


def moment(epoch: float, *, now: float, recent: float = _HOUR) -> str:
    """Return `ago`'s form within `recent` seconds before `now`, else `clock`'s."""
    if 0 <= now - epoch < recent:
        return ago(epoch, now=now)
    return clock(epoch, now=now)


def span(seconds: float) -> str:
    """Return a duration: `45 s`, `12 min`, `3 h 20 min`, `2 days`."""
    seconds = max(0, int(seconds))
    if seconds < _MINUTE:
        return f"{seconds} s"
    if seconds < _HOUR:
        return f"{seconds // _MINUTE} min"
    if seconds < _DAY:
        hours, rest = divmod(seconds, _HOUR)
        return f"{hours} h {rest // _MINUTE} min" if rest >= _MINUTE else f"{hours} h"
    days = seconds // _DAY
    return f"{days} day" if days == 1 else f"{days} days"


def zone_name(epoch: float | None = None) -> str:
    """Return the local zone at `epoch` (now by default): `CET`, else `UTC+01:00`."""
    local = datetime.fromtimestamp(time.time() if epoch is None else epoch).astimezone()
    offset = local.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    numeric = f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    name = local.tzname() or ""
    if not name or name[0] in "+-" or (name.upper() in ("UTC", "GMT") and minutes):
        return numeric
    return name


def zone_note(epoch: float | None = None) -> str:
    """Return the once-per-page line: `times are local (CET)`."""
    return f"times are local ({zone_name(epoch)})"


def iso(epoch: float) -> str:
    """Return ISO 8601 with the local offset, to the second: for JSON."""
    return datetime.fromtimestamp(int(epoch)).astimezone().isoformat()


def to_epoch(value: object) -> float | None:
    """Return epoch seconds from an epoch number or an ISO 8601 string, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None
