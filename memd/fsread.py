"""The one bounded reader: every file memd opens and every user directory it lists.

A FIFO, socket or device in place of a memory file would block `open()` or
`read()` forever, and a symlink could carry a read or a write out of a memory
directory. So every open here uses `O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC`
(relative to a directory descriptor when one is given), is checked with
`fstat` to be a regular file (or a directory, for `open_dir`), and every read
stops at a cap. `O_NONBLOCK` has no effect on a regular file, so the
descriptor is used as it is. Refusals raise `UnsafeFileError`, an `OSError`,
so a caller's existing `except OSError` keeps handling them.

`open_beneath` opens a relpath below a root directory's descriptor one
component at a time, each directory with `O_DIRECTORY | O_NOFOLLOW` relative
to the one before and the file with `open_regular`: no symlink is followed
at any component, so a directory renamed or swapped for a symlink while the
walk runs (``renameat2(RENAME_EXCHANGE)``) fails with ELOOP instead of leading
out. Which names may arrive from outside is `memd.relpath`'s rule; the
opener itself only refuses what would climb (``..``, ``.``, empty parts).

`follow=True` is for files the user points memd at on purpose (config.toml,
the agent's settings, which the agent itself follows); the final component
may then be a symlink, but its target must still be a regular file.

Standard library `os` and `stat` only: `memd prompt`'s warm path imports this.
"""

from __future__ import annotations

import errno
import os
import stat

DEFAULT_LIMIT = 16 * 1024 * 1024  # state, logs, settings: far above any real one
_READ_CHUNK = 1 << 20
_MIN_READ = 4096
_BASE = os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class UnsafeFileError(OSError):
    """A file memd would open is a symlink, not a regular file, or over its cap."""


class FileTooLargeError(UnsafeFileError):
    """A file is larger than the cap its reader allows: it was not read.

    `size` is the file's size (at least: it may still be growing) and
    `limit` the cap, so a message can name both (`refusal_reason`).
    """

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"is larger than {limit} bytes", path)
        self.size, self.limit = size, limit


def refusal_reason(error: OSError) -> str:
    """Why the bounded reader did not read a file, in words for a person.

    The one wording of its refusals, so a cap is never reported as "not a
    regular file": the size and the cap, a link, a FIFO or device, or the
    system's own reason.
    """
    if isinstance(error, FileTooLargeError):
        return (
            f"{error.size:,} bytes, over memd's cap of {error.limit:,} bytes "
            "for one file; not read"
        )
    if error.errno == errno.ELOOP:
        return "a symlink, which memd never follows; not read"
    if isinstance(error, UnsafeFileError) and error.errno == errno.ENOTDIR:
        return "not a directory; not read"
    if isinstance(error, UnsafeFileError):
        return "not a regular file (a FIFO, socket, device or directory); not read"
    return f"cannot be read ({error.strerror or error})"


def _refusal(path: str, error: OSError) -> OSError:
    if error.errno == errno.ELOOP:
        why = f"{os.strerror(errno.ELOOP)} (a symlink; memd never follows one)"
        return UnsafeFileError(errno.ELOOP, why, path)
    if error.errno == errno.ENXIO:  # O_NONBLOCK write-open of a FIFO with no reader
        return UnsafeFileError(errno.ENXIO, "is not a regular file", path)
    return error


def open_regular(
    path: str,
    flags: int = os.O_RDONLY,
    mode: int = 0o644,
    *,
    dir_fd: int | None = None,
    follow: bool = False,
) -> int:
    """Open a regular file and return its descriptor; refuse anything else.

    `flags` may add O_RDWR, O_WRONLY, O_APPEND, O_CREAT (for locks and logs).
    Raises `UnsafeFileError` for a symlink (unless `follow`), a FIFO, socket,
    device or directory; other `OSError`s (ENOENT, EACCES) pass through.
    """
    flags |= _BASE | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags, mode, dir_fd=dir_fd)
    except OSError as error:
        raise _refusal(path, error) from None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafeFileError(errno.EINVAL, "is not a regular file", path)
    return fd


def open_dir(path: str, *, dir_fd: int | None = None, follow: bool = False) -> int:
    """Open a directory as a descriptor, refusing a symlink unless `follow`."""
    flags = DIR_FLAGS | (0 if follow else os.O_NOFOLLOW)
    try:
        return os.open(path, flags, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ENOTDIR and not follow and _is_link(path, dir_fd):
            error = OSError(errno.ELOOP, "symlink")  # O_DIRECTORY says ENOTDIR
        elif error.errno == errno.ENOTDIR:
            raise UnsafeFileError(errno.ENOTDIR, "is not a directory", path) from None
        raise _refusal(path, error) from None


def _is_link(path: str, dir_fd: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_fd(fd: int, limit: int, size_hint: int = _READ_CHUNK) -> bytes:
    """Read at most `limit` bytes from `fd`; requests are sized by `size_hint`.

    os.read allocates its whole request up front: asking for 256 KiB to read a
    2 KiB file costs more than the read itself. A file that grew is still read
    to its end (or the cap), in `size_hint`-sized steps.
    """
    request = min(max(size_hint + 1, _MIN_READ), _READ_CHUNK)
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, request))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_bytes(
    path: str,
    limit: int = DEFAULT_LIMIT,
    *,
    dir_fd: int | None = None,
    follow: bool = False,
    shared_lock: bool = False,
) -> bytes:
    """Return a regular file's bytes; raise `FileTooLargeError` past `limit`.

    `shared_lock` takes `flock(LOCK_SH)` first, so a reader never sees half
    of an append made under `LOCK_EX`.
    """
    fd = open_regular(path, dir_fd=dir_fd, follow=follow)
    try:
        if shared_lock:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_SH)
        return _read_capped(fd, limit, path)
    finally:
        os.close(fd)


