"""`memd stats`: each project's memory prompt against the agent's limits.

Per project (named by its folder, memd.projects): how big MEMORY.md is
against the agent's 200 lines and 25,000 characters (UTF-16 units, as the
agent counts), how often the agent's sessions loaded it (its transcripts),
what grew since memd first built it, and when the agent cut it. From the
telemetry JSON lines: the `memdir_loaded` events memd writes each time it
builds the prompt (latest, smallest and largest `content_length` and
`line_count`, their trend); `memdir_disabled` events per project root. JSON
keeps the raw summary, with the project's name and sessions added.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Mapping
    from typing import Any

    from memd.projects.naming import ProjectNames
    from memd.projects.sessions import Sessions


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
        if summary.get("first_time") is None:
            summary["first_time"] = event.get("time")
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
        "first_time": None,
        "last_time": None,
        "lint_errors": None,
        "lint_warnings": None,
        **dict.fromkeys(_RELEASE_FIELDS),
    }


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def format_text(
    summary: dict[str, Any],
    names: ProjectNames | None = None,
    sessions: Mapping[str, Sessions] | None = None,
    *,
    now: float | None = None,
) -> str:
    """Return the summary as a person reads it: per project, against the limits.

    Each project (named by `names`, memd.projects) says how big its memory
    prompt is against the agent's limits, how often sessions loaded it
    (`sessions`, the agent's transcripts), what grew, and when the agent cut it.
    """
    import time

    from memd.projects.naming import ProjectNames, memory_dir_key
    from memd.times import zone_note

    now = time.time() if now is None else now
    names = ProjectNames() if names is None else names
    dirs = summary["memory_dirs"]
    disabled = summary["disabled"]
    if not dirs and not disabled:
        return (
            "nothing measured yet: memd measures a project's memory prompt"
            " each time it builds it (`memd run`, `memd prompt`)\n"
        )
    lines: list[str] = []
    for memory_dir in sorted(dirs, key=names.label):
        s = dirs[memory_dir]
        seen = None if sessions is None else sessions.get(memory_dir_key(memory_dir))
        lines += [
            names.label(memory_dir),
            *_project_lines(s, seen, now),
            f"  memory directory: {names.detail(memory_dir)}",
        ]
    for root in sorted(disabled):
        count = disabled[root]
        lines.append(
            f"{_tilde(root, names)}"  # a project root: its folder, ~ for home
            f"  auto memory was off when memd built its prompt ({_times(count)})"
        )
    lines.append(zone_note(now))
    return "\n".join(lines) + "\n"


def _project_lines(s: dict[str, Any], seen: Sessions | None, now: float) -> list[str]:
    from memd.claude_code.profile import get_profile
    from memd.times import clock, to_epoch

    try:
        agent = get_profile(s.get("agent_profile") or None)
    except (KeyError, ValueError):
        agent = get_profile(None)
    max_lines, max_chars = agent.entrypoint_max_lines, agent.entrypoint_max_units
    size, count = s["content_length"], s["line_count"]
    last = to_epoch(s.get("last_time"))
    first = to_epoch(s.get("first_time"))
    lines = []
    if size["latest"] is None:
        lines.append("  memory prompt (MEMORY.md): not built yet")
    else:
        share = max(_int(count["latest"]) / max_lines, _int(size["latest"]) / max_chars)
        lines.append(
            f"  memory prompt (MEMORY.md): {_int(count['latest']):,} of {max_lines:,}"
            f" lines, {_int(size['latest']):,} of {max_chars:,} characters"
            + (
                " (over the agent's limit: `memd fix` compacts it)"
                if share > 1
                else f" ({share:.0%} of the agent's limit)"
            )
        )
    if seen is not None and seen.count:
        when = "" if seen.last is None else f", last {clock(seen.last, now=now)}"
        lines.append(
            f"  loaded by the agent's sessions: {_times(seen.count)}"
            f" ({seen.recent} in the last 7 days){when}"
        )
    elif seen is not None:
        lines.append("  loaded by the agent's sessions: no session transcript found")
    lines.append(f"  {_growth(size, count, first, now)}")
    cuts = _int(s["truncation_events"])
    lines.append(
        "  cut at the agent's limit: never"
        if not cuts
        else f"  cut at the agent's limit: {_times(cuts)} (the agent loaded only"
        f" the first {max_lines:,} lines or {max_chars:,} characters)"
    )
    lines.append(
        f"  lint: {_counted(s['lint_errors'], 'error')},"
        f" {_counted(s['lint_warnings'], 'warning')}"
        + (f" (as of {clock(last, now=now)})" if last is not None else "")
    )
    lines.append(
        f"  memd built the prompt {_times(_int(s['renders']))}"
        + (f"; agent release {s['agent_profile']}" if s.get("agent_profile") else "")
    )
    return lines


def _growth(
    size: dict[str, Any], count: dict[str, Any], first: float | None, now: float
) -> str:
    """What grew since the first build memd recorded: characters and lines."""
    from memd.times import clock

    if size["first"] is None:
        return "growth: nothing recorded yet"
    chars, rows = _int(size["trend"]), _int(count["trend"])
    since = f" since {clock(first, now=now)}" if first is not None else ""
    if not chars and not rows:
        return f"unchanged{since}"
    verb = "grew" if chars > 0 or (chars == 0 and rows > 0) else "shrank"
    plural = "" if abs(rows) == 1 else "s"
    return (
        f"{verb}{since}: {chars:+,} characters, {rows:+,} line{plural}"
        f" ({_int(size['first']):,} -> {_int(size['latest']):,} characters)"
    )


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count:,} times"


def _counted(value: object, noun: str) -> str:
    if not isinstance(value, int) or isinstance(value, bool):
        return f"? {noun}s"
    return f"{value} {noun}{'' if value == 1 else 's'}"


def _tilde(path: str, names: ProjectNames) -> str:
    from memd.projects.naming import tilde

    return tilde(path, names.home)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from memd.config import load_config
    from memd.projects.naming import memory_dir_key
    from memd.projects.roots import load_project_names
    from memd.projects.sessions import sessions_by_memory_dir
    from memd.snapshot.telemetry_sink import default_path, read_events

    config = load_config()
    summary = summarise(read_events(default_path(config.state_dir)))
    dirs = list(summary["memory_dirs"])
    names = load_project_names(dirs, config=config)
    sessions = sessions_by_memory_dir(dirs)
    for memory_dir, entry in summary["memory_dirs"].items():
        entry["project"] = names.label(memory_dir)
        entry["project_roots"] = list(names.roots_of(memory_dir))
        seen = sessions.get(memory_dir_key(memory_dir))
        entry["sessions"] = None if seen is None else seen.to_dict()
    if args.format == "json":
        sys.stdout.write(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(format_text(summary, names, sessions))
    return 0
