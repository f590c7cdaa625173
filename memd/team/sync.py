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
from memd.team.index_budget import fit_merged_index
from memd.team.merge import (
    conflict_copy_path,
    conflict_copy_text,
    link_copies,
    merge_index,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from structlog.typing import FilteringBoundLogger

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ZERO_OID = "0" * 40
REMOTE = "origin"
MEMD_DIR = "memd"  # inside .git: marker, lock, journal, private index
PUSH_ATTEMPTS = 5
MAX_LOCAL_INDEX_BYTES = 4 * 1024 * 1024  # read cap for a held-back MEMORY.md
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
            "pushed": self.pushed,
            "push_retries": self.push_retries,
            "error": self.error,
        }


@dataclass(slots=True)
class _Merged:
    """What merging the remote into HEAD changed (accumulated across push retries)."""

    conflicts: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


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
) -> SyncResult:
    """Run one sync of `team_dir` and return what happened; never raises for git.

    `lint_errors(team_dir)` maps each relpath with lint errors to its first
    message; those files stay out of the commit (default:
    `memd.team.conflicts.lint_errors` with the default severities).
    `is_dream_running(memory_dir)` (default: `memd.locks.is_dream_running`)
    makes the sync step aside while a dream holds the directory.

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
        return _sync_locked(git, branch, log, lint_errors or default_lint)
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
) -> SyncResult:
    team_dir = git.work_tree
    ref = f"refs/heads/{branch}"
    merged = _Merged()
    committed: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()
    retries = 0
    failure: Exception | None = None
    try:
        git.check_local_config()
        _recover(git, ref, merged)
        committed, left_out = _commit_local(git, ref, lint_errors(team_dir))
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
            conflicts=tuple(merged.conflicts),
            kept=tuple(merged.kept),
            error=redact(str(error)),
        )
    log.info(
        f"{event}_synced",
        **fields,
        committed=len(committed),
        left_out=[p for p, _ in left_out],
        conflicts=list(merged.conflicts),
        push_retries=retries,
    )
    return SyncResult(
        team_dir=where,
        state="synced",
        committed=committed,
        left_out=left_out,
        conflicts=tuple(merged.conflicts),
        kept=tuple(merged.kept),
        pushed=True,
        push_retries=retries,
    )


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
            try:
                _apply(git, old, new, ref, merged, frozenset(), layout)
            except UnsafeTreeError:
                os.unlink(_journal_path(git))  # never retried: the work is refused
                raise
        elif head == new:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(_journal_path(git))
    if git.rev(ref) is not None:
        git.run("reset", "-q", "--mixed")  # index = HEAD; the tree is untouched


# -- 2. commit -------------------------------------------------------------------


def _changed_paths(git: Git) -> list[tuple[str, str]]:
    """Return (status, relpath) for each path that differs from HEAD."""
    out = git.run(
        "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"
    ).stdout.decode("utf-8", "surrogateescape")
    changes = []
    for record in out.split("\0"):
        if len(record) > 3:
            changes.append((record[:2], record[3:]))
    return changes


def _why_left_out(team_dir: str, relpath: str, errors: Mapping[str, str]) -> str | None:
    why = relpath_refusal(relpath)
    if why is not None:
        return f"unsafe path ({why})"
    parts = relpath.split("/")
    if any(part.startswith(".") for part in parts):
        return "hidden file"
    if not relpath.endswith(".md"):
        return "not a Markdown file"
    try:
        st = os.lstat(os.path.join(team_dir, relpath))
    except FileNotFoundError:
        return None  # a deletion
    if stat.S_ISLNK(st.st_mode):
        return "symlink (never committed)"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if relpath in errors:
        return f"lint error: {errors[relpath]}"
    return None


def _commit_local(
    git: Git, ref: str, errors: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Commit every changed path that may travel; return (committed, left out)."""
    chosen: list[tuple[str, str]] = []
    left_out: list[tuple[str, str]] = []
    for code, relpath in _changed_paths(git):
        why = _why_left_out(git.work_tree, relpath, errors)
        if why is None:
            chosen.append((code, relpath))
        else:
            left_out.append((relpath, why))
    if not chosen:
        return (), tuple(left_out)
    head = git.rev(ref)
    paths = "".join(relpath + "\0" for _, relpath in chosen)
    tree = _write_tree(
        git,
        head or EMPTY_TREE,
        ("--add", "--remove", "-z", "--stdin"),
        paths.encode("utf-8", "surrogateescape"),
    )
    if head is not None and tree == git.text("rev-parse", f"{head}^{{tree}}"):
        return (), tuple(left_out)
    _tree_of(git, tree)  # a file swapped for a link while git read it is refused
    lines = "\n".join(f"- {_verb(code)} {relpath}" for code, relpath in chosen)
    message = f"memd team sync: {len(chosen)} file(s)\n\n{lines}\n"
    parents = ("-p", head) if head else ()
    commit = git.text(*_identity(git), "commit-tree", tree, *parents, "-m", message)
    git.run("update-ref", ref, commit, head or ZERO_OID)
    git.run("reset", "-q", "--mixed")
    return tuple(relpath for _, relpath in chosen), tuple(left_out)


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


