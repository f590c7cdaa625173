"""A project's identity on this machine: ask git, then `memd.claude_code.identity`.

Git runs through `memd.gitsync.git.Git` (explicit ``--git-dir``, no terminal,
a timeout, and whatever hardening that module applies), on the canonical git
root, so every worktree of a repository gets the main repository's identity,
as it gets its memory dir. Remote URLs are read as configured, in one
``git config --get-regexp`` call (``url.<base>.insteadOf`` rewrites are not
applied: spell the remote in full, or pin the identity in ``[sync.projects]``).
"""

from __future__ import annotations

import os

from memd.claude_code.identity import (
    ProjectIdentity,
    choose_identity,
    normalize_remote_url,
)
from memd.gitsync.git import Git, GitError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

IDENTITY_GIT_TIMEOUT_SECONDS = 10.0


def configured_identity(
    project_root: str, git_root: str | None, projects: Mapping[str, str]
) -> tuple[str | None, str]:
    """Return the ``[sync.projects]`` identity for the project and its key."""
    for candidate in (project_root, git_root):
        if candidate is not None and candidate in projects:
            return projects[candidate], candidate
    return None, ""


def project_identity(
    project_root: str,
    projects: Mapping[str, str],
    *,
    git_root: str | None = None,
    timeout_seconds: float = IDENTITY_GIT_TIMEOUT_SECONDS,
) -> ProjectIdentity | None:
    """Return the identity of the project at `project_root`, or None.

    `git_root` is its canonical git root (found with `memd.claude_code.gitroot`
    when not given).
    """
    if git_root is None:
        from memd.claude_code.gitroot import find_canonical_git_root

        git_root = find_canonical_git_root(project_root)
    configured, key = configured_identity(project_root, git_root, projects)
    remotes: dict[str, str] = {}
    roots: tuple[str, ...] = ()
    if git_root is not None and os.path.isdir(os.path.join(git_root, ".git")):
        git = Git(git_root, timeout_seconds)
        try:
            # One call for every remote's URL; the root commit only when no
            # URL names a repository (a clone always has one).
            listed = git.run(
                "config", "--null", "--get-regexp", r"^remote\..+\.url$", check=False
            ).stdout.decode("utf-8", "replace")
            for record in listed.split("\0"):
                name, _, url = record.partition("\n")
                if name.startswith("remote.") and name.endswith(".url") and url:
                    remotes.setdefault(name[len("remote.") : -len(".url")], url)
            if not any(normalize_remote_url(url) for url in remotes.values()):
                done = git.run("rev-list", "--max-parents=0", "HEAD", check=False)
                if done.returncode == 0:
                    roots = tuple(done.stdout.decode("ascii", "replace").split())
        except GitError:
            pass  # no git, or it timed out: only a configured identity is left
    return choose_identity(
        configured=configured,
        configured_key=key,
        remotes=remotes,
        root_commits=roots,
    )
