"""What `memd lint` and `memd fix` act on: memory dirs, project roots, lone files.

A PATH may be a memory directory, a project root (resolved as the agent
resolves it) or a single topic file; no PATH means the current directory's
project (or the memory dir the current directory is), as for every other
command, and `every` (`--all`) every `<base>/projects/*/memory` directory.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass

from memd.claude_code.terms import INDEX_NAME, TEAM_DIR
from memd.fsread import list_names
from memd.lint.checks_index import is_team_file

TEAM_PREFIX = TEAM_DIR + "/"
ORPHAN_CODE = "I006"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memd.claude_code.profile import ProfileSpec
    from memd.config import Config
    from memd.diagnostics import Diagnostic
    from memd.memory.memdir import MemDir, ParseCache


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to lint: a memory directory (`is_dir`) or a lone topic file.

    `error` is the errno text when the path could not be read at all; the
    lint reports it as F005 instead of passing it over as clean.
    """

    path: str
    is_dir: bool
    error: str | None = None


def resolve_targets(
    paths: Sequence[str],
    env: Mapping[str, str] | None = None,
    *,
    profile: ProfileSpec = None,
    every: bool = False,
    cwd: str | None = None,
) -> tuple[Target, ...]:
    """Return the memory dirs and files `paths` name; none: `cwd`'s project's.

    With `every` and no paths: every known memory dir. A project directory
    is resolved to its memory dir as `profile` (the agent release in force;
    None: the newest) would resolve it. A current project with no memory
    dir yet gives no target (see `current_memory_dir`).

    Raises:
        UsageError: a path does not exist, or is a project with no memory dir.
    """
    from memd.errors import UsageError

    if not paths and every:
        return discover_targets(env)
    if not paths:
        here = current_memory_dir(cwd or os.getcwd(), env, profile)
        return (Target(here, True),) if os.path.isdir(here) else ()
    targets: list[Target] = []
    for raw in paths:
        path = _named_path(raw, cwd or os.getcwd(), env, profile)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise UsageError(f"{raw}: no such file or directory") from None
        except OSError as error:
            # Permission denied is not "no such file": say what really happened.
            targets.append(Target(path, True, _errno_text(error)))
            continue
        if stat.S_ISREG(mode):
            if os.path.basename(path) == INDEX_NAME:
                targets.append(Target(os.path.dirname(path), True))
            else:
                targets.append(Target(path, False))
        elif stat.S_ISDIR(mode):
            targets.append(Target(_memory_dir_for(raw, path, env, profile), True))
        else:
            raise UsageError(f"{raw}: not a regular file or directory")
    return tuple(dict.fromkeys(targets))  # in order, without repeats


def _named_path(
    raw: str, cwd: str, env: Mapping[str, str] | None, profile: ProfileSpec
) -> str:
    """`raw` as a path, or, when no such path exists, as the agent names a
    memory file: relative to `cwd`'s project's memory dir (`feedback_tests.md`).

    Raises:
        UsageError: neither exists.
    """
    from memd.errors import UsageError
    from memd.relpath import relpath_refusal

    path = os.path.join(cwd, raw)
    if os.path.lexists(path) or relpath_refusal(raw) is not None:
        return os.path.abspath(path)
    memory_dir = current_memory_dir(cwd, env, profile)
    in_memory = os.path.join(memory_dir, raw)
    if os.path.lexists(in_memory):
        return in_memory
    raise UsageError(
        f"{raw}: no such file here or in this project's memory ({memory_dir})"
    )


def current_memory_dir(
    cwd: str, env: Mapping[str, str] | None, profile: ProfileSpec
) -> str:
    """The memory dir a command run in `cwd` acts on, whether or not it exists.

    `cwd` itself when it is a memory dir (it holds MEMORY.md, or is named
    `memory`); else its project's, resolved as the agent resolves it.
    """
    from memd.claude_code.paths import resolve_memory_location

    if os.path.isfile(os.path.join(cwd, INDEX_NAME)) or os.path.basename(
        cwd.rstrip(os.sep)
    ) in ("memory", "team"):
        return cwd
    location = resolve_memory_location(cwd, env, profile=profile)
    return location.memory_dir.rstrip(os.sep)


def _errno_text(error: OSError) -> str:
    return error.strerror or type(error).__name__


def discover_targets(env: Mapping[str, str] | None = None) -> tuple[Target, ...]:
    """Return every `<base>/projects/*/memory` dir, and the ones that cannot be read.

    A base or projects directory that does not exist means no memory yet; one
    that exists but cannot be listed (or a project that cannot be entered) is
    a target with its errno text, never silently clean.
    """
    from memd.claude_code.paths import memory_base_dir

    projects = os.path.join(memory_base_dir(env), "projects")
    try:
        names = list_names(projects)
    except FileNotFoundError:
        return ()
    except OSError as error:
        return (Target(projects, True, _errno_text(error)),)
    targets: list[Target] = []
    for name in names:
        memory_dir = os.path.join(projects, name, "memory")
        try:
            st = os.lstat(memory_dir)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as error:
            targets.append(Target(memory_dir, True, _errno_text(error)))
            continue
        if stat.S_ISDIR(st.st_mode):
            targets.append(Target(memory_dir, True))
    return tuple(targets)


