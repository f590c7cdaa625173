"""Read a project's repository through bounded git plumbing, cached by `HEAD` (edge).

Every call goes through `memd.gitsync.git.Git.run`, the one git runner:
explicit ``--git-dir``/``--work-tree``, ``-c`` hardening no repository can
override (no fsmonitor, no hooks, no attributes file), a deadline that kills
git's whole process group, and here a bound on what git may print. The
commands only read objects and the ignore rules: ``rev-parse``, ``ls-tree``,
``log --name-status`` (with ``--no-ext-diff --no-textconv``, no signatures),
``cat-file --batch`` without ``--filters``, ``check-ignore``; none of them
runs a filter, a hook, a pager or an external diff. A repository whose own
config names a program for git to run (`_STEERING`) is not read at all.

A cold read has one budget for all its calls (`READ_BUDGET_SECONDS`), each
call at most `TIMEOUT_SECONDS`, so a huge history costs a bounded wait and
one D003 info, never a hang. `Repository.facts` keeps one JSON file per
repository in ``<cache>/truth/``: the facts at the last `HEAD` read. The
same `HEAD` costs one ``rev-parse`` and a JSON load; a `HEAD` that moved
forward reads only the new commits' log.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from types import MappingProxyType

from memd.errors import MemdError
from memd.truth.facts import (
    RepoFacts,
    Version,
    parse_batch,
    parse_commit_list,
    parse_departures,
    parse_tree_names,
    union,
)
from memd.truth.scripts import DEFINITION_FILES, KIND_OF_FILE, defined_commands

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterable
    from typing import Any

    from memd.gitsync.git import Git

TIMEOUT_SECONDS = 10.0  # one git call
READ_BUDGET_SECONDS = 20.0  # every call of one cold read together
TREE_BYTES = 256 * 1024 * 1024
LOG_BYTES = 128 * 1024 * 1024
LOG_COMMITS = 50_000  # the history window: older departures are not reported
VERSIONS_PER_FILE = 100
DEFINITIONS_PER_KIND = 64
_SKIPPED_FOLDERS = ("node_modules/", "vendor/", "third_party/")
# Reading a log or a blob must start nothing: no signature check, no pager.
_READ_CONFIG = ("log.showSignature=false",)
# `.git/config` keys that make git run a program or read a file a
# repository chose; a repository that sets one is not read. (Hooks and
# clean/smudge filters never run for these commands, so `core.hooksPath`
# and `filter.lfs.*`, common in ordinary repositories, are not on it.)
_STEERING = (
    "core.fsmonitor",
    "core.pager",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "core.sshcommand",
    "diff.external",
    "gpg.program",
    "log.showsignature",
    "uploadpack.packobjectshook",
    "include.path",
)
_STEERING_SUFFIXES = (".textconv", ".command", ".program")
_STEERING_PREFIXES = ("includeif.", "pager.")


class Unreadable(MemdError):
    """memd could not (or would not) read this repository; the reason, for a person."""


@dataclass(frozen=True, slots=True)
class Repository:
    """One project's git repository: where its work tree is and its runner."""

    root: str
    git: Git
    # A partial clone fetches missing blobs from its remote when rename
    # detection reads them: such a repository gets exact renames only.
    is_partial: bool = False

    def facts(self, cache_dir: str | None) -> RepoFacts:
        """Return the repository's facts at `HEAD`, from the cache when it holds them.

        Raises:
            Unreadable: git failed, timed out, printed too much, or the repository
                asks git to run a program.
        """
        from memd.gitsync.git import GitError

        try:
            return _read_facts(self, cache_dir)
        except GitError as error:
            raise Unreadable(str(error)) from None

    def present(self, paths: Iterable[str]) -> frozenset[str]:
        """The `paths` that are on disk or that the repository ignores: not gone."""
        from memd.gitsync.git import GitError

        wanted = [p for p in dict.fromkeys(paths) if "\n" not in p and "\0" not in p]
        here = {p for p in wanted if _on_disk(self.root, p)}
        rest = [p for p in wanted if p not in here]
        if not rest:
            return frozenset(here)
        try:
            done = self.git.run(
                "check-ignore",
                "--no-index",
                "-z",
                "--stdin",
                input_bytes=b"".join(
                    p.encode("utf-8", "surrogateescape") + b"\0" for p in rest
                ),
                check=False,
                max_output_bytes=16 * 1024 * 1024,
                extra_config=_READ_CONFIG,
                literal_pathspecs=False,
            )
        except GitError:
            return frozenset(wanted)  # cannot tell: say nothing about any of them
        if done.returncode not in (0, 1):
            return frozenset(wanted)
        ignored = {
            name.decode("utf-8", "surrogateescape")
            for name in done.stdout.split(b"\0")
            if name
        }
        return frozenset(here | ignored)


