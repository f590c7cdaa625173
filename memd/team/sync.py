"""One team sync: commit what lints, fetch, merge by memd's rules, push, retry.

The live working tree is only ever changed by `write_atomic` (or an unlink),
one file at a time, and git's own index and refs only by git's lock-and-rename,
so a sync killed at any instant leaves every file old or new, never torn:

1. **Recover.** A journal (``.git/memd/apply``) names the merge being
   written into the tree; if it is there, finish it first. Reset git's index
   to HEAD (the tree is left alone) and drop a stale ``index.lock``: memd
   holds ``.git/memd/sync.lock``, so no other sync is writing.
2. **Commit.** Each changed path is a candidate. Symlinks, non-regular files,
   hidden files, non-Markdown files and files with lint errors are left out
   and reported; the rest go into one commit (built in a private index) whose
   message lists them.
3. **Fetch and merge.** A file-level three-way merge of HEAD and the remote
   branch (`memd.team.merge` decides conflicts), written as a merge commit
   from objects only; then the journal, then the tree, then the branch ref.
   A file whose local edit was left out of the commit is never overwritten:
   the incoming version is written beside it as a conflict copy.
4. **Push**, and after a rejected push fetch, merge and push again.

An unreachable remote is a result (``offline``), never a crash: the local
commit is kept and the next attempt is put off with exponential backoff.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from dataclasses import dataclass, field

from memd.agent.terms import INDEX_NAME
from memd.atomic import (
    TEMP_PREFIX,
    remove_beneath,
    write_atomic,
    write_atomic_beneath,
)
from memd.errors import MemdError, UsageError
from memd.relpath import relpath_refusal
from memd.team.git import Git, GitError, redact
from memd.team.merge import (
    conflict_copy_path,
    conflict_copy_text,
    link_copies,
    merge_index,
    without_links_to,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from typing import Any

    from structlog.typing import FilteringBoundLogger

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_OID = "0" * 40
REMOTE = "origin"
MEMD_DIR = "memd"  # inside .git: marker, lock, journal, private index
PUSH_ATTEMPTS = 5
MAX_LOCAL_INDEX_BYTES = 4 * 1024 * 1024  # read cap for a held-back MEMORY.md
MAX_TEAM_FILE_BYTES = 16 * 1024 * 1024  # a bigger team file is left out, reported
# What git says when a push lost the race to another member's push.
_REJECTED = ("[rejected]", "non-fast-forward", "fetch first", "failed to update ref")


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncResult:
    """What one sync did; `state` is synced, offline, skipped or failed."""

    team_dir: str
    state: str
    committed: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()  # (relpath, why)
    conflicts: tuple[str, ...] = ()  # conflict copies written by this sync
    kept: tuple[str, ...] = ()  # delete/modify: the changed side was kept
    deleted: tuple[str, ...] = ()  # local files removed because the remote removed them
    not_seen: tuple[str, ...] = ()  # kept on the remote: the scan did not reach them
    skipped: tuple[tuple[str, str], ...] = ()  # remote entries never written here
    pushed: bool = False
    push_retries: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.state in ("synced", "skipped")

    def to_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "committed": list(self.committed),
            "left_out": [list(item) for item in self.left_out],
            "conflicts": list(self.conflicts),
            "kept": list(self.kept),
            "deleted": list(self.deleted),
            "not_seen": list(self.not_seen),
            "skipped": [list(item) for item in self.skipped],
            "pushed": self.pushed,
            "push_retries": self.push_retries,
            "error": self.error,
        }


@dataclass(slots=True)
class _Merged:
    """What merging the remote into HEAD changed (accumulated across push retries)."""

    conflicts: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    not_seen: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # remote relpath -> why
    allow_deletes: bool = False  # `--allow-deletes`: no stop before many deletions


class DeletionRefusedError(MemdError):
    """A sync would delete more files than `check_deletions` lets go unasked."""


# A sync deletes at most this many files unasked, and never most of a folder.
MAX_UNASKED_DELETES = 3
# The trailer of a commit whose deletions a person agreed to (`--allow-deletes`):
# another machine takes those deletions in without asking again.
AGREED_TRAILER = "Memd-Allow-Deletes: yes"
MAX_AGREED_COMMITS = 100


def check_deletions(
    deleted: Mapping[str, list[str]],
    totals: Mapping[str, int],
    *,
    merged: _Merged,
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


def is_team_repo(team_dir: str) -> bool:
    """Return True when `team_dir` is a working tree `memd team init` made."""
    git_dir = os.path.join(team_dir, ".git")
    try:
        is_dir = stat.S_ISDIR(os.lstat(git_dir).st_mode)
    except OSError:
        return False
    return is_dir and os.path.isdir(os.path.join(git_dir, MEMD_DIR))


# -- setup -----------------------------------------------------------------------


def init_team(
    team_dir: str,
    remote_url: str,
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
) -> None:
    """Make `team_dir` a working tree of `remote_url` (idempotent for the same URL).

    The first `sync_team` then clones (the remote has history) or pushes
    (it has none): both are a merge with an empty side. The repository is
    built under a temp name and renamed to ``.git`` only once git has reached
    the remote (``ls-remote``), so an init that fails (a refused or
    unreachable URL, a timeout, a kill) leaves no ``.git`` behind and the
    next init starts afresh.

    Raises:
        UsageError: `team_dir` already belongs to another repository, or its
            `.git` is not a plain directory.
        GitError: the URL is refused (`memd.team.git.check_remote_url`) or
            git failed; `team_dir` is then as it was.
    """
    from memd.team.git import check_remote_url

    git_dir = os.path.join(team_dir, ".git")
    if os.path.lexists(git_dir):
        if not is_team_repo(team_dir):
            raise UsageError(
                f"{team_dir}: already has a .git that memd did not make; "
                "move it away or use that repository directly"
            )
        git = Git(team_dir, timeout_seconds)
        current = git.text("config", "--get", f"remote.{REMOTE}.url", check=False)
        if current != remote_url:
            raise UsageError(
                f"{team_dir}: already syncs with {redact(current)}; "
                "remove its .git to change the remote"
            )
        return
    check_remote_url(remote_url)
    made = _missing_dirs(team_dir)
    os.makedirs(team_dir, mode=0o700, exist_ok=True)
    building = f"{TEMP_PREFIX}git-{os.urandom(6).hex()}"
    git = Git(team_dir, timeout_seconds, dot_git=building)
    try:
        git.run("init", "-q", f"--initial-branch={branch}")
        git.run("remote", "add", "--", REMOTE, remote_url)
        git.run("ls-remote", "--heads", "--", REMOTE, is_network=True)
        info = os.path.join(git.git_dir, "info")
        os.makedirs(info, exist_ok=True)
        exclude = os.path.join(info, "exclude")
        with open(exclude, "a", encoding="utf-8") as f:
            f.write(".memd-tmp-*\n.consolidate-lock\n")  # write_atomic's temp files
        os.makedirs(os.path.join(git.git_dir, MEMD_DIR), mode=0o700, exist_ok=True)
        # `init` under another name records the work tree; memd always names it.
        git.run("config", "--local", "--unset", "core.worktree", check=False)
        os.rename(git.git_dir, git_dir)
    except BaseException:
        import shutil

        shutil.rmtree(git.git_dir, ignore_errors=True)
        for directory in made:  # deepest first; rmdir takes only an empty one
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        raise
    log.info("team_initialised", team_dir=team_dir, remote=redact(remote_url))


def _missing_dirs(path: str) -> list[str]:
    """Return `path` and its ancestors that do not exist yet, deepest first."""
    missing = []
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


# -- the sync --------------------------------------------------------------------


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
    `memd.team.conflicts.lint_errors` with the default severities).
    `is_dream_running(memory_dir)` (default: `memd.locks.is_dream_running`)
    makes the sync step aside while a dream holds the directory. The bytes
    of each file are scanned for secrets as they are committed
    (`secret_allow`: fingerprints let through); `allow_deletes` lets a sync
    delete more than `check_deletions` allows unasked.

    Raises:
        UsageError: `team_dir` is not a memd team repository.
    """
    if not is_team_repo(team_dir):
        raise UsageError(f"{team_dir}: not a team repository (run `memd team init`)")
    from memd.locks import is_dream_running as dream_holds
    from memd.team.conflicts import lint_errors as default_lint

    memory_dir = os.path.dirname(os.path.normpath(team_dir))
    if (is_dream_running or dream_holds)(memory_dir):
        log.info("team_sync_skipped", team_dir=team_dir, why="dream_running")
        return SyncResult(
            team_dir=team_dir, state="skipped", error="a dream is running"
        )
    lock_fd = _try_lock(os.path.join(team_dir, ".git", MEMD_DIR, "sync.lock"))
    if lock_fd is None:
        return SyncResult(
            team_dir=team_dir, state="skipped", error="another sync is running"
        )
    git = Git(team_dir, timeout_seconds, lock_fd=lock_fd)
    try:
        return _sync_locked(
            git,
            branch,
            log,
            lint_errors or default_lint,
            _Merged(allow_deletes=allow_deletes),
            secret_allow,
        )
    finally:
        os.close(lock_fd)


