"""Bring back one file, or a whole memory directory, as it was at a revision.

A restore holds the history write lock, records whatever was pending as
"edit", plans each file's action against the directory's recorded state,
and, unless it is a dry run, writes a journal (`<state_dir>/history/restore.json`:
the memory dir, the revision, and each file's sha before and after; shas
only, never contents) before it touches a file. It refuses, before any
write, a file or folder on the way that is a link (never written through,
never reported restored). The whole is recorded as one change with cause
"restore", after which the journal goes.

No save is lost unrecorded, even one that lands between the check and the
write (`_put`): the new bytes go to a temp file that is swapped with the
file (`renameat2(RENAME_EXCHANGE)`), so what was there is held, never
destroyed. If it is the version the plan expected (already in the history),
it goes; if it is a newer save, it is recorded first and swapped back, so
the newer save stays and the file is reported "left as it is". A deletion
renames the file away and checks it the same way. Where the filesystem has
no exchange, the file is renamed away, checked, and the new one linked in
only where nothing is (never replacing).

A kill in between leaves the journal: `recover` (run by the next `memd`
command that records, and by the daemon at start) rolls it forward, file by
file, wherever the file still holds its "before" bytes; a file someone
edited since is left alone. So a restore is all or nothing.

`restore_loss` is the same restore of just what one loss took (the files
`memd.history.ledger` kept for it, each at its own revision), leaving alone
any the loss did not take and any changed since.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
from dataclasses import dataclass

from memd import fastjson
from memd.atomic import (
    crash_point,
    exchange_at,
    is_unsupported,
    rename_noreplace_at,
    write_atomic,
    write_temp_at,
)
from memd.errors import MemdError
from memd.fsread import (
    list_names,
    open_dir,
    open_dir_beneath,
    open_regular,
    read_beneath,
    read_bytes,
    read_fd,
    split_beneath,
)
from memd.history.lock import write_lock
from memd.history.notice import drop_notice
from memd.history.scan import MAX_FILE_BYTES, disk_name, kept_refusal
from memd.history.store import (
    RESTORE_JOURNAL,
    Change,
    History,
    history_dir,
    normalize_dir,
    valid_rev,
)
from memd.history.wording import CHANGED_SINCE, NOT_KEPT

JOURNAL = RESTORE_JOURNAL
MAX_JOURNAL_BYTES = 16 * 1024 * 1024
_MAX_DIFF_LINES = 20_000
_MAX_SWAPS = 64  # a saver faster than a swap for this long: it keeps its file
LEFT_SAVED = "saved during the restore; the newer save is kept"
# What a swap holds aside may be a save: hidden from the scan, not swept as a
# killed writer's temp file, recorded by `recover` if a kill left it.
HELD_PREFIX = ".memd-held-"
LEFT_EDITED = "changed since it was checked; left as it is"


class RestoreError(MemdError):
    """A restore that cannot be made (no such revision, a file absent then)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RestorePlan:
    """What a restore does (or did): each file's action, and the unified diff."""

    memory_dir: str
    rev: int
    steps: tuple[tuple[str, str], ...]  # (relpath, "create" | "modify" | "delete")
    diff: str
    dry_run: bool
    change: Change | None = None  # the recorded "restore" change, when applied
    before_rev: int = 0  # the directory's revision just before: what undoes it
    left: tuple[tuple[str, str], ...] = ()  # (relpath, why) not restored after all
    relpath: str | None = None  # a single-file restore's file

    @property
    def done(self) -> tuple[tuple[str, str], ...]:
        """The steps that were applied (all planned ones on a dry run)."""
        skipped = {rel for rel, _ in self.left}
        return tuple(step for step in self.steps if step[0] not in skipped)


def restore_file(
    state_dir: str,
    memory_dir: str,
    relpath: str,
    *,
    rev: int | None,
    dry_run: bool = False,
) -> RestorePlan:
    """Bring back `relpath` as it was at `rev`, byte for byte (deleted or not).

    `rev` None: as it was before its newest recorded change (git's habit).
    At a `rev` where the file did not exist (but has a history), it is removed.
    """
    return _restore(state_dir, memory_dir, rev, dry_run, only=relpath)


def restore_all(
    state_dir: str, memory_dir: str, *, rev: int, dry_run: bool = False
) -> RestorePlan:
    """Bring back the whole directory as it was at `rev`; all or nothing."""
    return _restore(state_dir, memory_dir, rev, dry_run, only=None)


