"""memd's own configuration: config.toml, then MEMD_* variables, into a frozen `Config`.

The file is optional and every key has a default, so `memd run` works with
none. Each key lives in a TOML section (``[dream] time = "03:30"``) and has one
environment variable that overrides it (``MEMD_DREAM_TIME``). An empty variable
counts as unset. `Config.sources` records where each value came from:
``"default"``, the config file's path, or ``"env:MEMD_X"``.

Unknown keys and bad values raise `ConfigError` naming the file (or the
variable) and the dotted key, so a typo is reported at start-up, not ignored.
`tomllib` is imported inside `load_config`: it costs more than the whole warm
`memd prompt` path may spend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType

from memd.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# Mirrors memd.prompt.MODES (a test keeps them equal); prompt is too heavy to import.
MODES = ("standard", "team", "kairos")
SEVERITY_LEVELS = ("error", "warning", "info", "off")
LOG_FORMATS = ("auto", "json", "console")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
RETENTION_ACTIONS = ("archive", "remove")
TELEMETRY_SINKS = ("jsonl", "off")

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The effective configuration; `sources` maps each field to its value's origin."""

    watch_dirs: tuple[str, ...] = ()
    watch_projects: tuple[str, ...] = ()
    settle_seconds: float = 0.1
    cache_dir: str
    state_dir: str
    modes: tuple[str, ...] = ("standard",)
    team_memory: bool = False
    kairos: bool = False
    dream_time: str = "03:30"
    dream_timezone: str | None = None  # None: the local zone
    dream_grace_hours: float = 12.0
    dream_command: tuple[str, ...] = ()
    dream_timeout_seconds: float = 600.0
    log_retention_days: int | None = None
    log_retention_action: str = "archive"
    telemetry: str = "jsonl"
    telemetry_max_bytes: int = 10 * 1024 * 1024
    lint_severities: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    max_topic_file_bytes: int = 262144
    log_format: str = "auto"
    log_level: str = "info"
    sources: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


class _Bad(ValueError):
    """A value failed validation; the message says what was expected."""


# -- value parsers: each takes a TOML value (or an env string already split) and
# returns the field's value, raising _Bad with "expected ..., got ...".


def _got(value: object) -> str:
    return f"got {value!r}"


