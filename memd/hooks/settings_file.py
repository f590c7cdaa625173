"""Edit an agent's JSON settings file atomically, with a backup to undo it.

`memd hook install/uninstall` (the hooks in settings.json) and `memd mcp
install/uninstall` (the server in `~/.claude.json`) make the same edit:
`settings.py` plans it (pure, through `memd.jsonedit`), this module reads the
file and its backup, bounded, and writes both atomically. The backup keeps
the file's mode (`~/.claude.json` is 0600: it holds API keys); a file that is
a link (into a dotfiles repository) stays one and its target is edited.
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

    from memd.errors import UsageError

    backup_path = path + BACKUP_SUFFIX
    _refuse_dangling_link(path)
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
    try:
        _write(path, backup_path, edit)
    except OSError as error:
        raise UsageError(f"{path}: cannot write ({error}); left untouched") from None
    summary = _edit_summary(
        path, what, install=install, edit=edit, had_backup=backup is not None
    )
    return summary + "\n"


def _write(path: str, backup_path: str, edit: SettingsEdit) -> None:
    """Write the backup (with the file's own mode), then the file, through a link."""
    from memd.atomic import file_mode, write_atomic, write_through

    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    if edit.backup is not None:
        data = edit.backup.encode("utf-8")
        write_atomic(backup_path, data, mode=file_mode(path))
    if edit.text is None and not os.path.islink(path):
        os.unlink(path)
    else:  # a link into the user's dotfiles stays a link: its target is edited
        write_through(path, (edit.text or "{}\n").encode("utf-8"))
    if edit.remove_backup:
        os.unlink(backup_path)


def _refuse_dangling_link(path: str) -> None:
    from memd.errors import UsageError

    if os.path.islink(path) and not os.path.exists(path):
        target = os.readlink(path)
        raise UsageError(
            f"{path}: a link to {target}, which does not exist; left untouched"
        )


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
    from memd.fsread import read_prefix, refusal_reason

    try:
        data = read_prefix(path, max_bytes + 1, follow=True)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise UsageError(f"{path}: {refusal_reason(error)}; left untouched") from None
    if len(data) > max_bytes:
        raise UsageError(f"{path}: larger than {max_bytes >> 20} MiB; left untouched")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8; left untouched") from None
