"""Apply a dream's edits as one generation: all of them or none, and undoable.

A generation lives in memd's state dir, never in the memory directory:

    <state>/dream-generations/<key>/000007/plan.json   what it writes and deletes
                                      /before/<rel>  the bytes each file had
                                      /after/<rel>   the bytes it gets
    <state>/dream-generations/<key>/APPLYING       the generation being applied

The order makes a SIGKILL at any point leave the old generation or the new:
1. the generation is written under `.000007.partial`;
2. `APPLYING` (naming it) is written atomically;
3. the partial folder is renamed into place: the commit point (a kill
   before it leaves a partial folder that `recover` sweeps away);
4. each file is replaced with `write_atomic` (deleted with `unlink`);
5. `APPLYING` is removed.
`recover` (run first by every dream and undo) rolls a generation whose
`APPLYING` survived a kill forward, from its `after/` copies: replaying a
write is idempotent. Before the commit, every file must still hold the bytes
the plan was made from, so a file the user saved meanwhile is never
overwritten.

`undo` applies the newest dream generation not yet undone in reverse (its
`before/` bytes back, the files it created removed), as a generation of its
own, and refuses when a file changed since. `GENERATIONS_KEPT` generations
are kept; older ones are deleted after each apply.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass

from memd.agent.terms import INDEX_NAME
from memd.atomic import (
    crash_point,
    fsync_directory,
    remove_beneath,
    write_atomic,
    write_atomic_beneath,
)
from memd.errors import DreamError
from memd.fsread import (
    list_names,
    open_dir,
    read_beneath,
    read_bytes,
    read_bytes_or_none,
)
from memd.relpath import relpath_refusal

GENERATIONS_KEPT = 5
GENERATIONS_DIR = "dream-generations"
_APPLYING = "APPLYING"
_MAX_FILE = 64 * 1024 * 1024


class GenerationError(DreamError):
    """An apply or undo that cannot go ahead (one-line reason); nothing changed."""


@dataclass(frozen=True, slots=True)
class Generation:
    """One applied set of edits."""

    number: int
    kind: str  # "dream" | "undo"
    created: str
    writes: tuple[str, ...]
    deletes: tuple[str, ...]
    undoes: int | None
    watermark: dict[str, int] | None = None  # the dream's watermark before it ran
    marks: dict[str, int] | None = None  # and after: recorded once it is applied


def dir_key(memory_dir: str) -> str:
    """Return the short name of a memory directory in memd's state folders."""
    return hashlib.sha256(os.path.realpath(memory_dir).encode()).hexdigest()[:16]


def generations_root(state_dir: str, memory_dir: str) -> str:
    """Return the folder holding `memory_dir`'s generations."""
    return os.path.join(state_dir, GENERATIONS_DIR, dir_key(memory_dir))


def _safe_target(memory_dir: str, relpath: str) -> str:
    """Return the live path of `relpath`, refusing any step that is not a real dir."""
    why = relpath_refusal(relpath)  # the one rule for paths from outside
    if why is not None:
        raise GenerationError(f"refusing to write {relpath!r}: {why}")
    parts = relpath.split("/")
    path = memory_dir
    for part in parts[:-1]:
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(mode):
            raise GenerationError(
                f"refusing to write {relpath}: {part} is not a folder"
            )
    target = os.path.join(memory_dir, *parts)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(target).st_mode):
            raise GenerationError(f"refusing to replace {relpath}: not a regular file")
    return target


def _read_live(memory_dir: str, relpath: str) -> bytes | None:
    return read_bytes_or_none(_safe_target(memory_dir, relpath), _MAX_FILE)


def _write_copy(root: str, relpath: str, data: bytes) -> None:
    # Durable: the commit rename below must never publish torn copies.
    path = os.path.join(root, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, data)