def open_repository(
    project_root: str, *, timeout_seconds: float = TIMEOUT_SECONDS
) -> Repository:
    """Return the repository `project_root` is in, with its bounded git runner.

    Raises:
        Unreadable: no git repository holds `project_root`, or its config
            names a program (`_STEERING`).
    """
    from memd.claude_code.gitroot import find_git_root
    from memd.gitsync.git import Git, GitError

    root = find_git_root(project_root)
    if root is None:
        raise Unreadable("it is not in a git repository")
    git = Git(work_tree=root, timeout_seconds=timeout_seconds)
    try:
        listed = git.run(
            "config",
            "--local",
            "--null",
            "--list",
            check=False,
            max_output_bytes=1024 * 1024,
        )
    except GitError as error:
        raise Unreadable(str(error)) from None
    steering = sorted(
        {
            key
            for record in listed.stdout.split(b"\0")
            if record
            and _is_steering(
                key := record.split(b"\n", 1)[0].decode("utf-8", "replace").lower(),
                record.partition(b"\n")[2].decode("utf-8", "replace").strip().lower(),
            )
        }
    )
    if steering:
        raise Unreadable(
            f"its .git/config sets {', '.join(steering)}, which could start a program; "
            "memd reads no repository that asks for one"
        )
    is_partial = any(
        record.split(b"\n", 1)[0].lower() == b"extensions.partialclone"
        for record in listed.stdout.split(b"\0")
    )
    return Repository(root, git, is_partial)


def _is_steering(key: str, value: str) -> bool:
    if key == "core.fsmonitor" and value in (
        "false",
        "0",
        "no",
        "off",
        "true",
        "1",
        "yes",
        "on",
        "",
    ):
        return False  # the built-in daemon or off: no program of the repository's
    if key in _STEERING:
        return True
    if key.startswith(_STEERING_PREFIXES):
        return True
    return key.startswith(("diff.", "merge.")) and key.endswith(_STEERING_SUFFIXES)


def _on_disk(root: str, relpath: str) -> bool:
    try:
        os.lstat(os.path.join(root, relpath))
    except (OSError, ValueError):
        return False
    return True


class _Budget:
    """The runner with one deadline for a whole read: each call gets what is left."""

    def __init__(self, git: Git, seconds: float) -> None:
        import time

        self.git = git
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        import dataclasses
        import time

        from memd.gitsync.git import GitError

        left = self.deadline - time.monotonic()
        if left <= 0:
            raise GitError(f"reading it took longer than {self.seconds:g} s")
        bounded = dataclasses.replace(
            self.git, timeout_seconds=min(self.git.timeout_seconds, left)
        )
        return bounded.run(*args, **kwargs)


