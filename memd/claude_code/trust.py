"""Workspace trust, read the way an interactive Claude Code session reads it.

REFERENCE.md "2.1.332: what changed" (autoMemoryDirectory chain and its trust
gate). The gate is `(nonInteractive || trustAccepted) && !(nonInteractive &&
ignorePersistedTrust)`. memd resolves as an interactive session does, so only
`trustAccepted` matters: a set `CLAUDE_CODE_SANDBOXED`, or the agent's global
config (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`) having
`projects[<dir>].hasTrustDialogAccepted` for the project or a parent folder.
Read-only and bounded; a missing or broken config simply means "not trusted".
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from memd.claude_code.enablement_rules import is_env_truthy
from memd.claude_code.settings import read_regular_file

SANDBOX_ENV = "CLAUDE_CODE_SANDBOXED"
IGNORE_PERSISTED_TRUST_ENV = "CLAUDE_CODE_IGNORE_PERSISTED_TRUST"
# ~/.claude.json grows with history and per-project state; real ones stay well under.
MAX_GLOBAL_CONFIG_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Trust:
    """Whether the workspace-trust check passes, and what decided it."""

    accepted: bool
    reason: str


def global_config_path(env: Mapping[str, str]) -> str:
    """Return `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return os.path.join(configured, ".claude.json")
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude.json")


def trust_gate(
    trust: Trust, *, is_non_interactive: bool = False, ignores_persisted: bool = False
) -> bool:
    """Return whether local and project settings may be read (the agent's gate)."""
    return (is_non_interactive or trust.accepted) and not (
        is_non_interactive and ignores_persisted
    )


def ignores_persisted_trust(env: Mapping[str, str], argv: tuple[str, ...] = ()) -> bool:
    """Return True for a truthy `CLAUDE_CODE_IGNORE_PERSISTED_TRUST` or the flag."""
    return (
        is_env_truthy(env.get(IGNORE_PERSISTED_TRUST_ENV))
        or "--ignore-persisted-trust" in argv
    )


def workspace_trust(
    project_root: str, env: Mapping[str, str], global_config: object = None
) -> Trust:
    """Return the trust an interactive session would see for `project_root`.

    `global_config` is the parsed `~/.claude.json` (see `read_global_config`).
    """
    if env.get(SANDBOX_ENV):
        return Trust(True, f"env:{SANDBOX_ENV}")
    projects = (
        global_config.get("projects") if isinstance(global_config, dict) else None
    )
    if not isinstance(projects, dict):
        return Trust(False, "no trusted folder in the global config")
    folder = posixpath.normpath(project_root)
    while True:
        entry = projects.get(folder)
        if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
            which = (
                "project" if folder == posixpath.normpath(project_root) else "parent"
            )
            return Trust(True, f"trusted {which} folder {folder}")
        parent = posixpath.dirname(folder)
        if parent == folder:
            return Trust(
                False, "not trusted: no accepted trust dialog for it or a parent"
            )
        folder = parent


def read_global_config(path: str) -> object:
    """Return the parsed global config, or None when missing, unreadable or invalid."""
    try:
        raw = read_regular_file(path, MAX_GLOBAL_CONFIG_BYTES + 1)
    except (OSError, ValueError):
        return None
    if raw is None or len(raw) > MAX_GLOBAL_CONFIG_BYTES:
        return None
    import json

    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