def restore_loss(
    state_dir: str, loss_rev: int, *, dry_run: bool = False
) -> RestorePlan:
    """Bring back exactly what loss `loss_rev` took: each file it deleted or emptied
    (and the index, when it lost reach) as it was just before, byte for byte.

    Nothing else is touched: no file written after the loss, none the loss
    did not take. A file changed since the loss is left as it is
    (`RestorePlan.left`).
    """
    with History.open(state_dir) as history:
        loss = history.loss(loss_rev) if valid_rev(loss_rev) else None
    if loss is None:
        raise RestoreError(
            f"no loss {loss_rev} in the history (`memd status` lists them)"
        )
    return _restore(
        state_dir, loss.memory_dir, loss_rev, dry_run, only=None, picks=dict(loss.taken)
    )


def _restore(
    state_dir: str,
    memory_dir: str,
    rev: int | None,
    dry_run: bool,
    *,
    only: str | None,
    picks: dict[str, int] | None = None,
) -> RestorePlan:
    path = normalize_dir(memory_dir)
    with write_lock(state_dir), History.open(state_dir) as history:
        recover(state_dir, history)
        history.record(path, cause="edit")
        if rev is None:
            rev = _before_newest(history, path, only)
        named = history.change(rev) if valid_rev(rev) else None
        if named is None or named.memory_dir != path:
            raise RestoreError(f"no revision {rev} in the history of {path}")
        before_rev = history.last_rev(path)
        target = history.tree_at(path, rev)
        current = history.recorded_tree(path)
        # absent then: removed, if it had existed before (a deletion undone the
        # other way); never for a revision before it was first made
        if (
            only is not None
            and only not in target
            and not any(c.rev <= rev for c in history.changes(path, relpath=only))
        ):
            raise RestoreError(f"{only} did not exist at revision {rev}")
        left_alone: tuple[tuple[str, str], ...] = ()
        if picks is not None:
            target, current, left_alone = _picked(history, path, rev, picks, current)
        elif only is not None:
            target = {only: target[only]} if only in target else {}
            current = {only: current[only]} if only in current else {}
        steps = [
            step
            for step in _plan(target, current)
            # a file whose every version was purged is not history's to delete
            if step[1] != "delete" or history.has_versions(path, step[0])
        ]
        diff = _diff(history, steps, target, current)
        plan = RestorePlan(
            memory_dir=path,
            rev=rev,
            steps=tuple((rel, action) for rel, action, _, _ in steps),
            diff=diff,
            dry_run=dry_run,
            before_rev=before_rev,
            left=left_alone,
            relpath=only,
        )
        if dry_run or not steps:
            return plan
        _refuse_unsafe(path, [rel for rel, _, _, _ in steps])
        journal = {
            "memory_dir": path,
            "rev": rev,
            "note": f"what loss {rev} took" if picks is not None else None,
            "steps": [
                [rel, after.hex() if after else None, before.hex() if before else None]
                for rel, _, after, before in steps
            ],
        }
        journal_path = os.path.join(history_dir(state_dir), JOURNAL)
        write_atomic(journal_path, fastjson.dumps(journal).encode(), mode=0o600)
        change, left = _apply(history, journal_path, journal)
        return RestorePlan(
            memory_dir=path,
            rev=rev,
            steps=plan.steps,
            diff=diff,
            dry_run=False,
            change=change,
            before_rev=before_rev,
            left=left_alone + tuple(left),
            relpath=only,
        )


def _picked(
    history: History,
    path: str,
    loss_rev: int,
    picks: dict[str, int],
    current: dict[str, bytes],
) -> tuple[dict[str, bytes], dict[str, bytes], tuple[tuple[str, str], ...]]:
    """(target, current, left alone) for a loss: each file back to the version it
    picks, if it is still as the loss left it; the others left alone."""
    left = history.tree_at(path, loss_rev)  # the directory as the loss left it
    target: dict[str, bytes] = {}
    now: dict[str, bytes] = {}
    alone: list[tuple[str, str]] = []
    for rel, at in sorted(picks.items()):
        sha = history.sha_at(path, rel, at)
        if current.get(rel) != left.get(rel):
            alone.append((rel, CHANGED_SINCE))  # a newer save is never overwritten
        elif sha is None:
            alone.append((rel, NOT_KEPT))
        else:
            target[rel] = sha
            if rel in current:
                now[rel] = current[rel]
    return target, now, tuple(alone)


