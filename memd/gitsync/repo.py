"""A memd repository: made (`init_repo`), recognised (`is_repo`) and described."""

from __future__ import annotations

import contextlib
import os
import stat

from memd.atomic import TEMP_PREFIX
from memd.errors import UsageError
from memd.gitsync.git import Git, redact
from memd.gitsync.objects import MEMD_DIR, REMOTE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger


def is_repo(work_tree: str) -> bool:
    """Return True when `work_tree` is a working tree `memd team init` made."""
    git_dir = os.path.join(work_tree, ".git")
    try:
        is_dir = stat.S_ISDIR(os.lstat(git_dir).st_mode)
    except OSError:
        return False
    return is_dir and os.path.isdir(os.path.join(git_dir, MEMD_DIR))


def init_repo(
    work_tree: str,
    remote_url: str,
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
) -> None:
    """Make `work_tree` a working tree of `remote_url` (idempotent for the same URL).

    The first `sync_team` then clones (the remote has history) or pushes
    (it has none): both are a merge with an empty side. The repository is
    built under a temp name and renamed to ``.git`` only once git has reached
    the remote (``ls-remote``), so an init that fails (a refused or
    unreachable URL, a timeout, a kill) leaves no ``.git`` behind and the
    next init starts afresh.

    Raises:
        UsageError: `work_tree` already belongs to another repository, or its
            `.git` is not a plain directory.
        GitError: the URL is refused (`memd.gitsync.git.check_remote_url`) or
            git failed; `work_tree` is then as it was.
    """
    from memd.gitsync.git import check_remote_url

    git_dir = os.path.join(work_tree, ".git")
    if os.path.lexists(git_dir):
        if not is_repo(work_tree):
            raise UsageError(
                f"{work_tree}: already has a .git that memd did not make; "
                "move it away or use that repository directly"
            )
        git = Git(work_tree, timeout_seconds)
        current = git.text("config", "--get", f"remote.{REMOTE}.url", check=False)
        if current != remote_url:
            raise UsageError(
                f"{work_tree}: already syncs with {redact(current)}; "
                "remove its .git to change the remote"
            )
        return
    check_remote_url(remote_url)
    made = missing_dirs(work_tree)
    os.makedirs(work_tree, mode=0o700, exist_ok=True)
    building = f"{TEMP_PREFIX}git-{os.urandom(6).hex()}"
    git = Git(work_tree, timeout_seconds, dot_git=building)
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
    log.info("team_initialised", work_tree=work_tree, remote=redact(remote_url))


def missing_dirs(path: str) -> list[str]:
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


def ahead_behind(
    work_tree: str, branch: str, timeout_seconds: float
) -> tuple[int, int] | None:
    """Return (ahead, behind) against the last fetched remote branch, or None."""
    git = Git(work_tree, timeout_seconds)
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


def remote_url(work_tree: str, timeout_seconds: float) -> str | None:
    """Return the remote's URL, redacted, or None when it is not set."""
    url = Git(work_tree, timeout_seconds).text(
        "config", "--get", f"remote.{REMOTE}.url", check=False
    )
    return redact(url) if url else None
