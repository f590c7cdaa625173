"""The rules of `isAutoMemoryEnabled`, one function each (REFERENCE.md §1, 2.1.332).

A rule returns an `Enablement` when it decides and None to pass; a profile
lists its rules in order and the first decision wins. The session toggle
(2.1.112), restricted and diskless sessions and the model gate (2.1.332) are
session state memd cannot see, so they have no rule here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memd.claude_code.jscompat import js_trim

_TRUTHY = frozenset({"1", "true", "yes", "on"})
_DEFINED_FALSY = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Enablement:
    """The answer and the rule that gave it (`env:CLAUDE_CODE_SIMPLE`, `default`)."""

    enabled: bool
    reason: str


def is_env_truthy(value: str | None) -> bool:
    """Return True for `1`, `true`, `yes`, `on` (any case, JS-trimmed)."""
    return bool(value) and js_trim(value or "").lower() in _TRUTHY


def is_env_defined_falsy(value: str | None) -> bool:
    """Return True for `0`, `false`, `no`, `off` (any case, JS-trimmed)."""
    return value is not None and js_trim(value).lower() in _DEFINED_FALSY


Settings = Mapping[str, object] | None


def safe_mode(env: Mapping[str, str], settings: Settings) -> Enablement | None:
    """2.1.332: a truthy `CLAUDE_CODE_SAFE_MODE` switches memory off."""
    if is_env_truthy(env.get("CLAUDE_CODE_SAFE_MODE")):
        return Enablement(False, "env:CLAUDE_CODE_SAFE_MODE")
    return None


def disable_variable(env: Mapping[str, str], settings: Settings) -> Enablement | None:
    """Truthy `CLAUDE_CODE_DISABLE_AUTO_MEMORY` → off; defined-falsy → on."""
    disable = env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_env_truthy(disable):
        return Enablement(False, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_env_defined_falsy(disable):
        return Enablement(True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    return None


def simple_mode(env: Mapping[str, str], settings: Settings) -> Enablement | None:
    """A truthy `CLAUDE_CODE_SIMPLE` (`--bare`) switches memory off."""
    if is_env_truthy(env.get("CLAUDE_CODE_SIMPLE")):
        return Enablement(False, "env:CLAUDE_CODE_SIMPLE")
    return None


def remote_without_memory_dir(
    env: Mapping[str, str], settings: Settings
) -> Enablement | None:
    """2.1.112: truthy `CLAUDE_CODE_REMOTE` is off unless a remote memory dir is set."""
    if is_env_truthy(env.get("CLAUDE_CODE_REMOTE")) and not env.get(
        "CLAUDE_CODE_REMOTE_MEMORY_DIR"
    ):
        return Enablement(False, "env:CLAUDE_CODE_REMOTE")
    return None


def remote_without_memory_dir_or_override(
    env: Mapping[str, str], settings: Settings
) -> Enablement | None:
    """2.1.332: as before, but `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` also spares it."""
    if env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"):
        return None
    return remote_without_memory_dir(env, settings)


def setting(env: Mapping[str, str], settings: Settings) -> Enablement | None:
    """A JSON boolean `autoMemoryEnabled` in the merged settings decides."""
    value = None if settings is None else settings.get("autoMemoryEnabled")
    if isinstance(value, bool):
        return Enablement(value, "settings:autoMemoryEnabled")
    return None


def default_on(env: Mapping[str, str], settings: Settings) -> Enablement | None:
    """Otherwise memory is on."""
    return Enablement(True, "default")
