"""What holds in any agent store, whatever its format: size, secrets, encoding, access.

A Codex or Gemini store is not Claude Code's memory: its files follow their
agent's format, so memd's memory rules (frontmatter, the index's links) say
nothing about them. Only what holds for any file an agent reads is checked:
a file too large to be worth loading, a likely secret in it, text that is
not UTF-8, and a file (or folder) the agent cannot read. Reads are bounded
(`memd.fsread`: no link followed, regular files only), the walk is too.
memd only reads the store.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.agents.base import Store

MAX_FILE_BYTES = 256 * 1024  # an agent's memory file past this costs every session
MAX_READ_BYTES = 4 * 1024 * 1024
MAX_FILES = 2_000
MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class StoreFinding:
    """One problem in one file of a store."""

    path: str
    rule: str  # "too-large" | "secret" | "not-utf8" | "unreadable"
    message: str


def check_store(store: Store) -> list[StoreFinding]:
    """The problems in `store`'s files, in path order."""
    findings: list[StoreFinding] = []
    for path in _files(store):
        findings.extend(_check_file(path))
    return findings


def _files(store: Store) -> list[str]:
    from memd.fsread import list_dir

    if store.single_file:
        return [store.path] if os.path.lexists(store.path) else []
    found: list[str] = []
    pending = [(store.path, 0)]
    while pending and len(found) < MAX_FILES:
        directory, depth = pending.pop()
        try:
            entries = sorted(list_dir(directory), key=lambda e: e.name)
        except OSError:
            found.append(directory)  # reported unreadable below
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False) and depth + 1 < MAX_DEPTH:
                pending.append((entry.path, depth + 1))
            elif entry.is_file(follow_symlinks=False):
                found.append(entry.path)
    return sorted(found[:MAX_FILES])


def _check_file(path: str) -> list[StoreFinding]:
    from memd.fsread import read_bytes
    from memd.lint.secrets import find_secrets_in_bytes

    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise PermissionError("cannot list it")
        data = read_bytes(path, MAX_READ_BYTES + 1)
    except FileNotFoundError:
        return []
    except OSError as error:
        why = error.strerror or str(error)
        return [StoreFinding(path, "unreadable", f"the agent cannot read it ({why})")]
    found = []
    if len(data) > MAX_FILE_BYTES:
        found.append(
            StoreFinding(
                path,
                "too-large",
                f"{len(data) // 1024} KiB: over {MAX_FILE_BYTES // 1024} KiB,"
                " more than an agent's memory should load",
            )
        )
    try:
        data[:MAX_READ_BYTES].decode("utf-8")
    except UnicodeDecodeError as error:
        found.append(
            StoreFinding(
                path,
                "not-utf8",
                f"not UTF-8 at byte {error.start}: the agent reads it garbled",
            )
        )
    found.extend(
        StoreFinding(path, "secret", f"line {s.line}: {s.message()}")
        for s in find_secrets_in_bytes(data[:MAX_READ_BYTES])
    )
    return found