def _try_lock(path: str) -> int | None:
    from memd.fsread import open_regular

    fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _sync_locked(
    git: Git,
    branch: str,
    log: FilteringBoundLogger,
    lint_errors: Callable[[str], Mapping[str, str]],
    merged: _Merged,
    secret_allow: frozenset[str],
) -> SyncResult:
    team_dir = git.work_tree
    ref = f"refs/heads/{branch}"
    committed: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()
    retries = 0
    failure: Exception | None = None
    try:
        git.check_local_config()
        _recover(git, ref, merged)
        committed, left_out = _commit_local(
            git, ref, lint_errors(team_dir), merged, secret_allow
        )
        for attempt in range(PUSH_ATTEMPTS):
            retries = attempt
            _fetch_and_merge(
                git, branch, ref, merged, frozenset(p for p, _ in left_out)
            )
            if _push(git, branch, ref):
                break
            log.info("team_push_rejected", team_dir=team_dir, attempt=attempt + 1)
        else:
            raise GitError(f"push still rejected after {PUSH_ATTEMPTS} merges")
    except (GitError, MemdError, OSError) as error:
        failure = error
    return sync_outcome(
        team_dir,
        merged,
        committed=committed,
        left_out=left_out,
        log=log,
        event="team",
        error=failure,
        retries=retries,
        team_dir=team_dir,
    )


