"""The one locked sync loop both syncs run: recover, commit, fetch and merge, push.

`locked_sync` takes ``.git/memd/sync.lock`` (the lock descriptor goes to
every git child, so a git that outlives a killed memd still holds it), then
recovers a killed merge, lets the caller commit, and fetches, merges and
pushes, merging again after a rejected push. An unreachable remote is an
``offline`` result, never a crash.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass

from memd.errors import MemdError
from memd.gitsync.apply import recover
from memd.gitsync.git import Git, GitError
from memd.gitsync.merging import fetch_and_merge
from memd.gitsync.objects import MEMD_DIR, REMOTE
from memd.gitsync.result import Merged, SyncResult, sync_outcome

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.gitsync.layout import Layout


PUSH_ATTEMPTS = 5


# What git says when a push lost the race to another member's push.
_REJECTED = ("[rejected]", "non-fast-forward", "fetch first", "failed to update ref")


def try_lock(path: str) -> int | None:
    """Take the flock at `path` without waiting; its descriptor, or None if held."""
    from memd.fsread import open_regular

    fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def push(git: Git, branch: str, ref: str) -> bool:
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


@dataclass(frozen=True, slots=True)
class Committed:
    """What a sync's commit step did: paths sent, paths kept out and why."""

    committed: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()
    dirty: frozenset[str] = frozenset()  # repository paths whose local edit stayed out


def _nothing(git: Git, ref: str) -> None:
    return None


def locked_sync(
    work_tree: str,
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
    event: str,
    merged: Merged,
    layout: Callable[[Git, str], Layout],
    commit: Callable[[Git, str], Committed],
    start: Callable[[Git, str], None] = _nothing,
    prepare: Callable[[Git, str], None] = _nothing,
    fetched: Callable[[Git, str], None] = _nothing,
    fields: Mapping[str, object] | None = None,
) -> SyncResult | None:
    """Run one sync of the repository at `work_tree` under its lock.

    In order: `start` (before anything else), recovery of a killed merge
    into `layout(git, ref)`, `prepare`, `commit` (what goes out), then fetch,
    merge and push, up to `PUSH_ATTEMPTS` times (`fetched` runs after the
    first fetch). `layout` is asked again before each merge. Returns None when
    another sync holds the lock; never raises for git, the remote or a
    refused tree (the result is ``offline`` or ``failed``). `event` prefixes
    the log events; `fields` are logged with the outcome.
    """
    lock_fd = try_lock(os.path.join(work_tree, ".git", MEMD_DIR, "sync.lock"))
    if lock_fd is None:
        return None
    git = Git(work_tree, timeout_seconds, lock_fd=lock_fd)
    ref = f"refs/heads/{branch}"
    done = Committed()
    retries = 0
    failure: Exception | None = None
    try:
        try:
            git.check_local_config()
            start(git, ref)
            recover(git, ref, merged, layout(git, ref))
            prepare(git, ref)
            done = commit(git, ref)
            for attempt in range(PUSH_ATTEMPTS):
                retries = attempt
                fetch_and_merge(git, branch, ref, merged, done.dirty, layout(git, ref))
                if attempt == 0:
                    fetched(git, ref)
                if push(git, branch, ref):
                    break
                log.info(f"{event}_push_rejected", attempt=attempt + 1)
            else:
                raise GitError(f"push still rejected after {PUSH_ATTEMPTS} merges")
        except (GitError, MemdError, OSError) as error:
            failure = error
        return sync_outcome(
            work_tree,
            merged,
            committed=done.committed,
            left_out=done.left_out,
            log=log,
            event=event,
            error=failure,
            retries=retries,
            **(fields or {}),
        )
    finally:
        os.close(lock_fd)
