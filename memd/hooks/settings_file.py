"""Edit an agent's JSON settings file atomically, with a backup to undo it.

`memd hook install/uninstall` (the hooks in settings.json) and `memd mcp
install/uninstall` (the server in `~/.claude.json`) make the same edit:
`settings.py` plans it (pure), this module reads the file and its backup,
bounded, and writes both atomically.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memd.hooks.settings import SettingsEdit

BACKUP_SUFFIX = ".memd-backup"
MAX_SETTINGS_BYTES = 4 * 1024 * 1024


def apply_json_edit(
    path: str,
    plan: Callable[[str | None, str | None], SettingsEdit],
    *,
    what: str,
    install: bool,
    dry_run: bool,
    max_bytes: int = MAX_SETTINGS_BYTES,
) -> str:
    """Edit the JSON file at `path` as `plan(text, backup)` says; return what it did.

    `memd hook` and `memd mcp` share it and print the text it returns: a
    line saying what changed, or with `dry_run` the diff (nothing written).
    A file memd cannot read or parse is left untouched (`UsageError`).
    """
    import difflib

    from memd.atomic import write_atomic
    from memd.errors import UsageError

    backup_path = path + BACKUP_SUFFIX
    current, backup = _read_text(path, max_bytes), _read_text(backup_path, max_bytes)
    try:
        edit = plan(current, backup)
    except ValueError as error:
        raise UsageError(f"{path}: {error}; left untouched") from None
    if not edit.is_change:
        verb = "already installed in" if install else "not installed in"
        return f"{what} {verb} {path}\n"
    if dry_run:
        diff = difflib.unified_diff(
            (current or "").splitlines(keepends=True),
            (edit.text or "").splitlines(keepends=True),
            fromfile=f"{path} (now)",
            tofile=f"{path} ({'with' if install else 'without'} {what})",
        )
        return "".join(diff)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if edit.backup is not None:
        write_atomic(backup_path, edit.backup.encode("utf-8"))
    if edit.text is None:
        os.unlink(path)
    else:
        write_atomic(path, edit.text.encode("utf-8"))
    if edit.remove_backup:
        os.unlink(backup_path)
    summary = _edit_summary(
        path, what, install=install, edit=edit, had_backup=backup is not None
    )
    return summary + "\n"


def _edit_summary(
    path: str, what: str, *, install: bool, edit: SettingsEdit, had_backup: bool
) -> str:
    if edit.text is None:
        return f"{what} removed: deleted {path}, which memd had created"
    if edit.remove_backup:
        return f"{what} removed: restored {path} from its backup"
    done = "installed in" if install else "removed from"
    backup = f" (backup: {path}{BACKUP_SUFFIX})" if edit.backup or had_backup else ""
    return f"{what} {done} {path}{backup}"


def _read_text(path: str, max_bytes: int) -> str | None:
    """A settings file's text, or None when it does not exist."""
    from memd.errors import UsageError
    from memd.fsread import read_prefix

    try:
        data = read_prefix(path, max_bytes + 1, follow=True)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UsageError(f"{path}: cannot read ({error}); left untouched") from None
    if len(data) > max_bytes:
        raise UsageError(f"{path}: larger than {max_bytes >> 20} MiB; left untouched")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8; left untouched") from None
