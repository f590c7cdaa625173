"""The other places memd keeps memory bytes, and a purge that reaches them.

The history store is one place (`memd.history.store`'s purge). The others
belong to other folders, which name them (history may not import them);
`memd history purge` gathers them as `Place`s and calls `purge_copies`:

- `fix-undo/<dir>/`: the last `memd fix`'s pre-images (`N.pre`); the journal
  goes whole (that fix can then no longer be undone with `fix --undo`; the
  history still can);
- `dream-generations/<dir>/<n>/`: a dream generation's `before/` and `after/`
  copies; the generation goes whole (`dream undo` then skips it);
- `dream-kept/<dir>/<stamp>/<file>`: the dream's versions of files the user
  changed meanwhile; the file goes;
- `dream-staging/<dir>/`: the copy a dream works in (a killed dream's); whole;
- the recall index and the snapshots: caches of what is on disk now, dropped
  whole by every purge and rebuilt from the disk.

A unit (the folder or file that goes) goes when any file in it is doomed:
its bytes hold the secret, or equal a purged version, or its name is the
purged file's. Files are read bounded and never through a link; folders
go with `shutil.rmtree`, which follows no link either.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass

from memd.fsread import list_dir, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

MAX_COPY_BYTES = 64 * 1024 * 1024  # a larger file in these places is not memd's
_SIDE_FILES = ("-wal", "-shm", "-journal")


@dataclass(frozen=True, slots=True)
class Place:
    """One place memd keeps copies: a folder, or a cache (a folder or a database)."""

    label: str  # what a person reads: "the fix undo journal"
    root: str
    unit_depth: int | None = None  # folders below `root` that go whole; None: a file
    cache: bool = False  # dropped by every purge, its SQLite side files too


def purge_copies(
    places: Iterable[Place], doomed: Callable[[str, bytes], bool]
) -> list[tuple[str, str]]:
    """Remove every unit holding a file `doomed(relpath in its place, bytes)` names.

    Returns (label, path) of each unit removed.
    """
    removed: list[tuple[str, str]] = []
    for place in places:
        if place.cache:
            if _drop_cache(place.root):
                removed.append((place.label, place.root))
            continue
        for unit in sorted(_doomed_units(place, doomed)):
            _remove(unit)
            removed.append((place.label, unit))
    return removed


def _doomed_units(place: Place, doomed: Callable[[str, bytes], bool]) -> set[str]:
    units: set[str] = set()
    for path, relpath in _files(place.root):
        try:
            data = read_bytes(path, MAX_COPY_BYTES)
        except OSError:
            continue  # vanished, or too large: holds no copy of memd's
        if not doomed(relpath, data):
            continue
        if place.unit_depth is None:
            units.add(path)
        else:
            parts = relpath.split("/")[: place.unit_depth]
            units.add(os.path.join(place.root, *parts))
    return units


def _files(root: str) -> Iterator[tuple[str, str]]:
    """(path, relpath) of every regular file below `root`; no link entered."""
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        try:
            entries = list_dir(directory)
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                pending.append((entry.path, f"{prefix}{entry.name}/"))
            elif stat.S_ISREG(mode):
                yield entry.path, prefix + entry.name


def _remove(path: str) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        os.unlink(path)


def _drop_cache(root: str) -> bool:
    """Remove a cache folder, or a database file and its side files; whether any was."""
    found = False
    for path in (root, *(root + side for side in _SIDE_FILES)):
        if os.path.lexists(path):
            found = True
            _remove(path)
    return found
