"""Bring back one file, or a whole memory directory, as it was at a revision.

A restore holds the history write lock, records whatever was pending as
"edit", plans each file's action against the directory's recorded state,
and, unless it is a dry run, writes a journal (`<state_dir>/history/restore.json`:
the memory dir, the revision, and each file's sha before and after; shas
only, never contents) before it touches a file. Each file is then replaced
with `memd.atomic.write_atomic_beneath` or removed with `remove_beneath`, so
no write leaves the memory directory or follows a link, and the whole is
recorded as one change with cause "restore", after which the journal goes.

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
from memd.atomic import crash_point, remove_beneath, write_atomic, write_atomic_beneath
from memd.errors import MemdError
from memd.fsread import open_dir, read_beneath, read_bytes
from memd.history.lock import write_lock
from memd.history.notice import drop_notice
from memd.history.scan import MAX_FILE_BYTES
from memd.history.store import (
    RESTORE_JOURNAL,
    Change,
    History,
    history_dir,
    normalize_dir,
)
from memd.history.wording import CHANGED_SINCE, NOT_KEPT
from memd.relpath import relpath_refusal

JOURNAL = RESTORE_JOURNAL
MAX_JOURNAL_BYTES = 16 * 1024 * 1024
_MAX_DIFF_LINES = 20_000


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
    # a loss's files not touched: (relpath, why), `memd.history.wording`'s words
    left_alone: tuple[tuple[str, str], ...] = ()


def restore_file(
    state_dir: str, memory_dir: str, relpath: str, *, rev: int, dry_run: bool = False
) -> RestorePlan:
    """Bring back `relpath` as it was at `rev`, byte for byte (deleted or not)."""
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
    (`RestorePlan.left_alone`).
    """
    with History.open(state_dir) as history:
        loss = history.loss(loss_rev)
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
    rev: int,
    dry_run: bool,
    *,
    only: str | None,
    picks: dict[str, int] | None = None,
) -> RestorePlan:
    path = normalize_dir(memory_dir)
    with write_lock(state_dir), History.open(state_dir) as history:
        recover(state_dir, history)
        named = history.change(rev)
        if named is None or named.memory_dir != path:
            raise RestoreError(f"no revision {rev} in the history of {path}")
        history.record(path, cause="edit")
        before_rev = history.last_rev(path)
        target = history.tree_at(path, rev)
        current = history.recorded_tree(path)
        left_alone: tuple[tuple[str, str], ...] = ()
        if picks is not None:
            target, current, left_alone = _picked(history, path, rev, picks, current)
        elif only is not None:
            if only not in target:
                raise RestoreError(f"{only} did not exist at revision {rev}")
            target = {only: target[only]}
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
            left_alone=left_alone,
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
        change = _apply(history, journal_path, journal)
        return RestorePlan(
            memory_dir=path,
            rev=rev,
            steps=plan.steps,
            diff=diff,
            dry_run=False,
            change=change,
            before_rev=before_rev,
            left_alone=left_alone,
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


def _refuse_unsafe(memory_dir: str, relpaths: list[str]) -> None:
    """Refuse the whole restore, before any write, if a folder on the way is a link.

    Raises:
        RestoreError: naming the first path that cannot be written safely.
    """
    from memd.fsread import open_dir_beneath, split_beneath

    try:
        root = open_dir(memory_dir, follow=True)
    except FileNotFoundError:
        return  # made fresh: nothing on the way yet
    try:
        for rel in relpaths:
            parts = split_beneath(rel)
            try:
                os.close(open_dir_beneath(root, parts[:-1]))
            except FileNotFoundError:
                continue
            except OSError as error:
                raise RestoreError(
                    f"{rel}: {error.strerror or error}; nothing restored"
                ) from None
            try:
                if stat.S_ISDIR(os.lstat(rel, dir_fd=root).st_mode):
                    raise RestoreError(f"{rel} is a directory now; nothing restored")
            except FileNotFoundError:
                continue
    finally:
        os.close(root)


def _plan(
    target: dict[str, bytes], current: dict[str, bytes]
) -> list[tuple[str, str, bytes | None, bytes | None]]:
    """(relpath, action, sha after, sha before) for each file that differs."""
    steps = []
    for rel in sorted(set(target) | set(current)):
        after, before = target.get(rel), current.get(rel)
        if after == before or relpath_refusal(rel) is not None:
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
) -> Change | None:
    """Roll a journal forward, record it as one "restore" change, drop the journal."""
    path = str(journal["memory_dir"])
    os.makedirs(path, mode=0o700, exist_ok=True)
    root = open_dir(path, follow=True)
    failed: list[str] = []
    try:
        steps = journal.get("steps")
        for step in steps if isinstance(steps, list) else ():
            if not (
                isinstance(step, list) and len(step) == 3 and isinstance(step[0], str)
            ):
                continue
            rel, after, before = step
            if relpath_refusal(rel) is not None:
                continue
            on_disk = _sha_on_disk(root, rel)
            wanted = bytes.fromhex(after) if isinstance(after, str) else None
            was = bytes.fromhex(before) if isinstance(before, str) else None
            if on_disk == wanted or on_disk != was:
                continue  # done already, or edited since: left as it is
            data = None if wanted is None else history.content(wanted)
            if wanted is not None and data is None:
                continue  # purged meanwhile
            try:
                if data is None:
                    remove_beneath(root, rel, prune_empty=True)
                else:
                    write_atomic_beneath(root, rel, data, make_dirs=True)
            except OSError as error:  # swapped for a link since the check: left alone
                failed.append(f"{rel}: {error.strerror or error}")
    finally:
        os.close(root)
    note = str(journal.get("note") or f"to revision {journal.get('rev')}")
    if failed:
        note += "; not restored: " + ", ".join(failed)
    change = history.record(path, cause="restore", note=note)
    if change is not None and change.restored:  # a loss brought back: told no more
        with contextlib.suppress(OSError):
            state_dir = os.path.dirname(os.path.dirname(journal_path))
            drop_notice(state_dir, path, change.restored)
    crash_point()
    os.unlink(journal_path)
    crash_point()
    return change


def _sha_on_disk(root: int, relpath: str) -> bytes | None:
    try:
        return hashlib.sha256(read_beneath(root, relpath, MAX_FILE_BYTES)).digest()
    except FileNotFoundError:
        return None
    except OSError:
        return b"unreadable"  # matches no sha: the file is left alone


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
    return _apply(history, journal_path, journal)
