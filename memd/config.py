"""memd's own configuration: config.toml, then MEMD_* variables, into a frozen `Config`.

The file is optional and every key has a default, so `memd run` works with
none. Each key lives in a TOML section (``[dream] time = "03:30"``) and has one
environment variable that overrides it (``MEMD_DREAM_TIME``). An empty variable
counts as unset. `Config.sources` records where each value came from:
``"default"``, the config file's path, or ``"env:MEMD_X"``.

The keys and their value parsers are the table in `memd.config_keys`.
Unknown keys and bad values raise `ConfigError` naming the file (or the
variable) and the dotted key, so a typo is reported at start-up, not ignored.
`tomllib` is imported inside `load_config`: it costs more than the whole warm
`memd prompt` path may spend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType

from memd.config_keys import BY_TOML, KEYS, BadValue
from memd.dirs import (
    config_path,
    default_cache_dir,
    default_state_dir,
    expand_home,
)
from memd.errors import ConfigError
from memd.lint.context import DEFAULT_HOW_LABELS, DEFAULT_WHY_LABELS

_MAX_CONFIG_BYTES = 1024 * 1024  # a config.toml is a few lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memd.config_keys import Key

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The effective configuration; `sources` maps each field to its value's origin."""

    watch_dirs: tuple[str, ...] = ()
    watch_projects: tuple[str, ...] = ()
    settle_seconds: float = 0.1
    sweep_seconds: float = 30.0  # stat sweep of every snapshot's inputs
    cache_dir: str
    state_dir: str
    modes: tuple[str, ...] = ("standard",)
    team_memory: bool = False
    kairos: bool = False
    dream_time: str = "03:30"
    dream_timezone: str | None = None  # None: the local zone
    dream_grace_hours: float = 12.0
    dream_command: tuple[str, ...] = ()
    dream_agent: str | None = None  # "claude" (or its path): memd's flags, a copy
    dream_timeout_seconds: float = 600.0
    dream_confine: bool = True  # Landlock: the agent writes only in its copy
    log_retention_days: int | None = None
    log_retention_action: str = "archive"
    telemetry: str = "jsonl"
    telemetry_max_bytes: int = 10 * 1024 * 1024
    lint_severities: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    max_topic_file_bytes: int = 262144
    why_labels: tuple[str, ...] = DEFAULT_WHY_LABELS
    how_labels: tuple[str, ...] = DEFAULT_HOW_LABELS
    log_format: str = "auto"
    log_level: str = "info"
    agent_version: str = "auto"  # or a release memd has a profile for: "2.1.112"
    team_remotes: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    team_branch: str = "main"
    team_interval_seconds: float = 300.0
    team_settle_seconds: float = 10.0
    team_git_timeout_seconds: float = 60.0
    sync_remote: str | None = None  # personal sync's remote (`memd sync init`)
    sync_branch: str = "main"
    sync_interval_seconds: float = 300.0
    sync_settle_seconds: float = 10.0
    sync_projects: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    sync_allow: tuple[str, ...] = ()  # secret fingerprints not refused
    ui_enabled: bool = True  # `memd ui`: the daemon serves the local viewer
    ui_port: int = 7437  # taken: the next free port, then any (memd.ui.server)
    ui_address: str = "127.0.0.1"  # anything else only when set explicitly
    history_enabled: bool = True  # memd.history: every change to memory kept
    history_keep_all_days: float = 30.0  # every version this long
    history_keep_daily_days: float = 365.0  # then one a day, this long after a change
    history_max_bytes: int = 64 * 1024 * 1024  # per memory directory
    sources: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


def _suggest(name: str) -> str:
    import difflib

    known = [*BY_TOML, *(key.field for key in KEYS)]
    close = difflib.get_close_matches(name, known, n=1)
    if not close:
        return ""
    by_field = {key.field: key.toml for key in KEYS}
    match = by_field.get(close[0], close[0])
    return f" (did you mean {match}?)"


