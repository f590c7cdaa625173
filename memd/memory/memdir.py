"""Read one memory directory safely: every topic file, the index, the logs' paths.

This module holds the values a read returns (`MemDir`, `InputStat`) and the
`ParseCache` kept across reads; `memd.memory.reader` does the reading (SPEC §3,
§11: descriptor-relative opens with `O_NOFOLLOW`, symlinks read only when they
resolve inside the directory, bounded reads).

Hidden entries (`.consolidate-lock`, `.memd-tmp-*`, `.git`) are skipped.
Topic files are every `*.md` except any `MEMORY.md` (the reference's recall
scan skips that basename at every depth) and anything under top-level `logs/`.

`inputs` records every file read and every directory listed: a directory's
mtime changes when an entry is added, removed or renamed, which is how snapshot
freshness sees new files; a missing MEMORY.md is recorded with `size=-1`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType

from memd.statkey import key_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.diagnostics import Diagnostic
    from memd.memory.memfile import MemoryFile

LOGS_DIR = "logs"
DEFAULT_MAX_FILE_BYTES = 256 * 1024
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True, slots=True, kw_only=True)
class InputStat:
    """One file or directory read: a missing one is size=-1, mtime_ns=0, inode=0."""

    path: str
    size: int
    mtime_ns: int
    inode: int


def _no_mtimes() -> Mapping[str, int]:
    return MappingProxyType({})


def _no_names() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class MemDir:
    """One memory directory as read at one moment.

    `diagnostics` holds the directory reader's findings (F003 too large, F004
    symlink outside, F005 unreadable, and MEMORY.md's F001/F002/F006/F007);
    each topic file's parse findings stay in its own `MemoryFile.diagnostics`.
    Lint reports both, and no finding appears in both places.
    """

    path: str
    index_text: str | None = None  # decoded, without a BOM
    files: tuple[MemoryFile, ...] = ()
    mtimes_ns: Mapping[str, int] = field(default_factory=_no_mtimes)
    log_files: tuple[str, ...] = ()
    index_has_bom: bool = False  # the agent sees it (2.1.112: it hides frontmatter)
    inputs: tuple[InputStat, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    total_file_count: int = 0
    total_subdir_count: int = 0
    unreadable_paths: tuple[
        str, ...
    ] = ()  # relpaths of *.md files that exist but could not be read
    # Where each directly read file ("sub/x.md", "MEMORY.md") and each listed
    # directory ("", "sub/") sits in `inputs`, and each topic file in `files`:
    # what `load_memdir(previous=..., changed=...)` replaces in place.
    input_positions: Mapping[str, int] = field(
        default_factory=_no_mtimes, compare=False, repr=False
    )
    file_positions: Mapping[str, int] = field(
        default_factory=_no_mtimes, compare=False, repr=False
    )
    # Top-level hidden names counted in total_*_count: "file" or "dir".
    hidden_counted: Mapping[str, str] = field(
        default_factory=_no_names, compare=False, repr=False
    )


_CacheKey = tuple[int, int, int, int, int]


class ParseCache:
    """Parsed topic files keyed by (absolute path, size, mtime_ns, ctime_ns, inode).

    Owned by whoever keeps it across loads (the daemon); `load_memdir` re-parses
    only files whose key changed, so one change in a 10,000-file tree is cheap.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[_CacheKey, MemoryFile]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, path: str, key: _CacheKey) -> MemoryFile | None:
        """Return the file parsed under `key`, or None when it changed or is unknown."""
        found = self._entries.get(path)
        return found[1] if found is not None and found[0] == key else None

    def put(self, path: str, key: _CacheKey, parsed: MemoryFile) -> None:
        """Remember `parsed` as the content of `path` under `key`."""
        self._entries[path] = (key, parsed)

    def prune(self, keep_paths: Iterable[str]) -> int:
        """Forget every path not in `keep_paths`; return how many were dropped."""
        keep = frozenset(keep_paths)
        gone = [path for path in self._entries if path not in keep]
        for path in gone:
            del self._entries[path]
        return len(gone)


def input_stat(path: str, st: os.stat_result) -> InputStat:
    """Return the InputStat of `path` from its stat result."""
    size, mtime_ns, inode = key_of(st)
    return InputStat(path=path, size=size, mtime_ns=mtime_ns, inode=inode)


def missing_input(path: str) -> InputStat:
    """Return the InputStat of a path that does not exist."""
    return InputStat(path=path, size=-1, mtime_ns=0, inode=0)
