"""Where Codex CLI and Gemini CLI keep their files: from the environment alone.

Light on purpose (no dataclasses, no parser): the SessionStart hook reads it
on its warm path. `codex.py` and `gemini.py` build on it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

CODEX_MEMORIES = "memories"


def home_of(env: Mapping[str, str]) -> str:
    """The user's home as `env` gives it."""
    return env.get("HOME") or os.path.expanduser("~")


def codex_home(env: Mapping[str, str]) -> str:
    """`$CODEX_HOME` (resolved, as Codex resolves it) or `~/.codex`."""
    configured = env.get("CODEX_HOME", "")
    if configured:
        return os.path.realpath(configured)
    return os.path.join(home_of(env), ".codex")


def codex_memories(env: Mapping[str, str]) -> str:
    """Codex's own memories: `$CODEX_HOME/memories`."""
    return os.path.join(codex_home(env), CODEX_MEMORIES)


def gemini_dir(env: Mapping[str, str]) -> str:
    """`~/.gemini`, the home being `$GEMINI_CLI_HOME` when set."""
    return os.path.join(env.get("GEMINI_CLI_HOME") or home_of(env), ".gemini")


def gemini_project_memory(env: Mapping[str, str], root: str) -> str | None:
    """`~/.gemini/tmp/<id>/memory` of the project at `root`, by `projects.json`."""
    from memd import fastjson
    from memd.fsread import read_bytes

    registry = os.path.join(gemini_dir(env), "projects.json")
    try:
        data = fastjson.loads(read_bytes(registry, 1 << 20), max_depth=8)
    except (OSError, ValueError):
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    found = projects.get(root) if isinstance(projects, dict) else None
    if not isinstance(found, str) or not found or not _is_id(found):
        return None
    return os.path.join(gemini_dir(env), "tmp", found, "memory")


def _is_id(text: str) -> bool:
    """Gemini's ids are `[a-z0-9-]+` (its registry's own schema)."""
    return all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in text)
