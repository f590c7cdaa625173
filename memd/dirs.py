"""Where memd keeps its own files, from the environment alone.

The defaults `memd.config` gives (cache, state, config file, runtime dir),
without importing it: `memd.config` pulls in `dataclasses` and `tomllib`,
which cost the warm paths (`memd prompt`, `memd recall --all`, the hooks) more
than their whole answer. A `cache_dir` or `state_dir` set in config.toml is
not seen here; callers that must honour it load the config. Standard library
`os` only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def expand_home(path: str, env: Mapping[str, str]) -> str:
    """Expand a leading `~` against `env`'s HOME (not the process's), then normalise."""
    if path == "~" or path.startswith("~/"):
        path = _home(env) + path[1:]
    elif path.startswith("~"):
        path = os.path.expanduser(path)
    return os.path.normpath(path)


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> str:
    # The XDG spec says relative values are invalid and must be ignored.
    value = env.get(name, "")
    return value if os.path.isabs(value) else os.path.join(_home(env), fallback)


def default_cache_dir(env: Mapping[str, str] | None = None) -> str:
    """Return `$XDG_CACHE_HOME/memd` (default `~/.cache/memd`)."""
    return os.path.join(
        _xdg(os.environ if env is None else env, "XDG_CACHE_HOME", ".cache"), "memd"
    )


def default_state_dir(env: Mapping[str, str] | None = None) -> str:
    """Return `$XDG_STATE_HOME/memd` (default `~/.local/state/memd`)."""
    env = os.environ if env is None else env
    return os.path.join(
        _xdg(env, "XDG_STATE_HOME", os.path.join(".local", "state")), "memd"
    )


def config_path(env: Mapping[str, str] | None = None) -> str:
    """Return `$MEMD_CONFIG`, else `$XDG_CONFIG_HOME/memd/config.toml`."""
    env = os.environ if env is None else env
    explicit = env.get("MEMD_CONFIG", "")
    if explicit:
        return os.path.abspath(expand_home(explicit, env))
    return os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "memd", "config.toml")


def runtime_dir(
    env: Mapping[str, str] | None = None, *, state_dir: str | None = None
) -> str:
    """Return `$XDG_RUNTIME_DIR/memd`, else `state_dir` or the default state dir."""
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        return os.path.join(runtime, "memd")
    if state_dir:
        return state_dir
    explicit = expand_home(env.get("MEMD_STATE_DIR", ""), env)
    return explicit if os.path.isabs(explicit) else default_state_dir(env)