def _load(directory: str) -> Generation:
    raw = json.loads(read_bytes(os.path.join(directory, "plan.json"), 1 << 20))
    return Generation(
        number=int(raw["number"]),
        kind=str(raw["kind"]),
        created=str(raw["created"]),
        writes=tuple(raw["writes"]),
        deletes=tuple(raw["deletes"]),
        undoes=raw.get("undoes"),
        watermark=raw.get("watermark"),
        marks=raw.get("marks"),
    )


def list_generations(state_dir: str, memory_dir: str) -> tuple[Generation, ...]:
    """Return the kept generations, oldest first."""
    root = generations_root(state_dir, memory_dir)
    try:
        names = sorted(n for n in list_names(root) if n.isdigit())
    except FileNotFoundError:
        return ()
    found = []
    for name in names:
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            found.append(_load(os.path.join(root, name)))
    return tuple(found)


def recover(state_dir: str, memory_dir: str) -> int | None:
    """Finish a generation a kill interrupted; sweep partial ones. Return its number."""
    root = generations_root(state_dir, memory_dir)
    if not os.path.isdir(root):
        return None
    marker = read_bytes_or_none(os.path.join(root, _APPLYING), 64)
    if marker is None:
        _sweep_partial(root)
        return None
    number = int(marker.decode("ascii").strip())
    directory = os.path.join(root, f"{number:06}")
    if not os.path.isdir(directory):  # killed before the commit: it never happened
        _finish(root)
        _sweep_partial(root)
        return None
    _apply_files(memory_dir, directory, _load(directory))
    _finish(root)
    return number


def _sweep_partial(root: str) -> None:
    for name in list_names(root):
        if name.endswith(".partial"):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _read_beneath_or_none(root_fd: int, relpath: str) -> bytes | None:
    try:
        return read_beneath(root_fd, relpath, _MAX_FILE)
    except FileNotFoundError:
        return None


def _apply_files(memory_dir: str, directory: str, generation: Generation) -> None:
    # Every write and delete lands beneath the memory dir's descriptor, one
    # O_NOFOLLOW component at a time: a link swapped in after the checks
    # cannot carry it out.
    root_fd = open_dir(memory_dir, follow=True)
    try:
        for relpath in generation.writes:
            after = os.path.join(directory, "after", relpath)
            data = read_bytes_or_none(after, _MAX_FILE)
            if data is None:
                raise GenerationError(f"generation {generation.number} lost {relpath}")
            _safe_target(memory_dir, relpath)
            if _read_beneath_or_none(root_fd, relpath) != data:
                write_atomic_beneath(root_fd, relpath, data, make_dirs=True)
        for relpath in generation.deletes:
            _safe_target(memory_dir, relpath)
            if not os.path.lexists(os.path.join(memory_dir, relpath)):
                continue
            remove_beneath(root_fd, relpath, prune_empty=True)
            crash_point()
    finally:
        os.close(root_fd)


def _finish(root: str) -> None:
    os.unlink(os.path.join(root, _APPLYING))
    fsync_directory(root)
    crash_point()


