"""The telemetry page's plots, drawn on the server as SVG text: pure.

From the `memdir_loaded` events (memd.snapshot.telemetry): prompt bytes
(`content_length`, UTF-16 units) and index lines per project over time,
the renders that cut the index, and loads per day. Every label is escaped
here, since the SVG goes into the page as markup. No script, no style
attribute (the page's CSP allows neither inline).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 720, 220
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 36
MAX_POINTS = 400  # per series: more are thinned evenly
COLOURS = ("c0", "c1", "c2", "c3", "c4", "c5")  # CSS classes in ui.css


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
    """Group `memdir_loaded` events per memory dir (`labels`: dir -> short name)."""
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
        day = datetime.datetime.fromtimestamp(when, datetime.UTC).strftime("%Y-%m-%d")
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
    limit: float | None = None,
    marks: tuple[float, ...] = (),
) -> str:
    """Return an SVG line plot: a line per series, the limit dashed, marks as ticks."""
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

    parts = [_frame(title), _axis_labels(top, t0, t1)]
    if limit:
        parts.append(
            f'<line class="limit" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{y(limit):.1f}" y2="{y(limit):.1f}"/>'
            f'<text class="axis" x="{WIDTH - RIGHT}" y="{y(limit) - 4:.1f}" '
            f'text-anchor="end">limit {limit:g}</text>'
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
    parts.append(_legend(series))
    return _svg(title, "".join(parts))


def bar_plot(bars: tuple[tuple[str, int], ...], *, title: str) -> str:
    """Return an SVG bar chart of (label, count)."""
    if not bars:
        return _empty(title)
    top = max(max(count for _, count in bars), 1)
    inner = WIDTH - LEFT - RIGHT
    width = inner / len(bars)
    parts = [_frame(title), _axis_labels(float(top), None, None)]
    for number, (label, count) in enumerate(bars):
        height = count / top * (HEIGHT - TOP - BOTTOM)
        left = LEFT + number * width
        parts.append(
            f'<rect class="bar" x="{left + 1:.1f}" y="{HEIGHT - BOTTOM - height:.1f}" '
            f'width="{max(width - 2, 1):.1f}" height="{height:.1f}">'
            f"<title>{escape(label)}: {count}</title></rect>"
        )
    first, last = bars[0][0], bars[-1][0]
    parts.append(
        f'<text class="axis" x="{LEFT}" y="{HEIGHT - 8}">{escape(first)}</text>'
        f'<text class="axis" x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" '
        f'text-anchor="end">{escape(last)}</text>'
    )
    return _svg(title, "".join(parts))


def _svg(title: str, body: str) -> str:
    return (
        f'<svg class="plot" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )


def _empty(title: str) -> str:
    return _svg(
        title,
        _frame(title) + f'<text class="axis" x="{WIDTH / 2}" y="{HEIGHT / 2}" '
        'text-anchor="middle">no telemetry yet</text>',
    )


def _frame(title: str) -> str:
    return (
        f'<line class="axisline" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" '
        f'y2="{HEIGHT - BOTTOM}"/>'
        f'<line class="axisline" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
        f'y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}"/>'
    )


def _axis_labels(top: float, t0: float | None, t1: float | None) -> str:
    parts = [
        f'<text class="axis" x="{LEFT - 6}" y="{TOP + 4}" text-anchor="end">'
        f"{top:,.0f}</text>",
        f'<text class="axis" x="{LEFT - 6}" y="{HEIGHT - BOTTOM}" '
        'text-anchor="end">0</text>',
    ]
    if t0 is not None and t1 is not None:
        parts.append(
            f'<text class="axis" x="{LEFT}" y="{HEIGHT - 8}">{_date(t0)}</text>'
            f'<text class="axis" x="{WIDTH - RIGHT}" y="{HEIGHT - 8}" '
            f'text-anchor="end">{_date(t1)}</text>'
        )
    return "".join(parts)


def _legend(series: tuple[Series, ...]) -> str:
    parts = []
    for number, one in enumerate(series[: len(COLOURS)]):
        colour = COLOURS[number % len(COLOURS)]
        left = LEFT + 8 + number * 110
        parts.append(
            f'<rect class="swatch {colour}" x="{left}" y="{TOP}" width="10" '
            f'height="10"/><text class="axis" x="{left + 14}" y="{TOP + 9}">'
            f"{escape(one.label[-14:])}</text>"
        )
    return "".join(parts)


def _date(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime(
        "%Y-%m-%d %H:%M"
    )