def sync_outcome(
    where: str,
    merged: _Merged,
    *,
    committed: tuple[str, ...],
    left_out: tuple[tuple[str, str], ...],
    log: FilteringBoundLogger,
    event: str,
    error: Exception | None = None,
    retries: int = 0,
    **fields: object,
) -> SyncResult:
    """Return the result of a sync of `where` that finished or stopped on `error`.

    It is logged once, with `fields`. An unreachable remote is ``offline``
    (the commit is kept, the next try backs off), any other error ``failed``;
    `event` prefixes the log events (``team_synced``, ``team_sync_offline``,
    ``team_sync_failed``).
    """
    if error is not None:
        is_network = isinstance(error, GitError) and error.is_network
        state = "offline" if is_network else "failed"
        log.warning(f"{event}_sync_{state}", **fields, error=redact(str(error)))
        return SyncResult(
            team_dir=where,
            state=state,
            committed=committed,
            left_out=left_out,
            **_merged_fields(merged),
            error=redact(str(error)),
        )
    log.info(
        f"{event}_synced",
        **fields,
        committed=len(committed),
        left_out=[p for p, _ in left_out],
        conflicts=list(merged.conflicts),
        deleted=len(merged.deleted),
        not_seen=len(merged.not_seen),
        skipped=sorted(merged.skipped),
        push_retries=retries,
    )
    return SyncResult(
        team_dir=where,
        state="synced",
        committed=committed,
        left_out=left_out,
        **_merged_fields(merged),
        pushed=True,
        push_retries=retries,
    )


def _merged_fields(merged: _Merged) -> dict[str, Any]:
    return {
        "conflicts": tuple(merged.conflicts),
        "kept": tuple(merged.kept),
        "deleted": tuple(dict.fromkeys(merged.deleted)),
        "not_seen": tuple(dict.fromkeys(merged.not_seen)),
        "skipped": tuple(sorted(merged.skipped.items())),
    }


# -- 1. recover ------------------------------------------------------------------


def _journal_path(git: Git) -> str:
    return os.path.join(git.git_dir, MEMD_DIR, "apply")