def _read_facts(repo: Repository, cache_dir: str | None) -> RepoFacts:
    git = _Budget(repo.git, READ_BUDGET_SECONDS)
    head = (
        git.run(
            "rev-parse",
            "--verify",
            "--quiet",
            "HEAD^{commit}",
            check=False,
            max_output_bytes=4096,
        )
        .stdout.decode("ascii", "replace")
        .strip()
    )
    if not head:
        raise Unreadable("it has no commits yet")
    cached = _load_cache(cache_dir, repo.root)
    if cached is not None and cached.head == head:
        return cached
    files = parse_tree_names(
        git.run(
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            head,
            max_output_bytes=TREE_BYTES,
        ).stdout
    )
    since = None
    if cached is not None:
        is_ancestor = git.run(
            "merge-base",
            "--is-ancestor",
            cached.head,
            head,
            check=False,
            max_output_bytes=4096,
        )
        if is_ancestor.returncode == 0:
            since = cached
    revision = head if since is None else f"{since.head}..{head}"
    log = _departures_log(repo, git, revision)
    gone = parse_departures(log, files)
    if since is not None:
        for path, event in since.gone.items():
            if path not in files and path not in gone:
                gone[path] = event
    commands, versions, names = _definitions(git, head, files)
    facts = RepoFacts(
        head=head,
        files=files,
        gone=MappingProxyType(gone),
        commands=MappingProxyType(commands),
        versions=MappingProxyType(versions),
        definition_names=MappingProxyType(names),
        ordered=tuple(sorted(files)),
    )
    _save_cache(cache_dir, repo.root, facts)
    return facts


def _departures_log(repo: Repository, git: _Budget, revision: str) -> bytes:
    """``git log`` of every removal and rename in `revision`, newest first.

    Renames with edits need the blobs' contents; a repository missing some
    (a partial clone, a shallow snapshot) gets exact renames only, which git
    finds by object id alone.
    """
    from memd.gitsync.git import GitError

    def log(renames: str) -> bytes:
        return git.run(
            "log", renames, "--diff-filter=DR", "--name-status", "-z", "--no-ext-diff",
            "--no-textconv", "--no-show-signature", "--no-color",
            f"--max-count={LOG_COMMITS}", "--format=%x01%h %cs", revision, "--",
            max_output_bytes=LOG_BYTES, extra_config=_READ_CONFIG,
        ).stdout  # fmt: skip

    if repo.is_partial:
        return log("-M100%")
    try:
        return log("-M")
    except GitError as error:
        if "unable to read" not in str(error):
            raise
        return log("-M100%")


def _definitions(
    git: _Budget, head: str, files: frozenset[str]
) -> tuple[
    dict[str, frozenset[str] | None], dict[str, tuple[Version, ...]], dict[str, str]
]:
    """What every definition file at `head` defines, and the root ones' versions."""
    by_kind: dict[str, list[str]] = {kind: [] for kind in DEFINITION_FILES}
    for path in sorted(files, key=lambda p: (p.count("/"), p)):
        kind = KIND_OF_FILE.get(path.rsplit("/", 1)[-1])
        if (
            kind is None
            or "\n" in path
            or path.startswith(_SKIPPED_FOLDERS)
            or any(f"/{folder}" in path for folder in _SKIPPED_FOLDERS)
        ):
            continue
        if len(by_kind[kind]) < DEFINITIONS_PER_KIND:
            by_kind[kind].append(path)
    wanted = [path for paths in by_kind.values() for path in paths]
    blobs = _cat(git, [f"{head}:{path}" for path in wanted])
    contents = dict(zip(wanted, blobs, strict=True))
    commands: dict[str, frozenset[str] | None] = {
        kind: union(
            defined_commands(kind, data) if data is not None else None
            for data in (contents[p] for p in paths)
        )
        for kind, paths in by_kind.items()
    }
    roots = [name for names in DEFINITION_FILES.values() for name in names]
    log = git.run(
        "log",
        "--no-renames",
        "--no-show-signature",
        f"--max-count={VERSIONS_PER_FILE * 2}",
        "--format=%x01%h %cs",
        "--name-only",
        "-z",
        head,
        "--",
        *roots,
        max_output_bytes=16 * 1024 * 1024,
        extra_config=_READ_CONFIG,
    ).stdout
    touched: dict[str, list[tuple[str, str, str]]] = {
        kind: [] for kind in DEFINITION_FILES
    }
    for chunk in log.split(b"\x01"):
        header, _, body = chunk.partition(b"\0")
        commit = parse_commit_list(header)
        if not commit:
            continue
        sha, date = commit[0]
        for raw in body.lstrip(b"\n").split(b"\0"):
            touched_name = raw.decode("utf-8", "replace")
            kind = KIND_OF_FILE.get(touched_name)
            if kind is not None and len(touched[kind]) < VERSIONS_PER_FILE:
                touched[kind].append((sha, date, touched_name))
    requests = [
        (kind, sha, date, name)
        for kind, rows in touched.items()
        for sha, date, name in rows
    ]
    old = _cat(git, [f"{sha}:{name}" for _, sha, _, name in requests])
    versions: dict[str, list[Version]] = {kind: [] for kind in DEFINITION_FILES}
    names: dict[str, str] = {}
    for (kind, sha, date, name), data in zip(requests, old, strict=True):
        names.setdefault(kind, name)
        parsed = defined_commands(kind, data) if data is not None else None
        if data is not None and parsed is None:
            continue  # unreadable then: neither proof of having nor of losing a name
        versions[kind].append(Version(sha, date, parsed))
    return commands, {k: tuple(v) for k, v in versions.items() if v}, names


