"""Read the agent's settings files, read-only, from where the reference reads them.

Layers in merge order (later wins): user `<config home>/settings.json`, project
`<root>/.claude/settings.json` (checked in: it may switch memory off, never
choose the directory), local `<root>/.claude/settings.local.json`, and the
managed policy file. A missing file is skipped; an unreadable, oversized or
invalid one is skipped with an `S001 settings-invalid` warning, never a crash.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memd.diagnostics import Diagnostic, Severity, one_line

LAYER_ORDER = ("user", "project", "local", "policy")
LINUX_MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
MACOS_MANAGED_SETTINGS = "/Library/Application Support/ClaudeCode/managed-settings.json"
# Real settings files are a few KiB; this only stops a hostile checked-in file.
MAX_SETTINGS_BYTES = 4 * 1024 * 1024

_CODE, _NAME = "S001", "settings-invalid"


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsLayer:
    """One settings file: its data if it parsed to an object, else why not."""

    source: str  # "user" | "project" | "local" | "policy"
    path: str
    data: Mapping[str, object] | None
    diagnostic: Diagnostic | None


def claude_config_home(env: Mapping[str, str] | None = None) -> str:
    """Return `CLAUDE_CONFIG_DIR` when non-empty, else `~/.claude` (user settings)."""
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR")
    if configured:
        return configured
    home = env["HOME"] if env.get("HOME") else os.path.expanduser("~")
    return os.path.join(home, ".claude")


def managed_settings_path(env: Mapping[str, str] | None = None) -> str:
    """Return the policy file: `MEMD_MANAGED_SETTINGS_PATH` or the platform's path."""
    env = os.environ if env is None else env
    override = env.get("MEMD_MANAGED_SETTINGS_PATH")
    if override:
        return override
    return (
        MACOS_MANAGED_SETTINGS if sys.platform == "darwin" else LINUX_MANAGED_SETTINGS
    )


def settings_paths(
    project_root: str, env: Mapping[str, str] | None = None
) -> tuple[tuple[str, str], ...]:
    """Return (source, path) for every layer, in merge order."""
    claude_dir = os.path.join(project_root, ".claude")
    return (
        ("user", os.path.join(claude_config_home(env), "settings.json")),
        ("project", os.path.join(claude_dir, "settings.json")),
        ("local", os.path.join(claude_dir, "settings.local.json")),
        ("policy", managed_settings_path(env)),
    )


def load_settings(
    project_root: str, env: Mapping[str, str] | None = None
) -> tuple[SettingsLayer, ...]:
    """Read every layer; never raises for a bad file."""
    return tuple(
        read_settings_file(source, path)
        for source, path in settings_paths(project_root, env)
    )


def read_settings_file(source: str, path: str) -> SettingsLayer:
    """Return one layer: data for a JSON object, none if missing, else a diagnostic."""

    def invalid(
        message: str, line: int | None = None, column: int | None = None
    ) -> SettingsLayer:
        diagnostic = Diagnostic(
            code=_CODE,
            name=_NAME,
            severity=Severity.WARNING,
            path=path,
            message=one_line(message),
            hint=f"fix or remove it; memd ignores this {source} settings file",
            line=line,
            column=column,
        )
        return SettingsLayer(source=source, path=path, data=None, diagnostic=diagnostic)

    try:
        raw = read_regular_file(path, MAX_SETTINGS_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return SettingsLayer(source=source, path=path, data=None, diagnostic=None)
    except OSError as error:
        return invalid(f"cannot read settings: {error.strerror or error}")
    except ValueError as error:  # NUL in the path
        return invalid(f"cannot read settings: {error}")
    if raw is None:
        return invalid("cannot read settings: not a regular file")
    if len(raw) > MAX_SETTINGS_BYTES:
        return invalid(f"settings file larger than {MAX_SETTINGS_BYTES} bytes")
    import json

    try:
        text = raw.decode("utf-8-sig")
        data = json.loads(text, parse_constant=_reject_constant)
    except UnicodeDecodeError as error:
        return invalid(f"settings are not valid UTF-8 (byte {error.start})")
    except json.JSONDecodeError as error:
        return invalid(f"invalid JSON: {error.msg}", error.lineno, error.colno)
    except ValueError as error:  # NaN / Infinity, which JSON.parse rejects
        return invalid(f"invalid JSON: {error}")
    except RecursionError:
        return invalid("invalid JSON: nested too deeply")
    if not isinstance(data, dict):
        return invalid(f"settings must be a JSON object, not {type(data).__name__}")
    return SettingsLayer(source=source, path=path, data=data, diagnostic=None)


def read_regular_file(path: str, limit: int) -> bytes | None:
    """Return up to `limit` bytes of a regular file, or None for anything else.

    Through the bounded reader: a checked-in symlink to a FIFO or a tty must
    not hang the daemon. The agent follows a symlinked settings file, so memd
    does too; the target must still be a regular file.
    """
    from memd.fsread import UnsafeFileError, open_regular, read_fd

    try:
        fd = open_regular(path, follow=True)
    except UnsafeFileError:
        return None
    try:
        return read_fd(fd, limit, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def merged_settings(layers: Iterable[SettingsLayer]) -> dict[str, object]:
    """Merge the layers' data, later wins; objects merge deeply, arrays concatenate."""
    merged: dict[str, object] = {}
    for layer in layers:
        if layer.data is not None:
            merged = _merge(merged, layer.data)
    return merged


def layer_diagnostics(layers: Iterable[SettingsLayer]) -> tuple[Diagnostic, ...]:
    """Return the diagnostics of the layers that were skipped as invalid."""
    return tuple(layer.diagnostic for layer in layers if layer.diagnostic is not None)


def _merge(base: Mapping[str, object], top: Mapping[str, object]) -> dict[str, object]:
    result = dict(base)
    for key, value in top.items():
        below = result.get(key)
        if isinstance(below, Mapping) and isinstance(value, Mapping):
            result[key] = _merge(below, value)
        elif isinstance(below, list) and isinstance(value, list):
            result[key] = below + [item for item in value if item not in below]
        else:
            result[key] = value
    return result
