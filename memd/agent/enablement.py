"""Whether auto memory is on, and which rule decided (REFERENCE.md §1).

The chain, first decisive rule wins: CLAUDE_CODE_DISABLE_AUTO_MEMORY (truthy
→ off, defined-falsy → on), CLAUDE_CODE_SIMPLE, CLAUDE_CODE_REMOTE (unless a
remote memory dir is set), the merged settings' `autoMemoryEnabled` (project
settings take part: a repository may switch memory off for itself), default on.
The reference's session toggle has no counterpart in memd.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from memd.agent.jscompat import js_trim

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


def is_auto_memory_enabled(
    env: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> Enablement:
    """Return whether auto memory is enabled under `env` and the merged `settings`.

    `settings` is the merge of user, project, local and policy settings (later
    wins), as `claude_settings.merged_settings` builds it; None means none apply.
    Only a JSON boolean `autoMemoryEnabled` decides; other values are ignored.
    """
    env = os.environ if env is None else env
    disable = env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_env_truthy(disable):
        return Enablement(False, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_env_defined_falsy(disable):
        return Enablement(True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    if is_env_truthy(env.get("CLAUDE_CODE_SIMPLE")):
        return Enablement(False, "env:CLAUDE_CODE_SIMPLE")
    if is_env_truthy(env.get("CLAUDE_CODE_REMOTE")) and not env.get(
        "CLAUDE_CODE_REMOTE_MEMORY_DIR"
    ):
        return Enablement(False, "env:CLAUDE_CODE_REMOTE")
    if settings is not None:
        value = settings.get("autoMemoryEnabled")
        if isinstance(value, bool):
            return Enablement(value, "settings:autoMemoryEnabled")
    return Enablement(True, "default")