def _cat(git: _Budget, names: list[str]) -> list[bytes | None]:
    """The blobs `names` (``rev:path``) name, through one ``cat-file --batch``."""
    if not names:
        return []
    done = git.run(
        "cat-file",
        "--batch",
        input_bytes="".join(name + "\n" for name in names).encode(
            "utf-8", "surrogateescape"
        ),
        max_output_bytes=128 * 1024 * 1024,
    )
    return parse_batch(done.stdout, len(names))


def _cache_path(cache_dir: str, root: str) -> str:
    from memd.claude_code.paths import sanitize_path

    return os.path.join(
        cache_dir, "truth", sanitize_path(os.path.realpath(root)) + ".json"
    )


def _load_cache(cache_dir: str | None, root: str) -> RepoFacts | None:
    if cache_dir is None:
        return None
    from memd.fastjson import loads
    from memd.fsread import read_bytes

    try:
        data = read_bytes(_cache_path(cache_dir, root), 512 * 1024 * 1024)
        return RepoFacts.from_json(loads(data))
    except (OSError, ValueError):
        return None


def _save_cache(cache_dir: str | None, root: str, facts: RepoFacts) -> None:
    if cache_dir is None:
        return
    from memd.atomic import write_atomic
    from memd.fastjson import dumps

    path = _cache_path(cache_dir, root)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_atomic(path, dumps(facts.to_json()).encode("utf-8", "surrogateescape"))
    except OSError:
        pass  # a cache that cannot be written is read again next time


def head_signature(project_root: str) -> tuple[object, ...] | None:
    """What changes when the repository's `HEAD` moves, by `stat` and small reads only.

    `HEAD` itself (its bytes: a branch switch), the branch's ref file and
    ``packed-refs`` (their stat keys: a commit, a fetch, a gc). No git runs,
    so the daemon can ask this every sweep. None when `project_root` is in no
    repository.
    """
    from memd.claude_code.gitroot import find_git_root
    from memd.fsread import read_prefix
    from memd.statkey import stat_key

    root = find_git_root(project_root)
    if root is None:
        return None
    git_dir = os.path.join(root, ".git")
    try:
        if not os.path.isdir(git_dir):
            pointer = read_prefix(git_dir, 4096).decode("utf-8", "replace").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git_dir = os.path.join(root, pointer[len("gitdir:") :].strip())
        head = read_prefix(os.path.join(git_dir, "HEAD"), 4096)
        common = git_dir
        with contextlib.suppress(OSError):
            shared = read_prefix(os.path.join(git_dir, "commondir"), 4096)
            common = os.path.join(git_dir, shared.decode("utf-8", "replace").strip())
    except OSError:
        return None
    ref = head.decode("utf-8", "replace").strip().removeprefix("ref:").strip()
    ref_key = stat_key(os.path.join(common, ref)) if ref.startswith("refs/") else None
    return (head, ref_key, stat_key(os.path.join(common, "packed-refs")))
