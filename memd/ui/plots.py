"""The telemetry page's plots, drawn on the server as SVG text: pure.

From the `memdir_loaded` events (memd.snapshot.telemetry), each written when
memd builds a project's memory prompt: its size in characters (UTF-16, as
the agent counts) and in lines per project over time, the builds the agent
would cut, and builds per day. Each project is named in full (the caller's
`labels`, memd.projects) in a legend under the plot that wraps a long name
over lines, never cuts it; each axis says its unit, times are local. Every
label is escaped here, since the SVG goes into the page as markup. No
script, no style attribute (the page's CSP allows neither inline).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 76, 16, 16, 52
MAX_POINTS = 400  # per series: more are thinned evenly
MAX_SERIES = 12  # drawn per plot, the largest now; the legend says how many more
COLOURS = ("c0", "c1", "c2", "c3", "c4", "c5")  # CSS classes in ui.css
LEGEND_LINE = 16  # px per legend line
LEGEND_CHARS = 84  # a legend line's characters at the axis font; longer names wrap


@dataclass(frozen=True, slots=True, kw_only=True)
class Series:
    label: str
    points: tuple[tuple[float, float], ...]  # (epoch seconds, value), by time


@dataclass(frozen=True, slots=True, kw_only=True)
class TelemetryModel:
    units: tuple[Series, ...]  # prompt size per project
    lines: tuple[Series, ...]  # index lines per project
    cuts: tuple[tuple[float, str], ...]  # (time, project label) of each cut render
    per_day: tuple[tuple[str, int], ...]  # (YYYY-MM-DD, loads)
    events: int


def telemetry_model(
    events: list[dict[str, object]], labels: dict[str, str]
) -> TelemetryModel:
    """Group `memdir_loaded` events per memory dir (`labels`: dir -> its name).

    `labels` is keyed by the memory dir without a trailing separator.
    """
    units: dict[str, list[tuple[float, float]]] = {}
    lines: dict[str, list[tuple[float, float]]] = {}
    cuts: list[tuple[float, str]] = []
    days: dict[str, int] = {}
    for event in events:
        if event.get("memory_type") == "team":
            continue  # the second event of one team-mode render
        at = event.get("time_ns")
        if not isinstance(at, int):
            continue
        when = at / 1e9
        memory_dir = str(event.get("memory_dir", ""))
        label = labels.get(memory_dir.rstrip("/"), memory_dir)
        units.setdefault(label, []).append((when, _number(event.get("content_length"))))
        lines.setdefault(label, []).append((when, _number(event.get("line_count"))))
        if event.get("was_truncated") or event.get("was_byte_truncated"):
            cuts.append((when, label))
        day = datetime.datetime.fromtimestamp(when).strftime("%Y-%m-%d")  # local
        days[day] = days.get(day, 0) + 1
    return TelemetryModel(
        units=_series(units),
        lines=_series(lines),
        cuts=tuple(cuts[-200:]),
        per_day=tuple(sorted(days.items()))[-60:],
        events=len(events),
    )


def _number(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return 0.0


def _series(found: dict[str, list[tuple[float, float]]]) -> tuple[Series, ...]:
    return tuple(
        Series(label=label, points=tuple(_thin(points)))
        for label, points in sorted(found.items())
    )


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(points) <= MAX_POINTS:
        return points
    step = len(points) / MAX_POINTS
    return [points[int(i * step)] for i in range(MAX_POINTS - 1)] + [points[-1]]


def line_plot(
    series: tuple[Series, ...],
    *,
    title: str,
    unit: str = "",
    limit: float | None = None,
    marks: tuple[float, ...] = (),
) -> str:
    """Return an SVG line plot: a line per series, the limit dashed, marks as ticks.

    `unit` names the y axis ("characters", "lines"); the x axis is local time.
    At most `MAX_SERIES` series are drawn, the largest last values first.
    """
    if len(series) > MAX_SERIES:
        ranked = sorted(series, key=lambda s: s.points[-1][1] if s.points else 0)
        kept = set(map(id, ranked[-MAX_SERIES:]))
        hidden = len(series) - MAX_SERIES
        series = tuple(s for s in series if id(s) in kept)
    else:
        hidden = 0
    points = [p for s in series for p in s.points]
    if not points:
        return _empty(title)
    t0 = min(t for t, _ in points)
    t1 = max(t for t, _ in points)
    top = max([v for _, v in points] + ([limit] if limit else []) + [1.0])
    span = max(t1 - t0, 1.0)

    def x(t: float) -> float:
        return LEFT + (t - t0) / span * (WIDTH - LEFT - RIGHT)

    def y(v: float) -> float:
        return HEIGHT - BOTTOM - v / top * (HEIGHT - TOP - BOTTOM)

    parts = [_frame(title), _axis_labels(top, t0, t1, unit=unit, x_unit=True)]
    if limit:
        parts.append(
            f'<line class="limit" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{y(limit):.1f}" y2="{y(limit):.1f}"/>'
            f'<text class="axis" x="{WIDTH - RIGHT}" y="{y(limit) - 4:.1f}" '
            f'text-anchor="end">the agent\'s limit: {limit:,.0f} {escape(unit)}</text>'
        )
    for when in marks:
        parts.append(
            f'<line class="cut" x1="{x(when):.1f}" x2="{x(when):.1f}" '
            f'y1="{TOP}" y2="{HEIGHT - BOTTOM}"/>'
        )
    for number, one in enumerate(series):
        colour = COLOURS[number % len(COLOURS)]
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in one.points)
        parts.append(
            f'<polyline class="series {colour}" points="{path}">'
            f"<title>{escape(one.label)}</title></polyline>"
        )
    legend, height = _legend(series, hidden)
    parts.append(legend)
    return _svg(title, "".join(parts), height)


def bar_plot(bars: tuple[tuple[str, int], ...], *, title: str, unit: str = "") -> str:
    """Return an SVG bar chart of (label, count); `unit` names the y axis."""
    if not bars:
        return _empty(title)
    top = max(max(count for _, count in bars), 1)
    inner = WIDTH - LEFT - RIGHT
    width = inner / len(bars)
    parts = [_frame(title), _axis_labels(float(top), None, None, unit=unit)]
    for number, (label, count) in enumerate(bars):
        height = count / top * (HEIGHT - TOP - BOTTOM)
        left = LEFT + number * width
        parts.append(
            f'<rect class="bar" x="{left + 1:.1f}" y="{HEIGHT - BOTTOM - height:.1f}" '
            f'width="{max(width - 2, 1):.1f}" height="{height:.1f}">'
            f"<title>{escape(label)}: {count:,} {escape(unit)}</title></rect>"
        )
    first, last = bars[0][0], bars[-1][0]
    parts.append(
        f'<text class="axis" x="{LEFT}" y="{HEIGHT - BOTTOM + 14}">'
        f"{escape(first)}</text>"
        f'<text class="axis" x="{WIDTH - RIGHT}" y="{HEIGHT - BOTTOM + 14}" '
        f'text-anchor="end">{escape(last)}</text>'
        f'<text class="axis" x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 8}" '
        'text-anchor="middle">day (local time)</text>'
    )
    return _svg(title, "".join(parts))


def _svg(title: str, body: str, height: int = HEIGHT) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _empty(title: str) -> str:
    return _svg(
        title,
        _frame(title) + f'<text class="axis" x="{WIDTH / 2}" y="{HEIGHT / 2}" '
        'text-anchor="middle">nothing measured yet</text>',
    )


def _frame(title: str) -> str:
    return (
        f'<line class="axisline" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" '
        f'y2="{HEIGHT - BOTTOM}"/>'
        f'<line class="axisline" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
        f'y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}"/>'
    )


def _axis_labels(
    top: float,
    t0: float | None,
    t1: float | None,
    *,
    unit: str = "",
    x_unit: bool = False,
) -> str:
    """The y axis's top, zero and unit (turned along it); the x axis's first
    and last local times and what they are."""
    middle = (TOP + HEIGHT - BOTTOM) / 2
    parts = [
        f'<text class="axis" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">'
        f"{top:,.0f}</text>",
        f'<text class="axis" x="{LEFT - 6}" y="{HEIGHT - BOTTOM}" '
        'text-anchor="end">0</text>',
    ]
    if unit:
        parts.append(
            f'<text class="axis unit" x="14" y="{middle:.0f}" text-anchor="middle" '
            f'transform="rotate(-90 14 {middle:.0f})">{escape(unit)}</text>'
        )
    if t0 is not None and t1 is not None:
        parts.append(
            f'<text class="axis" x="{LEFT}" y="{HEIGHT - BOTTOM + 14}">'
            f"{_date(t0)}</text>"
            f'<text class="axis" x="{WIDTH - RIGHT}" y="{HEIGHT - BOTTOM + 14}" '
            f'text-anchor="end">{_date(t1)}</text>'
        )
    if x_unit:
        parts.append(
            f'<text class="axis unit" x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" '
            f'y="{HEIGHT - 8}" text-anchor="middle">time (local)</text>'
        )
    return "".join(parts)


def _legend(series: tuple[Series, ...], hidden: int = 0) -> tuple[str, int]:
    """The legend under the plot: each name in full, wrapped; (markup, height)."""
    parts = []
    y = HEIGHT + 4
    for number, one in enumerate(series):
        colour = COLOURS[number % len(COLOURS)]
        parts.append(
            f'<rect class="swatch {colour}" x="{LEFT}" y="{y}" width="10" height="10"/>'
        )
        for line in wrap_label(one.label, LEGEND_CHARS):
            parts.append(
                f'<text class="axis legend" x="{LEFT + 16}" y="{y + 9}">'
                f"{escape(line)}</text>"
            )
            y += LEGEND_LINE
    if hidden:
        parts.append(
            f'<text class="axis legend" x="{LEFT}" y="{y + 9}">and {hidden} more'
            f" project{'' if hidden == 1 else 's'}, smaller, not drawn</text>"
        )
        y += LEGEND_LINE
    return "".join(parts), y + 4


def wrap_label(label: str, width: int) -> list[str]:
    """Split a name into lines of at most `width` characters, at `/` or a space
    where one falls, never dropping a character."""
    lines: list[str] = []
    rest = label
    while len(rest) > width:
        cut = max(rest.rfind("/", 1, width), rest.rfind(" ", 1, width))
        cut = cut if cut > 0 else width
        lines.append(rest[:cut])
        rest = rest[cut:]
    lines.append(rest)
    return lines


def _date(epoch: float) -> str:
    """Local time, as `--at` reads it back (memd.history.when)."""
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")