def _recover(git: Git, ref: str, merged: _Merged, layout: Layout | None = None) -> None:
    """Finish a merge a killed sync was writing, then make git's index match HEAD."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(git.git_dir, "index.lock"))
    for name in ("commit-index", "commit-index.lock"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(git.git_dir, MEMD_DIR, name))
    try:
        from memd.fsread import read_bytes

        old, new = read_bytes(_journal_path(git), 4096).decode("ascii").split()[:2]
    except (FileNotFoundError, ValueError):
        pass
    else:
        head = git.rev(ref) or ZERO_OID
        if head == old:
            _apply(git, old, new, ref, merged, frozenset(), layout, guard=False)
        elif head == new:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_journal_path(git))
    _reset_index(git, ref)


# -- 2. commit -------------------------------------------------------------------

MAX_SCAN_FILES = 10_000  # per memory folder; past it, the rest is "not seen"
MAX_SCAN_DEPTH = 8
MAX_MESSAGE_LINES = 200  # a commit message names this many paths, then a count


@dataclass(frozen=True, slots=True)
class Scan:
    """What one walk of a memory folder found, and which folders it read whole.

    `files` maps each relpath to its bytes, or to why it may not travel.
    `listed` maps each folder read whole (``""`` is the root) to every name
    in it. A path the walk did not reach (past `MAX_SCAN_FILES`, deeper than
    `MAX_SCAN_DEPTH`, in a folder it could not list) is *not seen*, never
    deleted: only `is_gone` turns an absence into a deletion.
    """

    files: dict[str, bytes | str]
    listed: dict[str, frozenset[str]]

    def is_gone(self, relpath: str) -> bool:
        """Return True when the walk saw that `relpath` is not there."""
        folder = ""
        for part in relpath.split("/"):
            names = self.listed.get(folder)
            if names is None:
                return False  # a folder never read whole: not seen
            if part not in names:
                return True
            folder = f"{folder}/{part}" if folder else part
        return False  # it is there: a file kept out, or now a folder


def scan_folder(
    root: str,
    *,
    max_file_bytes: int,
    refusal: Callable[[str], str | None],
    skip: Callable[[str], bool] = lambda relpath: False,
) -> Scan:
    """Walk `root` below its descriptor (no link followed) and read what may travel.

    Hidden entries and those `skip` names are passed over silently;
    `refusal(relpath)` gives why a file may not travel (its bytes are then
    not read). Each file is read once: these are the bytes scanned and
    committed.
    """
    from memd.fsread import open_dir, open_dir_beneath

    files: dict[str, bytes | str] = {}
    listed: dict[str, frozenset[str]] = {}
    try:
        root_fd = open_dir(root, follow=True)  # the memory dir above may be a link
    except OSError:
        return Scan(files, listed)
    try:
        stack: list[tuple[str, int]] = [("", 0)]
        while stack and len(files) < MAX_SCAN_FILES:
            relative, depth = stack.pop()
            try:
                dir_fd = open_dir_beneath(
                    root_fd, relative.split("/") if relative else []
                )
            except OSError:
                continue
            try:
                complete = _scan_one(
                    dir_fd, relative, depth, files, stack, max_file_bytes, refusal, skip
                )
            finally:
                os.close(dir_fd)
            if complete is not None:
                listed[relative] = complete
    finally:
        os.close(root_fd)
    return Scan(files, listed)


def _scan_one(
    dir_fd: int,
    relative: str,
    depth: int,
    files: dict[str, bytes | str],
    stack: list[tuple[str, int]],
    max_file_bytes: int,
    refusal: Callable[[str], str | None],
    skip: Callable[[str], bool],
) -> frozenset[str] | None:
    """Read one folder into `files`; return its names, or None when cut short."""
    from memd.fsread import list_dir, open_regular, read_fd

    try:
        entries = list_dir(dir_fd)
    except OSError:
        return None
    for entry in entries:
        name = entry.name
        relpath = f"{relative}/{name}" if relative else name
        if name.startswith(".") or skip(relpath):
            continue
        if len(files) >= MAX_SCAN_FILES:
            return None  # the rest of this folder is not seen
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            return None
        if stat.S_ISDIR(mode):
            if depth < MAX_SCAN_DEPTH:
                stack.append((relpath, depth + 1))
            continue
        why = refusal(relpath)
        if why is None and stat.S_ISLNK(mode):
            why = "symlink (never committed)"
        elif why is None and not stat.S_ISREG(mode):
            why = "not a regular file"
        if why is not None:
            files[relpath] = why
            continue
        try:
            fd = open_regular(name, dir_fd=dir_fd)
        except OSError as error:
            files[relpath] = f"unreadable ({error.strerror})"
            continue
        try:
            files[relpath] = read_fd(fd, max_file_bytes + 1)
        except OSError as error:
            files[relpath] = f"unreadable ({error.strerror})"
        finally:
            os.close(fd)
        data = files[relpath]
        if isinstance(data, bytes) and len(data) > max_file_bytes:
            files[relpath] = f"larger than {max_file_bytes} bytes"
    return frozenset(entry.name for entry in entries)


def _team_refusal(relpath: str) -> str | None:
    why = relpath_refusal(relpath)
    if why is not None:
        return f"unsafe path ({why})"
    if not relpath.endswith(".md"):
        return "not a Markdown file"
    return None


def secret_refusal(data: bytes, allow: frozenset[str]) -> str | None:
    """Return why these exact bytes may not be pushed (a likely secret), or None."""
    from memd.lint.secrets import find_secrets_in_bytes

    secrets = find_secrets_in_bytes(data, allow=allow)
    if not secrets:
        return None
    return f"line {secrets[0].line}: {secrets[0].message()}"


def _commit_local(
    git: Git,
    ref: str,
    errors: Mapping[str, str],
    merged: _Merged,
    secret_allow: frozenset[str],
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Commit every changed file that may travel; return (committed, left out).

    The team dir is walked by memd (`scan_folder`), never by git: git opens
    no working-tree file, so no attribute, filter or hook of the tree ever
    runs. The bytes read are scanned for secrets and are what is stored.
    """
    head = git.rev(ref)
    tree, odd = _read_tree(git, head)
    algorithm = _object_format(git)
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
    if not updates:
        return (), tuple(left_out)
    store_blobs(git, to_store)
    new_tree = _write_tree(
        git,
        head or EMPTY_TREE,
        ("-z", "--index-info"),
        "".join(updates).encode("utf-8", "surrogateescape"),
    )
    if head is not None and new_tree == git.text("rev-parse", f"{head}^{{tree}}"):
        return (), tuple(left_out)
    message = commit_message(
        f"memd team sync: {len(chosen)} file(s)",
        lines,
        agreed=bool(deleted) and merged.allow_deletes,
    )
    commit = commit_tree(git, new_tree, (head,) if head else (), message)
    git.run("update-ref", ref, commit, head or ZERO_OID)
    _reset_index(git, ref)
    return tuple(chosen), tuple(left_out)


def index_to_commit(data: bytes, held_back: frozenset[str]) -> bytes:
    """Return the index bytes to commit: no entry links a file held back.

    The local index keeps every line; the other machine never gets a link
    to a file that did not travel with it.
    """
    if not held_back:
        return data
    text = data.decode("utf-8", "surrogateescape")
    kept = without_links_to(text, held_back)
    return data if kept == text else kept.encode("utf-8", "surrogateescape")


def commit_message(title: str, lines: list[str], *, agreed: bool = False) -> bytes:
    """Return a commit message: `title`, then at most `MAX_MESSAGE_LINES` lines.

    `agreed` adds `AGREED_TRAILER`: its deletions were allowed by a person.
    """
    shown = lines[:MAX_MESSAGE_LINES]
    if len(lines) > len(shown):
        shown.append(f"- and {len(lines) - len(shown)} more")
    trailer = f"\n{AGREED_TRAILER}\n" if agreed else ""
    text = title + "\n\n" + "\n".join(shown) + "\n" + trailer
    return text.encode("utf-8", "surrogateescape")


def commit_tree(git: Git, tree: str, parents: tuple[str, ...], message: bytes) -> str:
    """Write a commit of `tree`; its message goes on stdin, never in argv."""
    parent_args = [item for parent in parents for item in ("-p", parent)]
    return git.text(
        *_identity(git),
        "commit-tree",
        tree,
        *parent_args,
        "-F",
        "-",
        input_bytes=message,
    )


def _object_format(git: Git) -> str:
    return git.text("rev-parse", "--show-object-format") or "sha1"  # or sha256