def _before_newest(history: History, memory_dir: str, relpath: str | None) -> int:
    """The revision just before `relpath`'s newest change: what `restore FILE` means."""
    if relpath is None:
        raise RestoreError("say which version: --at WHEN or --rev REV")
    changes = history.changes(memory_dir, relpath=relpath, limit=2)
    if not changes:
        raise RestoreError(f"{relpath} has no recorded version")
    earlier = history.rev_before(memory_dir, changes[0].rev)
    if earlier is None or len(changes) == 1:
        raise RestoreError(
            f"{relpath} has no version before revision {changes[0].rev}, its first"
        )
    return earlier


def _refuse_unsafe(memory_dir: str, relpaths: list[str]) -> None:
    """Refuse the whole restore, before any write, if a path on the way is a link.

    A folder on the way, or the file itself, that is a link (or not a regular
    file) is never written through, and a restore that left one in place
    would not be one.

    Raises:
        RestoreError: naming the first path that cannot be written safely.
    """
    try:
        root = open_dir(memory_dir, follow=True)
    except FileNotFoundError:
        return  # made fresh: nothing on the way yet
    try:
        for rel in relpaths:
            parts = split_beneath(disk_name(rel))
            try:
                os.close(open_dir_beneath(root, parts[:-1]))
            except FileNotFoundError:
                continue
            except OSError as error:
                raise RestoreError(
                    f"{rel}: a folder on the way is {_what(error)}; nothing restored"
                ) from None
            try:
                mode = os.lstat(disk_name(rel), dir_fd=root).st_mode
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(mode):
                raise RestoreError(f"{rel} is a directory now; nothing restored")
            if stat.S_ISLNK(mode):
                raise RestoreError(
                    f"{rel} is a link now, which memd never writes through;"
                    " nothing restored (remove the link, then restore again)"
                )
            if not stat.S_ISREG(mode):
                raise RestoreError(f"{rel} is not a regular file now; nothing restored")
    finally:
        os.close(root)


def _what(error: OSError) -> str:
    import errno

    if error.errno == errno.ELOOP:
        return "a link, which memd never writes through"
    return str(error.strerror or error)


def _plan(
    target: dict[str, bytes], current: dict[str, bytes]
) -> list[tuple[str, str, bytes | None, bytes | None]]:
    """(relpath, action, sha after, sha before) for each file that differs."""
    steps = []
    for rel in sorted(set(target) | set(current)):
        after, before = target.get(rel), current.get(rel)
        if after == before or kept_refusal(rel) is not None:
            continue
        action = "delete" if after is None else "create" if before is None else "modify"
        steps.append((rel, action, after, before))
    return steps


