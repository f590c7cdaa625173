"""One dream per night across machines: claims in the personal repository.

A claim is ``dreams/<identity>/<night>.json`` naming a machine; the merge
keeps the claim that reached the remote first (`Layout.first_wins`). A claim
that is not valid JSON (or nested too deep) names nobody.
"""

from __future__ import annotations

import os

from memd.gitsync.git import Git
from memd.gitsync.loop import try_lock
from memd.gitsync.objects import (
    EMPTY_TREE,
    MEMD_DIR,
    blob_oid,
    commit_message,
    commit_tree,
    read_blob,
    store_blobs,
    tree_of,
    write_tree,
)
from memd.gitsync.repo import is_repo
from memd.sync.engine import read_places, repo_dir
from memd.sync.tree import DREAMS, LABEL, remote_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


# -- one dream per night across machines ----------------------------------------------


def machine_id(git_dir: str) -> str:
    """Return this machine's id for dream claims (made once, kept in .git/memd)."""
    from memd.atomic import write_atomic
    from memd.fsread import read_bytes

    path = os.path.join(git_dir, MEMD_DIR, "machine")
    try:
        text = read_bytes(path, 256).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    if len(text) == 32 and all(c in "0123456789abcdef" for c in text):
        return text
    text = os.urandom(16).hex()
    write_atomic(path, (text + "\n").encode("ascii"))
    return text


def claim_path(identity: str, night: str) -> str:
    """Return the repository path of the dream claim of `identity` for `night`."""
    return f"{DREAMS}{identity}/{night}.json"


def claim_holder(git: Git, ref: str, path: str) -> str | None:
    """Return the machine id the claim at `path` in `ref` names, or None."""
    entry = tree_of(git, git.rev(ref)).get(path)
    if entry is None:
        return None
    data = remote_json(
        read_blob(git, entry[1])
    )  # a claim that is not valid names nobody
    holder = data.get("machine") if isinstance(data, dict) else None
    return holder if isinstance(holder, str) else None


def add_claim(git: Git, ref: str, path: str, machine: str) -> bool:
    """Commit a claim at `path` naming `machine` unless one is there; True if added."""
    if claim_holder(git, ref, path) is not None:
        return False
    head = git.rev(ref)
    data = ('{"machine": "' + machine + '"}\n').encode("ascii")
    store_blobs(git, {blob_oid(data): data})
    tree = write_tree(
        git,
        head or EMPTY_TREE,
        ("-z", "--index-info"),
        f"100644 {blob_oid(data)}\t{path}\0".encode(),
    )
    message = commit_message(f"{LABEL}: dream claim {path}", [])
    commit = commit_tree(git, tree, (head,) if head else (), message)
    git.run("update-ref", ref, commit, head or "0" * 40)
    return True


def may_dream(
    state_dir: str,
    memory_dir: str,
    night: str,
    *,
    branch: str,
    timeout_seconds: float,
    sync: Callable[[], object],
) -> bool:
    """Return True when this machine dreams `memory_dir` for `night`.

    The claim is a file, ``dreams/<identity>/<night>.json`` naming a machine,
    committed and pushed by the next sync; a merge keeps the claim that
    reached the remote first (`Layout.first_wins`), so of two machines that
    claim one night, the first to push dreams and the other steps aside. A
    machine that cannot reach the remote dreams (its claim goes out later
    and loses or wins then). Without personal sync, or for a project it does
    not sync, a machine always dreams.
    """
    repo = repo_dir(state_dir)
    if not is_repo(repo):
        return True
    git_dir = os.path.join(repo, ".git")
    target = memory_dir.rstrip(os.sep)
    identity = next((i for i, d in read_places(git_dir).items() if d == target), None)
    if identity is None:
        return True
    path = claim_path(identity, night)
    ref = f"refs/heads/{branch}"
    lock_fd = try_lock(os.path.join(git_dir, MEMD_DIR, "sync.lock"))
    if lock_fd is None:
        return True  # a sync is running; the claim goes out with the next one
    try:
        git = Git(repo, timeout_seconds, lock_fd=lock_fd)
        me = machine_id(git_dir)
        add_claim(git, ref, path, me)
    finally:
        os.close(lock_fd)
    sync()
    holder = claim_holder(Git(repo, timeout_seconds), ref, path)
    return holder in (None, me)
