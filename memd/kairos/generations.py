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
the plan was made from, and each is replaced (or deleted) only while it still
holds its `before/` bytes, so a file the user saved meanwhile is never
overwritten, not even by a roll-forward.

Every read and write of this state goes beneath one descriptor of
`<key>/` (`_Root`), no symlink followed at any component; `plan.json` is
parsed by `memd.fastjson` with a depth bound and checked (number, kind,
relpaths by `memd.relpath`, watermarks). A corrupt or linked piece raises
`GenerationError` with one line naming it: never a traceback, never a read
outside.

`undo` applies the newest dream generation not yet undone in reverse (its
`before/` bytes back, the files it created removed), as a generation of its
own, and refuses when a file changed since. `GENERATIONS_KEPT` generations
are kept; older ones are deleted after each apply.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass

from memd import fastjson
from memd.atomic import crash_point, remove_beneath, write_atomic_beneath
from memd.claude_code.terms import INDEX_NAME
from memd.errors import DreamError
from memd.fsread import (
    list_names,
    open_dir,
    open_dir_beneath,
    read_beneath,
    read_bytes_or_none,
)
from memd.relpath import relpath_refusal

GENERATIONS_KEPT = 5
GENERATIONS_DIR = "dream-generations"
_APPLYING = "APPLYING"
_MAX_FILE = 64 * 1024 * 1024
_MAX_PLAN = 1 << 20
_PLAN_DEPTH = 4  # {"watermark": {...}} is two deep
_MAX_MARKER, _MAX_DIGITS = 64, 9


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


class _Root:
    """`<state>/dream-generations/<key>`, open as a descriptor: every read and
    write of generation state goes beneath it, no symlink followed on the way.
    """

    def __init__(self, state_dir: str, memory_dir: str, *, create: bool) -> None:
        self.path = generations_root(state_dir, memory_dir)
        parts = [GENERATIONS_DIR, dir_key(memory_dir)]
        self.fd: int | None = None
        if create:
            os.makedirs(state_dir, exist_ok=True)
        try:
            state_fd = open_dir(state_dir, follow=True)  # memd's own: may be a link
        except FileNotFoundError:
            return
        try:
            self.fd = open_dir_beneath(state_fd, parts, make_missing=create)
        except FileNotFoundError:
            pass
        except OSError as error:
            raise self.corrupt("", _why(error)) from None
        finally:
            os.close(state_fd)

    def __enter__(self) -> _Root:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def opened(self) -> int:
        if self.fd is None:
            raise GenerationError(f"{self.path}: no dream history")
        return self.fd

    def corrupt(self, name: str, why: str) -> GenerationError:
        where = os.path.join(self.path, name) if name else self.path
        return GenerationError(
            f"the dream history is corrupt: {where}: {why}; nothing changed "
            "(move it away to go on)"
        )

    def read(self, relpath: str, limit: int = _MAX_FILE) -> bytes | None:
        """Return the bytes of `relpath` below the root, None if it is missing."""
        try:
            return read_beneath(self.opened(), relpath, limit)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise self.corrupt(relpath, _why(error)) from None

    def names(self) -> list[str]:
        return list_names(self.fd) if self.fd is not None else []

    def numbers(self) -> list[str]:
        return sorted(n for n in self.names() if n.isdigit())

    def marker(self) -> int | None:
        """Return the generation `APPLYING` names, None when none is being applied."""
        raw = self.read(_APPLYING, _MAX_MARKER)
        if raw is None:
            return None
        text = raw.decode("ascii", "replace").strip()
        if not (text.isdigit() and len(text) <= _MAX_DIGITS):
            raise self.corrupt(_APPLYING, f"holds {raw[:24]!r}, not a generation")
        return int(text)

    def load(self, name: str) -> Generation:
        """Return generation `name`'s plan, checked: types, relpaths, its number."""
        raw = self.read(f"{name}/plan.json", _MAX_PLAN)
        if raw is None:
            raise self.corrupt(name, "it has no plan.json")
        try:
            return _plan(fastjson.loads(raw, max_depth=_PLAN_DEPTH), name)
        except (ValueError, TypeError, KeyError) as error:
            raise self.corrupt(f"{name}/plan.json", str(error)[:200]) from None

    def kept(self, *, strict: bool) -> tuple[Generation, ...]:
        found = []
        for name in self.numbers():
            try:
                found.append(self.load(name))
            except GenerationError:
                if strict:
                    raise
        return tuple(found)

    def write(self, relpath: str, data: bytes, mode: int | None = None) -> None:
        write_atomic_beneath(self.opened(), relpath, data, mode=mode, make_dirs=True)

    def remove_tree(self, name: str) -> None:
        shutil.rmtree(name, dir_fd=self.fd, ignore_errors=True)

    def sync(self) -> None:
        with contextlib.suppress(OSError):
            os.fsync(self.fd)  # type: ignore[arg-type]


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def _plan(raw: object, name: str) -> Generation:
    if not isinstance(raw, dict):
        raise TypeError("not an object")
    number, kind = raw["number"], raw["kind"]
    if type(number) is not int or number != int(name):
        raise ValueError(f"number {number!r} is not {int(name)}")
    if kind not in ("dream", "undo"):
        raise ValueError(f"kind {kind!r}")
    writes, deletes = _relpaths(raw["writes"]), _relpaths(raw["deletes"])
    undoes = raw.get("undoes")
    if undoes is not None and type(undoes) is not int:
        raise TypeError(f"undoes {undoes!r}")
    return Generation(
        number=number,
        kind=str(kind),
        created=str(raw["created"]),
        writes=writes,
        deletes=deletes,
        undoes=undoes,
        watermark=_marks(raw.get("watermark")),
        marks=_marks(raw.get("marks")),
    )


