"""What a team sync leaves for a person: conflict copies, and the files lint stops.

`pending_conflicts` is the call `memd status`, lint and the SessionStart hook
make: a conflict waits for as long as its ``<stem>.from-<author>.md`` copy
exists, so the answer needs no state and is right after any crash.
What a sync keeps out of a commit for lint errors is `memd.gitsync.lintgate`.
"""

from __future__ import annotations

import os
import stat

from memd.fsread import list_dir
from memd.lint.checks_files import is_conflict_copy

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass

MAX_SCAN_ENTRIES = 10_000  # a team dir is small; a huge one is not scanned whole


def pending_conflicts(team_dir: str) -> tuple[str, ...]:
    """Return the relpaths of conflict copies waiting in `team_dir`, sorted.

    Symlinks and hidden folders (``.git``) are not followed.
    """
    found: list[str] = []
    seen = 0
    stack = [""]
    while stack and seen < MAX_SCAN_ENTRIES:
        relative = stack.pop()
        try:
            entries = list_dir(os.path.join(team_dir, relative))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.name.startswith("."):
                continue
            relpath = f"{relative}/{entry.name}" if relative else entry.name
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                stack.append(relpath)
            elif stat.S_ISREG(mode) and is_conflict_copy(relpath):
                found.append(relpath)
    return tuple(sorted(found))


def conflict_messages(team_dir: str) -> tuple[str, ...]:
    """Return one line per waiting conflict, for status output and hooks."""
    return tuple(
        f"team/{copy}: both sides changed {_original(copy)}; merge the copy into it "
        "and delete the copy"
        for copy in pending_conflicts(team_dir)
    )


def _original(copy: str) -> str:
    head, _, name = copy.rpartition("/")
    stem = name.split(".from-", 1)[0]
    return f"team/{head}/{stem}.md" if head else f"team/{stem}.md"