def blob_oid(data: bytes, algorithm: str = "sha1") -> str:
    """Return the id git gives `data` as a blob."""
    import hashlib

    digest = hashlib.new(algorithm, b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def store_blobs(git: Git, blobs: Mapping[str, bytes]) -> None:
    """Write `blobs` (oid -> bytes, as read) into the object store in one git call.

    ``git fast-import`` takes the bytes memd read (never a path, so nothing
    is opened by name behind memd's back); `git cat-file --batch-check`
    then confirms every oid exists before a tree names it.

    Raises:
        MemdError: an object is missing afterwards.
    """
    if not blobs:
        return
    stream = b"".join(
        b"blob\ndata %d\n%s\n" % (len(data), data) for data in blobs.values()
    )
    git.run("fast-import", "--quiet", "--done", input_bytes=stream + b"done\n")
    check = git.run(
        "cat-file",
        "--batch-check",
        input_bytes="".join(oid + "\n" for oid in blobs).encode("ascii"),
    ).stdout.decode("ascii", "replace")
    if "missing" in check:
        raise MemdError("git did not store every object memd read; nothing committed")


def _reset_index(git: Git, ref: str) -> None:
    """Make git's index hold HEAD's safe entries only; the tree is left alone.

    A remote entry memd never writes (a ``.gitattributes``, a link) never
    reaches the index either, so no git run reads attributes from it.
    """
    head = git.rev(ref)
    if head is None:
        return
    clean, odd = _read_tree(git, head)
    tree = f"{head}^{{tree}}"
    if odd:
        tree = _write_tree(git, EMPTY_TREE, ("-z", "--index-info"), index_info(clean))
    git.run("read-tree", "--reset", tree)


def index_info(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """Return `entries` as ``update-index -z --index-info`` reads them."""
    return "".join(f"{mode} {oid}\t{p}\0" for p, (mode, oid) in entries.items()).encode(
        "utf-8", "surrogateescape"
    )


def _write_tree(git: Git, start: str, update: tuple[str, ...], data: bytes) -> str:
    """Return the tree of `start` after ``git update-index UPDATE`` fed `data`.

    A private index file is used, so git's own index (and whatever a person
    staged in it) plays no part.
    """
    index = os.path.join(git.git_dir, MEMD_DIR, "commit-index")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(index)
    git.run("read-tree", start, index_file=index)
    git.run("update-index", *update, input_bytes=data, index_file=index)
    tree = git.text("write-tree", index_file=index)
    os.unlink(index)
    return tree


def _identity(git: Git) -> tuple[str, ...]:
    """Return `-c user.*` options when git has no identity (a fresh machine)."""
    if git.run("config", "user.name", check=False).returncode == 0 or os.environ.get(
        "GIT_AUTHOR_NAME"
    ):
        return ()
    import getpass
    import socket

    user = getpass.getuser()
    return (
        "-c",
        f"user.name={user}",
        "-c",
        f"user.email={user}@{socket.gethostname()}",
    )


# -- where repository paths live --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each repository path lives on this machine, and which MEMORY.md indexes it.

    A team repository is one memory folder (prefix ``""``) whose files live in
    the team dir. A personal repository holds one folder per project
    (``projects/<identity>/``), each placed in that project's memory dir on
    this machine, or nowhere when the project is not here; files outside
    every folder (the manifest, dream claims) live only in the repository.
    """

    roots: Mapping[str, str]  # folder prefix -> local directory
    prefixes: tuple[str, ...] = ("",)  # every memory folder, placed or not
    # repository-only files both sides changed, merged by a rule (the manifest)
    unions: Mapping[str, Callable[[bytes, bytes], bytes]] = field(default_factory=dict)
    first_wins: tuple[str, ...] = ()  # prefixes where the side pushed first wins
    label: str = "memd team sync"  # how commit messages begin
    # check_tree(git, commit) raises for a fetched tree this layout refuses
    # whole, before anything of it is written
    check_tree: Callable[[Git, str], None] | None = None
    _folders: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_folders", frozenset(self.prefixes))

    def folder_of(self, relpath: str) -> str | None:
        """Return the memory folder `relpath` is in (the deepest), or None."""
        return deepest_folder(relpath, self._folders)

    def is_index(self, relpath: str) -> bool:
        folder = self.folder_of(relpath)
        return folder is not None and relpath == folder + INDEX_NAME

    def place(self, relpath: str) -> tuple[str, str] | None:
        """Return (local directory, path inside it) of `relpath`, or None."""
        folder = self.folder_of(relpath)
        if folder is None or folder not in self.roots:
            return None
        return self.roots[folder], relpath[len(folder) :]


def deepest_folder(relpath: str, folders: frozenset[str]) -> str | None:
    """Return the deepest of `folders` (each ending in ``/``, or ``""``) holding it.

    Folders compare as whole path components: ``projects/a/`` holds
    ``projects/a/x.md`` and ``projects/a/b/x.md`` unless ``projects/a/b/``
    is a folder too, and never ``projects/ab/x.md``. One set lookup per
    component, so the cost does not grow with the number of folders.
    """
    at = len(relpath)
    while True:
        at = relpath.rfind("/", 0, at)
        if at < 0:
            return "" if "" in folders else None
        if relpath[: at + 1] in folders:
            return relpath[: at + 1]


def team_layout(team_dir: str) -> Layout:
    """Return the layout of a team repository: the whole tree in `team_dir`."""
    return Layout(roots={"": team_dir})


# -- 3. fetch and merge ------------------------------------------------------------


def _fetch_and_merge(
    git: Git,
    branch: str,
    ref: str,
    merged: _Merged,
    dirty: frozenset[str],
    layout: Layout | None = None,
) -> None:
    layout = layout or team_layout(git.work_tree)
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
    if ours is not None and _is_ancestor(git, theirs, ours):
        return
    if layout.check_tree is not None:
        layout.check_tree(git, theirs)  # a tree that breaks the layout's own rule
    theirs = _indexable(git, theirs, merged, layout)
    if ours is None or _is_ancestor(git, ours, theirs):
        _apply(git, ours or ZERO_OID, theirs, ref, merged, dirty, layout)
        return
    commit = _merge_commit(git, ours, theirs, merged, layout)
    _apply(git, ours, commit, ref, merged, dirty, layout)


def _indexable(git: Git, theirs: str, merged: _Merged, layout: Layout) -> str:
    """Return `theirs`, or a commit on it without the entries git must never index.

    Each odd entry (`_read_tree`) is skipped and reported; the rest of the
    tree arrives. One whose path is safe (a link, a `.gitattributes`) travels
    on in the tree untouched; one git would refuse or misread (``..``,
    ``.git``, an undecodable name) is left out of the commit memd builds.
    """
    clean, odd = _read_tree(git, theirs)
    if not odd:
        return theirs
    merged.skipped.update((printable(p), why) for p, (_, _, why) in odd.items())
    tree = _write_tree(
        git,
        EMPTY_TREE,
        ("--add", "-z", "--index-info"),
        index_info(clean | _carried(odd)),
    )
    if tree == git.text("rev-parse", f"{theirs}^{{tree}}"):
        return theirs
    lines = [f"- skipped {printable(p)!r}: {why}" for p, (_, _, why) in odd.items()]
    message = commit_message(f"{layout.label}: skip {len(odd)} entry(ies)", lines)
    return commit_tree(git, tree, (theirs,), message)


def printable(relpath: str) -> str:
    """Return a tree path as text any output takes (a byte that is not UTF-8: \\xff)."""
    return relpath.encode("utf-8", "surrogateescape").decode(
        "utf-8", "backslashreplace"
    )


_NOT_CARRIED = ("listed twice", "a file and a folder of one name")


def _carried(odd: Mapping[str, tuple[str, str, str]]) -> dict[str, tuple[str, str]]:
    """Return the odd entries a tree may keep: safe paths git indexes as they are."""
    return {
        p: (mode, oid)
        for p, (mode, oid, why) in odd.items()
        if why not in _NOT_CARRIED and relpath_refusal(p) is None
    }


def _is_ancestor(git: Git, older: str, newer: str) -> bool:
    return (
        git.run("merge-base", "--is-ancestor", older, newer, check=False).returncode
        == 0
    )


# Files git itself reads from a working tree: they would steer the next git run.
_GIT_CONTROL_FILES = frozenset({".gitattributes", ".gitmodules"})
_FILE_MODES = frozenset({"100644", "100755"})


def _tree_of(git: Git, commit: str | None) -> dict[str, tuple[str, str]]:
    """Return relpath -> (mode, blob) of each safe file in `commit` ({} for None)."""
    return _read_tree(git, commit)[0]


def _read_tree(
    git: Git, commit: str | None
) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str, str]]]:
    """Return (safe files, odd entries) of `commit`: relpath -> (mode, blob[, why]).

    Every path passes `memd.relpath.relpath_refusal` before it is a safe
    file, so nothing a remote names reaches the disk or a merge unchecked.
    An odd entry (a symlink, a gitlink or submodule, a `.gitattributes` or
    `.gitmodules`, an undecodable or unsafe name, a duplicate, a file where
    the tree also has a folder) is never written, merged or put in git's
    index; it is skipped and reported, and the rest of the tree is used.
    """
    if commit is None:
        return {}, {}
    out = git.run("ls-tree", "-r", "-z", "--full-tree", commit).stdout
    files: dict[str, tuple[str, str]] = {}
    odd: dict[str, tuple[str, str, str]] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, _, relpath = record.partition("\t")
            mode, _kind, oid = meta.split(" ")
            why = _entry_refusal(relpath, mode, files)
            if why is not None:
                odd.setdefault(relpath, (mode, oid, why))
            else:
                files[relpath] = (mode, oid)
    folders = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    folders |= {f.rsplit("/", i)[0] for f in folders for i in range(f.count("/") + 1)}
    for clash in sorted(folders & files.keys()):
        mode, oid = files.pop(clash)
        odd[clash] = (mode, oid, "a file and a folder of one name")
    return files, odd


def _entry_refusal(
    relpath: str, mode: str, seen: Mapping[str, tuple[str, str]]
) -> str | None:
    why = relpath_refusal(relpath)
    if why is not None:
        return why
    if mode == "120000":
        return "a symlink, which memd never makes"
    if mode == "160000":
        return "a submodule (gitlink), which memd never checks out"
    if mode not in _FILE_MODES:
        return f"an entry of mode {mode}"
    if relpath.rsplit("/", 1)[-1].casefold() in _GIT_CONTROL_FILES:
        return "a file git reads its own settings from"
    if relpath in seen:
        return "listed twice"
    return None


def _blob(git: Git, oid: str) -> bytes:
    return git.run("cat-file", "blob", oid).stdout


def _blobs(git: Git, oids: set[str]) -> dict[str, bytes]:
    """Return oid -> bytes of every blob in `oids`, read by one ``cat-file --batch``."""
    if not oids:
        return {}
    ordered = sorted(oids)
    out = git.run(
        "cat-file", "--batch", input_bytes="".join(o + "\n" for o in ordered).encode()
    ).stdout
    found: dict[str, bytes] = {}
    at = 0
    for oid in ordered:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            raise GitError(f"git cat-file: {oid} is not a blob")
        size = int(header[2])
        found[oid] = out[at : at + size]
        at += size + 1
    return found


def _store(git: Git, data: bytes) -> str:
    return git.text("hash-object", "-w", "--stdin", input_bytes=data)


def _author_of(git: Git, commit: str, relpath: str) -> str:
    name = git.text("log", "-1", "--format=%an", commit, "--", relpath, check=False)
    return name or "them"


def _merge_commit(
    git: Git, ours: str, theirs: str, merged: _Merged, layout: Layout | None = None
) -> str:
    """Write the merge of `theirs` into `ours` as a commit (objects only)."""
    layout = layout or team_layout(git.work_tree)
    base_done = git.run("merge-base", ours, theirs, check=False)
    base_oid = base_done.stdout.decode().strip() if base_done.returncode == 0 else None
    base = _tree_of(git, base_oid)
    mine, odd_mine = _read_tree(git, ours)
    other, odd_other = _read_tree(git, theirs)
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
            union = layout.unions[relpath](_blob(git, o[1]), _blob(git, t[1]))
            result[relpath] = (o[0], _store(git, union))
            continue
        if layout.first_wins and relpath.startswith(layout.first_wins):
            result[relpath] = t  # theirs reached the remote first
            continue
        author = _author_of(git, theirs, relpath)
        copy = conflict_copy_path(relpath, author, frozenset(result) | frozenset(other))
        result[copy] = (
            "100644",
            _store(git, conflict_copy_text(relpath, _blob(git, t[1]), author)),
        )
        merged.conflicts.append(copy)
        notes.append(f"- both changed {relpath}: theirs is {copy}")
    _merge_the_indexes(git, base, mine, other, result, merged, layout)
    # Odd entries with a safe path travel on untouched (theirs first), never
    # onto the disk (`_indexable` dropped the rest).
    carried = {
        p: entry
        for p, entry in {**_carried(odd_mine), **_carried(odd_other)}.items()
        if p not in result
    }
    tree = _write_tree(
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
    merged: _Merged,
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
            _blob(git, result[index][1]).decode("utf-8", "replace")
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
                _blob(git, o[1]).decode("utf-8", "replace"),
                _blob(git, t[1]).decode("utf-8", "replace"),
                deleted=deleted,
            )
        copies = tuple(copies_by_folder.get(folder, ()))
        if copies:
            text = link_copies(text, copies)
        if copies or both:
            result[index] = ("100644", _store(git, text.encode("utf-8")))


def _original_of(copy: str) -> str:
    head, _, name = copy.rpartition("/")
    stem = name.split(".from-", 1)[0]
    return f"{head}/{stem}.md" if head else f"{stem}.md"


def _author_in(copy: str) -> str:
    return copy.rsplit(".from-", 1)[1].removesuffix(".md")


# -- writing a commit into the tree --------------------------------------------------


def _apply(
    git: Git,
    old: str,
    new: str,
    ref: str,
    merged: _Merged,
    dirty: frozenset[str],
    layout: Layout | None = None,
    *,
    guard: bool = True,
) -> None:
    """Write `new`'s files over `old`'s in the tree, then move `ref` to `new`.

    Idempotent, so a killed run is finished by `_recover`: a file already
    equal to `new`'s version is left as it is. A file whose content is
    neither `old`'s nor `new`'s holds a local edit that was not committed;
    it stays, and the incoming version goes beside it as a conflict copy.
    With `guard`, deletions past `check_deletions` stop it before the
    journal is written (a journal names work already agreed to).
    """
    layout = layout or team_layout(git.work_tree)
    journal = _journal_path(git)
    before = None if old == ZERO_OID else old
    if guard:
        _check_incoming_deletions(git, before, new, merged, layout)
    write_atomic(journal, f"{old} {new}\n".encode("ascii"))
    write_changes(git, before, new, merged, dirty, layout)
    git.run("update-ref", ref, new, old)
    _reset_index(git, ref)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal)


def _check_incoming_deletions(
    git: Git, old: str | None, new: str, merged: _Merged, layout: Layout
) -> None:
    """Stop before a merge deletes many local files (`check_deletions`)."""
    before = _tree_of(git, old)
    after, odd = _read_tree(git, new)
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
    merged: _Merged,
    dirty: frozenset[str],
    layout: Layout,
) -> None:
    """Write the placed files that differ between commits `old` and `new` locally.

    With `old` None every placed file of `new` is written: how a project
    first seen on this machine receives its memory (a local file that
    differs stays, and theirs goes beside it).
    """
    before = _tree_of(git, old)
    after, odd = _read_tree(git, new)
    changed = sorted(
        p
        for p in set(before) | set(after)
        if before.get(p) != after.get(p)
        and p not in odd  # skipped: what is here stays as it is
        and layout.place(p) is not None
    )
    current = _worktree_blobs(git, changed, layout)
    # One read for every incoming file this apply may write.
    incoming_blobs = _blobs(
        git,
        {after[p][1] for p in changed if p in after and current.get(p) != after[p][1]},
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
        elif layout.is_index(relpath) and new_entry is not None and have is not None:
            # A held-back local index (say, over budget) takes the incoming
            # entries in: the union loses neither side's lines.
            local = (_read_local(root, rest) or b"").decode("utf-8", "replace")
            incoming = _blob(git, new_entry[1]).decode("utf-8", "replace")
            gone = frozenset(
                p[len(folder) :]
                for p in before
                if p not in after and layout.folder_of(p) == folder
            )
            union = merge_index(local, incoming, deleted=gone).encode("utf-8")
            if union != local.encode("utf-8"):
                _write_or_remove(root, rest, union)
        elif new_entry is not None and relpath.endswith(".md"):
            author = _author_of(git, new, relpath)
            copy = conflict_copy_path(relpath, author, taken)
            taken |= {copy}
            data = conflict_copy_text(relpath, _blob(git, new_entry[1]), author)
            _write_or_remove(root, copy[len(folder) :], data)
            copies.setdefault(folder, []).append((rest, copy[len(folder) :], author))
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
                _blob(git, index_entry[1]).decode("utf-8", "replace")
                if index_entry
                else ""
            )
            _write_or_remove(
                placed[0],
                placed[1],
                link_copies(text, tuple(folder_copies)).encode("utf-8"),
            )


def _blob_id_of(git: Git, placed: tuple[str, str]) -> str | None:
    """Return the blob id of a placed file as it is on disk (None when absent)."""
    root, rest = placed
    return _worktree_blobs(git, [rest], team_layout(root)).get(rest)


def _read_local(team_dir: str, relpath: str) -> bytes | None:
    """Return a regular file's bytes (no symlink at any component), or None."""
    from memd.fsread import read_beneath

    try:
        with _team_fd(team_dir) as root_fd:
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

    layout = layout or team_layout(git.work_tree)
    algorithm = _object_format(git)
    blobs: dict[str, str] = {}
    by_root: dict[str, list[tuple[str, str]]] = {}
    for relpath in relpaths:
        placed = layout.place(relpath)
        if placed is not None:
            by_root.setdefault(placed[0], []).append((relpath, placed[1]))
    for root, members in by_root.items():
        try:
            fd_context = _team_fd(root)
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
def _team_fd(team_dir: str) -> Iterator[int]:
    """Yield the team dir's descriptor: every tree read and write is below it."""
    from memd.fsread import open_dir

    fd = open_dir(team_dir, follow=True)  # the memory dir above may be a link
    try:
        yield fd
    finally:
        os.close(fd)


def _write_or_remove(team_dir: str, relpath: str, data: bytes | None) -> None:
    """Replace (or delete) one file below `team_dir`; no symlink on the way.

    Every component is opened relative to its parent's descriptor with
    `O_NOFOLLOW` (`memd.atomic.write_atomic_beneath`), so a folder swapped for
    a link mid-sync fails the write instead of carrying it out of `team/`.
    """
    with _team_fd(team_dir) as root_fd:
        if data is None:
            remove_beneath(root_fd, relpath, prune_empty=True)
        else:
            write_atomic_beneath(root_fd, relpath, data, make_dirs=True)


# -- 4. push -------------------------------------------------------------------------


def _push(git: Git, branch: str, ref: str) -> bool:
    """Push the branch; return False when the remote moved on (merge, push again)."""
    if git.rev(ref) is None:
        return True  # nothing here yet, nothing to push
    done = git.run(
        "push",
        "--porcelain",
        REMOTE,
        f"{ref}:refs/heads/{branch}",
        check=False,
        is_network=True,
    )
    if done.returncode == 0:
        return True
    detail = (done.stdout + done.stderr).decode("utf-8", "replace")
    if any(marker in detail for marker in _REJECTED):
        return False
    git.run("push", REMOTE, f"{ref}:refs/heads/{branch}", is_network=True)  # raises
    return True


# -- queries for status ------------------------------------------------------------


def ahead_behind(
    team_dir: str, branch: str, timeout_seconds: float
) -> tuple[int, int] | None:
    """Return (ahead, behind) against the last fetched remote branch, or None."""
    git = Git(team_dir, timeout_seconds)
    ref, tracking = f"refs/heads/{branch}", f"refs/remotes/{REMOTE}/{branch}"
    ours = git.rev(ref)
    if ours is None:
        return None
    if git.rev(tracking) is None:
        count = git.text("rev-list", "--count", ref)
        return int(count or 0), 0
    out = git.text("rev-list", "--left-right", "--count", f"{ref}...{tracking}")
    ahead, behind = out.split()
    return int(ahead), int(behind)


def remote_url(team_dir: str, timeout_seconds: float) -> str | None:
    """Return the remote's URL, redacted, or None when it is not set."""
    url = Git(team_dir, timeout_seconds).text(
        "config", "--get", f"remote.{REMOTE}.url", check=False
    )
    return redact(url) if url else None
