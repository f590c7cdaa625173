"""The per-release parts of `validateMemoryPath`, as small predicates.

REFERENCE.md §2 (validateMemoryPath) and "2.1.332: what changed" (Tilde rule
and path validation). The rules both releases share (absolute, at least three
units, no bare drive, no `\\\\` or `//` start, no NUL) stay in `memd.claude_code.paths`;
a profile lists the extra predicates here, each returning True to reject.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping

_MACOS_SPECIAL_ROOTS = frozenset({".vol", ".file", ".nofollow", ".resolve"})


def tilde_rest_is_dot(normalized_rest: str) -> bool:
    """2.1.112: reject a `~/` remainder that normalises to exactly `.` or `..`."""
    return normalized_rest in (".", "..")


def tilde_rest_climbs(normalized_rest: str) -> bool:
    """2.1.332: also reject a remainder that climbs out of home (`../`, `..\\`)."""
    return tilde_rest_is_dot(normalized_rest) or normalized_rest.startswith(
        ("../", "..\\", ".." + os.sep)
    )


def starts_with_two_separators(path: str) -> bool:
    """Reject `/\\x`: two leading separators in any mix."""
    return len(path) >= 2 and path[0] in "/\\" and path[1] in "/\\"


def is_nt_device_path(path: str) -> bool:
    """Reject `/??/` and `\\??\\` prefixes, also once win32-normalised."""
    if path.startswith(("/??/", "\\??\\")):
        return True
    if "??" not in path:
        return False
    import ntpath

    return ntpath.normpath(path).startswith("\\??\\")


def is_network_mount(path: str) -> bool:
    """Reject `/net/<host>…` and `/network/servers/<host>…`, in any case."""
    segments = [s.lower() for s in posixpath.normpath(path).split("/") if s]
    if len(segments) >= 2 and segments[0] == "net":
        return True
    return len(segments) >= 3 and segments[:2] == ["network", "servers"]


def is_macos_special_root(path: str) -> bool:
    """Reject a first segment of `.vol`, `.file`, `.nofollow` or `.resolve`."""
    segments = [s for s in posixpath.normpath(path).split("/") if s]
    return bool(segments) and segments[0].lower() in _MACOS_SPECIAL_ROOTS


PROJECT_DIR_NAME_ENV = "CLAUDE_CODE_PROJECT_DIR_NAME"
_WINDOWS_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(10)}
    | {f"lpt{i}" for i in range(10)}
)
_MAX_PROJECT_DIR_NAME = 64
_NAME_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
)


def no_project_dir_name(env: Mapping[str, str]) -> str | None:
    """2.1.112: the project folder is always the sanitized key."""
    return None


def project_dir_name_from_env(env: Mapping[str, str]) -> str | None:
    """2.1.332: `CLAUDE_CODE_PROJECT_DIR_NAME`, when the agent would honour it.

    Only under the config home (no remote memory dir) with a non-empty
    `CLAUDE_CONFIG_DIR` (memd sessions are never diskless), for a value of
    1-64 of `[A-Za-z0-9_-]` that is not a Windows device name.
    """
    name = env.get(PROJECT_DIR_NAME_ENV)
    if (
        not name
        or env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
        or not env.get("CLAUDE_CONFIG_DIR")
        or len(name) > _MAX_PROJECT_DIR_NAME
        or not set(name) <= _NAME_CHARS
        or name.lower() in _WINDOWS_DEVICE_NAMES
    ):
        return None
    return name
