"""Plan a memory directory's safe fixes from disk, and apply one edit atomically.

`fixes.py` plans the edits from bytes (pure); this module reads those bytes
(bounded, through `memd.fsread`) and writes an edit back only if the file
still holds what was planned from. `memd fix` is its user; nothing here
prints (`warn` is told what is left alone).
"""

from __future__ import annotations

import contextlib
import errno
import os

from memd.claude_code.terms import INDEX_NAME
from memd.errors import MemdError
from memd.memory.index import is_hub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memd.lint.compact import Topics
    from memd.lint.fixes import FileEdit


def _ignore(message: str) -> None:
    """The default `warn`: say nothing."""


def plan_directory(
    memory_dir: str,
    *,
    max_file_bytes: int = 256 * 1024,
    dialect: str | None = None,
    warn: Callable[[str], None] | None = None,
    error: Callable[[str], None] | None = None,
) -> tuple[FileEdit, ...]:
    """Load `memory_dir`, read its index and topic files, and plan the safe fixes.

    `warn` is told, in one line each, what is left alone and why; `error`
    (default: `warn`) what leaves the index past the agent's cut: an index
    over memd's size cap (never read, so never compacted) or one that could
    not be compacted. A refusal is worded by `memd.fsread.refusal_reason`.
    """
    from memd.fsread import FileTooLargeError, read_bytes, refusal_reason
    from memd.lint.fixes import is_utf8_name, plan_fixes
    from memd.memory.reader import load_memdir

    warn = warn or _ignore
    error = error or warn
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
        try:
            raw[relpath] = read_bytes(path, max_file_bytes)
        except FileNotFoundError:
            continue
        except OSError as refused:
            why = f"skipped {shown(path)}: {refusal_reason(refused)}"
            if relpath != INDEX_NAME:
                warn(f"{why}; left as it is")
                continue
            index_is_file = False
            if isinstance(refused, FileTooLargeError):  # surely past the agent's cut
                error(
                    f"{why}, so not compacted; the agent loads only its start "
                    "(raise lint.max_topic_file_bytes and run memd fix again)"
                )
            else:
                warn(f"{why}; the index is left alone")
    edits = plan_fixes(memdir, raw, dialect=dialect, index=index_is_file)
    _warn_if_still_cut(memory_dir, edits, raw.get(INDEX_NAME), error)
    return edits


def _warn_if_still_cut(
    memory_dir: str,
    edits: tuple[FileEdit, ...],
    index: bytes | None,
    warn: Callable[[str], None],
) -> None:
    """Say so when MEMORY.md would still not load whole (it could not be compacted)."""
    from memd.lint.compact import loads_whole

    planned = next((e.new for e in edits if e.relpath == INDEX_NAME), index)
    if planned is None:
        return
    text = planned.decode("utf-8", "replace")
    if not loads_whole(text):
        warn(
            f"{shown(os.path.join(memory_dir, INDEX_NAME))} is past the agent's "
            "limits and could not be compacted (an unclosed frontmatter, or too "
            "many groups to link); see memd lint"
        )


def read_topics(memory_dir: str, *, max_file_bytes: int = 256 * 1024) -> Topics:
    """Load `memory_dir` for `memd.lint.compact`: its files, mtimes and hubs' bytes."""
    from memd.lint.compact import Topics
    from memd.memory.reader import load_memdir

    memdir = load_memdir(memory_dir, max_file_bytes=max_file_bytes)
    raw: dict[str, bytes] = {}
    for f in memdir.files:
        if is_hub(f.body):
            data = _read(os.path.join(memdir.path, f.relpath), max_file_bytes)
            if data is not None:
                raw[f.relpath] = data
    return Topics.of(memdir, raw)


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


# -- one fix as one change, and its undo ----------------------------------------

UNDO_DIR = "fix-undo"  # in memd's state dir: the last fix's pre-images, per directory
_MANIFEST = "manifest.json"


class FixUndoError(MemdError):
    """`memd fix --undo` cannot take the last fix back (one line, exit 1)."""

    exit_code = 1


def undo_dir(state_dir: str, memory_dir: str) -> str:
    """Return where the last fix of `memory_dir` keeps its pre-images."""
    from memd.claude_code.paths import sanitize_path

    return os.path.join(
        state_dir, UNDO_DIR, sanitize_path(os.path.realpath(memory_dir))
    )


def _digest(data: bytes | None) -> str | None:
    import hashlib

    return None if data is None else hashlib.sha256(data).hexdigest()


def _current(root_fd: int, relpath: str, limit: int) -> bytes | None:
    """Return the file's bytes below `root_fd`, None when absent; at most `limit`+1."""
    from memd.fsread import read_beneath

    try:
        return read_beneath(root_fd, relpath, limit + 1)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno != errno.EFBIG:
            raise
        return b"\0" * (limit + 2)  # grown past anything planned: it changed


