"""One personal sync: every project's memory dir against one private remote.

The repository lives in the state dir (``<state>/sync/repo/.git``) and has
no checkout of its own: its tree is

```
manifest.json                 {"projects": [identity, ...]}: every project synced
projects/<identity>/...       one project's memory: MEMORY.md, topic files, logs/
```

and each ``projects/<identity>/`` folder is *placed* in the memory dir the
agent reads for that project on this machine (its own munged path), never
through a symlink. `memd.gitsync` does the merging with a `Layout` that
says where each folder lives, so team and personal sync share one engine:
the index is a union, a topic file both sides changed keeps both, a delete
against an edit keeps the edit, every file is written with `write_atomic`
behind the same journal, and a sync killed at any instant leaves every file
old or new.

A sync, under ``.git/memd/sync.lock``:

1. **Recover** a merge a killed sync was writing (the engine's journal).
2. **Attach** each project first seen here: its folder, as the repository
   has it, is written into its memory dir (a local file that differs stays,
   theirs goes beside it), then recorded in ``.git/memd/places.json``.
3. **Commit** each placed memory dir's changes against the folder in HEAD,
   from objects only. Hidden files, ``team/`` (team memory never goes to a
   personal remote), symlinks, non-Markdown files, files with lint errors
   and files in which `memd.lint.secrets` finds a likely secret stay out and
   are reported with the file and line.
4. **Fetch, merge, push** as team sync does, refusing a remote tree with any
   path outside the layout whole, before anything is written.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from memd.claude_code.terms import INDEX_NAME
from memd.errors import UsageError
from memd.gitsync.apply import check_deletions, write_changes
from memd.gitsync.git import Git, GitError, redact
from memd.gitsync.layout import Layout, deepest_folder
from memd.gitsync.loop import Committed, locked_sync
from memd.gitsync.objects import (
    EMPTY_TREE,
    MEMD_DIR,
    REMOTE,
    blob_oid,
    commit_message,
    commit_tree,
    printable,
    read_blob,
    store_blobs,
    tree_of,
    write_tree,
)
from memd.gitsync.repo import init_repo, is_repo
from memd.gitsync.result import Merged, SyncResult
from memd.gitsync.scan import Scan, index_to_commit, scan_folder, secret_refusal
from memd.sync.tree import (
    LABEL,
    MANIFEST,
    PROJECTS,
    folder_of,
    folders_with_files,
    identities_in,
    local_refusal,
    manifest_bytes,
    manifest_identities,
    personal_layout,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from structlog.typing import FilteringBoundLogger

PLACES_FILE = "places.json"


@dataclass(frozen=True, slots=True)
class Project:
    """A project on this machine: its identity and the memory dir the agent reads."""

    identity: str
    memory_dir: str  # without a trailing separator
    project_root: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PersonalResult:
    """What one personal sync did: the shared `SyncResult` and the projects in it."""

    sync: SyncResult
    projects: tuple[Project, ...] = ()
    attached: tuple[str, ...] = ()  # identities whose memory this machine received
    shared: tuple[str, ...] = ()  # identities this machine is the first to sync
    not_synced: tuple[tuple[str, str], ...] = ()  # (project or memory dir, why)

    def to_dict(self) -> dict[str, object]:
        return {
            **self.sync.to_dict(),
            "projects": {p.identity: p.memory_dir for p in self.projects},
            "attached": list(self.attached),
            "shared": list(self.shared),
            "not_synced": [list(item) for item in self.not_synced],
        }


def repo_dir(state_dir: str) -> str:
    """Return the directory whose ``.git`` is the personal repository."""
    return os.path.join(state_dir, "sync", "repo")


def is_enabled(state_dir: str) -> bool:
    """Return True once `memd sync init` has made the personal repository."""
    return is_repo(repo_dir(state_dir))


# -- setup -------------------------------------------------------------------------


def init_personal(
    state_dir: str,
    remote_url: str,
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
    team_urls: Iterable[str] = (),
) -> None:
    """Make the personal repository with `remote_url` as its origin (idempotent).

    Raises:
        UsageError: the URL is a team remote, or the repository already
            syncs with another URL.
        GitError: git failed.
    """
    if _same_remote(remote_url, team_urls):
        raise UsageError(
            f"{redact(remote_url)} is a team remote; personal memory never goes to "
            "a team's repository (use a private repository of your own)"
        )
    init_repo(
        repo_dir(state_dir),
        remote_url,
        branch=branch,
        timeout_seconds=timeout_seconds,
        log=log,
    )


def _same_remote(url: str, others: Iterable[str]) -> bool:
    from memd.gitsync.git import is_same_remote

    return is_same_remote(url, others)


# -- the sync ----------------------------------------------------------------------


def sync_personal(
    state_dir: str,
    projects: Iterable[Project],
    *,
    branch: str,
    timeout_seconds: float,
    log: FilteringBoundLogger,
    lint_errors: Callable[[str], Mapping[str, str]] | None = None,
    allow: frozenset[str] = frozenset(),
    max_file_bytes: int = 256 * 1024,
    is_dream_running: Callable[[str], bool] | None = None,
    allow_deletes: bool = False,
) -> PersonalResult:
    """Run one personal sync of `projects` and return what happened.

    Never raises for git or the remote: an unreachable remote is an
    ``offline`` result, a hostile tree a ``failed`` one, and a sync that
    would delete many files (`memd.gitsync.apply.check_deletions`) a ``failed``
    one that names ``--allow-deletes``, unless `allow_deletes`.

    Raises:
        UsageError: `memd sync init` has not been run.
    """
    from memd.gitsync.lintgate import lint_errors as default_lint
    from memd.locks import is_dream_running as dream_holds

    repo = repo_dir(state_dir)
    if not is_repo(repo):
        raise UsageError("personal sync is off (run `memd sync init --remote URL`)")
    chosen, not_synced = _one_dir_per_identity(projects)
    holds = is_dream_running or dream_holds
    if any(holds(p.memory_dir) for p in chosen):
        log.info("personal_sync_skipped", why="dream_running")
        skipped = SyncResult(team_dir=repo, state="skipped", error="a dream is running")
        return PersonalResult(sync=skipped, projects=chosen, not_synced=not_synced)
    return _sync_locked(
        repo,
        branch,
        timeout_seconds,
        chosen,
        not_synced,
        log=log,
        lint_errors=lint_errors or default_lint,
        allow=allow,
        max_file_bytes=max_file_bytes,
        merged=Merged(allow_deletes=allow_deletes),
    )


def _one_dir_per_identity(
    projects: Iterable[Project],
) -> tuple[tuple[Project, ...], tuple[tuple[str, str], ...]]:
    """Keep one memory dir per identity (the first by path); report the others."""
    by_identity: dict[str, Project] = {}
    by_dir: dict[str, Project] = {}
    not_synced: list[tuple[str, str]] = []
    for project in sorted(projects, key=lambda p: (p.memory_dir, p.identity)):
        if project.memory_dir in by_dir:
            continue  # a second worktree or a second root of the same dir
        other = by_identity.get(project.identity)
        if other is not None:
            not_synced.append(
                (
                    project.memory_dir,
                    f"same identity {project.identity} as {other.memory_dir}",
                )
            )
            continue
        by_identity[project.identity] = by_dir[project.memory_dir] = project
    return tuple(by_identity.values()), tuple(not_synced)


def _places_path(git: Git) -> str:
    return os.path.join(git.git_dir, MEMD_DIR, PLACES_FILE)


def read_places(git_dir: str) -> dict[str, str]:
    """Return identity -> memory dir of the projects attached on this machine."""
    from memd.fastjson import loads
    from memd.fsread import read_bytes

    try:
        data = loads(read_bytes(os.path.join(git_dir, MEMD_DIR, PLACES_FILE), 1 << 22))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _write_places(git: Git, places: Mapping[str, str]) -> None:
    from memd.atomic import write_atomic
    from memd.fastjson import dumps

    write_atomic(
        _places_path(git), (dumps(dict(sorted(places.items()))) + "\n").encode()
    )


def _sync_locked(
    repo: str,
    branch: str,
    timeout_seconds: float,
    projects: tuple[Project, ...],
    not_synced: tuple[tuple[str, str], ...],
    *,
    log: FilteringBoundLogger,
    lint_errors: Callable[[str], Mapping[str, str]],
    allow: frozenset[str],
    max_file_bytes: int,
    merged: Merged,
) -> PersonalResult:
    places: dict[str, str] = {}
    attached: list[str] = []
    shared: list[str] = []
    new_here: list[str] = []  # placed on this machine by this run

    def start(git: Git, ref: str) -> None:
        places.update(read_places(git.git_dir))
        gone = [i for i, d in places.items() if not os.path.isdir(d)]
        if gone:  # a memory dir removed whole: re-attach later, delete nothing
            for identity in gone:
                del places[identity]
            _write_places(git, places)

    def layout(git: Git, ref: str) -> Layout:
        # A killed merge is finished with the places it was writing into.
        return personal_layout(places, identities_in(git, git.rev(ref)))

    def attach(git: Git, ref: str) -> None:
        # Every attached dir stays placed whether or not this run resolved its
        # project: a folder left unplaced would miss merges, then commit its
        # stale files back as if they were edits.
        for project in projects:
            identity, memory_dir = project.identity, project.memory_dir
            if places.get(identity) == memory_dir:
                continue
            head = git.rev(ref)
            os.makedirs(memory_dir, mode=0o700, exist_ok=True)
            if head is not None:
                known = identities_in(git, head) | frozenset(places) | {identity}
                alone = personal_layout({identity: memory_dir}, known)
                write_changes(git, None, head, merged, frozenset(), alone)
            new_here.append(identity)
            places[identity] = memory_dir
            _write_places(git, places)

    def fetched(git: Git, ref: str) -> None:
        # What the remote held before this machine pushed: the memory of a
        # project new here was received, or this machine is its first.
        if new_here:
            held = folders_with_files(git, git.rev(f"refs/remotes/{REMOTE}/{branch}"))
            for identity in new_here:
                (attached if folder_of(identity) in held else shared).append(identity)

    result = locked_sync(
        repo,
        branch=branch,
        timeout_seconds=timeout_seconds,
        log=log,
        event="personal",
        merged=merged,
        layout=layout,
        commit=lambda git, ref: _commit_places(
            git, ref, places, lint_errors, allow, max_file_bytes, merged
        ),
        start=start,
        prepare=attach,
        fetched=fetched,
        fields={"repo": repo, "projects": len(projects)},
    )
    if result is None:
        result = SyncResult(
            team_dir=repo, state="skipped", error="another sync is running"
        )
    return PersonalResult(
        sync=result,
        projects=projects,
        attached=tuple(attached),
        shared=tuple(shared),
        not_synced=not_synced,
    )


# -- committing the memory dirs -----------------------------------------------------


def _blob_oid(data: bytes) -> str:
    return blob_oid(data)  # the personal repository is sha1 (`git init`'s default)


def collect_files(memory_dir: str, max_file_bytes: int) -> Scan:
    """Walk `memory_dir` for what could travel (`memd.gitsync.scan.scan_folder`).

    Hidden entries and ``team/`` are skipped silently: they are never
    personal memory. Symlinks are never followed.
    """
    return scan_folder(
        memory_dir,
        max_file_bytes=max_file_bytes,
        refusal=local_refusal,
        skip=lambda relpath: relpath == "team",
    )


def _commit_places(
    git: Git,
    ref: str,
    places: Mapping[str, str],
    lint_errors: Callable[[str], Mapping[str, str]],
    allow: frozenset[str],
    max_file_bytes: int,
    merged: Merged,
) -> Committed:
    """Commit every placed memory dir's changes; say what went and what stayed out.

    Local paths are reported, so status and lint output point at the file.
    Only files that differ from HEAD are judged (a memory dir with no change
    is not even linted), and their blobs are stored in one `store_blobs`
    call. A file in HEAD that the walk did not reach is *not seen* and
    stays; only one the walk saw gone is deleted (`Scan.is_gone`).
    """
    head = git.rev(ref)
    tree = tree_of(git, head)
    identities = manifest_identities(
        read_blob(git, tree[MANIFEST][1]) if MANIFEST in tree else b""
    )
    folders = frozenset(folder_of(i) for i in identities | set(places))
    in_head: dict[str, dict[str, str]] = {}  # folder -> rest -> blob
    for relpath, (_, oid) in tree.items():
        folder = deepest_folder(relpath, folders)
        if folder is not None:
            in_head.setdefault(folder, {})[relpath[len(folder) :]] = oid
    updates: list[str] = []
    committed: list[str] = []
    in_repo: list[str] = []  # the message names repository paths, not this machine's
    left_out: list[tuple[str, str]] = []
    dirty: set[str] = set()
    to_store: dict[str, bytes] = {}
    deleted: dict[str, list[str]] = {}
    for identity, memory_dir in sorted(places.items()):
        prefix = folder_of(identity)
        head_files = in_head.get(prefix, {})
        scan = collect_files(memory_dir, max_file_bytes)
        changed = {
            relpath: data
            for relpath, data in scan.files.items()
            if not (
                isinstance(data, bytes) and head_files.get(relpath) == _blob_oid(data)
            )
        }
        errors = lint_errors(memory_dir) if changed else {}
        going: dict[str, bytes] = {}
        held_back: set[str] = set()
        for relpath, data in sorted(changed.items()):
            path = os.path.join(memory_dir, relpath)
            why = data if isinstance(data, str) else None
            owner = deepest_folder(prefix + relpath, folders)
            if why is None and owner != prefix and owner is not None:
                why = f"inside the folder of project {owner[len(PROJECTS) : -1]}"
            if why is None and isinstance(data, bytes):
                why = secret_refusal(data, allow)  # the bytes that would be pushed
            if why is None and relpath in errors:
                why = f"lint error: {errors[relpath]}"
            if why is not None or not isinstance(data, bytes):
                left_out.append((printable(path), why or "left out"))
                dirty.add(prefix + relpath)
                held_back.add(relpath)
                continue
            going[relpath] = data
        for relpath, data in going.items():
            if relpath == INDEX_NAME:
                data = index_to_commit(data, frozenset(held_back - head_files.keys()))
            oid = _blob_oid(data)
            to_store[oid] = data
            updates.append(f"100644 {oid}\t{prefix}{relpath}\0")
            committed.append(os.path.join(memory_dir, relpath))
            in_repo.append(prefix + relpath)
        for relpath in sorted(head_files):
            if relpath in scan.files:
                continue
            if not scan.is_gone(relpath):
                merged.not_seen.append(os.path.join(memory_dir, relpath))
                continue
            deleted.setdefault(prefix, []).append(os.path.join(memory_dir, relpath))
            updates.append(f"0 {'0' * 40}\t{prefix}{relpath}\0")
            committed.append(os.path.join(memory_dir, relpath))
            in_repo.append(f"{prefix}{relpath} (deleted)")
    check_deletions(
        deleted,
        {folder: len(files) for folder, files in in_head.items()},
        merged=merged,
        direction="on the remote",
        command=LABEL,
    )
    if not set(places) <= identities or MANIFEST not in tree:
        manifest = manifest_bytes(identities | set(places))
        to_store[_blob_oid(manifest)] = manifest
        updates.append(f"100644 {_blob_oid(manifest)}\t{MANIFEST}\0")
    kept_out = Committed(left_out=tuple(left_out), dirty=frozenset(dirty))
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
    lines = [f"- {path}" for path in in_repo]
    message = commit_message(
        f"{LABEL}: {len(committed)} file(s)",
        lines,
        agreed=bool(deleted) and merged.allow_deletes,
    )
    commit = commit_tree(git, new_tree, (head,) if head else (), message)
    git.run("update-ref", ref, commit, head or "0" * 40)
    return Committed(tuple(committed), tuple(left_out), frozenset(dirty))


# -- queries -----------------------------------------------------------------------


def remote_of(state_dir: str, timeout_seconds: float) -> str | None:
    """Return the personal remote's URL, redacted, or None before `memd sync init`."""
    from memd.gitsync.repo import remote_url

    repo = repo_dir(state_dir)
    if not is_repo(repo):
        return None
    with contextlib.suppress(GitError):
        return remote_url(repo, timeout_seconds)
    return None
