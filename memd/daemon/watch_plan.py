"""Watch planning: which watches cover a discovery, and what a watch misses.

A tree deeper than `MAX_WATCH_DEPTH` is never handed to watchdog: its walk
recurses (Python 3.11's `os.walk`), so a 1,100-level chain raises
RecursionError, and it has no depth cap. A directory above the memory dirs
(`<base>/projects/`, or a project dir) is *split* into a flat watch (a new
project, a new `memory/`) and one recursive watch per subdirectory, again as
needed, so only the project with the chain is affected; a memory dir is
watched *shallow*, its top level flat, and the stat sweep covers the rest.
Anything else holds no memory and is left unwatched: splitting it would
follow a chain down, one thread per level.

The watcher (memd.daemon.watcher) keeps which roots are split, shallow or
shed, and asks `expand_roots` for the watches they make; `coverage_problems`
and `stat_signature` read the tree by listing and `lstat` (no link
followed, iteratively), never through watchdog.
"""

from __future__ import annotations

import contextlib
import os

from memd.daemon.discovery import WatchRoot, memory_dir_of
from memd.fsread import list_dir
from memd.statkey import key_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

MAX_WATCH_DEPTH = 34  # below a watch root: projects/<project>/memory/ + 32 levels
TOO_DEEP = f"deeper than {MAX_WATCH_DEPTH} levels below the watch"


def holds_memory(path: str, memory_dirs: Iterable[str]) -> bool:
    """Whether `path` is a watched memory dir or lies above one."""
    prefix = path + os.sep
    return any(d == path or d.startswith(prefix) for d in memory_dirs)


def can_split(path: str, *, projects_root: str, memory_dirs: Collection[str]) -> bool:
    """Whether `path` is `<base>/projects/` or a project dir (no memory dir)."""
    projects = projects_root.rstrip(os.sep)
    return path not in memory_dirs and projects in (path, os.path.dirname(path))


def expand_roots(
    roots: Iterable[WatchRoot],
    *,
    split: Collection[str],
    shallow: Collection[str],
    shed: Collection[WatchRoot],
    stormed: Collection[str],
    projects_root: str,
    memory_dirs: Collection[str],
    list_subdirs: Callable[[str], list[str]],
) -> list[WatchRoot]:
    """`roots`, each split or shallow one replaced by its parts, less the shed.

    A split `projects/` is its flat watch plus each project; a split project
    dir is its flat watch (a new `memory/` appears there) and its memory dir,
    nothing else. What stormed in a shed flat watch (`stormed`) is swept
    too, not re-watched each rediscovery only to die with its directory again.
    """
    expanded: list[WatchRoot] = []
    pending = list(roots)
    while pending:
        root = pending.pop()
        if root.recursive and root.path in split:
            expanded.append(WatchRoot(root.path, recursive=False))
            children = list_subdirs(root.path)
            if root.path != projects_root.rstrip(os.sep):
                children = [c for c in children if holds_memory(c, memory_dirs)]
            pending.extend(WatchRoot(d, recursive=True) for d in children)
        elif root.recursive and root.path in shallow:
            expanded.append(WatchRoot(root.path, recursive=False))
        else:
            expanded.append(root)
    return [r for r in expanded if r not in shed and r.path not in stormed]


def subdirs(path: str) -> list[str]:
    """The directories directly in `path`, symlinks not followed; none if unreadable."""
    try:
        return [e.path for e in list_dir(path) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def stat_signature(root: WatchRoot) -> int:
    """What a watch of `root` would see, by stat: each directory and entry in it.

    Equal signatures a while apart mean a shed watch has been calm. Covers
    the directories `bounded_subdirectories` finds when recursive.
    """
    directories = (
        bounded_subdirectories(root.path, MAX_WATCH_DEPTH)[0]
        if root.recursive
        else [root.path]
    )
    seen: list[tuple[object, ...]] = []
    for directory in directories:
        try:
            entries = list_dir(directory)
            st = os.lstat(directory)
        except OSError:
            seen.append((directory,))
            continue
        seen.append((directory, *key_of(st)))
        for entry in entries:
            with contextlib.suppress(OSError):  # gone meanwhile: the mtime tells
                est = entry.stat(follow_symlinks=False)
                seen.append((entry.name, *key_of(est)))
    return hash(tuple(seen))


def coverage_problems(
    root: str, memory_dirs: frozenset[str], *, watched: set[bytes] | None
) -> list[tuple[str, str]]:
    """What a recursive watch of `root` misses, as (deaf path, why) pairs.

    `watched` holds the directories the watch has inotify watches on, when
    visible (memd.daemon.watchdog_probes.natively_watched); without it only
    the too-deep frontier is found. The deaf path is the memory dir holding
    a skipped or too-deep directory, or that directory itself when no
    memory dir holds it (a new project's `memory/` would appear there
    unseen), so one gap never makes the whole root deaf.
    """
    directories, frontier = bounded_subdirectories(root, MAX_WATCH_DEPTH)
    gaps: dict[str, str] = {}
    for path in frontier:
        deaf = memory_dir_of(path, memory_dirs) or path
        gaps.setdefault(deaf, TOO_DEEP)
    if watched is not None:
        missing: dict[str, int] = {}
        for path in directories:
            if os.fsencode(path) not in watched:
                deaf = memory_dir_of(path, memory_dirs) or path
                missing[deaf] = missing.get(deaf, 0) + 1
        for deaf, count in missing.items():
            gaps.setdefault(deaf, f"{count} subdirectories not watched")
    return sorted(gaps.items())


def bounded_subdirectories(root: str, max_depth: int) -> tuple[list[str], list[str]]:
    """Return the directories to `max_depth` below `root`, and the deepest with more.

    No symlink is followed. Iterative, so a chain of 10,000 directories
    costs no recursion.
    """
    found: list[str] = []
    stack = [(root, 0)]
    too_deep: list[str] = []
    while stack:
        path, depth = stack.pop()
        found.append(path)
        try:
            entries = list_dir(path)
            children = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        if children and depth >= max_depth:
            too_deep.append(path)
            continue
        stack.extend((child, depth + 1) for child in children)
    return found, too_deep