def _flatten(data: Mapping[str, object], path: str) -> dict[str, object]:
    """Map each dotted key of the parsed TOML to its value; unknown keys raise."""
    flat: dict[str, object] = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(f"unknown key{_suggest(section)}", path=path, key=section)
        for name, value in table.items():
            dotted = f"{section}.{name}"
            if dotted in BY_TOML:
                flat[dotted] = value
            else:
                known_in_section = [
                    k.toml for k in KEYS if k.toml.startswith(section + ".")
                ]
                what = "unknown key" if known_in_section else "unknown section"
                raise ConfigError(f"{what}{_suggest(dotted)}", path=path, key=dotted)
    return flat


def _read_file(path: str, *, must_exist: bool) -> dict[str, object]:
    from memd.fsread import read_bytes

    try:
        data = read_bytes(path, _MAX_CONFIG_BYTES, follow=True)
    except FileNotFoundError:
        if must_exist:
            raise ConfigError("no such file (set by MEMD_CONFIG)", path=path) from None
        return {}
    except OSError as error:
        raise ConfigError(
            f"cannot read: {error.strerror or error}", path=path
        ) from None
    # Only with a file to parse: tomllib costs more than a hook's whole fast path.
    import tomllib

    try:
        return tomllib.loads(data.decode())
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML: {error}", path=path) from None
    except UnicodeDecodeError:
        raise ConfigError("invalid TOML: not UTF-8", path=path) from None


def _finish(key: Key, value: object, env: Mapping[str, str]) -> object:
    """Expand and check path values; other values pass through."""
    if not key.is_path:
        return value
    if isinstance(value, str):
        expanded = expand_home(value, env)
        if not os.path.isabs(expanded):
            raise BadValue(f"expected an absolute path (or ~/...), got {value!r}")
        return expanded
    if not isinstance(value, tuple | list):
        raise BadValue(f"expected a list of paths, got {value!r}")
    return tuple(_finish(key, item, env) for item in value)


def load_config(env: Mapping[str, str] | None = None) -> Config:
    """Read config.toml (if any) and MEMD_* variables over the defaults.

    Raises:
        ConfigError: the file is unreadable or invalid TOML, or a key is unknown
            or has a bad value; the message names the file or variable and the key.
    """
    env = os.environ if env is None else env
    path = config_path(env)
    raw = _flatten(_read_file(path, must_exist=bool(env.get("MEMD_CONFIG"))), path)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        sources[key.field] = "default"
        if key.toml in raw:  # checked even when a variable overrides it
            try:
                values[key.field] = _finish(key, key.parse(raw[key.toml]), env)
            except BadValue as bad:
                raise ConfigError(str(bad), path=path, key=key.toml) from None
            sources[key.field] = path
        text = env.get(key.env, "")
        if text.strip():
            try:
                parsed = key.parse(key.from_env(text) if key.from_env else text)
                values[key.field] = _finish(key, parsed, env)
            except BadValue as bad:
                raise ConfigError(str(bad), key=key.env) from None
            sources[key.field] = f"env:{key.env}"
    values.setdefault("cache_dir", default_cache_dir(env))
    values.setdefault("state_dir", default_state_dir(env))
    return Config(**values, sources=MappingProxyType(sources))  # type: ignore[arg-type]


def describe_config(config: Config) -> tuple[tuple[str, str, object, str], ...]:
    """Return (TOML key, variable, value, source) for every key, in `KEYS` order."""
    return tuple(
        (
            key.toml,
            key.env,
            _shown(key.field, getattr(config, key.field)),
            config.sources.get(key.field, "default"),
        )
        for key in KEYS
    )


def _shown(field_name: str, value: object) -> object:
    """Return `value` as `memd config` may print it: remote URLs without credentials."""
    from collections.abc import Mapping

    if field_name == "sync_remote" and isinstance(value, str):
        from memd.config_keys import redact_credentials

        return redact_credentials(value)
    if field_name == "team_remotes" and isinstance(value, Mapping):
        from memd.config_keys import redact_credentials

        return {k: redact_credentials(str(v)) for k, v in value.items()}
    return value
