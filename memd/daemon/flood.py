"""Flood shedding: when one watch's events are a storm, and what to do with it.

A loop renaming project directories makes thousands of events a second, and
watchdog's one inotify reader thread spends them under the GIL (it pairs
each move by a linear search), starving every other directory's snapshot.
Each watch meters its own events (`FloodMeter`); a sustained rate past
`FLOOD_EVENTS_PER_SECOND` trips it once. The watcher then splits a
recursive root above the memory dirs into parts, so only the part that
storms trips next, and sheds any other watch (`Shed`): it is unscheduled,
so the kernel stops queueing its events, and the stat sweep covers what it
leaves deaf until it has been calm for `FLOOD_CALM_SECONDS`.

Nothing here touches watchdog, a file or a thread: the watcher passes in
the time, the meters and what a shed watch would see by stat.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memd.daemon.discovery import WatchRoot

# A flood is a rate past this, every window for FLOOD_WINDOWS windows in a row:
# the rename storm makes 2,000-20,000 events/s; a save makes 1-3 events, a dream
# of 20 files about 60, 200 projects saving at once about 600 (all under 1 s).
FLOOD_EVENTS_PER_SECOND = 1000
FLOOD_WINDOW_SECONDS = 0.25
FLOOD_WINDOWS = 4  # a second of it: a burst that ends sooner never sheds
FLOOD_CALM_SECONDS = 5.0  # unchanged by stat this long before watching natively again
FLOOD_NAME_SHARE = 20  # a flat watch's entry with 1/20 of a flood's events stormed
FLOOD_MAX_NAMES = 20
# A reader thread killed by a storm stops the meters before they trip: a watch
# hot this recently is taken for the storm (the daemon looks within seconds).
FLOOD_RECENT_SECONDS = 30.0


class FloodMeter:
    """Counts one watch's events in windows; trips once on a sustained flood.

    Used from its observer's one dispatch thread only. A window closes at
    the first event after `FLOOD_WINDOW_SECONDS`, and its rate is taken over
    the time it really lasted, so a quiet gap ends a hot run.
    """

    __slots__ = (
        "count",
        "hot",
        "hot_events",
        "hot_names_seen",
        "hot_since",
        "last_hot",
        "last_rate",
        "names",
        "start",
        "tripped",
    )

    def __init__(self, now: float, *, by_name: bool = False) -> None:
        self.start = self.hot_since = now
        self.count = self.hot = self.hot_events = 0
        self.tripped = False
        self.last_hot, self.last_rate = -math.inf, 0.0  # the latest hot window
        # A flat watch's events per entry name since the last calm window, and
        # those of the latest hot run once it has cooled.
        self.names: dict[str, int] | None = {} if by_name else None
        self.hot_names_seen: dict[str, int] = {}

    def hit(self, now: float, *paths: str) -> float | None:
        """Count one event (at `paths`); return the rate the first time it floods."""
        self.count += 1
        if self.names is not None:
            for path in paths:
                if path:
                    name = os.path.basename(path)
                    self.names[name] = self.names.get(name, 0) + 1
        elapsed = now - self.start
        if elapsed < FLOOD_WINDOW_SECONDS:
            return None
        if self.count >= FLOOD_EVENTS_PER_SECOND * elapsed:
            if not self.hot:
                self.hot_since = self.start
            self.hot += 1
            self.hot_events += self.count
            self.last_hot = now
            self.last_rate = self.hot_events / max(now - self.hot_since, 1e-9)
        else:
            if self.names is not None:
                if self.hot:
                    self.hot_names_seen = self.names
                self.names = {}
            self.hot = self.hot_events = 0
        self.start, self.count = now, 0
        if self.hot >= FLOOD_WINDOWS and not self.tripped:
            self.tripped = True
            return self.last_rate
        return None

    def rate(self) -> float:
        """Events per second over the latest hot run."""
        return self.last_rate

    def was_hot(self, now: float, within: float) -> bool:
        """Whether a window closed hot in the last `within` seconds."""
        return now - self.last_hot <= within

    def hot_names(self) -> list[str]:
        """The entries with 1/`FLOOD_NAME_SHARE` or more of the hot run's events."""
        # Copied: the dispatch thread may be adding more.
        names = dict((self.names if self.hot else self.hot_names_seen) or {})
        total = sum(names.values())
        found = [n for n, count in names.items() if count * FLOOD_NAME_SHARE >= total]
        return sorted(found)[:FLOOD_MAX_NAMES]


class Shed:
    """A watch shed for flooding: why, what it leaves deaf, since when it is calm."""

    __slots__ = ("calm_since", "parts", "reason", "signature")

    def __init__(self, reason: str, parts: tuple[str, ...], signature: int, now: float):
        self.reason = reason
        self.parts = parts  # reported to the sweep: the root, or what stormed in it
        self.signature = signature
        self.calm_since = now

    def observe(self, signature: int, now: float) -> None:
        """Note what the shed watch would see now; any change restarts the calm."""
        if signature != self.signature:
            self.signature, self.calm_since = signature, now

    def is_calm(self, now: float) -> bool:
        """Whether it has been calm long enough to be watched natively again."""
        return now - self.calm_since >= FLOOD_CALM_SECONDS


@dataclass(frozen=True, slots=True)
class FloodAction:
    """What to do with one watch found flooding."""

    is_split: bool  # a root above the memory dirs: watch its parts apart
    reason: str  # for the log and `health()`
    deaf: tuple[str, ...]  # shed: what the stat sweep covers from now on


def floods_to_take(
    flooded: Mapping[WatchRoot, float],
    meters: Mapping[WatchRoot, FloodMeter],
    *,
    now: float,
    reader_died: bool,
    projects: WatchRoot,
) -> dict[WatchRoot, float]:
    """Return the watches to split or shed, with their rates (0: not metered).

    The meters that tripped are in `flooded`. A storm can kill the reader
    (`reader_died`) before any meter trips: then a watch hot of late is
    taken for the storm, or else the recursive watch of `projects/`, where
    renames break watchdog's bookkeeping (its KeyError).
    """
    found = dict(flooded)
    if reader_died:
        for root, meter in meters.items():
            if meter.was_hot(now, FLOOD_RECENT_SECONDS):
                found.setdefault(root, meter.rate())
        if not found and projects in meters:
            found[projects] = meters[projects].rate()
    return found


def flood_action(
    path: str, rate: float, *, can_split: bool, hot_names: list[str]
) -> FloodAction:
    """Split a recursive root above the memory dirs; shed anything else.

    A shed flat watch names the entries that stormed: those are deaf, not
    the whole directory (in `projects/`, the calm projects keep theirs).
    """
    reason = (
        f"event flood: {rate:,.0f} events/s"
        if rate
        else "the inotify reader died under it"
    )
    if can_split:
        return FloodAction(is_split=True, reason=reason, deaf=())
    parts = tuple(os.path.join(path, name) for name in hot_names)
    if parts:
        reason += f" in {path}"
    return FloodAction(is_split=False, reason=reason, deaf=parts or (path,))