def _relpaths(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("writes and deletes must be lists of paths")
    for relpath in value:
        why = relpath_refusal(relpath)
        if why is not None:
            raise ValueError(f"{relpath!r}: {why}")
    return tuple(value)


def _marks(value: object) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and type(v) is int for k, v in value.items()
    ):
        raise TypeError("a watermark maps log paths to offsets")
    return value


def list_generations(state_dir: str, memory_dir: str) -> tuple[Generation, ...]:
    """Return the kept generations, oldest first (a corrupt one is left out)."""
    with _Root(state_dir, memory_dir, create=False) as root:
        return root.kept(strict=False)


def recover(state_dir: str, memory_dir: str) -> int | None:
    """Finish a generation a kill interrupted; sweep partial ones. Return its number.

    Raises `GenerationError` (one line) when the state it would read is corrupt.
    """
    with _Root(state_dir, memory_dir, create=False) as root:
        if root.fd is None:
            return None
        number = root.marker()
        if number is None:
            _sweep_partial(root)
            return None
        name = f"{number:06}"
        if name not in root.names():  # killed before the commit: it never happened
            _finish(root)
            _sweep_partial(root)
            return None
        _apply_files(memory_dir, root, name, root.load(name))
        _finish(root)
        return number


def _sweep_partial(root: _Root) -> None:
    for name in root.names():
        if name.endswith(".partial"):
            root.remove_tree(name)


def _read_beneath_or_none(root_fd: int, relpath: str) -> bytes | None:
    try:
        return read_beneath(root_fd, relpath, _MAX_FILE)
    except FileNotFoundError:
        return None


def _apply_files(
    memory_dir: str, root: _Root, name: str, generation: Generation
) -> None:
    # Every write and delete lands beneath the memory dir's descriptor, one
    # O_NOFOLLOW component at a time: a link swapped in after the checks
    # cannot carry it out. A file is replaced only while it still holds the
    # bytes the plan was made from (`before/`, or absent): one the user saved
    # since keeps the user's bytes, and an undo then refuses it.
    root_fd = open_dir(memory_dir, follow=True)
    try:
        for relpath in generation.writes:
            data = root.read(f"{name}/after/{relpath}")
            if data is None:
                raise root.corrupt(name, f"it lost after/{relpath}")
            _safe_target(memory_dir, relpath)
            live = _read_beneath_or_none(root_fd, relpath)
            if live != data and live == root.read(f"{name}/before/{relpath}"):
                write_atomic_beneath(root_fd, relpath, data, make_dirs=True)
        for relpath in generation.deletes:
            _safe_target(memory_dir, relpath)
            live = _read_beneath_or_none(root_fd, relpath)
            if live is None or live != root.read(f"{name}/before/{relpath}"):
                continue
            remove_beneath(root_fd, relpath, prune_empty=True)
            crash_point()
    finally:
        os.close(root_fd)