def _text(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", "replace").splitlines(keepends=True)[:_MAX_DIFF_LINES]


def _diff(
    history: History,
    steps: list[tuple[str, str, bytes | None, bytes | None]],
    target: dict[str, bytes],
    current: dict[str, bytes],
) -> str:
    parts: list[str] = []
    for rel, _, after, before in steps:
        old = history.content(before) if before else None
        new = history.content(after) if after else None
        parts += difflib.unified_diff(
            _text(old),
            _text(new),
            fromfile="/dev/null" if before is None else f"a/{rel}",
            tofile="/dev/null" if after is None else f"b/{rel}",
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in parts)


def _apply(
    history: History, journal_path: str, journal: dict[str, object]
) -> tuple[Change | None, list[tuple[str, str]]]:
    """Roll a journal forward, record it as one "restore" change, drop the journal.

    Returns the change and the (relpath, why) of each file left as it was.
    """
    path = str(journal["memory_dir"])
    os.makedirs(path, mode=0o700, exist_ok=True)
    root = open_dir(path, follow=True)
    left: list[tuple[str, str]] = []
    restored: set[str] = set()
    try:
        steps = _steps(journal)
        _gather_held(history, path, root, steps)
        for index, (rel, after, before) in enumerate(steps):
            if rel is None:
                continue
            on_disk = _sha_on_disk(root, rel)
            wanted, was = after, before
            if on_disk == wanted:
                restored.add(rel)
                continue  # done already (a rolled-forward journal)
            if on_disk != was:
                left.append((rel, LEFT_EDITED))
                continue
            data = None if wanted is None else history.content(wanted)
            if wanted is not None and data is None:
                left.append((rel, "its version was purged meanwhile"))
                continue
            try:
                why = _put(history, path, root, rel, data, was, index)
            except OSError as error:  # swapped for a link since the check
                why = f"{error.strerror or error}; left as it is"
            if why is None:
                restored.add(rel)
            else:
                left.append((rel, why))
    finally:
        os.close(root)
    note = str(journal.get("note") or f"to revision {journal.get('rev')}")
    if left:
        note += "; not restored: " + ", ".join(f"{rel} ({why})" for rel, why in left)
    # what else changed meanwhile is someone else's edit, recorded as such
    history.record(path, cause="edit", only=lambda rel: rel not in restored)
    change = history.record(
        path, cause="restore", note=note, only=lambda rel: rel in restored
    )
    if change is not None and change.restored:  # a loss brought back: told no more
        with contextlib.suppress(OSError):
            state_dir = os.path.dirname(os.path.dirname(journal_path))
            drop_notice(state_dir, path, change.restored)
    crash_point()
    os.unlink(journal_path)
    crash_point()
    return change, left


def _steps(
    journal: dict[str, object],
) -> list[tuple[str | None, bytes | None, bytes | None]]:
    """The journal's (relpath, sha after, sha before), by index; relpath None
    for a step that is not one (a journal is memd's own, but read bounded)."""
    steps = journal.get("steps")
    found: list[tuple[str | None, bytes | None, bytes | None]] = []
    for step in steps if isinstance(steps, list) else ():
        try:
            rel, after, before = step
            found.append(
                (
                    rel if isinstance(rel, str) and kept_refusal(rel) is None else None,
                    bytes.fromhex(after) if isinstance(after, str) else None,
                    bytes.fromhex(before) if isinstance(before, str) else None,
                )
            )
        except (TypeError, ValueError):
            found.append((None, None, None))
    return found


def _gather_held(
    history: History,
    memory_dir: str,
    root: int,
    steps: list[tuple[str | None, bytes | None, bytes | None]],
) -> None:
    """Record what a killed restore held aside, then drop it.

    A file named `HELD_PREFIX<step>-...` is what a swap took off the disk (or
    the bytes it was putting there). Its bytes are the step's before or after
    (in the history already), or a save that landed in the gap: recorded
    now, as the swap would have. Only then is it removed.
    """
    folders = {tuple(split_beneath(disk_name(rel))[:-1]) for rel, _, _ in steps if rel}
    for folder in sorted(folders):
        try:
            fd = open_dir_beneath(root, list(folder))
        except OSError:
            continue
        try:
            for name in list_names(fd):
                step = _held_step(name, steps)
                if step is None:
                    continue
                rel, after, before = step
                held, _ = _held(fd, name)
                kept = held is not None and _sha(held) in (after, before)
                if held is not None and not kept and rel is not None:
                    kept = _Spot(history, memory_dir, rel, fd, name).keep(held)
                beside = os.path.basename(rel or name)
                _discard(fd, name, beside, recorded=kept)
        finally:
            os.close(fd)


def _held_step(
    name: str, steps: list[tuple[str | None, bytes | None, bytes | None]]
) -> tuple[str | None, bytes | None, bytes | None] | None:
    if not name.startswith(HELD_PREFIX):
        return None
    number = name[len(HELD_PREFIX) :].split("-", 1)[0]
    if not (number.isascii() and number.isdigit()) or int(number) >= len(steps):
        return None
    return steps[int(number)]


def _sha_on_disk(root: int, relpath: str) -> bytes | None:
    try:
        data = read_beneath(root, disk_name(relpath), MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    except OSError:
        return b"unreadable"  # matches no sha: the file is left alone
    return hashlib.sha256(data).digest()


# -- putting one file in place without losing a save -----------------------------


def _put(
    history: History,
    memory_dir: str,
    root: int,
    relpath: str,
    data: bytes | None,
    was: bytes | None,
    index: int = 0,
) -> str | None:
    """Put `data` at `relpath` (None: remove it) if it still holds `was`.

    Returns None when done, else why the file was left as it is. Whatever
    the swap takes off the disk that is not `was` is recorded before it goes.
    """
    parts = split_beneath(disk_name(relpath))
    try:
        parent = open_dir_beneath(root, parts[:-1], make_missing=data is not None)
    except FileNotFoundError:
        return None  # a removal whose folder is gone: done
    try:
        spot = _Spot(history, memory_dir, relpath, parent, parts[-1], index)
        if data is None:
            why = _take_away(spot, was)
        elif was is None:
            why = _put_new(parent, parts[-1], data)
        else:
            why = _swap_in(spot, data, was)
        if why is None:
            _fsync(parent)
    finally:
        os.close(parent)
    if why is None and data is None:
        _prune_folders(root, parts[:-1])
    return why


def _prune_folders(root: int, folders: list[str]) -> None:
    """Remove the folders a removal left empty, deepest first (rmdir: only empty)."""
    for depth in range(len(folders), 0, -1):
        try:
            above = open_dir_beneath(root, folders[: depth - 1])
        except OSError:
            return
        try:
            os.rmdir(folders[depth - 1], dir_fd=above)
        except OSError:
            return
        finally:
            os.close(above)


@dataclass(frozen=True, slots=True)
class _Spot:
    """Where one file is put: the store, its directory, and its parent's descriptor."""

    history: History
    memory_dir: str
    relpath: str
    parent: int
    name: str  # the file's name in `parent`, as on disk
    index: int = 0  # its step in the journal: what a held file's name says

    def held_prefix(self) -> str:
        """What names what a swap holds aside: the journal's step (then random)."""
        return f"{HELD_PREFIX}{self.index}-"

    def held_name(self) -> str:
        return f"{self.held_prefix()}{os.urandom(8).hex()}"

    def keep(self, data: bytes) -> bool:
        """Record `data`, a save the swap took off the disk, before it can go."""
        self.history.keep_version(
            self.memory_dir, self.relpath, data, note="saved during a restore"
        )
        return True


def _put_new(parent: int, name: str, data: bytes) -> str | None:
    """Create `name` only where nothing is: a file made meanwhile is newer."""
    temp = write_temp_at(parent, data, 0o644)
    try:
        rename_noreplace_at(parent, temp, name)
    except FileExistsError:
        os.unlink(temp, dir_fd=parent)
        return LEFT_SAVED
    except BaseException:
        _unlink_quietly(parent, temp)
        raise
    return None


def _swap_in(spot: _Spot, data: bytes, was: bytes) -> str | None:
    """Replace the file by `data` with an exchange; a newer save displaced goes back."""
    try:
        mode = (
            os.stat(spot.name, dir_fd=spot.parent, follow_symlinks=False).st_mode
            & 0o7777
        )
    except OSError:
        mode = 0o644
    temp = write_temp_at(spot.parent, data, mode, prefix=spot.held_prefix())
    mine = _inode(spot.parent, temp)
    try:
        return _exchange_loop(spot, temp, was, _sha(data))
    except OSError as error:
        if is_unsupported(error) and _inode(spot.parent, temp) == mine:
            return _swap_by_rename(spot, temp, was)
        _discard(
            spot.parent, temp, spot.name, recorded=_inode(spot.parent, temp) == mine
        )
        raise
    except BaseException:
        _discard(
            spot.parent, temp, spot.name, recorded=_inode(spot.parent, temp) == mine
        )
        raise


def _exchange_loop(spot: _Spot, temp: str, was: bytes, mine: bytes) -> str | None:
    """Swap `temp` (the new bytes, sha `mine`) with the file; keep what it held
    unless it was `was`.

    After each swap `temp` holds what the file held. When that is not the
    expected version, it is recorded and swapped back; that swap returns what
    was put before (the same inode with the same bytes: nobody saved, not even
    in place), unless a still newer save landed in between, which then goes
    back in turn. Only a file memd put there, or one already recorded, is
    ever unlinked.
    """
    expect: tuple[int, bytes | None] = (_inode(spot.parent, temp), mine)
    try:
        exchange_at(spot.parent, temp, spot.name)
    except FileNotFoundError:
        os.unlink(temp, dir_fd=spot.parent)
        return "deleted since it was checked; left deleted"
    held, ino = _held(spot.parent, temp)
    if held is not None and _sha(held) == was:
        os.unlink(temp, dir_fd=spot.parent)
        return None
    for _ in range(_MAX_SWAPS):
        kept = held is not None and spot.keep(held)
        putting = (ino, None if held is None else _sha(held))
        try:
            exchange_at(spot.parent, temp, spot.name)
        except FileNotFoundError:  # deleted after our swap: the deletion is newest
            _discard(spot.parent, temp, spot.name, recorded=kept)
            return "deleted during the restore; left deleted"
        held, ino = _held(spot.parent, temp)
        if (ino, None if held is None else _sha(held)) == expect:
            os.unlink(temp, dir_fd=spot.parent)  # what memd put there, untouched
            return LEFT_SAVED
        expect = putting
    _discard(
        spot.parent,
        temp,
        spot.name,
        recorded=held is not None and spot.keep(held),
    )
    return LEFT_SAVED


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _swap_by_rename(spot: _Spot, temp: str, was: bytes) -> str | None:
    """`_exchange_loop` where the filesystem has no exchange: away, check, link in."""
    hold = spot.held_name()
    try:
        os.rename(spot.name, hold, src_dir_fd=spot.parent, dst_dir_fd=spot.parent)
    except FileNotFoundError:
        os.unlink(temp, dir_fd=spot.parent)
        return "deleted since it was checked; left deleted"
    held, _ = _held(spot.parent, hold)
    if held is not None and _sha(held) == was:
        try:
            rename_noreplace_at(spot.parent, temp, spot.name)
        except FileExistsError:  # saved in the gap: that save stays
            os.unlink(temp, dir_fd=spot.parent)
            os.unlink(hold, dir_fd=spot.parent)  # `was`: in the history
            return LEFT_SAVED
        os.unlink(hold, dir_fd=spot.parent)
        return None
    os.unlink(temp, dir_fd=spot.parent)
    kept = held is not None and spot.keep(held)
    try:
        rename_noreplace_at(spot.parent, hold, spot.name)
    except FileExistsError:
        _discard(spot.parent, hold, spot.name, recorded=kept)
    return LEFT_SAVED


def _take_away(spot: _Spot, was: bytes | None) -> str | None:
    """Remove the file if it holds `was`: renamed away first, so nothing newer goes."""
    hold = spot.held_name()
    try:
        os.rename(spot.name, hold, src_dir_fd=spot.parent, dst_dir_fd=spot.parent)
    except FileNotFoundError:
        return None
    held, _ = _held(spot.parent, hold)
    if held is not None and _sha(held) == was:
        os.unlink(hold, dir_fd=spot.parent)
        return None
    kept = held is not None and spot.keep(held)
    try:
        rename_noreplace_at(spot.parent, hold, spot.name)
    except FileExistsError:  # a newer one still: it stays
        _discard(spot.parent, hold, spot.name, recorded=kept)
    return LEFT_SAVED


def _held(parent: int, name: str) -> tuple[bytes | None, int]:
    """(bytes, inode) of the entry at `name`; bytes None unless history can keep it."""
    ino = _inode(parent, name)
    try:
        fd = open_regular(name, dir_fd=parent)
    except OSError:
        return None, ino
    try:
        data = read_fd(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    return (data if len(data) <= MAX_FILE_BYTES else None), ino


def _discard(parent: int, name: str, beside: str, *, recorded: bool) -> None:
    """Drop what a swap left at `name`: unlinked if recorded, a link or a device;
    else (too large for the history) kept visibly beside the file."""
    try:
        mode = os.lstat(name, dir_fd=parent).st_mode
    except FileNotFoundError:
        return
    if (recorded and stat.S_ISREG(mode)) or not (
        stat.S_ISREG(mode) or stat.S_ISDIR(mode)
    ):
        os.unlink(name, dir_fd=parent)  # a link or a device holds no memory
        return
    for number in range(1, 1000):
        try:
            rename_noreplace_at(parent, name, f"{beside}.before-restore-{number}")
            return
        except FileExistsError:
            continue


def _inode(parent: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False).st_ino
    except OSError:
        return -1


def _unlink_quietly(parent: int, name: str) -> None:
    try:  # noqa: SIM105 -- as memd.atomic
        os.unlink(name, dir_fd=parent)
    except OSError:
        pass


def _fsync(parent: int) -> None:
    try:  # noqa: SIM105
        os.fsync(parent)
    except OSError:
        pass


def recover(state_dir: str, history: History) -> Change | None:
    """Finish a restore a kill interrupted (see the module docstring); None if none."""
    journal_path = os.path.join(history_dir(state_dir), JOURNAL)
    try:
        raw = read_bytes(journal_path, MAX_JOURNAL_BYTES)
    except FileNotFoundError:
        return None
    try:
        journal = fastjson.loads(raw, max_depth=4)
    except ValueError:
        journal = None
    if not isinstance(journal, dict) or not isinstance(journal.get("memory_dir"), str):
        os.unlink(
            journal_path
        )  # torn it cannot be: written atomically; foreign: dropped
        return None
    return _apply(history, journal_path, journal)[0]
