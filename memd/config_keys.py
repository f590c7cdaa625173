"""The table of memd's configuration keys and the parsers that check their values.

Each `Key` names a `Config` field, its TOML key (``dream.time``), its
variable (``MEMD_DREAM_TIME``) and how to read a value; `memd.config` walks
`KEYS` to load config.toml and the environment. A parser takes a TOML value
(or an environment string, split by `from_env`) and returns the field's value,
or raises `BadValue` saying "expected ..., got ...". Pure apart from
`_timezone`, which asks the zone database whether a name exists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# Mirrors memd.claude_code.prompt.MODES (a test keeps them equal); prompt is too heavy
# to import.
MODES = ("standard", "team", "kairos")
SEVERITY_LEVELS = ("error", "warning", "info", "off")
LOG_FORMATS = ("auto", "json", "console")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
RETENTION_ACTIONS = ("archive", "remove")
TELEMETRY_SINKS = ("jsonl", "off")


class BadValue(ValueError):
    """A value failed validation; the message says what was expected."""


def _got(value: object) -> str:
    return f"got {value!r}"


def _float(minimum: float, *, strict: bool = False) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise BadValue(f"expected a number, {_got(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadValue(f"expected a number, {_got(value)}")
        number = float(value)
        too_small = number <= minimum if strict else number < minimum
        if number != number or number in (float("inf"), float("-inf")) or too_small:
            relation = ">" if strict else ">="
            raise BadValue(f"expected a number {relation} {minimum:g}, {_got(value)}")
        return number

    return parse


def _int(minimum: int) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise BadValue(f"expected an integer, {_got(value)}") from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadValue(f"expected an integer, {_got(value)}")
        if value < minimum:
            raise BadValue(f"expected an integer >= {minimum}, {_got(value)}")
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
    raise BadValue(f"expected true or false, {_got(value)}")


def _choice(choices: tuple[str, ...]) -> Callable[[object], object]:
    def parse(value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in choices:
            return value.strip().lower()
        raise BadValue(f"expected one of {', '.join(choices)}, {_got(value)}")

    return parse


def _time(value: object) -> object:
    import re

    match = (
        re.fullmatch(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", value.strip())
        if isinstance(value, str)
        else None
    )
    if match is None:
        raise BadValue(f"expected HH:MM, {_got(value)}")
    return f"{int(match[1]):02d}:{match[2]}"


def _timezone(value: object) -> object:
    import zoneinfo

    name = value.strip() if isinstance(value, str) else ""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise BadValue(
            f"expected an IANA zone like 'Europe/Paris', {_got(value)}"
        ) from None
    return name


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise BadValue(f"expected a list of strings, {_got(value)}")


def _labels(value: object) -> object:
    labels = tuple(dict.fromkeys(" ".join(v.split()).lower() for v in _strings(value)))
    if not labels or not all(labels):
        raise BadValue(f"expected a list of non-empty labels, {_got(value)}")
    return labels


def _modes(value: object) -> object:
    modes = tuple(dict.fromkeys(mode.strip().lower() for mode in _strings(value)))
    if not modes or any(mode not in MODES for mode in modes):
        raise BadValue(
            f"expected a non-empty list of {', '.join(MODES)}, {_got(value)}"
        )
    return modes


def _command(value: object) -> object:
    if isinstance(value, str):
        import shlex

        try:
            return tuple(shlex.split(value))
        except ValueError as error:
            raise BadValue(
                f"expected a command line ({error}), {_got(value)}"
            ) from None
    return _strings(value)


def _severities(value: object) -> object:
    if not isinstance(value, dict):
        raise BadValue(f"expected a table of rule = level, {_got(value)}")
    # Rule names are checked here so a typo fails at start-up, not silently.
    from memd.lint.rules import RULES

    known = {name for rule in RULES for name in (rule.code, rule.name)}
    result: dict[str, str] = {}
    for rule, level in value.items():
        if rule.strip() not in known:
            import difflib

            close = difflib.get_close_matches(rule.strip(), sorted(known), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise BadValue(f"unknown lint rule {rule!r}{hint}")
        if not isinstance(level, str) or level.strip().lower() not in SEVERITY_LEVELS:
            raise BadValue(
                f"{rule}: expected one of {', '.join(SEVERITY_LEVELS)}, {_got(level)}"
            )
        result[rule.strip()] = level.strip().lower()
    return MappingProxyType(result)


def _string(value: object) -> object:
    if isinstance(value, str) and value:
        return value
    raise BadValue(f"expected a path, {_got(value)}")


def _port(value: object) -> object:
    number = _int(1)(value)
    if not isinstance(number, int) or number > 65535:
        raise BadValue(f"expected a TCP port 1-65535, {_got(value)}")
    return number


def _ip_address(value: object) -> object:
    import ipaddress

    try:
        return str(
            ipaddress.ip_address(value.strip() if isinstance(value, str) else "")
        )
    except ValueError:
        raise BadValue(
            f"expected an IP address like 127.0.0.1, {_got(value)}"
        ) from None


def _agent_version(value: object) -> object:
    from memd.claude_code.profile import BY_VERSION

    choices = ("auto", *BY_VERSION)
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    raise BadValue(f"expected one of {', '.join(choices)}, {_got(value)}")


# scheme://userinfo@ : the userinfo may hold a password or a bare token.
_USERINFO = r"([A-Za-z][A-Za-z0-9+.\-]{0,31}://)[^/@\s]{1,2048}@"


def redact_credentials(text: str) -> str:
    """Return `text` with the userinfo of every URL in it replaced by ``***``."""
    import re

    return re.sub(_USERINFO, r"\1***@", text)


def _remotes(value: object) -> object:
    """A table of project directory -> git remote URL (``[team.remotes]``)."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and isinstance(v, str) and v.strip()
        for k, v in value.items()
    ):
        shown = dict.fromkeys(value, "...") if isinstance(value, dict) else value
        raise BadValue(f"expected a table of project = remote URL, {_got(shown)}")
    projects = {}
    for project, url in value.items():
        expanded = os.path.expanduser(project)
        if not os.path.isabs(expanded):
            raise BadValue(f"expected absolute project paths, got {project!r}")
        projects[os.path.normpath(expanded)] = url.strip()
    return MappingProxyType(projects)