def _finish(root: _Root) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_APPLYING, dir_fd=root.fd)
    root.sync()
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
                f"{relpath} changed during the dream; nothing applied, "
                "the next dream tries again"
            )
    for relpath, old_bytes in sorted(deletes.items()):
        if _read_live(memory_dir, relpath) != old_bytes:
            raise GenerationError(
                f"{relpath} changed during the dream; nothing applied, "
                "the next dream tries again"
            )
    with _Root(state_dir, memory_dir, create=True) as root:
        return _commit(
            memory_dir,
            root,
            writes,
            deletes,
            Generation(
                number=int((root.numbers() or ["0"])[-1]) + 1,
                kind=kind,
                created=created,
                writes=tuple(sorted(writes, key=_write_order)),
                deletes=tuple(sorted(deletes)),
                undoes=undoes,
                watermark=watermark,
                marks=marks,
            ),
        )


def _commit(
    memory_dir: str,
    root: _Root,
    writes: dict[str, tuple[bytes | None, bytes]],
    deletes: dict[str, bytes],
    generation: Generation,
) -> Generation:
    name = f"{generation.number:06}"
    partial = f".{name}.partial"
    root.remove_tree(partial)
    for relpath, (old, new) in writes.items():
        root.write(f"{partial}/after/{relpath}", new)
        if old is not None:  # a copy of the user's file keeps its mode
            mode = _live_mode(memory_dir, relpath)
            root.write(f"{partial}/before/{relpath}", old, mode)
    for relpath, old_bytes in deletes.items():
        mode = _live_mode(memory_dir, relpath)
        root.write(f"{partial}/before/{relpath}", old_bytes, mode)
    plan = {
        "number": generation.number,
        "kind": generation.kind,
        "created": generation.created,
        "writes": list(generation.writes),
        "deletes": list(generation.deletes),
        "undoes": generation.undoes,
        "watermark": generation.watermark,
        "marks": generation.marks,
    }
    root.write(f"{partial}/plan.json", fastjson.dumps(plan).encode())
    root.write(_APPLYING, f"{generation.number}\n".encode())
    os.rename(partial, name, src_dir_fd=root.fd, dst_dir_fd=root.fd)  # the commit
    root.sync()
    crash_point()
    _apply_files(memory_dir, root, name, generation)
    _finish(root)
    for pruned in root.numbers()[:-GENERATIONS_KEPT]:
        root.remove_tree(pruned)
    return generation


def _live_mode(memory_dir: str, relpath: str) -> int:
    """The permission bits of a memory file (0o600 when it is not one)."""
    try:
        st = os.lstat(os.path.join(memory_dir, relpath))
    except OSError:
        return 0o600
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o600


def _write_order(relpath: str) -> tuple[bool, bool, str]:
    # Archive pages, then topic files, then the index that links them.
    return (relpath == INDEX_NAME, not relpath.startswith("archive/"), relpath)


def undo(
    state_dir: str, memory_dir: str, *, created: str
) -> tuple[Generation, Generation]:
    """Put back the bytes the newest not-yet-undone dream replaced.

    Returns (the dream undone, the undo's own generation). Raises
    `GenerationError` (one line) when there is nothing to undo, a file changed
    since, or any kept generation is corrupt.
    """
    recover(state_dir, memory_dir)
    with _Root(state_dir, memory_dir, create=False) as root:
        kept = root.kept(strict=True)
        undone = {g.undoes for g in kept if g.kind == "undo"}
        # An undo's own undoes are undone too: undoing again steps further back.
        targets = [g for g in kept if g.kind == "dream" and g.number not in undone]
        if not targets:
            raise GenerationError(
                f"nothing to undo: no dream kept for {memory_dir} "
                f"(memd keeps the last {GENERATIONS_KEPT})"
            )
        target = targets[-1]
        name = f"{target.number:06}"
        writes: dict[str, tuple[bytes | None, bytes]] = {}
        deletes: dict[str, bytes] = {}
        for relpath in (*target.writes, *target.deletes):
            before = root.read(f"{name}/before/{relpath}")
            after = (
                root.read(f"{name}/after/{relpath}")
                if relpath in target.writes
                else None
            )
            live = _read_live(memory_dir, relpath)
            if live != after:
                raise GenerationError(
                    f"{relpath} changed after dream {target.number}; "
                    "undo would lose that"
                )
            if before is None:
                if live is not None:
                    deletes[relpath] = live
            else:
                writes[relpath] = (live, before)
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
