"""When the next sync is due: the interval after a good one, a backoff after a failure.

Both syncs share these rules: a failed attempt waits 30 s, then twice as
long each time, up to an hour (or the interval, when that is longer); a
settled save does not shorten a backoff, so a dead remote is not hammered.
"""

from __future__ import annotations

MAX_BACKOFF_SECONDS = 3600.0


def backoff_seconds(failures: int, interval_seconds: float) -> float:
    """Return the wait before retry number `failures`: 30 s, doubling, capped.

    The cap is an hour, or the interval when that is longer.
    """
    cap = max(MAX_BACKOFF_SECONDS, interval_seconds)
    return float(min(cap, 30.0 * 2 ** max(0, failures - 1)))


def should_sync(record: dict[str, object], now: float, reason: str) -> bool:
    """Return True when a sync is due at `now` given the last `record`."""
    due = record.get("next_attempt")
    failures = record.get("failures")
    if reason == "settled" and not (isinstance(failures, int) and failures > 0):
        return True
    return not isinstance(due, int | float) or now >= due
