"""How often the agent's sessions loaded each memory dir: its transcripts, counted.

The agent writes one transcript per session, `<config home>/projects/<sanitized
cwd>/<session>.jsonl`; every session of a project loads its memory prompt at
start. A folder's sessions share the cwd its name spells, so the newest
transcript's recorded `cwd` (a bounded head read, `roots`) says which memory
dir the whole folder belongs to, resolved as the agent resolves it. Only
listings and stats otherwise: no transcript is read whole.
"""

from __future__ import annotations

import os
import time

from memd.fsread import list_dir
from memd.projects.naming import memory_dir_key
from memd.projects.roots import (
    MAX_TRANSCRIPT_FOLDERS,
    MAX_TRANSCRIPTS,
    cwds_in_head,
    dated_transcripts,
    is_dir_entry,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.claude_code.profile import ProfileSpec

RECENT_DAYS = 7


class Sessions:
    """The sessions of one memory dir: all, the last `RECENT_DAYS` days, the newest."""

    __slots__ = ("count", "last", "recent")

    def __init__(self, count: int = 0, recent: int = 0, last: float | None = None):
        self.count = count
        self.recent = recent
        self.last = last

    def to_dict(self) -> dict[str, object]:
        return {"count": self.count, "recent": self.recent, "last": self.last}


def sessions_by_memory_dir(
    memory_dirs: Iterable[str],
    *,
    env: Mapping[str, str] | None = None,
    now: float | None = None,
    profile: ProfileSpec = None,
) -> dict[str, Sessions]:
    """Return {memory dir (no trailing separator): its `Sessions`}; never raises."""
    from memd.claude_code.paths import resolve_memory_location
    from memd.claude_code.settings import claude_config_home

    environ = os.environ if env is None else env
    now = time.time() if now is None else now
    found = {memory_dir_key(d): Sessions() for d in memory_dirs}
    projects = os.path.join(claude_config_home(environ), "projects")
    try:
        folders = [
            e for e in list_dir(projects)[:MAX_TRANSCRIPT_FOLDERS] if is_dir_entry(e)
        ]
    except OSError:
        return found
    resolved: dict[str, str | None] = {}
    budget = MAX_TRANSCRIPTS
    for folder in folders:
        dated = dated_transcripts(folder.path)
        if not dated or budget <= 0:
            continue
        budget -= 1
        cwds = cwds_in_head(dated[0][1])
        if not cwds:
            continue
        if cwds[0] not in resolved:
            try:
                location = resolve_memory_location(cwds[0], environ, profile=profile)
                resolved[cwds[0]] = memory_dir_key(location.memory_dir)
            except (OSError, ValueError):
                resolved[cwds[0]] = None
        key = resolved[cwds[0]]
        sessions = found.get(key) if key is not None else None
        if sessions is None:
            continue
        sessions.count += len(dated)
        sessions.recent += sum(
            1 for mtime, _ in dated if now - mtime < RECENT_DAYS * 86400
        )
        newest = dated[0][0]
        sessions.last = newest if sessions.last is None else max(sessions.last, newest)
    return found