def _read_capped(fd: int, limit: int, path: str) -> bytes:
    size = os.fstat(fd).st_size
    if size > limit:  # past the cap already: not a byte of it is read
        raise FileTooLargeError(path, size, limit)
    data = read_fd(fd, limit + 1, size)
    if len(data) > limit:
        raise FileTooLargeError(path, max(size, len(data)), limit)
    return data


def read_prefix(
    path: str, limit: int, *, dir_fd: int | None = None, follow: bool = False
) -> bytes:
    """Return at most the first `limit` bytes of a regular file (no error past it)."""
    fd = open_regular(path, dir_fd=dir_fd, follow=follow)
    try:
        return read_fd(fd, limit, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def read_bytes_or_none(
    path: str, limit: int = DEFAULT_LIMIT, *, dir_fd: int | None = None
) -> bytes | None:
    """Like `read_bytes`, but a missing file is None."""
    try:
        return read_bytes(path, limit, dir_fd=dir_fd)
    except FileNotFoundError:
        return None


def read_text(
    path: str,
    limit: int = DEFAULT_LIMIT,
    *,
    dir_fd: int | None = None,
    follow: bool = False,
) -> str:
    """Return a regular file's text (UTF-8, undecodable bytes replaced)."""
    data = read_bytes(path, limit, dir_fd=dir_fd, follow=follow)
    return data.decode("utf-8", errors="replace")


def list_dir(path: str | int) -> list[os.DirEntry[str]]:
    """Return a directory's entries (a path, or a descriptor from `open_dir`).

    The one place memd lists a user directory; callers decide what counts,
    using `entry.is_dir(follow_symlinks=False)` and friends.
    """
    with os.scandir(path) as listing:
        return list(listing)


def list_names(path: str | int) -> list[str]:
    """Return a directory's entry names, sorted."""
    return sorted(entry.name for entry in list_dir(path))


def split_beneath(relpath: str) -> list[str]:
    """Return `relpath`'s components; refuse one that would climb or is empty.

    Raises `UnsafeFileError` (EINVAL) for an absolute path or a ``..``,
    ``.`` or empty component: relative to a descriptor each would name
    something other than a plain entry below it.
    """
    parts = relpath.split("/")
    if relpath.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UnsafeFileError(errno.EINVAL, "is not a plain relative path", relpath)
    return parts


def open_dir_beneath(
    root_fd: int, parts: list[str] | tuple[str, ...], *, make_missing: bool = False
) -> int:
    """Open the directory `parts` below `root_fd`, never following a symlink.

    Returns a new descriptor (the caller closes it); `parts` may be empty
    (a duplicate of `root_fd`). `make_missing` creates absent directories
    (mode 0o755, relative to their parent's descriptor, so the new one is
    where the walk stands). A component that is a symlink raises
    `UnsafeFileError` (ELOOP); one that is a file, ENOTDIR.
    """
    fd = os.dup(root_fd)
    for part in parts:
        if part in ("", ".", "..") or "/" in part:
            os.close(fd)
            raise UnsafeFileError(errno.EINVAL, "is not a plain name", part)
        try:
            try:
                child = open_dir(part, dir_fd=fd)
            except FileNotFoundError:
                if not make_missing:
                    raise
                try:  # noqa: SIM105 -- contextlib costs the warm path
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: open_dir below checks what it is
                child = open_dir(part, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def open_beneath(
    root_fd: int, relpath: str, flags: int = os.O_RDONLY, mode: int = 0o644
) -> int:
    """Open the regular file `relpath` below `root_fd`; no symlink on the way.

    `flags` as for `open_regular`. Raises `UnsafeFileError` for a symlink at
    any component, a non-regular file, or a relpath that would climb.
    """
    parts = split_beneath(relpath)
    parent = open_dir_beneath(root_fd, parts[:-1])
    try:
        return open_regular(parts[-1], flags, mode, dir_fd=parent)
    finally:
        os.close(parent)


def read_beneath(root_fd: int, relpath: str, limit: int = DEFAULT_LIMIT) -> bytes:
    """Return the bytes of `relpath` below `root_fd` (`open_beneath`), capped.

    Raises `FileTooLargeError` past `limit`.
    """
    fd = open_beneath(root_fd, relpath)
    try:
        return _read_capped(fd, limit, relpath)
    finally:
        os.close(fd)
