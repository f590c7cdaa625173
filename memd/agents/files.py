"""Read an agent's config file, bounded, and write its edit atomically.

The edits themselves are pure (`codex.plan_config`, `gemini.plan_settings`):
text in, text out. This is their one edge: a bounded read, the diff for
`--dry-run`, an atomic write through a symlinked config file to its target.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def read_text(path: str, max_bytes: int) -> str | None:
    """The file's text, or None when it does not exist.

    Raises `ValueError` (with the reason) for a file memd will not edit:
    unreadable, larger than `max_bytes`, or not UTF-8.
    """
    from memd.fsread import read_prefix

    try:
        data = read_prefix(path, max_bytes + 1, follow=True)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ValueError(f"cannot read it ({error.strerror or error})") from None
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes >> 20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None


def apply_text_edit(
    path: str,
    plan: Callable[[str | None], str | None],
    *,
    what: str,
    install: bool,
    dry_run: bool,
    max_bytes: int,
) -> str:
    """Edit the file at `path` as `plan(text)` says (None: no change); say what.

    A file memd cannot read or that `plan` refuses (`ValueError`) is left
    untouched: `UsageError` with one line naming the file and why.
    """
    import difflib

    from memd.atomic import write_atomic
    from memd.errors import UsageError

    try:
        current = read_text(path, max_bytes)
        new = plan(current)
    except ValueError as error:
        raise UsageError(f"{path}: {error}; left untouched") from None
    if new is None:
        verb = "already in" if install else "not in"
        return f"{what} {verb} {path}\n"
    if dry_run:
        diff = difflib.unified_diff(
            (current or "").splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{path} (now)",
            tofile=f"{path} ({'with' if install else 'without'} {what})",
        )
        return "".join(diff)
    target = os.path.realpath(path) if os.path.islink(path) else path
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    write_atomic(target, new.encode("utf-8"))  # keeps the file's mode
    return f"{what} {'added to' if install else 'taken out of'} {path}\n"
