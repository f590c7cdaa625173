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

import contextlib
import os

TEMP_PREFIX = ".memd-tmp-"
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
    Raises `OSError` (with the old file intact) when the write fails.
    """
    directory = os.path.dirname(path) or "."
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    temp = os.path.join(
        directory,
        f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}-{os.path.basename(path)}",
    )
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
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
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    crash_point()
    if durable:
        fsync_directory(directory)
    crash_point()


def fsync_directory(directory: str) -> None:
    """Flush a directory entry change (rename, create) to disk; best effort."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
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
        names = os.listdir(directory)
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
