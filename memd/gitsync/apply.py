"""Writing a commit into the tree, behind a journal, and finishing a killed one.

The live tree is only ever changed by `write_atomic_beneath` (or an unlink)
one file at a time, after ``.git/memd/apply`` names the move (old, new);
`recover` finishes a move a killed sync left. A file whose local edit was
not committed is never overwritten: theirs goes beside it as a conflict
copy. `check_deletions` stops a sync before it deletes many files.
"""

from __future__ import annotations

import contextlib
import os

from memd.atomic import remove_beneath, write_atomic, write_atomic_beneath
from memd.claude_code.terms import INDEX_NAME
from memd.errors import MemdError
from memd.gitsync.git import Git
from memd.gitsync.layout import Layout, whole_tree
from memd.gitsync.merge import (
    conflict_copy_path,
    conflict_copy_text,
    link_copies,
    merge_index,
)
from memd.gitsync.objects import (
    AGREED_TRAILER,
    MEMD_DIR,
    ZERO_OID,
    author_of,
    blob_oid,
    object_format,
    read_blob,
    read_blobs,
    read_tree,
    reset_index,
    tree_of,
)
from memd.gitsync.result import Merged

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping


MAX_LOCAL_INDEX_BYTES = 4 * 1024 * 1024  # read cap for a held-back MEMORY.md


# A sync deletes at most this many files unasked, and never most of a folder.
MAX_UNASKED_DELETES = 3


MAX_AGREED_COMMITS = 100


class DeletionRefusedError(MemdError):
    """A sync would delete more files than `check_deletions` lets go unasked."""


def check_deletions(
    deleted: Mapping[str, list[str]],
    totals: Mapping[str, int],
    *,
    merged: Merged,
    direction: str,
    command: str,
) -> None:
    """Stop a sync that would delete many files, or most of one memory folder.

    `deleted` maps each folder to the paths the sync would delete in it,
    `totals` each folder to its file count before. More than
    `MAX_UNASKED_DELETES` in all, or two or more that are over half of a
    folder, stop the sync before anything is written, unless the user
    passed ``--allow-deletes``; `direction` says where ("here", "on the
    remote") and `command` what to run.

    Raises:
        DeletionRefusedError: the sync must ask first; the message names the flag.
    """
    if merged.allow_deletes:
        return
    count = sum(len(paths) for paths in deleted.values())
    most = [
        folder
        for folder, paths in deleted.items()
        if len(paths) >= 2 and 2 * len(paths) > totals.get(folder, 0)
    ]
    if count <= MAX_UNASKED_DELETES and not most:
        return
    names = sorted(p for paths in deleted.values() for p in paths)
    shown = ", ".join(names[:3]) + (
        f" and {len(names) - 3} more" if len(names) > 3 else ""
    )
    raise DeletionRefusedError(
        f"sync stopped before deleting {count} file(s) {direction} ({shown}); "
        f"nothing was changed. If they should go, run `{command} --allow-deletes`"
    )


def journal_path(git: Git) -> str:
    return os.path.join(git.git_dir, MEMD_DIR, "apply")


