"""The single-instance lock: one `memd run` per user.

`fcntl.flock` on `<runtime or state dir>/memd.lock`. The kernel drops a flock
when its holder dies, so a crashed daemon never leaves a stale lock behind;
the pid written into the file is only there to name the holder in messages.
The lock file is written in place, not via `write_atomic`: replacing it would
swap the inode under the lock and let a second daemon in.
"""

from __future__ import annotations

import errno
import fcntl
import os

from memd.errors import LockHeldError

LOCK_NAME = "memd.lock"


class InstanceLock:
    """A held single-instance lock; `release()` (or leaving the `with`) frees it."""

    __slots__ = ("_fd", "path")

    def __init__(self, path: str, fd: int):
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Unlock and close; the file stays so readers can see who held it last."""
        if self._fd is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_path(directory: str) -> str:
    """Return the lock file's path inside `directory`."""
    return os.path.join(directory, LOCK_NAME)


def acquire_instance_lock(directory: str) -> InstanceLock:
    """Take the lock in `directory` (created 0700 if missing) and write our pid.

    Raises:
        LockHeldError: another live process holds it (its pid is in the message).
    """
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = lock_path(directory)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise
        pid = read_lock_pid(directory)
        shown = str(pid) if pid is not None else "unknown"
        raise LockHeldError(f"memd is already running (pid {shown})", pid=pid) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError:
        os.close(fd)
        raise
    return InstanceLock(path, fd)


def read_lock_pid(directory: str) -> int | None:
    """Return the pid recorded in the lock file, or None if missing or garbled."""
    try:
        with open(lock_path(directory), "rb") as handle:
            text = handle.read(64).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def is_lock_held(directory: str) -> bool:
    """Return True if some process holds the lock in `directory` right now."""
    try:
        fd = os.open(lock_path(directory), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
