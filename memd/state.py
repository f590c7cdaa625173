"""Small JSON files in memd's state directory: what the daemon and the CLI remember.

Files: ``daemon.json`` (the running daemon's status, read by `memd status`),
``projects.json`` (project roots `memd prompt --project` was asked about, most
recent first, so the daemon keeps them warm) and ``dreams.json`` (last run and
watermark per memory directory).

Every write replaces the whole file atomically (`memd.atomic.write_atomic`),
so a reader sees the old state or the new, never half of one. A missing,
unreadable or corrupt file reads as ``{}``: state is a cache of facts memd can
rebuild, and losing it must never stop memd.
"""

from __future__ import annotations

import os

from memd.atomic import write_atomic

PROJECTS_FILE = "projects"
MAX_KNOWN_PROJECTS = 200


def _state_path(state_dir: str, name: str) -> str:
    if not name or "/" in name or os.sep in name or name.startswith("."):
        raise ValueError(f"not a state file name: {name!r}")
    return os.path.join(state_dir, name if name.endswith(".json") else name + ".json")


def read_state(state_dir: str, name: str) -> dict[str, object]:
    """Return the JSON object stored as `name`; {} if it is missing or corrupt."""
    import json  # not at the top: `memd prompt` imports this module on its warm path

    from memd.fsread import read_bytes

    try:
        data = json.loads(read_bytes(_state_path(state_dir, name)))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8, not JSON
        return {}
    return data if isinstance(data, dict) else {}


def write_state(state_dir: str, name: str, data: dict[str, object]) -> None:
    """Replace `name` with `data` as JSON, atomically, creating the state dir.

    Raises:
        OSError: the directory or file cannot be written; the old file survives.
        TypeError: `data` holds something JSON cannot encode.
    """
    import json

    path = _state_path(state_dir, name)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    os.makedirs(state_dir, mode=0o700, exist_ok=True)
    write_atomic(path, text.encode("utf-8"), mode=0o600)


def known_projects(state_dir: str) -> tuple[str, ...]:
    """Return the remembered project roots, most recent first."""
    projects = read_state(state_dir, PROJECTS_FILE).get("projects")
    if not isinstance(projects, list):
        return ()
    return tuple(
        dict.fromkeys(p for p in projects if isinstance(p, str) and os.path.isabs(p))
    )


def remember_project(
    state_dir: str, project_root: str, *, limit: int = MAX_KNOWN_PROJECTS
) -> None:
    """Put `project_root` first in projects.json (deduplicated, at most `limit`).

    Does not rewrite the file when the root is already first, so the warm
    `memd prompt` path costs one read, not a write, on a repeated request.
    """
    root = os.path.abspath(project_root)
    current = known_projects(state_dir)
    if current[:1] == (root,):
        return
    projects = [root, *(p for p in current if p != root)][:limit]
    write_state(state_dir, PROJECTS_FILE, {"projects": projects})