def recover(git: Git, ref: str, merged: Merged, layout: Layout | None = None) -> None:
    """Finish a merge a killed sync was writing, then make git's index match HEAD."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(git.git_dir, "index.lock"))
    for name in ("commit-index", "commit-index.lock"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(git.git_dir, MEMD_DIR, name))
    try:
        from memd.fsread import read_bytes

        old, new = read_bytes(journal_path(git), 4096).decode("ascii").split()[:2]
    except (FileNotFoundError, ValueError):
        pass
    else:
        head = git.rev(ref) or ZERO_OID
        if head == old:
            apply_commit(git, old, new, ref, merged, frozenset(), layout, guard=False)
        elif head == new:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(journal_path(git))
    reset_index(git, ref)


def apply_commit(
    git: Git,
    old: str,
    new: str,
    ref: str,
    merged: Merged,
    dirty: frozenset[str],
    layout: Layout | None = None,
    *,
    guard: bool = True,
) -> None:
    """Write `new`'s files over `old`'s in the tree, then move `ref` to `new`.

    Idempotent, so a killed run is finished by `recover`: a file already
    equal to `new`'s version is left as it is. A file whose content is
    neither `old`'s nor `new`'s holds a local edit that was not committed;
    it stays, and the incoming version goes beside it as a conflict copy.
    With `guard`, deletions past `check_deletions` stop it before the
    journal is written (a journal names work already agreed to).
    """
    layout = layout or whole_tree(git.work_tree)
    journal = journal_path(git)
    before = None if old == ZERO_OID else old
    if guard:
        _check_incoming_deletions(git, before, new, merged, layout)
    write_atomic(journal, f"{old} {new}\n".encode("ascii"))
    write_changes(git, before, new, merged, dirty, layout)
    git.run("update-ref", ref, new, old)
    reset_index(git, ref)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal)


def _check_incoming_deletions(
    git: Git, old: str | None, new: str, merged: Merged, layout: Layout
) -> None:
    """Stop before a merge deletes many local files (`check_deletions`)."""
    before = tree_of(git, old)
    after, odd = read_tree(git, new)
    deleted: dict[str, list[str]] = {}
    totals: dict[str, int] = {}
    for relpath in before:
        placed = layout.place(relpath)
        if placed is None:
            continue
        folder = relpath[: len(relpath) - len(placed[1])]
        totals[folder] = totals.get(folder, 0) + 1
        if relpath not in after and relpath not in odd:
            deleted.setdefault(folder, []).append(relpath)
    if deleted and old is not None:
        agreed = _agreed_deletions(git, old, new)
        deleted = {
            folder: kept
            for folder, paths in deleted.items()
            if (kept := [p for p in paths if p not in agreed])
        }
    check_deletions(
        deleted, totals, merged=merged, direction="here", command=layout.label
    )


def _agreed_deletions(git: Git, old: str, new: str) -> frozenset[str]:
    """Return the paths deleted in `old..new` by commits a person agreed to."""
    commits = git.text(
        "rev-list", "--no-merges", f"--grep=^{AGREED_TRAILER}$", f"{old}..{new}"
    ).split()
    agreed: set[str] = set()
    for commit in commits[:MAX_AGREED_COMMITS]:
        out = git.run(
            "diff-tree",
            "-r",
            "-z",
            "--no-commit-id",
            "--name-only",
            "--diff-filter=D",
            commit,
        ).stdout
        agreed.update(
            p for p in out.decode("utf-8", "surrogateescape").split("\0") if p
        )
    return frozenset(agreed)


def write_changes(
    git: Git,
    old: str | None,
    new: str,
    merged: Merged,
    dirty: frozenset[str],
    layout: Layout,
) -> None:
    """Write the placed files that differ between commits `old` and `new` locally.

    With `old` None every placed file of `new` is written: how a project
    first seen on this machine receives its memory (a local file that
    differs stays, and theirs goes beside it).

    Recorded in memory history as "team-sync" or "sync" (`_recorded`).
    """
    with _recorded(git, layout):
        before = tree_of(git, old)
        after, odd = read_tree(git, new)
        changed = sorted(
            p
            for p in set(before) | set(after)
            if before.get(p) != after.get(p)
            and p not in odd  # skipped: what is here stays as it is
            and layout.place(p) is not None
        )
        current = _worktree_blobs(git, changed, layout)
        # One read for every incoming file this apply may write.
        incoming_blobs = read_blobs(
            git,
            {
                after[p][1]
                for p in changed
                if p in after and current.get(p) != after[p][1]
            },
        )
        copies: dict[str, list[tuple[str, str, str]]] = {}
        taken = frozenset(after) | frozenset(current)
        for relpath in changed:
            placed = layout.place(relpath)
            if placed is None:
                continue
            root, rest = placed
            folder = relpath[: len(relpath) - len(rest)]
            old_entry, new_entry = before.get(relpath), after.get(relpath)
            have = current.get(relpath)
            want = new_entry[1] if new_entry else None
            if have == want:
                continue
            is_clean = have == (old_entry[1] if old_entry else None)
            if is_clean and relpath not in dirty:
                _write_or_remove(root, rest, incoming_blobs[want] if want else None)
                if want is None:
                    merged.deleted.append(os.path.join(root, rest))
            elif (
                layout.is_index(relpath) and new_entry is not None and have is not None
            ):
                # A held-back local index (say, over budget) takes the incoming
                # entries in: the union loses neither side's lines.
                local = (_read_local(root, rest) or b"").decode("utf-8", "replace")
                incoming = read_blob(git, new_entry[1]).decode("utf-8", "replace")
                gone = frozenset(
                    p[len(folder) :]
                    for p in before
                    if p not in after and layout.folder_of(p) == folder
                )
                union = merge_index(local, incoming, deleted=gone)
                if union != local:
                    _write_local_index(root, rest, union)
            elif new_entry is not None and relpath.endswith(".md"):
                author = author_of(git, new, relpath)
                copy = conflict_copy_path(relpath, author, taken)
                taken |= {copy}
                data = conflict_copy_text(relpath, read_blob(git, new_entry[1]), author)
                _write_or_remove(root, copy[len(folder) :], data)
                copies.setdefault(folder, []).append(
                    (rest, copy[len(folder) :], author)
                )
                merged.conflicts.append(copy)
        for folder, folder_copies in copies.items():
            index = folder + INDEX_NAME
            placed = layout.place(index)
            if placed is None:
                continue
            index_entry = after.get(index)
            have_index = current.get(index, _blob_id_of(git, placed))
            if index not in dirty and have_index in (
                (before.get(index) or ("", None))[1],
                index_entry[1] if index_entry else None,
            ):
                text = (
                    read_blob(git, index_entry[1]).decode("utf-8", "replace")
                    if index_entry
                    else ""
                )
                _write_local_index(
                    placed[0], placed[1], link_copies(text, tuple(folder_copies))
                )


def _write_local_index(root: str, rest: str, text: str) -> None:
    """Write a merged index below `root`, compacted when it would pass the cut.

    The entries a local merge adds (a held-back index's union, conflict
    copies) go through the same budget as the merge commit's
    (`memd.lint.compact.place_entries`), with the topic files on this disk.
    """
    from memd.lint.compact import needs_compaction, place_entries
    from memd.lint.fix_files import read_topics
    from memd.lint.fixes import compaction_edits

    folder = os.path.dirname(rest)
    if needs_compaction(text):
        topics = read_topics(os.path.join(root, folder))
        compaction = place_entries(text, [], topics).compaction
        if compaction is not None:
            edits = compaction_edits(compaction, None, "sync", topics.raw)
            for edit in edits:
                data = None if edit.is_removal else edit.new
                _write_or_remove(root, os.path.join(folder, edit.relpath), data)
            return
    _write_or_remove(root, rest, text.encode("utf-8"))


@contextlib.contextmanager
def _recorded(git: Git, layout: Layout) -> Iterator[None]:
    """Record what is written inside as "team-sync" or "sync" in memory history.

    A team sync owns its `team/` folder, so only what lands there is its
    change; personal sync writes whole memory dirs (memd.history.record).
    """
    from memd.history.record import recording_dirs

    is_team = layout.label == whole_tree(git.work_tree).label
    cause = "team-sync" if is_team else "sync"
    with recording_dirs(layout.roots.values(), cause=cause) as recorder:
        if is_team:
            recorder.wrote(os.path.join(git.work_tree, ""))
        yield


def _blob_id_of(git: Git, placed: tuple[str, str]) -> str | None:
    """Return the blob id of a placed file as it is on disk (None when absent)."""
    root, rest = placed
    return _worktree_blobs(git, [rest], whole_tree(root)).get(rest)


def _read_local(root: str, relpath: str) -> bytes | None:
    """Return a regular file's bytes (no symlink at any component), or None."""
    from memd.fsread import read_beneath

    try:
        with open_root(root) as root_fd:
            return read_beneath(root_fd, relpath, MAX_LOCAL_INDEX_BYTES)
    except OSError:  # missing, a symlink on the way, a FIFO, unreadable, too big
        return None


