"""When the daemon sweeps by stat, checks its watches, and retries native watching.

The stat sweep catches what events missed (a `touch` through a hard link, a
watch that went deaf). Every `sweep_seconds` it covers every watched
directory and the watches' health is checked (a full sweep); while a watch
is deaf, the directories under it are swept every `DEAF_SWEEP_SECONDS`, and
native watching is retried, the wait doubling from `NATIVE_RETRY_SECONDS[0]`
to `NATIVE_RETRY_SECONDS[1]` and back to the first once nothing is deaf.
A rediscovery that added or failed a watch makes a health check due within
`DEAF_SWEEP_SECONDS` of the last one (it walks every watched tree).

`SweepSchedule` holds that state and answers with plain values; the caller
passes the monotonic time in. It is used from the settle thread only, and
does no I/O: the daemon stats, checks and restarts as it says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memd.daemon.rebuild import is_under_any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

DEAF_SWEEP_SECONDS = 1.0  # how often directories a deaf watch covers are swept
NATIVE_RETRY_SECONDS = (5.0, 300.0)  # first and longest wait to re-watch natively

Problem = dict[str, object]  # a deaf watch: {"root": path, "reason": why, ...}


@dataclass(frozen=True, slots=True)
class SweepStep:
    """What one due sweep does besides stat-checking directories."""

    is_full: bool  # every directory; also re-choose the profile, clean temp files
    checks_health: bool


@dataclass(frozen=True, slots=True)
class HealthVerdict:
    """What to do after a health check."""

    newly_deaf: tuple[Problem, ...]  # not reported before: log and count each
    restart_retry_in: float | None  # restart native watching now; the next wait


class SweepSchedule:
    """The sweep's clock, the deaf watches, and the native-retry backoff."""

    __slots__ = (
        "deaf",
        "deaf_reported",
        "health_checked_at",
        "health_due",
        "native_backoff",
        "native_retry_at",
        "next_full_sweep",
        "next_sweep",
    )

    def __init__(self, *, sweep_seconds: float, now: float) -> None:
        self.next_sweep = self.next_full_sweep = now + sweep_seconds
        self.deaf: tuple[Problem, ...] = ()  # watch roots not fully watched
        self.deaf_reported: set[tuple[object, object]] = set()
        self.native_retry_at = 0.0
        self.native_backoff = NATIVE_RETRY_SECONDS[0]
        self.health_due = False
        self.health_checked_at = -math.inf

    def watches_changed(self) -> None:
        """A watch was added or failed, or a directory appeared: check health soon."""
        self.health_due = True
        self.next_sweep = min(
            self.next_sweep, self.health_checked_at + DEAF_SWEEP_SECONDS
        )

    def is_due(self, now: float, *, is_ready: bool) -> bool:
        """Whether a sweep runs now (before readiness only for a health check)."""
        return now >= self.next_sweep and (is_ready or self.health_due)

    def begin(self, now: float, *, is_ready: bool, sweep_seconds: float) -> SweepStep:
        """Start a due sweep: full when its time has come, else only the deaf."""
        is_full = now >= self.next_full_sweep and is_ready
        if is_full:
            self.next_full_sweep = now + sweep_seconds
        return SweepStep(is_full=is_full, checks_health=is_full or self.health_due)

    def health_checked(self, now: float, deaf: Sequence[Problem]) -> HealthVerdict:
        """Record what a health check found deaf; say whether to restart watching."""
        self.health_due, self.health_checked_at = False, now
        self.deaf = tuple(deaf)
        newly = tuple(p for p in deaf if _key(p) not in self.deaf_reported)
        self.deaf_reported = {_key(p) for p in deaf}
        if not deaf:
            self.native_backoff = NATIVE_RETRY_SECONDS[0]
            return HealthVerdict(newly, None)
        self.next_sweep = min(self.next_sweep, now + DEAF_SWEEP_SECONDS)
        if now < self.native_retry_at:
            return HealthVerdict(newly, None)
        self.native_retry_at = now + self.native_backoff
        self.native_backoff = min(self.native_backoff * 2, NATIVE_RETRY_SECONDS[1])
        return HealthVerdict(newly, self.native_backoff)

    def to_sweep(self, now: float, paths: Iterable[str], step: SweepStep) -> list[str]:
        """Return which of `paths` this sweep stat-checks; schedule the next one."""
        deaf_roots = [str(problem["root"]) for problem in self.deaf]
        self.next_sweep = min(
            self.next_full_sweep, now + DEAF_SWEEP_SECONDS if self.deaf else math.inf
        )
        return [p for p in paths if step.is_full or is_under_any(p, deaf_roots)]

    def seconds_to_next(self, now: float) -> float:
        """How long until the next sweep is due (negative: overdue)."""
        return self.next_sweep - now


def _key(problem: Problem) -> tuple[object, object]:
    return (problem["root"], problem["reason"])
