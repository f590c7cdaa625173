"""What SessionStart says about memory that stays true, from the last check (edge).

Whoever checks a memory dir against its project (`memd lint`, the daemon when
a project's `HEAD` moves, `memd doctor`) leaves a small report in
``<cache>/truth/reports/<dir key>.json``: which memory files name something
gone, which roots share the dir, what an older release left elsewhere.
SessionStart reads it and says in one line how many memories name something
gone, every session while it is so, so the agent verifies before it acts;
and, once per project root, that its memory dir is shared or moved (said
keys in ``<state>/truth-said.json``). Standard library `os` and memd's
`fastjson` only: the warm SessionStart imports this module.
"""

from __future__ import annotations

import os

from memd import fastjson
from memd.fsread import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

REPORT_DIR = ("truth", "reports")
SAID_FILE = "truth-said.json"
MAX_REPORT_BYTES = 256 * 1024
MAX_SAID = 2000


def report_path(cache_dir: str, memory_dir: str) -> str:
    """Where the last check of `memory_dir` left its report."""
    from memd.claude_code.paths import sanitize_path

    key = sanitize_path(memory_dir.rstrip(os.sep))
    return os.path.join(cache_dir, *REPORT_DIR, key + ".json")


def leave_report(cache_dir: str, memory_dir: str, report: Mapping[str, object]) -> None:
    """Write (or replace) the memory dir's report; an unwritable cache is skipped."""
    from memd.atomic import write_atomic

    path = report_path(cache_dir, memory_dir)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomic(path, fastjson.dumps(dict(report)).encode("utf-8"), mode=0o600)
    except OSError:
        return


def read_report(cache_dir: str, memory_dir: str) -> dict[str, object] | None:
    """The memory dir's last report, or None when there is none or it is unreadable."""
    try:
        data = fastjson.loads(
            read_bytes(report_path(cache_dir, memory_dir), MAX_REPORT_BYTES),
            max_depth=8,
        )
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def session_sentences(
    cache_dir: str,
    state_dir: str,
    memory_dir: str,
    *,
    project_root: str | None,
    home: str,
) -> list[str]:
    """The lines SessionStart adds for `memory_dir`; marks the once-only ones said."""
    report = read_report(cache_dir, memory_dir)
    if report is None:
        return []
    lines = []
    gone = [f for f in report.get("gone_files", ()) if isinstance(f, str)]  # type: ignore[attr-defined]
    if gone:
        shown = ", ".join(gone[:3]) + (
            f" and {len(gone) - 3} more" if len(gone) > 3 else ""
        )
        noun = "memory names" if len(gone) == 1 else "memories name"
        lines.append(
            f"memd: {len(gone)} {noun} a path or command this project no longer has "
            f"({shown}); check them against the code before acting on them "
            "(`memd lint` says what went and when)."
        )
    once = [
        (str(item.get("key")), str(item.get("text")))
        for item in report.get("once", ())  # type: ignore[attr-defined]
        if isinstance(item, dict)
    ]
    if not once:
        return lines
    said = _read_said(state_dir)
    who = project_root or ""
    fresh = [(key, text) for key, text in once if f"{key}|{who}" not in said]
    if fresh:
        lines.extend(f"memd: {text}" for _, text in fresh)
        said.extend(f"{key}|{who}" for key, _ in fresh)
        _write_said(state_dir, said[-MAX_SAID:])
    return lines


def _read_said(state_dir: str) -> list[str]:
    try:
        data = fastjson.loads(read_bytes(os.path.join(state_dir, SAID_FILE), 1 << 20))
    except (OSError, ValueError):
        return []
    return (
        [item for item in data if isinstance(item, str)]
        if isinstance(data, list)
        else []
    )


def _write_said(state_dir: str, said: list[str]) -> None:
    from memd.atomic import write_atomic

    try:
        os.makedirs(state_dir, mode=0o700, exist_ok=True)
        write_atomic(
            os.path.join(state_dir, SAID_FILE),
            fastjson.dumps(said).encode("utf-8"),
            mode=0o600,
        )
    except OSError:
        return
