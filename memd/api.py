"""The Python API for people building their own agents.

Three calls cover what an agent needs from memd::

    import memd

    prompt = memd.load_memory_prompt("/path/to/project")   # None when memory is off
    for finding in memd.lint_path(prompt_dir):             # list[memd.Diagnostic]
        print(finding.path, finding.line, finding.message)
    memd.append_log("/path/to/project", "decided to pin numpy<3 [project]")

They resolve the memory directory exactly as the agent does, serve the prompt
from a fresh snapshot when there is one (rendering and saving it otherwise),
and never raise for bad memory content: that comes back as diagnostics. Each
takes `env=` (default `os.environ`, read at call time): the environment the
agent would run in, which decides the memory directory, memd's configuration
and the agent release; none reads `os.environ` behind a caller's back.
"""

from __future__ import annotations

import os

from memd.diagnostics import Diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Mapping

__all__ = ["append_log", "lint_path", "load_memory_prompt"]


def load_memory_prompt(
    project_root: str | os.PathLike[str],
    mode: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Return the memory prompt for `project_root`, or None when auto memory is off.

    `mode` is "standard", "team" or "kairos" (default: as memd's config says).
    Creates the memory directory if it is missing, as the agent does, but
    only for a project directory that exists.

    Raises:
        memd.MemdError: `project_root` is not a directory, or memd's own
            configuration is invalid.
        ValueError: `mode` is not a known mode.
    """
    from memd.config import load_config
    from memd.errors import UsageError
    from memd.snapshot.serve import serve

    if not os.path.isdir(project_root):
        raise UsageError(f"{os.fspath(project_root)}: no such directory")
    env = os.environ if env is None else env
    served = serve(os.fspath(project_root), mode, load_config(env), env)
    return served.text if served.enabled else None


def lint_path(
    path: str | os.PathLike[str],
    *,
    env: Mapping[str, str] | None = None,
) -> list[Diagnostic]:
    """Return the findings for a memory directory, a project root or one topic file.

    Raises:
        memd.MemdError: the path does not exist or has no memory directory.
    """
    from memd.claude_code.choice import in_force
    from memd.config import load_config
    from memd.lint.targets import lint_targets, resolve_targets

    env = os.environ if env is None else env
    config = load_config(env)
    profile = in_force(config, env).profile
    targets = resolve_targets([os.fspath(path)], env, profile=profile)
    return list(lint_targets(targets, config=config, profile=profile))


def append_log(
    project_root: str | os.PathLike[str],
    text: str,
    *,
    now: datetime.datetime | None = None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """Append `text` as one bullet to today's KAIROS log; return the log's path.

    Returns None (and writes nothing) when auto memory is off for the project.
    Safe to call from many processes at once: entries never interleave.
    """
    import datetime as _datetime

    from memd.claude_code.choice import resolve_in_force
    from memd.config import load_config
    from memd.kairos.daily_log import append_entry

    env = os.environ if env is None else env
    location = resolve_in_force(os.fspath(project_root), load_config(env), env)
    if not location.enablement.enabled:
        return None
    when = now or _datetime.datetime.now().astimezone()
    return append_entry(location.memory_dir, text, now=when)
