"""Fetch and merge: a file-level three-way merge written from objects only.

`memd.gitsync.merge` holds the pure conflict rules; here they meet git:
the merge commit, the union of each folder's index, and the commit on top
of a fetched tree that leaves out the entries git must never index.
"""

from __future__ import annotations

from memd.claude_code.terms import INDEX_NAME
from memd.gitsync.apply import apply_commit
from memd.gitsync.git import Git
from memd.gitsync.index_budget import fit_merged_index
from memd.gitsync.layout import Layout, whole_tree
from memd.gitsync.merge import (
    conflict_copy_path,
    conflict_copy_text,
    link_copies,
    merge_index,
)
from memd.gitsync.objects import (
    EMPTY_TREE,
    REMOTE,
    ZERO_OID,
    author_of,
    carried_entries,
    commit_message,
    commit_tree,
    index_info,
    is_ancestor,
    printable,
    read_blob,
    read_blobs,
    read_tree,
    store_blob,
    tree_of,
    write_tree,
)
from memd.gitsync.result import Merged

TYPE_CHECKING = False
if TYPE_CHECKING:
    pass


def fetch_and_merge(
    git: Git,
    branch: str,
    ref: str,
    merged: Merged,
    dirty: frozenset[str],
    layout: Layout | None = None,
) -> None:
    layout = layout or whole_tree(git.work_tree)
    tracking = f"refs/remotes/{REMOTE}/{branch}"
    done = git.run(
        "fetch",
        "--no-tags",
        "--quiet",
        REMOTE,
        f"+refs/heads/{branch}:{tracking}",
        check=False,
        is_network=True,
    )
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in detail.lower():
            return  # an empty remote: the push creates the branch
        git.run("fetch", "--no-tags", "--quiet", REMOTE, is_network=True)  # raises
        return
    theirs = git.rev(tracking)
    ours = git.rev(ref)
    if theirs is None or theirs == ours:
        return
    if ours is not None and is_ancestor(git, theirs, ours):
        return
    if layout.check_tree is not None:
        layout.check_tree(git, theirs)  # a tree that breaks the layout's own rule
    theirs = indexable(git, theirs, merged, layout)
    if ours is None or is_ancestor(git, ours, theirs):
        apply_commit(git, ours or ZERO_OID, theirs, ref, merged, dirty, layout)
        return
    commit = merge_commit(git, ours, theirs, merged, layout)
    apply_commit(git, ours, commit, ref, merged, dirty, layout)


def indexable(git: Git, theirs: str, merged: Merged, layout: Layout) -> str:
    """Return `theirs`, or a commit on it without the entries git must never index.

    Each odd entry (`read_tree`) is skipped and reported; the rest of the
    tree arrives. Every one git can index (a link, a `.gitattributes`, a
    name that is not UTF-8) travels on in the tree untouched
    (`carried_entries`), so the next push carries it back; only one git
    itself will not index (``..``, ``.git``) is left out of the commit.
    """
    clean, odd = read_tree(git, theirs)
    if not odd:
        return theirs
    merged.skipped.update((printable(p), why) for p, (_, _, why) in odd.items())
    tree = write_tree(
        git,
        EMPTY_TREE,
        ("--add", "-z", "--index-info"),
        index_info(clean | carried_entries(odd)),
    )
    if tree == git.text("rev-parse", f"{theirs}^{{tree}}"):
        return theirs
    lines = [f"- skipped {printable(p)!r}: {why}" for p, (_, _, why) in odd.items()]
    message = commit_message(f"{layout.label}: skip {len(odd)} entry(ies)", lines)
    return commit_tree(git, tree, (theirs,), message)


