"""One team sync: memory/team/ as the working tree of a remote, by the git engine.

`memd.gitsync` does the work (`locked_sync`: recover, commit, fetch, merge,
push, retry; see docs/team.md); this module is team's own part: the whole
team dir is one memory folder (`memd.gitsync.layout.whole_tree`), and its
commit step walks the team dir (`memd.gitsync.scan.scan_folder`), leaves out
what may not travel (a lint error, a likely secret in the exact bytes, a
link, a non-Markdown file), and commits the rest from objects only. Git's
index and the working tree are never read by git, so no attribute, filter
or hook of the tree ever runs.

An unreachable remote is a result (``offline``), never a crash: the local
commit is kept and the next attempt is put off with exponential backoff.
"""

from __future__ import annotations

import os

from memd.claude_code.terms import INDEX_NAME
from memd.errors import UsageError
from memd.gitsync.apply import check_deletions
from memd.gitsync.git import Git
from memd.gitsync.layout import whole_tree
from memd.gitsync.loop import Committed, locked_sync
from memd.gitsync.objects import (
    EMPTY_TREE,
    ZERO_OID,
    blob_oid,
    commit_message,
    commit_tree,
    object_format,
    printable,
    read_tree,
    reset_index,
    store_blobs,
    write_tree,
)
from memd.gitsync.repo import is_repo
from memd.gitsync.result import Merged, SyncResult
from memd.gitsync.scan import index_to_commit, scan_folder, secret_refusal
from memd.relpath import relpath_refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from structlog.typing import FilteringBoundLogger

MAX_TEAM_FILE_BYTES = 16 * 1024 * 1024  # a bigger team file is left out, reported


def sync_team(
    team_dir: str,
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
    lint_errors: Callable[[str], Mapping[str, str]] | None = None,
    is_dream_running: Callable[[str], bool] | None = None,
    secret_allow: frozenset[str] = frozenset(),
    allow_deletes: bool = False,
) -> SyncResult:
    """Run one sync of `team_dir` and return what happened; never raises for git.

    `lint_errors(team_dir)` maps each relpath with lint errors to its first
    message; those files stay out of the commit (default:
    `memd.gitsync.lintgate.lint_errors` with the default severities).
    `is_dream_running(memory_dir)` (default: `memd.locks.is_dream_running`)
    makes the sync step aside while a dream holds the directory. The bytes
    of each file are scanned for secrets as they are committed
    (`secret_allow`: fingerprints let through); `allow_deletes` lets a sync
    delete more than `check_deletions` allows unasked.

    Raises:
        UsageError: `team_dir` is not a memd team repository.
    """
    if not is_repo(team_dir):
        raise UsageError(f"{team_dir}: not a team repository (run `memd team init`)")
    from memd.gitsync.lintgate import lint_errors as default_lint
    from memd.locks import is_dream_running as dream_holds

    memory_dir = os.path.dirname(os.path.normpath(team_dir))
    if (is_dream_running or dream_holds)(memory_dir):
        log.info("team_sync_skipped", team_dir=team_dir, why="dream_running")
        return SyncResult(
            team_dir=team_dir, state="skipped", error="a dream is running"
        )
    merged = Merged(allow_deletes=allow_deletes)
    errors = lint_errors or default_lint
    result = locked_sync(
        team_dir,
        branch=branch,
        timeout_seconds=timeout_seconds,
        log=log,
        event="team",
        merged=merged,
        layout=lambda git, ref: whole_tree(team_dir),
        commit=lambda git, ref: _commit_local(
            git, ref, errors(team_dir), merged, secret_allow
        ),
        fields={"team_dir": team_dir},
    )
    if result is None:
        return SyncResult(
            team_dir=team_dir, state="skipped", error="another sync is running"
        )
    return result


def _team_refusal(relpath: str) -> str | None:
    why = relpath_refusal(relpath)
    if why is not None:
        return f"unsafe path ({why})"
    if not relpath.endswith(".md"):
        return "not a Markdown file"
    return None


def _commit_local(
    git: Git,
    ref: str,
    errors: Mapping[str, str],
    merged: Merged,
    secret_allow: frozenset[str],
) -> Committed:
    """Commit every changed file that may travel; say what went and what stayed out.

    The team dir is walked by memd (`scan_folder`), never by git: git opens
    no working-tree file, so no attribute, filter or hook of the tree ever
    runs. The bytes read are scanned for secrets and are what is stored.
    """
    head = git.rev(ref)
    tree, odd = read_tree(git, head)
    algorithm = object_format(git)
    scan = scan_folder(
        git.work_tree,
        max_file_bytes=MAX_TEAM_FILE_BYTES,
        refusal=_team_refusal,
    )
    updates: list[str] = []
    lines: list[str] = []
    chosen: list[str] = []
    left_out: list[tuple[str, str]] = []
    to_store: dict[str, bytes] = {}
    going: dict[str, bytes] = {}
    going_out: set[str] = set()  # kept out: an incoming version goes beside it
    deleted: list[str] = []
    for relpath, data in sorted(scan.files.items()):
        if relpath in odd:
            continue  # a remote entry memd never writes; not ours to change
        entry = tree.get(relpath)
        oid = blob_oid(data, algorithm) if isinstance(data, bytes) else None
        if oid is not None and entry is not None and entry[1] == oid:
            continue
        why = data if isinstance(data, str) else None
        if why is None and isinstance(data, bytes):
            why = secret_refusal(data, secret_allow)
        if why is None and relpath in errors:
            why = f"lint error: {errors[relpath]}"
        if why is not None or oid is None or not isinstance(data, bytes):
            left_out.append((printable(relpath), why or "left out"))
            going_out.add(relpath)
            continue
        going[relpath] = data
    held_back = frozenset(p for p, _ in left_out) - tree.keys()
    for relpath, data in going.items():
        if relpath == INDEX_NAME:
            data = index_to_commit(data, held_back)
        oid = blob_oid(data, algorithm)
        to_store[oid] = data
        updates.append(f"100644 {oid}\t{relpath}\0")
        lines.append(f"- {'changed' if relpath in tree else 'added'} {relpath}")
        chosen.append(relpath)
    for relpath in sorted(tree):
        if relpath not in scan.files:
            if scan.is_gone(relpath):
                deleted.append(relpath)
            else:
                merged.not_seen.append(relpath)
    check_deletions(
        {"": deleted},
        {"": len(tree)},
        merged=merged,
        direction="on the remote",
        command="memd team sync",
    )
    for relpath in deleted:
        updates.append(f"0 {ZERO_OID}\t{relpath}\0")
        lines.append(f"- deleted {relpath}")
        chosen.append(relpath)
    kept_out = Committed(left_out=tuple(left_out), dirty=frozenset(going_out))
    if not updates:
        return kept_out
    store_blobs(git, to_store)
    new_tree = write_tree(
        git,
        head or EMPTY_TREE,
        ("-z", "--index-info"),
        "".join(updates).encode("utf-8", "surrogateescape"),
    )
    if head is not None and new_tree == git.text("rev-parse", f"{head}^{{tree}}"):
        return kept_out
    message = commit_message(
        f"memd team sync: {len(chosen)} file(s)",
        lines,
        agreed=bool(deleted) and merged.allow_deletes,
    )
    commit = commit_tree(git, new_tree, (head,) if head else (), message)
    git.run("update-ref", ref, commit, head or ZERO_OID)
    reset_index(git, ref)
    return Committed(tuple(chosen), tuple(left_out), frozenset(going_out))