def _worktree_blobs(
    git: Git, relpaths: list[str], layout: Layout | None = None
) -> dict[str, str]:
    """Return relpath -> blob id of the regular files among `relpaths` on disk.

    Each file is read below its folder's descriptor (`read_beneath`), never
    through a link, and hashed here as git hashes a blob: git's own
    ``hash-object --stdin-paths`` opens paths by name.
    """
    from memd.fsread import DEFAULT_LIMIT, read_beneath

    layout = layout or whole_tree(git.work_tree)
    algorithm = object_format(git)
    blobs: dict[str, str] = {}
    by_root: dict[str, list[tuple[str, str]]] = {}
    for relpath in relpaths:
        placed = layout.place(relpath)
        if placed is not None:
            by_root.setdefault(placed[0], []).append((relpath, placed[1]))
    for root, members in by_root.items():
        try:
            fd_context = open_root(root)
            root_fd = fd_context.__enter__()
        except OSError:
            continue  # the folder is not there (yet): nothing in it
        try:
            for relpath, rest in members:
                try:
                    data = read_beneath(root_fd, rest, DEFAULT_LIMIT)
                except OSError:
                    continue  # missing, a link on the way, not a regular file
                blobs[relpath] = blob_oid(data, algorithm)
        finally:
            fd_context.__exit__(None, None, None)
    return blobs


@contextlib.contextmanager
def open_root(root: str) -> Iterator[int]:
    """Yield a folder's descriptor: every tree read and write is below it."""
    from memd.fsread import open_dir

    fd = open_dir(root, follow=True)  # the memory dir above may be a link
    try:
        yield fd
    finally:
        os.close(fd)


def _write_or_remove(root: str, relpath: str, data: bytes | None) -> None:
    """Replace (or delete) one file below `root`; no symlink on the way.

    Every component is opened relative to its parent's descriptor with
    `O_NOFOLLOW` (`memd.atomic.write_atomic_beneath`), so a folder swapped for
    a link mid-sync fails the write instead of carrying it out of the folder.
    """
    with open_root(root) as root_fd:
        if data is None:
            remove_beneath(root_fd, relpath, prune_empty=True)
        else:
            write_atomic_beneath(root_fd, relpath, data, make_dirs=True)