def discover_memory_dirs(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Return every readable `<base>/projects/*/memory` directory, sorted."""
    return tuple(t.path for t in discover_targets(env) if t.error is None)


def _memory_dir_for(
    raw: str, path: str, env: Mapping[str, str] | None, profile: ProfileSpec
) -> str:
    """Return `path` if it is a memory dir, else the memory dir of its project."""
    from memd.claude_code.gitroot import find_git_root
    from memd.claude_code.paths import resolve_memory_location
    from memd.errors import UsageError

    if os.path.isfile(os.path.join(path, INDEX_NAME)) or os.path.basename(path) in (
        "memory",
        "team",
    ):
        return path
    has_markdown = any(name.endswith(".md") for name in _listdir(path))
    if has_markdown and find_git_root(path, profile=profile) is None:
        return path  # a loose directory of topic files, not a project
    location = resolve_memory_location(path, env, profile=profile)
    memory_dir = location.memory_dir.rstrip(os.sep)
    if os.path.isdir(memory_dir):
        return memory_dir
    raise UsageError(
        f"{raw}: not a memory directory, and its project has none at {memory_dir}"
    )


def _listdir(path: str) -> list[str]:
    try:
        return list_names(path)
    except OSError:
        return []


def infer_memory_dir(path: str) -> tuple[str, str]:
    """Infer (memory dir, relpath) for a lone file: where directory lint sees it.

    Not `memd.daemon.discovery.memory_dir_of`, which looks a path up among the
    directories already watched; this one guesses from the disk.

    The nearest ancestor holding MEMORY.md wins, then one named `memory`, then
    the parent of a `logs/` folder; failing all, the file's own directory. So
    a file linted alone gets exactly the findings its directory's lint gives it.
    """
    here = os.path.dirname(path)
    ancestors = [here]
    while os.path.dirname(ancestors[-1]) != ancestors[-1] and len(ancestors) < 64:
        ancestors.append(os.path.dirname(ancestors[-1]))
    chosen = next(
        (a for a in ancestors if os.path.isfile(os.path.join(a, INDEX_NAME))), None
    )
    chosen = chosen or next(
        (a for a in ancestors if os.path.basename(a) == "memory"), None
    )
    chosen = chosen or next(
        (os.path.dirname(a) for a in ancestors if os.path.basename(a) == "logs"),
        here,
    )
    chosen = team_owner(chosen) or chosen  # a team file is its memory dir's too
    return chosen, os.path.relpath(path, chosen).replace(os.sep, "/")


def team_owner(directory: str) -> str | None:
    """The memory dir whose `team/` `directory` is, or None.

    `memd lint DIR/team` and `memd lint DIR/team/x.md` lint `DIR` and keep the
    team's findings, so they equal what `memd lint DIR` says of the team.
    """
    directory = directory.rstrip(os.sep)
    parent = os.path.dirname(directory)
    if os.path.basename(directory) != TEAM_DIR or not os.path.isdir(directory):
        return None
    if _is_index_of(parent) or os.path.basename(parent) == "memory":
        return parent
    return None


def lint_targets(
    targets: Sequence[Target],
    *,
    severities: Mapping[str, str] | None = None,
    max_file_bytes: int = 256 * 1024,
    cwd: str | None = None,
    config: Config | None = None,
    profile: ProfileSpec = None,
) -> tuple[Diagnostic, ...]:
    """Lint every target; paths in the result are display paths (relative to cwd).

    `config`, when given, supplies the severities, the size limit and B002's
    section labels instead of `severities` and `max_file_bytes`, and (unless
    `profile` is given) the agent profile in force: its `[agent] version` pin,
    or the probed `claude`'s release. Without either, the newest profile.

    A lone file is linted with its memory directory and keeps only the
    findings about itself, so it gets what directory lint gives it.
    """
    import dataclasses

    from memd.lint.engine import display_path, sort_key

    why_labels = how_labels = None
    secret_allow: frozenset[str] = frozenset()
    if config is not None:
        severities, max_file_bytes = config.lint_severities, config.max_topic_file_bytes
        why_labels, how_labels = config.why_labels, config.how_labels
        secret_allow = frozenset(config.sync_allow)
        if profile is None:
            from memd.claude_code.choice import in_force

            profile = in_force(config).profile
    found: list[Diagnostic] = []
    wanted: dict[str, set[str] | None] = {}  # memory dir -> lone relpaths, or all
    for target in targets:
        if target.error is not None:
            found.append(_unreadable(target))
        elif target.is_dir and (owner := team_owner(target.path)) is not None:
            if owner not in wanted:
                wanted[owner] = {TEAM_PREFIX}
            elif (chosen := wanted[owner]) is not None:
                chosen.add(TEAM_PREFIX)
        elif target.is_dir:
            wanted[target.path.rstrip(os.sep)] = None
        else:
            memory_dir, relpath = infer_memory_dir(target.path)
            if memory_dir not in wanted:
                wanted[memory_dir] = {relpath}
            elif (chosen := wanted[memory_dir]) is not None:
                chosen.add(relpath)
    for memory_dir, relpaths in wanted.items():
        diagnostics = lint_dir(
            memory_dir,
            severities=severities,
            max_file_bytes=max_file_bytes,
            why_labels=why_labels,
            how_labels=how_labels,
            profile=profile,
            secret_allow=secret_allow,
        )
        for d in diagnostics:
            if (
                relpaths is None
                or d.path in relpaths
                or (TEAM_PREFIX in relpaths and is_team_file(d.path))
            ):
                path = display_path(memory_dir, d.path, cwd=cwd)
                found.append(dataclasses.replace(d, path=path))
    return tuple(sorted(dict.fromkeys(found), key=sort_key))


def lint_findings(
    memory_dir: str,
    config: Config,
    profile: ProfileSpec,
    *,
    cache: ParseCache | None = None,
) -> list[dict[str, object]]:
    """Lint one memory directory by `config` and `profile`: findings as plain dicts.

    What the hooks judge, whether they lint by themselves or the daemon lints
    for them (`cache`: the daemon's parses, kept across requests).
    """
    diagnostics = lint_dir(
        memory_dir.rstrip(os.sep) or os.sep,
        severities=config.lint_severities,
        max_file_bytes=config.max_topic_file_bytes,
        why_labels=config.why_labels,
        how_labels=config.how_labels,
        profile=profile,
        cache=cache,
        secret_allow=frozenset(config.sync_allow),
    )
    return [d.to_dict() for d in diagnostics]


def lint_dir(
    memory_dir: str,
    *,
    severities: Mapping[str, str] | None,
    max_file_bytes: int,
    why_labels: Sequence[str] | None = None,
    how_labels: Sequence[str] | None = None,
    profile: ProfileSpec = None,
    cache: ParseCache | None = None,
    secret_allow: frozenset[str] = frozenset(),
) -> tuple[Diagnostic, ...]:
    """Read one memory directory and lint it, file-level findings included.

    A `team/` holding its own MEMORY.md is team memory, an index of its own:
    its files are judged against it (their findings replace the private
    lint's), and a private `team/x.md` link still reaches its file. A lone
    team file, or `DIR/team`, is linted as part of `DIR` (`team_owner`), so
    one team file's lint equals its directory's.
    """
    import dataclasses

    from memd.lint.engine import lint_memdir, sort_key
    from memd.lint.reach import classify_links
    from memd.memory.index import parse_index
    from memd.memory.reader import load_memdir

    def lint(
        directory: str, cache: ParseCache | None
    ) -> tuple[tuple[Diagnostic, ...], MemDir]:
        memdir = load_memdir(directory, cache=cache, max_file_bytes=max_file_bytes)
        found = lint_memdir(
            memdir,
            severities=severities,
            why_labels=why_labels,
            how_labels=how_labels,
            profile=profile,
            secret_allow=secret_allow,
        )
        return found, memdir

    found, memdir = lint(memory_dir, cache)
    team = os.path.join(memory_dir, TEAM_DIR)
    if team_owner(team) != memory_dir.rstrip(os.sep) or not _is_index_of(team):
        return found
    # The agent's own convention indexes team files from the private MEMORY.md
    # as `team/x.md`: such a link reaches the file too, so it is no orphan.
    linked = {
        relpath.removeprefix(TEAM_PREFIX)
        for relpath, _ in classify_links(
            parse_index(memdir.index_text or ""), memdir.files
        )
        if relpath is not None and is_team_file(relpath)
    }
    private = [d for d in found if not is_team_file(d.path)]
    shared = [
        dataclasses.replace(d, path=posixpath.normpath(TEAM_PREFIX + d.path))
        for d in lint(team, None)[0]  # the cache holds the private dir's parses
        if not (d.code == ORPHAN_CODE and d.path in linked)
    ]
    return tuple(sorted([*private, *shared], key=sort_key))


def _is_index_of(directory: str) -> bool:
    """Whether `directory` holds a MEMORY.md (a regular file, links not followed)."""
    try:
        return stat.S_ISREG(os.lstat(os.path.join(directory, INDEX_NAME)).st_mode)
    except OSError:
        return False


def _unreadable(target: Target) -> Diagnostic:
    from memd.lint.rules import RULES_BY_KEY

    rule = RULES_BY_KEY["F005"]
    return rule.diag(
        target.path,
        f"cannot read {target.path}: {target.error}; memd cannot lint what is in it",
        "check the permissions of this directory and its parents",
    )