def _verb(code: str) -> str:
    if "D" in code:
        return "deleted"
    return "added" if code == "??" or "A" in code else "changed"


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

    def folder_of(self, relpath: str) -> str | None:
        """Return the memory folder (longest prefix) `relpath` is in, or None."""
        best = None
        for prefix in self.prefixes:
            if relpath.startswith(prefix) and (best is None or len(prefix) > len(best)):
                best = prefix
        return best

    def is_index(self, relpath: str) -> bool:
        folder = self.folder_of(relpath)
        return folder is not None and relpath == folder + INDEX_NAME

    def place(self, relpath: str) -> tuple[str, str] | None:
        """Return (local directory, path inside it) of `relpath`, or None."""
        folder = self.folder_of(relpath)
        if folder is None or folder not in self.roots:
            return None
        return self.roots[folder], relpath[len(folder) :]


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
    _tree_of(git, theirs)  # a tree that breaks the path rule is refused whole, here
    if layout.check_tree is not None:
        layout.check_tree(git, theirs)  # and one that breaks the layout's own
    if ours is not None and _is_ancestor(git, theirs, ours):
        return
    if ours is None or _is_ancestor(git, ours, theirs):
        _apply(git, ours or ZERO_OID, theirs, ref, merged, dirty, layout)
        return
    commit = _merge_commit(git, ours, theirs, merged, layout)
    _apply(git, ours, commit, ref, merged, dirty, layout)


def _is_ancestor(git: Git, older: str, newer: str) -> bool:
    return (
        git.run("merge-base", "--is-ancestor", older, newer, check=False).returncode
        == 0
    )


class UnsafeTreeError(GitError):
    """A commit's tree names a path memd never writes; the commit is refused whole."""


# Files git itself reads from a working tree: they would steer the next git run.
_GIT_CONTROL_FILES = frozenset({".gitattributes", ".gitmodules"})
_FILE_MODES = frozenset({"100644", "100755"})


def _tree_of(git: Git, commit: str | None) -> dict[str, tuple[str, str]]:
    """Return relpath -> (mode, blob) for every file in `commit` (empty for None).

    Every path passes `memd.relpath.relpath_refusal` before it is returned,
    so nothing a remote names reaches the disk, a merge or a ref unchecked.

    Raises:
        UnsafeTreeError: an entry breaks the rule, is a symlink (120000), a
            gitlink or submodule (160000), a `.gitattributes`/`.gitmodules`,
            a duplicate, or a file where the tree also has a folder. The
            message names the commit and the path.
    """
    if commit is None:
        return {}
    out = git.run("ls-tree", "-r", "-z", "--full-tree", commit).stdout
    files: dict[str, tuple[str, str]] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, _, relpath = record.partition("\t")
            mode, _kind, oid = meta.split(" ")
            why = _entry_refusal(relpath, mode, files)
            if why is not None:
                raise UnsafeTreeError(_unsafe_message(commit, relpath, why))
            files[relpath] = (mode, oid)
    folders = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    folders |= {f.rsplit("/", i)[0] for f in folders for i in range(f.count("/") + 1)}
    clashes = sorted(folders & files.keys())
    if clashes:
        raise UnsafeTreeError(
            _unsafe_message(commit, clashes[0], "a file and a folder of one name")
        )
    return files


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