def _float(minimum: float, *, strict: bool = False) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise _Bad(f"expected a number, {_got(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Bad(f"expected a number, {_got(value)}")
        number = float(value)
        too_small = number <= minimum if strict else number < minimum
        if number != number or number in (float("inf"), float("-inf")) or too_small:
            relation = ">" if strict else ">="
            raise _Bad(f"expected a number {relation} {minimum:g}, {_got(value)}")
        return number

    return parse


def _int(minimum: int) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise _Bad(f"expected an integer, {_got(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Bad(f"expected an integer, {_got(value)}")
        if value < minimum:
            raise _Bad(f"expected an integer >= {minimum}, {_got(value)}")
        return value

    return parse


def _bool(value: object) -> object:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
    raise _Bad(f"expected true or false, {_got(value)}")


def _choice(choices: tuple[str, ...]) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        raise _Bad(f"expected one of {', '.join(choices)}, {_got(value)}")

    return parse


def _time(value: object) -> object:
    import re

    match = (
        re.fullmatch(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", value.strip())
        if isinstance(value, str)
        else None
    )
    if match is None:
        raise _Bad(f"expected HH:MM, {_got(value)}")
    return f"{int(match[1]):02d}:{match[2]}"


def _timezone(value: object) -> object:
    import zoneinfo

    name = value.strip() if isinstance(value, str) else ""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise _Bad(
            f"expected an IANA zone like 'Europe/Paris', {_got(value)}"
        ) from None
    return name


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise _Bad(f"expected a list of strings, {_got(value)}")


def _modes(value: object) -> object:
    modes = tuple(dict.fromkeys(mode.strip().lower() for mode in _strings(value)))
    if not modes or any(mode not in MODES for mode in modes):
        raise _Bad(f"expected a non-empty list of {', '.join(MODES)}, {_got(value)}")
    return modes


def _command(value: object) -> object:
    if isinstance(value, str):
        import shlex

        try:
            return tuple(shlex.split(value))
        except ValueError as error:
            raise _Bad(f"expected a command line ({error}), {_got(value)}") from None
    return _strings(value)


def _severities(value: object) -> object:
    if not isinstance(value, dict):
        raise _Bad(f"expected a table of rule = level, {_got(value)}")
    # Rule names are checked here so a typo fails at start-up, not silently.
    from memd.lint.rules import RULES

    known = {name for rule in RULES for name in (rule.code, rule.name)}
    result: dict[str, str] = {}
    for rule, level in value.items():
        if rule.strip() not in known:
            import difflib

            close = difflib.get_close_matches(rule.strip(), sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise _Bad(f"unknown lint rule {rule!r}{hint}")
        if not isinstance(level, str) or level.strip().lower() not in SEVERITY_LEVELS:
            raise _Bad(
                f"{rule}: expected one of {', '.join(SEVERITY_LEVELS)}, {_got(level)}"
            )
        result[rule.strip()] = level.strip().lower()
    return MappingProxyType(result)


def _string(value: object) -> object:
    if isinstance(value, str) and value:
        return value
    raise _Bad(f"expected a path, {_got(value)}")


def _env_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _env_severities(text: str) -> object:
    table: dict[str, str] = {}
    for item in _env_list(text):
        rule, sep, level = item.partition("=")
        if not sep:
            raise _Bad(f"expected RULE=LEVEL[,RULE=LEVEL...], {_got(text)}")
        table[rule.strip()] = level
    return table


@dataclass(frozen=True, slots=True)
class _Key:
    """One key: its field, its TOML name, its variable and how to read it."""

    field: str
    toml: str  # "section.key"
    parse: Callable[[object], object]
    from_env: Callable[[str], object] | None = None  # default: parse the string itself
    is_path: bool = False

    @property
    def env(self) -> str:
        return "MEMD_" + self.field.upper()


def _paths_env(text: str) -> object:
    return [item for item in text.split(os.pathsep) if item]


# fmt: off
KEYS: tuple[_Key, ...] = (
    _Key("watch_dirs", "watch.dirs", _strings, _paths_env, is_path=True),
    _Key("watch_projects", "watch.projects", _strings, _paths_env, is_path=True),
    _Key("settle_seconds", "watch.settle_seconds", _float(0.0)),
    _Key("modes", "prompt.modes", _modes, _env_list),
    _Key("team_memory", "prompt.team_memory", _bool),
    _Key("kairos", "prompt.kairos", _bool),
    _Key("dream_time", "dream.time", _time),
    _Key("dream_timezone", "dream.timezone", _timezone),
    _Key("dream_grace_hours", "dream.grace_hours", _float(0.0)),
    _Key("dream_command", "dream.command", _command),
    _Key("dream_timeout_seconds", "dream.timeout_seconds", _float(0.0, strict=True)),
    _Key("log_retention_days", "logs.retention_days", _int(1)),
    _Key("log_retention_action", "logs.retention_action", _choice(RETENTION_ACTIONS)),
    _Key("telemetry", "telemetry.sink", _choice(TELEMETRY_SINKS)),
    _Key("telemetry_max_bytes", "telemetry.max_bytes", _int(1024)),
    _Key("lint_severities", "lint.severity", _severities, _env_severities),
    _Key("max_topic_file_bytes", "lint.max_topic_file_bytes", _int(1)),
    _Key("log_format", "log.format", _choice(LOG_FORMATS)),
    _Key("log_level", "log.level", _choice(LOG_LEVELS)),
    _Key("cache_dir", "paths.cache_dir", _string, is_path=True),
    _Key("state_dir", "paths.state_dir", _string, is_path=True),
)
# fmt: on
_BY_TOML = MappingProxyType({key.toml: key for key in KEYS})


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _expand(path: str, env: Mapping[str, str]) -> str:
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
        return os.path.abspath(_expand(explicit, env))
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
    explicit = _expand(env.get("MEMD_STATE_DIR", ""), env)
    return explicit if os.path.isabs(explicit) else default_state_dir(env)


def _suggest(name: str) -> str:
    import difflib

    known = [*_BY_TOML, *(key.field for key in KEYS)]
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
            if dotted in _BY_TOML:
                flat[dotted] = value
            else:
                known_in_section = [
                    k.toml for k in KEYS if k.toml.startswith(section + ".")
                ]
                what = "unknown key" if known_in_section else "unknown section"
                raise ConfigError(f"{what}{_suggest(dotted)}", path=path, key=dotted)
    return flat


def _read_file(path: str, *, must_exist: bool) -> dict[str, object]:
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        if must_exist:
            raise ConfigError("no such file (set by MEMD_CONFIG)", path=path) from None
        return {}
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML: {error}", path=path) from None
    except UnicodeDecodeError:
        raise ConfigError("invalid TOML: not UTF-8", path=path) from None
    except OSError as error:
        raise ConfigError(
            f"cannot read: {error.strerror or error}", path=path
        ) from None


def _finish(key: _Key, value: object, env: Mapping[str, str]) -> object:
    """Expand and check path values; other values pass through."""
    if not key.is_path:
        return value
    if isinstance(value, str):
        expanded = _expand(value, env)
        if not os.path.isabs(expanded):
            raise _Bad(f"expected an absolute path (or ~/...), {_got(value)}")
        return expanded
    if not isinstance(value, tuple | list):
        raise _Bad(f"expected a list of paths, {_got(value)}")
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
            except _Bad as bad:
                raise ConfigError(str(bad), path=path, key=key.toml) from None
            sources[key.field] = path
        text = env.get(key.env, "")
        if text.strip():
            try:
                parsed = key.parse(key.from_env(text) if key.from_env else text)
                values[key.field] = _finish(key, parsed, env)
            except _Bad as bad:
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
            getattr(config, key.field),
            config.sources.get(key.field, "default"),
        )
        for key in KEYS
    )