def _file_mode(root_fd: int, relpath: str) -> int:
    """The permission bits of the memory file `relpath` (0o600 if not a file)."""
    import stat

    try:
        st = os.stat(relpath, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return 0o600
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o600


def _put(root_fd: int, relpath: str, data: bytes | None) -> None:
    from memd.atomic import remove_beneath, write_atomic_beneath

    if data is None:
        remove_beneath(root_fd, relpath)
    else:
        write_atomic_beneath(root_fd, relpath, data)


def _read_manifest(journal: str) -> dict[str, object] | None:
    from memd.fastjson import loads
    from memd.fsread import read_bytes

    try:
        data = loads(read_bytes(os.path.join(journal, _MANIFEST), 1 << 20), max_depth=8)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _files_of(manifest: dict[str, object]) -> list[tuple[str, str | None, str | None]]:
    """Return (relpath, pre-image file or None, sha256 after or None) per file."""
    files = manifest.get("files")
    found: list[tuple[str, str | None, str | None]] = []
    for item in files if isinstance(files, list) else ():
        if isinstance(item, dict) and isinstance(item.get("relpath"), str):
            pre, post = item.get("pre"), item.get("post")
            found.append(
                (
                    str(item["relpath"]),
                    pre if isinstance(pre, str) else None,
                    post if isinstance(post, str) else None,
                )
            )
    return found


def _pre_image(journal: str, pre: str | None) -> bytes | None:
    from memd.fsread import read_bytes

    if pre is None:
        return None
    return read_bytes(os.path.join(journal, pre), 1 << 30)


def _write_manifest(journal: str, manifest: dict[str, object]) -> None:
    import json

    from memd.atomic import write_atomic

    # ASCII escapes: a name's undecodable bytes (lone surrogates) round-trip.
    text = json.dumps(manifest, ensure_ascii=True)
    write_atomic(os.path.join(journal, _MANIFEST), text.encode("ascii"))


def _clear(journal: str) -> None:
    import shutil

    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(journal, _MANIFEST))
    shutil.rmtree(journal, ignore_errors=True)


def recover_fix(root: str, state_dir: str) -> None:
    """Take back a fix killed half-way below `root`, before the next one plans.

    Planning from the half-written files would leave out the edits already
    made, which the recovery then takes back: the rerun would not finish.
    """
    from memd.fsread import open_dir

    journal = undo_dir(state_dir, root)
    if not os.path.isdir(journal):
        return
    root_fd = open_dir(root or ".", follow=True)  # the memory dir may be a link
    try:
        _recover(root_fd, journal)
    finally:
        os.close(root_fd)


def _recover(root_fd: int, journal: str) -> None:
    """Take back a fix that was killed while applying: the written files go back."""
    manifest = _read_manifest(journal)
    if manifest is None or manifest.get("state") != "applying":
        return
    for relpath, pre, post in _files_of(manifest):
        old = _pre_image(journal, pre)
        now = _current(root_fd, relpath, max(len(old or b""), 1 << 24))
        if _digest(now) == post and now != old:
            _put(root_fd, relpath, old)
    _clear(journal)


def apply_edits(root: str, edits: tuple[FileEdit, ...], state_dir: str) -> bool:
    """Apply `edits` below `root` as one change, keeping pre-images for `undo_fix`.

    Every file must still hold what it was planned from, or nothing is written
    (returns False). The pre-images and a manifest go to `undo_dir` first; then
    the files are written in order (a compaction's hubs before MEMORY.md) each
    atomically; a failure puts back the ones written and re-raises. A fix
    killed half-way is taken back by the next `apply_edits` or `undo_fix`.
    """
    from memd.atomic import write_atomic
    from memd.fsread import open_dir

    journal = undo_dir(state_dir, root)
    root_fd = open_dir(root or ".", follow=True)  # the memory dir may be a link
    try:
        _recover(root_fd, journal)
        for edit in edits:
            if (
                _current(root_fd, edit.relpath, max(len(edit.old or b""), 1))
                != edit.old
            ):
                return False
        _clear(journal)
        os.makedirs(journal, mode=0o700, exist_ok=True)
        files: list[dict[str, object]] = []
        for number, edit in enumerate(edits):
            pre = None
            if edit.old is not None:
                pre = f"{number}.pre"
                mode = _file_mode(root_fd, edit.relpath)  # a 0600 file's copy too
                write_atomic(os.path.join(journal, pre), edit.old, mode=mode)
            after = None if edit.is_removal else edit.new
            files.append({"relpath": edit.relpath, "pre": pre, "post": _digest(after)})
        manifest: dict[str, object] = {
            "memory_dir": os.path.realpath(root),
            "state": "applying",
            "files": files,
        }
        _write_manifest(journal, manifest)
        written: list[FileEdit] = []
        try:
            for edit in edits:
                _put(root_fd, edit.relpath, None if edit.is_removal else edit.new)
                written.append(edit)
        except OSError:
            for edit in reversed(written):
                _put(root_fd, edit.relpath, edit.old)
            _clear(journal)
            raise
        _write_manifest(journal, {**manifest, "state": "applied"})
    finally:
        os.close(root_fd)
    return True


def undo_fix(root: str, state_dir: str) -> tuple[str, ...]:
    """Put back, byte for byte, every file the last `memd fix` of `root` changed.

    Returns the relpaths restored. Raises `FixUndoError` when there is nothing
    to undo, or when a file changed since that fix (nothing is then written).
    """
    from memd.fsread import open_dir

    journal = undo_dir(state_dir, root)
    root_fd = open_dir(root or ".", follow=True)
    try:
        _recover(root_fd, journal)
        manifest = _read_manifest(journal)
        if manifest is None or manifest.get("state") != "applied":
            raise FixUndoError("nothing to undo: no memd fix to take back")
        files = _files_of(manifest)
        images = {relpath: _pre_image(journal, pre) for relpath, pre, _ in files}
        for relpath, _, post in files:
            limit = 1 << 24
            if _digest(_current(root_fd, relpath, limit)) != post:
                raise FixUndoError(
                    f"not undone: {shown(relpath)} changed since memd fix wrote it"
                )
        # MEMORY.md first, so it never links a hub that is already gone.
        order = sorted(files, key=lambda item: item[0] != INDEX_NAME)
        for relpath, _, _ in order:
            _put(root_fd, relpath, images[relpath])
        _clear(journal)
    finally:
        os.close(root_fd)
    return tuple(relpath for relpath, _, _ in order)