def apply_generation(
    state_dir: str,
    memory_dir: str,
    writes: dict[str, tuple[bytes | None, bytes]],
    deletes: dict[str, bytes],
    *,
    created: str,
    kind: str = "dream",
    undoes: int | None = None,
    watermark: dict[str, int] | None = None,
    marks: dict[str, int] | None = None,
) -> Generation | None:
    """Apply `writes` (relpath -> (expected old bytes, new)) and `deletes` as one.

    `deletes` maps relpath -> the bytes the file must still have. Raises
    `GenerationError` (nothing changed) when a file no longer holds its
    expected bytes. Returns None when there is nothing to change.
    """
    if not writes and not deletes:
        return None
    recover(state_dir, memory_dir)
    for relpath, (old, _) in sorted(writes.items()):
        if _read_live(memory_dir, relpath) != old:
            raise GenerationError(
                f"{relpath} changed during the dream; nothing applied"
            )
    for relpath, old_bytes in sorted(deletes.items()):
        if _read_live(memory_dir, relpath) != old_bytes:
            raise GenerationError(
                f"{relpath} changed during the dream; nothing applied"
            )
    root = generations_root(state_dir, memory_dir)
    os.makedirs(root, exist_ok=True)
    kept = list_generations(state_dir, memory_dir)
    number = (kept[-1].number if kept else 0) + 1
    partial = os.path.join(root, f".{number:06}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    for relpath, (old, new) in writes.items():
        _write_copy(os.path.join(partial, "after"), relpath, new)
        if old is not None:
            _write_copy(os.path.join(partial, "before"), relpath, old)
    for relpath, old_bytes in deletes.items():
        _write_copy(os.path.join(partial, "before"), relpath, old_bytes)
    generation = Generation(
        number=number,
        kind=kind,
        created=created,
        writes=tuple(sorted(writes, key=_write_order)),
        deletes=tuple(sorted(deletes)),
        undoes=undoes,
        watermark=watermark,
        marks=marks,
    )
    plan = {
        "number": number,
        "kind": kind,
        "created": created,
        "writes": list(generation.writes),
        "deletes": list(generation.deletes),
        "undoes": undoes,
        "watermark": watermark,
        "marks": marks,
    }
    write_atomic(os.path.join(partial, "plan.json"), json.dumps(plan).encode())
    final = os.path.join(root, f"{number:06}")
    write_atomic(os.path.join(root, _APPLYING), f"{number}\n".encode())
    os.rename(partial, final)  # the commit point
    fsync_directory(root)
    crash_point()
    _apply_files(memory_dir, final, generation)
    _finish(root)
    _prune(root)
    return generation


def _write_order(relpath: str) -> tuple[bool, bool, str]:
    # Archive pages, then topic files, then the index that links them.
    return (relpath == INDEX_NAME, not relpath.startswith("archive/"), relpath)


def _prune(root: str) -> None:
    names = sorted(n for n in list_names(root) if n.isdigit())
    for name in names[:-GENERATIONS_KEPT]:
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def undo(
    state_dir: str, memory_dir: str, *, created: str
) -> tuple[Generation, Generation]:
    """Put back the bytes the newest not-yet-undone dream replaced.

    Returns (the dream undone, the undo's own generation).
    """
    recover(state_dir, memory_dir)
    kept = list_generations(state_dir, memory_dir)
    undone = {g.undoes for g in kept if g.kind == "undo"}
    # An undo's own undoes are undone too: undoing again steps further back.
    targets = [g for g in kept if g.kind == "dream" and g.number not in undone]
    if not targets:
        raise GenerationError(
            f"nothing to undo: no dream kept for {memory_dir} "
            f"(memd keeps the last {GENERATIONS_KEPT})"
        )
    target = targets[-1]
    directory = os.path.join(
        generations_root(state_dir, memory_dir), f"{target.number:06}"
    )
    writes: dict[str, tuple[bytes | None, bytes]] = {}
    deletes: dict[str, bytes] = {}
    for relpath in (*target.writes, *target.deletes):
        before = read_bytes_or_none(
            os.path.join(directory, "before", relpath), _MAX_FILE
        )
        after = (
            read_bytes_or_none(os.path.join(directory, "after", relpath), _MAX_FILE)
            if relpath in target.writes
            else None
        )
        live = _read_live(memory_dir, relpath)
        if live != after:
            raise GenerationError(
                f"{relpath} changed after dream {target.number}; undo would lose that"
            )
        if before is None:
            deletes[relpath] = live if live is not None else b""
        else:
            writes[relpath] = (live, before)
    deletes = {
        rel: data
        for rel, data in deletes.items()
        if _read_live(memory_dir, rel) is not None
    }
    generation = apply_generation(
        state_dir,
        memory_dir,
        writes,
        deletes,
        created=created,
        kind="undo",
        undoes=target.number,
        watermark=target.watermark,
    )
    if generation is None:
        raise GenerationError(f"dream {target.number} changed nothing to undo")
    return target, generation
