"""What `memd lint` and `memd fix` act on: memory dirs, project roots, lone files.

A PATH may be a memory directory, a project root (resolved as the agent
resolves it) or a single topic file; no PATH means every
`<base>/projects/*/memory` directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from memd.diagnostics import Diagnostic

INDEX = "MEMORY.md"


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to lint: a memory directory (`is_dir`) or a lone topic file."""

    path: str
    is_dir: bool


def resolve_targets(
    paths: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[Target, ...]:
    """Return the memory dirs and files `paths` name; none: every known memory dir.

    Raises:
        UsageError: a path does not exist, or is a project with no memory dir.
    """
    from memd.errors import UsageError

    if not paths:
        return tuple(Target(p, True) for p in discover_memory_dirs(env))
    targets: list[Target] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isfile(path):
            if os.path.basename(path) == INDEX:
                targets.append(Target(os.path.dirname(path), True))
            else:
                targets.append(Target(path, False))
        elif os.path.isdir(path):
            targets.append(Target(_memory_dir_for(raw, path, env), True))
        else:
            raise UsageError(f"{raw}: no such file or directory")
    return tuple(dict.fromkeys(targets))  # in order, without repeats


def discover_memory_dirs(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Return every `<base>/projects/*/memory` directory, sorted."""
    from memd.agent.paths import memory_base_dir

    projects = os.path.join(memory_base_dir(env), "projects")
    try:
        names = sorted(os.listdir(projects))
    except OSError:
        return ()
    found = (os.path.join(projects, name, "memory") for name in names)
    return tuple(p for p in found if os.path.isdir(p) and not os.path.islink(p))


def _memory_dir_for(raw: str, path: str, env: Mapping[str, str] | None) -> str:
    """Return `path` if it is a memory dir, else the memory dir of its project."""
    from memd.agent.gitroot import find_git_root
    from memd.agent.paths import resolve_memory_location
    from memd.errors import UsageError

    if os.path.isfile(os.path.join(path, INDEX)) or os.path.basename(path) in (
        "memory",
        "team",
    ):
        return path
    has_markdown = any(name.endswith(".md") for name in _listdir(path))
    if has_markdown and find_git_root(path) is None:
        return path  # a loose directory of topic files, not a project
    location = resolve_memory_location(path, env)
    memory_dir = location.memory_dir.rstrip(os.sep)
    if os.path.isdir(memory_dir):
        return memory_dir
    raise UsageError(
        f"{raw}: not a memory directory, and its project has none at {memory_dir}"
    )


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def lint_targets(
    targets: Sequence[Target],
    *,
    severities: Mapping[str, str] | None = None,
    max_file_bytes: int = 256 * 1024,
    cwd: str | None = None,
) -> tuple[Diagnostic, ...]:
    """Lint every target; paths in the result are display paths (relative to cwd)."""
    import dataclasses

    from memd.lint.engine import display_path, lint_file, lint_memdir, sort_key
    from memd.memory.reader import load_memdir

    found: list[Diagnostic] = []
    dirs = [t.path.rstrip(os.sep) + os.sep for t in targets if t.is_dir]
    for target in targets:
        if not target.is_dir and target.path.startswith(tuple(dirs)):
            continue  # its directory is linted whole, with the index rules
        if target.is_dir:
            memdir = load_memdir(target.path, max_file_bytes=max_file_bytes)
            for d in lint_memdir(memdir, severities=severities):
                found.append(
                    dataclasses.replace(
                        d, path=display_path(target.path, d.path, cwd=cwd)
                    )
                )
        else:
            for d in lint_file(
                target.path, severities=severities, max_file_bytes=max_file_bytes
            ):
                found.append(
                    dataclasses.replace(d, path=display_path("", d.path, cwd=cwd))
                )
    return tuple(sorted(dict.fromkeys(found), key=sort_key))


def lint_settings(
    env: Mapping[str, str] | None = None,
) -> tuple[Mapping[str, str], int]:
    """Return (lint severities, topic-file size limit) from memd's configuration."""
    from memd.config import load_config

    config = load_config(env)
    return config.lint_severities, config.max_topic_file_bytes