def _env_remotes(text: str) -> object:
    table: dict[str, str] = {}
    for item in text.split(";"):
        project, sep, url = item.strip().partition("=")
        if item.strip() and not sep:
            raise BadValue("expected DIR=URL[;DIR=URL...], got an item without '='")
        if sep:
            table[project.strip()] = url
    return table


def _sync_projects(value: object) -> object:
    """A table of project directory -> identity (``[sync.projects]``)."""
    from memd.claude_code.identity import is_identity

    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k and isinstance(v, str) for k, v in value.items()
    ):
        raise BadValue(f"expected a table of project = identity, {_got(value)}")
    projects = {}
    for project, identity in value.items():
        expanded = os.path.expanduser(project)
        if not os.path.isabs(expanded):
            raise BadValue(f"expected absolute project paths, got {project!r}")
        if not is_identity(identity.strip()):
            raise BadValue(
                f"{project}: expected an identity like 'example.org/me/notes' "
                "(lower-case letters, digits, '.', '_', '-', parts joined by '/'), "
                f"{_got(identity)}"
            )
        projects[os.path.normpath(expanded)] = identity.strip()
    return MappingProxyType(projects)


def _fingerprints(value: object) -> object:
    marks = tuple(item.strip().lower() for item in _strings(value))
    if not all(len(m) == 16 and all(c in "0123456789abcdef" for c in m) for m in marks):
        raise BadValue(f"expected 16-hex-digit secret fingerprints, {_got(value)}")
    return tuple(dict.fromkeys(marks))


def _remote_url(value: object) -> object:
    if isinstance(value, str) and value.strip() and not value.startswith("-"):
        return value.strip()
    raise BadValue(f"expected a git remote URL, {_got(value)}")


