"""Re-read only the changed paths of a memory directory read before.

`memd.memdir.load_memdir` calls `reload_memdir` when given its previous result
and the relpaths a watcher batch named; anything this shortcut cannot vouch for
(a new, deleted or non-Markdown entry, a symlink, a directory) returns None and
the full walk runs instead. The result equals what a full read would give.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
import os
import stat
from types import MappingProxyType
from typing import TypeVar

from memd.memdir import (
    DIR_FLAGS,
    INDEX_NAME,
    LOGS_DIR,
    InputStat,
    MemDir,
    ParseCache,
    input_stat,
)
from memd.memdir_walk import FILE_FLAGS, NOFOLLOW_DIR_FLAGS, Walk
from memd.memfile import MemoryFile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_T = TypeVar("_T")

MAX_RELOAD_PATHS = 256  # more changes than this (a checkout): read everything


def reload_memdir(
    previous: MemDir,
    changed: frozenset[str],
    cache: ParseCache | None,
    max_file_bytes: int,
) -> MemDir | None:
    """Re-read only `changed` in `previous`; None when a full read is needed.

    Only a change that replaces nothing but contents is taken: an existing
    topic file or MEMORY.md that is still a regular file (it was read directly,
    not through a symlink), a log file already known, or a hidden name. Each
    changed path's directory is re-stated, since its mtime is an input.
    """
    positions = previous.input_positions
    if not positions or len(changed) > MAX_RELOAD_PATHS:
        return None
    walk = Walk(previous.path, cache, max_file_bytes)
    # Replacements by position; the tuples are patched once at the end.
    inputs: dict[int, InputStat] = {}
    files: dict[int, MemoryFile] = {}
    mtimes: dict[str, int] = {}
    diags = list(previous.diagnostics)
    index_text = previous.index_text
    logs = frozenset(previous.log_files)
    hidden_counted = dict(previous.hidden_counted)
    try:
        walk.root_fd = os.open(previous.path, DIR_FLAGS)
    except OSError:
        return None
    try:
        for rel in sorted(changed):
            parts = rel.split("/")
            hidden = [k for k, part in enumerate(parts) if part.startswith(".")]
            if hidden and hidden[0] < len(parts) - 1:
                continue  # inside a hidden directory: nothing memd reads
            parent = "".join(part + "/" for part in parts[:-1])
            if not rel or "" in parts or parent not in positions:
                return None
            fd = _open_dir(walk.root_fd, parts[:-1])
            try:
                where = positions[parent]
                inputs[where] = input_stat(previous.inputs[where].path, os.fstat(fd))
                if hidden and parent:
                    continue  # a hidden name: never read, its directory changed
                if hidden:
                    _recount(fd, parts[-1], hidden_counted)
                    continue
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    return None
                if parts[0] == LOGS_DIR:
                    if rel in logs:
                        continue  # a log is listed, never read
                    return None
                if rel not in positions or rel in previous.unreadable_paths:
                    return None
                walk.diags.clear()
                name = parts[-1]

                def opener(fd: int = fd, name: str = name) -> int:
                    return os.open(name, FILE_FLAGS, dir_fd=fd)

                if rel == INDEX_NAME:
                    walk.read_index(opener)
                    index_text = walk.index_text
                else:
                    walk.files.clear()
                    walk.read_topic(rel, opener, st)
                    files[previous.file_positions[rel]] = walk.files[0]
                    mtimes[rel] = walk.mtimes[rel]
                inputs[positions[rel]] = walk.inputs[-1]
                mine = [d for d in diags if d.path == rel]
                if mine != walk.diags:
                    diags = [d for d in diags if d.path != rel] + walk.diags
            finally:
                os.close(fd)
    except OSError:
        return None  # vanished or unreadable meanwhile: the full read reports it
    finally:
        os.close(walk.root_fd)
    before, after = (
        list(previous.hidden_counted.values()),
        list(hidden_counted.values()),
    )
    return dataclasses.replace(
        previous,
        total_file_count=previous.total_file_count
        + after.count("file")
        - before.count("file"),
        total_subdir_count=previous.total_subdir_count
        + after.count("dir")
        - before.count("dir"),
        hidden_counted=MappingProxyType(hidden_counted),
        index_text=index_text,
        files=_patched(previous.files, files),
        mtimes_ns=_updated(previous.mtimes_ns, mtimes),
        inputs=_patched(previous.inputs, inputs),
        diagnostics=tuple(diags),
    )


def _open_dir(root_fd: int, parts: list[str]) -> int:
    """Open the directory `parts` below `root_fd` without following any symlink."""
    fd = os.dup(root_fd)
    for part in parts:
        try:
            child = os.open(part, NOFOLLOW_DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def _recount(fd: int, name: str, counted: dict[str, str]) -> None:
    """Record what the top-level hidden `name` now counts as (as `_Walk._count`)."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = 0
    kind = "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else None
    if kind is None:
        counted.pop(name, None)
    else:
        counted[name] = kind


def _updated(mapping: Mapping[str, int], changes: dict[str, int]) -> Mapping[str, int]:
    """Return `mapping` updated by `changes` (a MappingProxyType copies in C)."""
    if not changes:
        return mapping
    copy = mapping.copy() if isinstance(mapping, MappingProxyType) else dict(mapping)
    copy.update(changes)
    return MappingProxyType(copy)


def _patched(items: tuple[_T, ...], replaced: Mapping[int, _T]) -> tuple[_T, ...]:
    """Return `items` with the items at the positions in `replaced` swapped in."""
    if not replaced:
        return items
    parts: list[tuple[_T, ...]] = []
    start = 0
    for position in sorted(replaced):
        parts += (items[start:position], (replaced[position],))
        start = position + 1
    parts.append(items[start:])
    if len(parts) > 8:  # many replacements: one pass
        return tuple(itertools.chain.from_iterable(parts))
    return functools.reduce(operator.add, parts)  # a few slices: memcpy