def merge_commit(
    git: Git, ours: str, theirs: str, merged: Merged, layout: Layout | None = None
) -> str:
    """Write the merge of `theirs` into `ours` as a commit (objects only)."""
    layout = layout or whole_tree(git.work_tree)
    base_done = git.run("merge-base", ours, theirs, check=False)
    base_oid = base_done.stdout.decode().strip() if base_done.returncode == 0 else None
    base = tree_of(git, base_oid)
    mine, odd_mine = read_tree(git, ours)
    other, odd_other = read_tree(git, theirs)
    result = dict(mine)
    notes: list[str] = []
    for relpath in sorted(set(base) | set(mine) | set(other)):
        if relpath in odd_other or relpath in odd_mine:
            continue  # skipped on one side: ours stays as it is
        b, o, t = base.get(relpath), mine.get(relpath), other.get(relpath)
        if o == t or t == b:
            continue  # same on both sides, or only we changed it
        if o == b:
            if t is None:
                result.pop(relpath, None)
            else:
                result[relpath] = t
            continue
        # Both sides changed it, and differently.
        if o is None or t is None:
            kept = t if t is not None else o
            if kept is not None:
                result[relpath] = kept
            merged.kept.append(relpath)
            notes.append(
                f"- kept {relpath} (deleted on one side, changed on the other)"
            )
            continue
        if layout.is_index(relpath):
            continue  # merged below, once the deletions are known
        if relpath in layout.unions:
            union = layout.unions[relpath](read_blob(git, o[1]), read_blob(git, t[1]))
            result[relpath] = (o[0], store_blob(git, union))
            continue
        if layout.first_wins and relpath.startswith(layout.first_wins):
            result[relpath] = t  # theirs reached the remote first
            continue
        author = author_of(git, theirs, relpath)
        copy = conflict_copy_path(relpath, author, frozenset(result) | frozenset(other))
        result[copy] = (
            "100644",
            store_blob(git, conflict_copy_text(relpath, read_blob(git, t[1]), author)),
        )
        merged.conflicts.append(copy)
        notes.append(f"- both changed {relpath}: theirs is {copy}")
    _merge_the_indexes(git, base, mine, other, result, merged, layout)
    # Odd entries git can index travel on untouched (theirs first), never
    # onto the disk (`indexable` dropped the rest).
    carried = {
        p: entry
        for p, entry in {
            **carried_entries(odd_mine),
            **carried_entries(odd_other),
        }.items()
        if p not in result
    }
    tree = write_tree(
        git, EMPTY_TREE, ("--add", "-z", "--index-info"), index_info(result | carried)
    )
    message = commit_message(f"{layout.label}: merge {theirs[:12]}", notes)
    return commit_tree(git, tree, (ours, theirs), message)


def _merge_the_indexes(
    git: Git,
    base: dict[str, tuple[str, str]],
    mine: dict[str, tuple[str, str]],
    other: dict[str, tuple[str, str]],
    result: dict[str, tuple[str, str]],
    merged: Merged,
    layout: Layout,
) -> None:
    """Union each MEMORY.md both sides changed, and link this merge's copies."""
    copies_by_folder: dict[str, list[tuple[str, str, str]]] = {}
    for copy in merged.conflicts:
        folder = layout.folder_of(copy)
        if copy in result and folder is not None:
            rest = copy[len(folder) :]
            copies_by_folder.setdefault(folder, []).append(
                (_original_of(rest), rest, _author_in(rest))
            )
    indexes = {p for p in set(base) | set(mine) | set(other) if layout.is_index(p)}
    indexes |= {folder + INDEX_NAME for folder in copies_by_folder}
    for index in sorted(indexes):
        folder = index[: -len(INDEX_NAME)]
        b, o, t = base.get(index), mine.get(index), other.get(index)
        text = (
            read_blob(git, result[index][1]).decode("utf-8", "replace")
            if index in result
            else ""
        )
        both = o is not None and t is not None and o != t and b not in (o, t)
        if both and o is not None and t is not None:
            deleted = frozenset(
                p[len(folder) :]
                for p in base
                if p not in result and layout.folder_of(p) == folder
            )
            text = merge_index(
                read_blob(git, o[1]).decode("utf-8", "replace"),
                read_blob(git, t[1]).decode("utf-8", "replace"),
                deleted=deleted,
            )
        copies = tuple(copies_by_folder.get(folder, ()))
        if copies:
            text = link_copies(text, copies)
        if copies or both:
            # After the copies' entries: they too must land within the cut.
            placed = layout.place(index)
            text = fit_merged_index(
                text,
                folder,
                result,
                read_blobs=lambda oids: read_blobs(git, oids),
                store_blob=lambda data: store_blob(git, data),
                local_root=placed[0] if placed else None,
            )
            result[index] = ("100644", store_blob(git, text.encode("utf-8")))


def _original_of(copy: str) -> str:
    head, _, name = copy.rpartition("/")
    stem = name.split(".from-", 1)[0]
    return f"{head}/{stem}.md" if head else f"{stem}.md"


def _author_in(copy: str) -> str:
    return copy.rsplit(".from-", 1)[1].removesuffix(".md")