def _branch(value: object) -> object:
    if (
        isinstance(value, str)
        and value.strip()
        and not value.startswith(("-", "/", "."))
        and not any(c in value for c in " ~^:?*[\\\x7f")
        and ".." not in value
    ):
        return value.strip()
    raise BadValue(f"expected a branch name, {_got(value)}")


def _env_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _env_severities(text: str) -> object:
    table: dict[str, str] = {}
    for item in _env_list(text):
        rule, sep, level = item.partition("=")
        if not sep:
            raise BadValue(f"expected RULE=LEVEL[,RULE=LEVEL...], {_got(text)}")
        table[rule.strip()] = level
    return table


@dataclass(frozen=True, slots=True)
class Key:
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
KEYS: tuple[Key, ...] = (
    Key("watch_dirs", "watch.dirs", _strings, _paths_env, is_path=True),
    Key("watch_projects", "watch.projects", _strings, _paths_env, is_path=True),
    Key("settle_seconds", "watch.settle_seconds", _float(0.0)),
    Key("sweep_seconds", "watch.sweep_seconds", _float(1.0)),
    Key("modes", "prompt.modes", _modes, _env_list),
    Key("team_memory", "prompt.team_memory", _bool),
    Key("kairos", "prompt.kairos", _bool),
    Key("dream_time", "dream.time", _time),
    Key("dream_timezone", "dream.timezone", _timezone),
    Key("dream_grace_hours", "dream.grace_hours", _float(0.0)),
    Key("dream_command", "dream.command", _command),
    Key("dream_agent", "dream.agent", _string),
    Key("dream_timeout_seconds", "dream.timeout_seconds", _float(0.0, strict=True)),
    Key("dream_confine", "dream.confine", _bool),
    Key("log_retention_days", "logs.retention_days", _int(1)),
    Key("log_retention_action", "logs.retention_action", _choice(RETENTION_ACTIONS)),
    Key("telemetry", "telemetry.sink", _choice(TELEMETRY_SINKS)),
    Key("telemetry_max_bytes", "telemetry.max_bytes", _int(1024)),
    Key("lint_severities", "lint.severity", _severities, _env_severities),
    Key("max_topic_file_bytes", "lint.max_topic_file_bytes", _int(1)),
    Key("why_labels", "lint.why_labels", _labels, _env_list),
    Key("how_labels", "lint.how_labels", _labels, _env_list),
    Key("log_format", "log.format", _choice(LOG_FORMATS)),
    Key("log_level", "log.level", _choice(LOG_LEVELS)),
    Key("cache_dir", "paths.cache_dir", _string, is_path=True),
    Key("state_dir", "paths.state_dir", _string, is_path=True),
    Key("agent_version", "agent.version", _agent_version),
    Key("team_remotes", "team.remotes", _remotes, _env_remotes),
    Key("team_branch", "team.branch", _branch),
    Key("team_interval_seconds", "team.interval_seconds", _float(1.0)),
    Key("team_settle_seconds", "team.settle_seconds", _float(0.0)),
    Key("team_git_timeout_seconds", "team.git_timeout_seconds",
        _float(0.0, strict=True)),
    Key("sync_remote", "sync.remote", _remote_url),
    Key("sync_branch", "sync.branch", _branch),
    Key("sync_interval_seconds", "sync.interval_seconds", _float(1.0)),
    Key("sync_settle_seconds", "sync.settle_seconds", _float(0.0)),
    Key("sync_projects", "sync.projects", _sync_projects, _env_remotes),
    Key("sync_allow", "sync.allow", _fingerprints, _env_list),
    Key("ui_enabled", "ui.enabled", _bool),
    Key("ui_port", "ui.port", _port),
    Key("ui_address", "ui.address", _ip_address),
    Key("history_enabled", "history.enabled", _bool),
    Key("history_keep_all_days", "history.keep_all_days", _float(0.0)),
    Key("history_keep_daily_days", "history.keep_daily_days", _float(0.0)),
    Key("history_max_bytes", "history.max_bytes", _int(65536)),
)
# fmt: on
BY_TOML = MappingProxyType({key.toml: key for key in KEYS})