def _unsafe_message(commit: str, relpath: str, why: str) -> str:
    return (
        f"commit {commit[:12]} holds {relpath!r} ({why}); refused whole: "
        "nothing written, the branch not moved. Remove it from the remote's "
        "history (a force-push of clean history) and sync again"
    )


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
    base, mine, other = (
        _tree_of(git, base_oid),
        _tree_of(git, ours),
        _tree_of(git, theirs),
    )
    result = dict(mine)
    notes: list[str] = []
    for relpath in sorted(set(base) | set(mine) | set(other)):
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
    entries = "".join(f"{mode} {oid}\t{p}\0" for p, (mode, oid) in result.items())
    tree = _write_tree(
        git,
        EMPTY_TREE,
        ("--add", "-z", "--index-info"),
        entries.encode("utf-8", "surrogateescape"),
    )
    message = f"{layout.label}: merge {theirs[:12]}\n\n" + "\n".join(notes) + "\n"
    return git.text(
        *_identity(git), "commit-tree", tree, "-p", ours, "-p", theirs, "-m", message
    )


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
                if p not in result and p.startswith(folder)
            )
            text = merge_index(
                _blob(git, o[1]).decode("utf-8", "replace"),
                _blob(git, t[1]).decode("utf-8", "replace"),
                deleted=deleted,
            )
            placed = layout.place(index)
            text = fit_merged_index(
                text,
                folder,
                result,
                read_blobs=lambda oids: _blobs(git, oids),
                store_blob=lambda data: _store(git, data),
                local_root=placed[0] if placed else None,
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
) -> None:
    """Write `new`'s files over `old`'s in the tree, then move `ref` to `new`.

    Idempotent, so a killed run is finished by `_recover`: a file already
    equal to `new`'s version is left as it is. A file whose content is
    neither `old`'s nor `new`'s holds a local edit that was not committed;
    it stays, and the incoming version goes beside it as a conflict copy.
    """
    layout = layout or team_layout(git.work_tree)
    journal = _journal_path(git)
    # Both trees pass the path rule before the journal names them: a refused
    # tree must never become the work a later sync has to finish.
    _tree_of(git, None if old == ZERO_OID else old)
    _tree_of(git, new)
    write_atomic(journal, f"{old} {new}\n".encode("ascii"))
    write_changes(git, None if old == ZERO_OID else old, new, merged, dirty, layout)
    git.run("update-ref", ref, new, old)
    git.run("reset", "-q", "--mixed")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(journal)


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
    after = _tree_of(git, new)
    changed = sorted(
        p
        for p in set(before) | set(after)
        if before.get(p) != after.get(p) and layout.place(p) is not None
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
        elif layout.is_index(relpath) and new_entry is not None and have is not None:
            # A held-back local index (say, over budget) takes the incoming
            # entries in: the union loses neither side's lines.
            local = (_read_local(root, rest) or b"").decode("utf-8", "replace")
            incoming = _blob(git, new_entry[1]).decode("utf-8", "replace")
            gone = frozenset(
                p[len(folder) :]
                for p in before
                if p not in after and p.startswith(folder)
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
    import hashlib

    from memd.fsread import DEFAULT_LIMIT, read_beneath

    layout = layout or team_layout(git.work_tree)
    algorithm = git.text("rev-parse", "--show-object-format")  # sha1 or sha256
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
                digest = hashlib.new(algorithm, b"blob %d\0" % len(data))
                digest.update(data)
                blobs[relpath] = digest.hexdigest()
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
