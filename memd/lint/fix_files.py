"""Plan a memory directory's safe fixes from disk, and apply one edit atomically.

`fixes.py` plans the edits from bytes (pure); this module reads those bytes
(bounded, through `memd.fsread`) and writes an edit back only if the file
still holds what was planned from. `memd fix` is its user; nothing here
prints (`warn` is told what is left alone).
"""

from __future__ import annotations

import errno
import os

from memd.agent.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memd.lint.fixes import FileEdit


def _ignore(message: str) -> None:
    """The default `warn`: say nothing."""


def plan_directory(
    memory_dir: str,
    *,
    max_file_bytes: int = 256 * 1024,
    dialect: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> tuple[FileEdit, ...]:
    """Load `memory_dir`, read its index and topic files, and plan the safe fixes.

    `warn` is told, in one line each, what is left alone and why.
    """
    from memd.lint.fixes import is_utf8_name, plan_fixes
    from memd.memory.reader import load_memdir

    warn = warn or _ignore
    memdir = load_memdir(memory_dir, max_file_bytes=max_file_bytes)
    for relpath in memdir.unreadable_paths:  # FIFOs, directories, unreadable files
        warn(
            f"skipped {shown(os.path.join(memory_dir, relpath))}: "
            "it cannot be read as a file (see memd lint)"
        )
    for f in memdir.files:
        if not is_utf8_name(f.relpath):
            warn(
                f"not indexing {shown(os.path.join(memory_dir, f.relpath))}: "
                "its name is not valid UTF-8; rename it"
            )
    raw: dict[str, bytes] = {}
    index_is_file = True
    for relpath in (INDEX_NAME, *(f.relpath for f in memdir.files)):
        path = os.path.join(memdir.path, relpath)
        data = _read(path, max_file_bytes)
        if data is not None:
            raw[relpath] = data
        elif relpath == INDEX_NAME and os.path.lexists(path):
            warn(f"skipped {shown(path)}: not a regular file; the index is left alone")
            index_is_file = False
    return plan_fixes(memdir, raw, dialect=dialect, index=index_is_file)


def plan_single_file(path: str) -> tuple[FileEdit, ...]:
    """Plan the encoding fixes for one topic file outside a memory directory."""
    from memd.lint.fixes import FileEdit, is_safe_to_rewrite, normalise_bytes
    from memd.memory.memfile import parse_memory_file

    data = _read(path, 256 * 1024)
    if data is None:
        return ()
    new = normalise_bytes(data)
    if new == data or not is_safe_to_rewrite(
        parse_memory_file(os.path.basename(path), data)
    ):
        return ()
    return (
        FileEdit(
            relpath=os.path.basename(path),
            old=data,
            new=new,
            reason="normalise CRLF/BOM",
        ),
    )


def shown(path: str) -> str:
    """Return `path` printable on any terminal: undecodable bytes as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _read(path: str, limit: int) -> bytes | None:
    """Return the file's bytes; None if missing, not a regular file or too big."""
    from memd.fsread import read_bytes

    try:
        return read_bytes(path, limit)
    except OSError:
        return None


def apply_edit(root: str, edit: FileEdit) -> bool:
    """Write `edit` below `root` atomically unless the file no longer holds `edit.old`.

    The file is re-read and replaced relative to `root`'s descriptor, each
    folder on the way opened with `O_NOFOLLOW` (`memd.atomic.write_atomic_beneath`):
    a folder swapped for a symlink since the plan was made fails the edit
    instead of carrying the write out of the memory directory.
    Returns whether it wrote.
    """
    from memd.atomic import write_atomic_beneath
    from memd.fsread import open_dir, read_beneath

    root_fd = open_dir(root or ".", follow=True)  # the memory dir may be a link
    try:
        try:
            current: bytes | None = read_beneath(
                root_fd, edit.relpath, max(len(edit.old or b""), 1) + 1
            )
        except FileNotFoundError:
            current = None
        except OSError as error:
            if error.errno != errno.EFBIG:
                raise
            current = None  # grown past the planned bytes: it changed
        if current != edit.old:
            return False
        write_atomic_beneath(root_fd, edit.relpath, edit.new)
    finally:
        os.close(root_fd)
    return True
