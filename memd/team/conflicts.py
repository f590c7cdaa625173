"""What a team sync leaves for a person: conflict copies, and the files lint stops.

`pending_conflicts` is the call `memd status`, lint and the SessionStart hook
make: a conflict waits for as long as its ``<stem>.from-<author>.md`` copy
exists, so the answer needs no state and is right after any crash.
`lint_errors` is what `memd.team.sync` keeps out of a commit.
"""

from __future__ import annotations

import os
import stat

from memd.agent.terms import INDEX_NAME
from memd.fsread import list_dir
from memd.lint.checks_files import is_conflict_copy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from memd.config import Config

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


def lint_errors(
    team_dir: str,
    *,
    severities: Mapping[str, str] | None = None,
    max_file_bytes: int | None = None,
    secret_allow: tuple[str, ...] = (),
) -> dict[str, str]:
    """Return relpath -> first error message for each file in `team_dir` with errors.

    A likely secret (lint's S001, whatever its configured severity) counts
    as an error here: no sync ever commits it. An index (``MEMORY.md``) is
    held back only when it cannot be read as text (F001, F002) or holds a
    secret, never for its budget (I002, I003): the other machine needs the
    index that links the files it receives.
    """
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    memdir = (
        load_memdir(team_dir)
        if max_file_bytes is None
        else load_memdir(team_dir, max_file_bytes=max_file_bytes)
    )
    errors: dict[str, str] = {}
    for diagnostic in lint_memdir(
        memdir, severities=severities, secret_allow=secret_allow
    ):
        if diagnostic.path.rsplit("/", 1)[-1] == INDEX_NAME and not (
            diagnostic.code.startswith("F") or diagnostic.code == "S001"
        ):
            continue
        if str(diagnostic.severity) == "error" or diagnostic.code == "S001":
            line = f" at line {diagnostic.line}" if diagnostic.line else ""
            errors.setdefault(
                diagnostic.path, f"{diagnostic.code}{line} {diagnostic.message}"
            )
    return errors


def lint_errors_for(config: Config) -> Callable[[str], dict[str, str]]:
    """Return `lint_errors` as every sync calls it: with `config`'s lint settings."""
    return lambda directory: lint_errors(
        directory,
        severities=config.lint_severities,
        max_file_bytes=config.max_topic_file_bytes,
        secret_allow=config.sync_allow,
    )
