"""Atomic file replacement: a reader sees the old bytes or the new, never a mix.

The temp file lives in the target's directory so the final `rename` never
crosses a filesystem; fsync of the file before the rename and of the directory
after it makes the replacement survive a power cut. On any failure (ENOSPC,
EDQUOT, EFBIG) the temp file is removed and the old file is left untouched.

Test hook: with ``MEMD_TEST_CRASH_AT=n`` the process SIGKILLs itself at its
n-th write point (`crash_point`): four inside `write_atomic` (temp written,
temp fsynced, renamed, directory fsynced) and the ones other writers mark, so
the crash tests can kill a real process at every one of them.
"""

from __future__ import annotations

import os

from memd.fsread import list_names, open_dir

TEMP_PREFIX = ".memd-tmp-"
TEMP_GRACE_SECONDS = 600.0  # a live writer holds its temp file for milliseconds
_MAX_SWEEP_DEPTH = 32
CRASH_ENV = "MEMD_TEST_CRASH_AT"
_write_points = 0


def crash_point() -> None:
    """Count a write point; SIGKILL this process at the `MEMD_TEST_CRASH_AT`-th."""
    global _write_points
    target = os.environ.get(CRASH_ENV)
    if not target:
        return
    _write_points += 1
    if str(_write_points) == target:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def write_atomic(
    path: str, data: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Replace `path` with `data` atomically.

    `mode` defaults to the existing file's permission bits, else 0o644.
    `durable=False` skips both fsyncs, for memd's own records whose loss to a
    power cut costs only a recomputation (the hooks' session records).
    The directory part of `path` is resolved as given (memd's own dirs may sit
    behind a link); the final name is replaced, never written through.
    Raises `OSError` (with the old file intact) when the write fails.
    """
    directory, name = os.path.split(path)
    dir_fd = open_dir(directory or ".", follow=True)
    try:
        _replace_at(dir_fd, name, data, mode, durable)
    finally:
        os.close(dir_fd)


def write_through(path: str, data: bytes, *, mode: int | None = None) -> str:
    """Replace the file `path` names, atomically, through a link; return the target.

    For files the user owns and points memd at (the agent's settings, which
    may be a link into a dotfiles repository): a link is kept and its final
    target replaced in the target's own directory, with the target's mode
    (`mode` overrides). A dangling link or a loop raises `OSError` and writes
    nothing: memd does not create a file somewhere a link merely names.
    """
    target = resolve_link(path)
    write_atomic(target, data, mode=mode)
    return target


def resolve_link(path: str) -> str:
    """`path`, or the file it finally names when it is a link; `OSError` if none."""
    if not os.path.islink(path):
        return path
    return os.path.realpath(path, strict=True)


def file_mode(path: str, default: int = 0o600) -> int:
    """The permission bits of the file `path` names (through a link), else `default`.

    A copy memd keeps of a user's file gets these, so a 0600 file holding
    API keys is never copied readable by others.
    """
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return default


def write_atomic_beneath(
    root_fd: int,
    relpath: str,
    data: bytes,
    *,
    mode: int | None = None,
    make_dirs: bool = False,
) -> None:
    """Replace `relpath` below the directory open at `root_fd` with `data`, atomically.

    Every directory on the way is opened relative to the one before with
    `O_NOFOLLOW` (`memd.fsread.open_dir_beneath`), so no symlink, however
    swapped in, carries the write out of the root; `make_dirs` creates the
    missing ones. A symlink at the final name is replaced, never followed.
    The temp file is made with `O_EXCL` in the parent's descriptor, fsynced,
    renamed over the name with both descriptors, and the parent fsynced.
    Raises `OSError` (`UnsafeFileError` for a link or a climbing relpath),
    with the old file intact.
    """
    from memd.fsread import open_dir_beneath, split_beneath

    parts = split_beneath(relpath)
    parent = open_dir_beneath(root_fd, parts[:-1], make_missing=make_dirs)
    try:
        _replace_at(parent, parts[-1], data, mode, True)
    finally:
        os.close(parent)


def remove_beneath(root_fd: int, relpath: str, *, prune_empty: bool = False) -> None:
    """Delete `relpath` below the directory open at `root_fd`; a missing one is fine.

    The directories on the way are opened as in `write_atomic_beneath`, so
    the unlink lands below the root; a link at the final name is removed
    itself. `prune_empty` then removes the parents it leaves empty, up to
    (not including) the root. The parent is fsynced.
    """
    import errno

    from memd.fsread import open_dir_beneath, split_beneath

    parts = split_beneath(relpath)
    try:
        parent = open_dir_beneath(root_fd, parts[:-1])
    except FileNotFoundError:
        return
    try:
        try:  # noqa: SIM105 -- see write_atomic's import note
            os.unlink(parts[-1], dir_fd=parent)
        except FileNotFoundError:
            pass
        try:  # noqa: SIM105
            os.fsync(parent)
        except OSError:
            pass
    finally:
        os.close(parent)
    for depth in range(len(parts) - 1, 0, -1) if prune_empty else ():
        above = open_dir_beneath(root_fd, parts[: depth - 1])
        try:
            os.rmdir(parts[depth - 1], dir_fd=above)
        except OSError as error:
            if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                return
            raise
        finally:
            os.close(above)


def _replace_at(
    dir_fd: int, name: str, data: bytes, mode: int | None, durable: bool
) -> None:
    """Write `data` to a temp file in `dir_fd`, then rename it over `name`."""
    if mode is None:
        try:
            mode = os.stat(name, dir_fd=dir_fd).st_mode & 0o7777
        except (FileNotFoundError, NotADirectoryError):
            mode = 0o644
        except OSError:  # a link loop, a dangling link: it is replaced anyway
            mode = 0o644
    # Short and fixed-length: a 243-byte target name must not push the temp
    # name past NAME_MAX (255).
    temp = f"{TEMP_PREFIX}{os.urandom(8).hex()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, mode, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            crash_point()
            if durable:
                os.fsync(fd)
            crash_point()
        finally:
            os.close(fd)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:  # noqa: SIM105 -- importing contextlib costs the hooks 3 ms
            os.unlink(temp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    crash_point()
    if durable:
        try:  # noqa: SIM105 -- best effort, as fsync_directory
            os.fsync(dir_fd)
        except OSError:
            pass
    crash_point()


def fsync_directory(directory: str) -> None:
    """Flush a directory entry change (rename, create) to disk; best effort."""
    try:
        fd = open_dir(directory, follow=True)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_stale_temp_files(directory: str, *, older_than_seconds: float = 60.0) -> int:
    """Delete temp files a killed writer left in `directory`; return how many.

    Only files older than `older_than_seconds` go, so a live writer's temp
    file is never pulled from under it.
    """
    import time

    cutoff = time.time() - older_than_seconds
    removed = 0
    try:
        names = list_names(directory)
    except OSError:
        return 0
    for name in names:
        if name.startswith(TEMP_PREFIX):
            temp = os.path.join(directory, name)
            try:
                if os.lstat(temp).st_mtime < cutoff:
                    os.unlink(temp)
                    removed += 1
            except OSError:
                pass
    return removed


def remove_stale_temp_files_tree(
    root: str,
    *,
    older_than_seconds: float = TEMP_GRACE_SECONDS,
    now: float | None = None,
) -> int:
    """Delete stale `.memd-tmp-*` files anywhere under a memory directory.

    A SIGKILLed dream or fix leaves its temp file behind. The walk holds a
    directory descriptor per level and never enters a symlink, so nothing
    outside `root` is touched; only regular files older than the grace period
    go. Returns how many were removed; an unreadable directory is skipped.
    """
    import stat
    import time

    from memd.fsread import list_dir

    cutoff = (time.time() if now is None else now) - older_than_seconds
    try:
        root_fd = open_dir(root, follow=True)
    except OSError:
        return 0
    removed = 0
    pending = [(root_fd, 0)]
    while pending:
        fd, depth = pending.pop()
        try:
            entries = list_dir(fd)
        except OSError:
            entries = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and depth < _MAX_SWEEP_DEPTH:
                    pending.append((open_dir(entry.name, dir_fd=fd), depth + 1))
                elif (
                    entry.name.startswith(TEMP_PREFIX)
                    and stat.S_ISREG(st.st_mode)
                    and st.st_mtime < cutoff
                ):
                    os.unlink(entry.name, dir_fd=fd)
                    removed += 1
            except OSError:
                continue
        os.close(fd)
    return removed
