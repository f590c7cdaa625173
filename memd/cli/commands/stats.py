"""`memd stats`: summarise the telemetry JSON lines, per memory directory.

For each directory: how many `memdir_loaded` events and renders, the latest,
smallest and largest index size (`content_length`, UTF-16 units) and line
count, the trend from the first event to the last, and how many renders cut
the index. `memdir_disabled` events are counted per project root.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable
    from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (default: text)",
    )


def summarise(events: Iterable[dict[str, object]]) -> dict[str, Any]:
    """Return {"memory_dirs": {dir: summary}, "disabled": {project_root: count}}."""
    dirs: dict[str, dict[str, Any]] = {}
    disabled: dict[str, int] = {}
    for event in events:
        kind = event.get("event")
        if kind == "memdir_disabled":
            root = str(event.get("project_root", "?"))
            disabled[root] = disabled.get(root, 0) + 1
            continue
        if kind != "memdir_loaded":
            continue
        memory_dir = str(event.get("memory_dir", "?"))
        summary = dirs.setdefault(memory_dir, _empty())
        summary["events"] = _int(summary["events"]) + 1
        if event.get("memory_type") == "team":
            continue  # the second event of one team-mode render: same numbers
        summary["renders"] = _int(summary["renders"]) + 1
        for field in ("content_length", "line_count"):
            value = _int(event.get(field))
            stats = summary[field]
            if stats["first"] is None:
                stats["first"] = value
            stats["latest"] = value
            stats["min"] = (
                value if stats["min"] is None else min(_int(stats["min"]), value)
            )
            stats["max"] = (
                value if stats["max"] is None else max(_int(stats["max"]), value)
            )
        if event.get("was_truncated") or event.get("was_byte_truncated"):
            summary["truncation_events"] = _int(summary["truncation_events"]) + 1
        summary["last_time"] = event.get("time")
        summary["lint_errors"] = event.get("lint_errors")
        summary["lint_warnings"] = event.get("lint_warnings")
        for field in _RELEASE_FIELDS:
            summary[field] = event.get(field)
    for summary in dirs.values():
        for field in ("content_length", "line_count"):
            stats = summary[field]
            if stats["first"] is not None:
                stats["trend"] = _int(stats["latest"]) - _int(stats["first"])
    return {"memory_dirs": dirs, "disabled": disabled}


# memdir_loaded fields that name the agent release and what it reported (latest).
_RELEASE_FIELDS = ("agent_profile", "memory_access_mode", "prompt_variant")


def _empty() -> dict[str, Any]:
    def series() -> dict[str, object]:
        return {"first": None, "latest": None, "min": None, "max": None, "trend": 0}

    return {
        "events": 0,
        "renders": 0,
        "content_length": series(),
        "line_count": series(),
        "truncation_events": 0,
        "last_time": None,
        "lint_errors": None,
        "lint_warnings": None,
        **dict.fromkeys(_RELEASE_FIELDS),
    }


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def format_text(summary: dict[str, Any]) -> str:
    """Return the summary as aligned human text."""
    dirs = summary["memory_dirs"]
    disabled = summary["disabled"]
    if not dirs and not disabled:
        return "no telemetry yet\n"
    lines: list[str] = []
    for memory_dir in sorted(dirs):
        s = dirs[memory_dir]
        size, count = s["content_length"], s["line_count"]
        lines += [
            memory_dir,
            f"  renders: {s['renders']} ({s['events']} events), last {s['last_time']}",
            f"  index size: {_series(size)} units",
            f"  index lines: {_series(count)}",
            f"  truncated renders: {s['truncation_events']}",
            f"  lint (latest): {s['lint_errors']} errors, "
            f"{s['lint_warnings']} warnings",
            f"  agent (latest): {s['agent_profile'] or '-'}, access mode "
            f"{s['memory_access_mode'] or '-'}, prompt variant "
            f"{s['prompt_variant'] or '-'}",
        ]
    for root in sorted(disabled):
        lines.append(f"{root}\n  disabled events: {disabled[root]}")
    return "\n".join(lines) + "\n"


def _series(stats: dict[str, Any]) -> str:
    if stats["first"] is None:
        return "-"
    trend = _int(stats["trend"])
    return (
        f"latest {stats['latest']} (min {stats['min']}, max {stats['max']}; "
        f"{stats['first']} -> {stats['latest']}, {trend:+d})"
    )


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from memd.config import load_config
    from memd.snapshot.telemetry_sink import default_path, read_events

    config = load_config()
    summary = summarise(read_events(default_path(config.state_dir)))
    if args.format == "json":
        sys.stdout.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(format_text(summary))
    return 0
