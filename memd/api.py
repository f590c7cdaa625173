"""The Python API for people building their own agents.

Three calls cover what an agent needs from memd::

    import memd

    prompt = memd.load_memory_prompt("/path/to/project")   # None when memory is off
    for finding in memd.lint_path(prompt_dir):             # list[memd.Diagnostic]
        print(finding.path, finding.line, finding.message)
    memd.append_log("/path/to/project", "decided to pin numpy<3 [project]")

They resolve the memory directory exactly as the agent does, serve the prompt
from a fresh snapshot when there is one (rendering and saving it otherwise),
and never raise for bad memory content: that comes back as diagnostics.
"""

from __future__ import annotations

import os
import time

from memd.diagnostics import Diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Mapping

    from memd.config import Config

__all__ = ["append_log", "lint_path", "load_memory_prompt"]


def load_memory_prompt(
    project_root: str | os.PathLike[str],
    mode: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Return the memory prompt for `project_root`, or None when auto memory is off.

    `mode` is "standard", "team" or "kairos" (default: as memd's config says).
    Creates the memory directory if it is missing, as the agent does.

    Raises:
        memd.MemdError: memd's own configuration is invalid.
        ValueError: `mode` is not a known mode.
    """
    loaded = fresh_snapshot(os.fspath(project_root), mode=mode, env=env)
    return None if loaded is None else loaded[1]


def lint_path(path: str | os.PathLike[str]) -> list[Diagnostic]:
    """Return the findings for a memory directory, a project root or one topic file.

    Raises:
        memd.MemdError: the path does not exist or has no memory directory.
    """
    from memd.lint_targets import lint_settings, lint_targets, resolve_targets

    severities, max_file_bytes = lint_settings()
    targets = resolve_targets([os.fspath(path)])
    return list(
        lint_targets(targets, severities=severities, max_file_bytes=max_file_bytes)
    )


def append_log(
    project_root: str | os.PathLike[str],
    text: str,
    *,
    now: datetime.datetime | None = None,
) -> str | None:
    """Append `text` as one bullet to today's KAIROS log; return the log's path.

    Returns None (and writes nothing) when auto memory is off for the project.
    Safe to call from many processes at once: entries never interleave.
    """
    import datetime as _datetime

    from memd.daily_log import append_entry
    from memd.paths import resolve_memory_location

    location = resolve_memory_location(os.fspath(project_root))
    if not location.enablement.enabled:
        return None
    when = now or _datetime.datetime.now().astimezone()
    return append_entry(location.memory_dir, text, now=when)


# -- shared with memd's hooks --------------------------------------------------


def fresh_snapshot(
    project_root: str,
    *,
    mode: str | None = None,
    config: Config | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[str, str, tuple[Diagnostic, ...]] | None:
    """Return (memory_dir, prompt, diagnostics), fresh; None when memory is off."""
    from memd.config import load_config
    from memd.paths import resolve_memory_location
    from memd.serving import (
        MODES,
        default_mode,
        emit_events,
        fresh_prompt,
        loaded_events,
    )
    from memd.snapshots import SnapshotStore

    env = os.environ if env is None else env
    config = load_config(env) if config is None else config
    mode = mode or default_mode(config)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    resolved_ns = time.time_ns()
    location = resolve_memory_location(project_root, env)
    if not location.enablement.enabled:
        return None
    fresh = fresh_prompt(location, mode, config, env, resolved_ns=resolved_ns)
    emit_events(config, loaded_events(fresh))
    if fresh.snapshot is not None:
        diagnostics = fresh.snapshot.diagnostics
    else:
        diagnostics = SnapshotStore(config.cache_dir).read_diagnostics(
            location.memory_dir, mode
        )
    return location.memory_dir, fresh.data.decode("utf-8"), diagnostics


def candidate_memory_dirs(cwd: object) -> tuple[str, ...]:
    """Every memory directory a tool call from `cwd` might write into."""
    from memd.lint_targets import discover_memory_dirs
    from memd.paths import resolve_memory_location

    found: list[str] = []
    if isinstance(cwd, str) and os.path.isdir(cwd):
        location = resolve_memory_location(cwd)
        if location.enablement.enabled:
            found.append(location.memory_dir)
    found.extend(d + os.sep for d in discover_memory_dirs())
    return tuple(dict.fromkeys(found))


def lint_memory_dir(memory_dir: str, *, config: Config) -> tuple[Diagnostic, ...]:
    """Lint one memory directory with memd's configured severities."""
    from memd.lint.engine import lint_memdir
    from memd.memdir import load_memdir

    memdir = load_memdir(
        memory_dir.rstrip(os.sep) or os.sep, max_file_bytes=config.max_topic_file_bytes
    )
    return lint_memdir(memdir, severities=config.lint_severities)
