"""memd's two locks: one `memd run` per user, one dream per memory directory.

`fcntl.flock` on `<runtime or state dir>/memd.lock`. The kernel drops a flock
when its holder dies, so a crashed daemon never leaves a stale lock behind;
the pid written into the file is only there to name the holder in messages.
The lock file is written in place, not via `write_atomic`: replacing it would
swap the inode under the lock and let a second daemon in.

A file lock alone is keyed by where it lives: a daemon started with another
`XDG_RUNTIME_DIR`, or after the state dir was deleted, would take a new one and
run beside the first on the same cache and state. So the instance lock also
claims one abstract Unix socket (Linux) per directory the daemon writes, named
by a hash of its real path: nothing on disk can free it, the kernel drops it
with its holder, and the holder's pid comes back through `SO_PEERCRED`.

The dream lock is the reference's `<memory dir>/.consolidate-lock`
(REFERENCE.md §6): its body is the holder's pid and its mtime the time of the
last consolidation. A live holder younger than an hour blocks; an older or
dead one is broken; a failed dream winds the mtime back (or removes a lock it
created). A flock on the directory itself keeps two memd processes on this
host from dreaming one directory at once.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import socket
import struct
import sys
import time
from dataclasses import dataclass

from memd.atomic import write_atomic
from memd.errors import LockHeldError
from memd.fsread import open_dir, open_regular, read_fd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class LockWriter(Protocol):
        """Writes a file atomically (the dream's writer also counts its writes)."""

        def write(self, path: str, data: bytes) -> None: ...


LOCK_NAME = "memd.lock"
CONSOLIDATE_LOCK_NAME = ".consolidate-lock"
CONSOLIDATE_STALE_SECONDS = 3600.0


class InstanceLock:
    """A held single-instance lock; `release()` (or leaving the `with`) frees it."""

    __slots__ = ("_claims", "_fd", "path")

    def __init__(self, path: str, fd: int, claims: tuple[socket.socket, ...] = ()):
        self.path = path
        self._fd: int | None = fd
        self._claims = claims

    def release(self) -> None:
        """Unlock and close; the file stays so readers can see who held it last."""
        for claim in self._claims:
            claim.close()
        self._claims = ()
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


def acquire_instance_lock(
    directory: str, *, claims: tuple[str, ...] = ()
) -> InstanceLock:
    """Take the lock in `directory` (created 0700 if missing) and write our pid.

    `claims` are the directories this daemon will write (cache, state): each
    is claimed by its real path too, so no second daemon can share one of
    them, wherever its own lock file would live.

    Raises:
        LockHeldError: another live process holds it (its pid is in the message).
    """
    lock = _acquire_file_lock(directory)
    try:
        lock._claims = _claim(claims)
    except BaseException:
        lock.release()
        raise
    return lock


def _acquire_file_lock(directory: str) -> InstanceLock:
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = lock_path(directory)
    fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o600)
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


def claim_name(directory: str) -> str:
    """Return the abstract socket name that claims `directory` (by its real path)."""
    real = os.path.realpath(directory).encode("utf-8", "surrogateescape")
    return "\0memd-instance-" + hashlib.sha256(real).hexdigest()[:32]


def _claim(directories: tuple[str, ...]) -> tuple[socket.socket, ...]:
    """Bind one abstract socket per directory; LockHeldError if one is taken."""
    if not sys.platform.startswith("linux"):
        return ()  # no abstract namespace: the file lock is all there is
    held: list[socket.socket] = []
    for directory in dict.fromkeys(directories):
        name = claim_name(directory)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            sock.bind(name)
            sock.listen(1)
        except OSError as error:
            sock.close()
            for other in held:
                other.close()
            if error.errno != errno.EADDRINUSE:
                raise
            pid = _holder_pid(name)
            shown = str(pid) if pid is not None else "unknown"
            raise LockHeldError(
                f"memd is already running (pid {shown})", pid=pid
            ) from None
        held.append(sock)
    return tuple(held)


def _holder_pid(name: str) -> int | None:
    """Ask the kernel which process holds the abstract socket `name`."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(name)
            cred = probe.getsockopt(
                socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
            )
        except OSError:
            return None
    pid, _, _ = struct.unpack("3i", cred)
    return pid or None


def read_lock_pid(directory: str) -> int | None:
    """Return the pid recorded in the lock file, or None if missing or garbled."""
    return _read_pid(lock_path(directory))


def is_lock_held(directory: str) -> bool:
    """Return True if some process holds the lock in `directory` right now."""
    return _is_flocked(lock_path(directory), os.O_RDONLY | os.O_NOFOLLOW)


def _is_flocked(path: str, flags: int) -> bool:
    """Return True when another descriptor holds an exclusive flock on `path`."""
    try:
        fd = (
            open_dir(path, follow=True)
            if flags & os.O_DIRECTORY
            else open_regular(path, flags)
        )
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock we may have taken
    return False


@dataclass(frozen=True, slots=True)
class ConsolidateLock:
    """A held `.consolidate-lock`: give it back with release_lock or roll_back_lock."""

    path: str
    prior_mtime_ns: int | None
    acquired_mtime_ns: int
    dir_fd: int  # flock'ed: memd processes on this host never dream one dir twice


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_pid(path: str) -> int | None:
    """Return the pid a lock file holds; None if missing, garbled or not a file."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        body = read_fd(fd, 64).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    return int(body) if body.isdigit() else None


def acquire_consolidate_lock(memory_dir: str, writer: LockWriter) -> ConsolidateLock:
    """Take `.consolidate-lock`, breaking a stale one; raise `LockHeldError` if live."""
    dir_fd = open_dir(memory_dir, follow=True)
    try:
        fcntl.flock(dir_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(dir_fd)
        raise LockHeldError(f"{memory_dir}: another memd dream is running") from None
    try:
        return _take_lock_file(memory_dir, writer, dir_fd)
    except BaseException:
        os.close(dir_fd)
        raise


def _take_lock_file(
    memory_dir: str, writer: LockWriter, dir_fd: int
) -> ConsolidateLock:
    path = os.path.join(memory_dir, CONSOLIDATE_LOCK_NAME)
    try:
        prior: int | None = os.lstat(path).st_mtime_ns
    except FileNotFoundError:
        prior = None
    holder = _read_pid(path)
    if prior is not None and holder is not None and holder != os.getpid():
        age = time.time() - prior / 1e9
        if age < CONSOLIDATE_STALE_SECONDS and pid_alive(holder):
            raise LockHeldError(
                f"{memory_dir}: a dream is already running (pid {holder})", pid=holder
            )
    writer.write(path, f"{os.getpid()}\n".encode())
    winner = _read_pid(path)
    if winner != os.getpid():  # an agent broke the stale lock at the same moment
        raise LockHeldError(
            f"{memory_dir}: lost the dream lock to pid {winner}", pid=winner
        )
    return ConsolidateLock(path, prior, os.lstat(path).st_mtime_ns, dir_fd)


def release_lock(lock: ConsolidateLock, writer: LockWriter) -> None:
    """Give the lock up after a dream: empty body, mtime = this consolidation."""
    try:
        writer.write(lock.path, b"")
        stamp = lock.acquired_mtime_ns
        os.utime(lock.path, ns=(stamp, stamp))
    finally:
        os.close(lock.dir_fd)


def roll_back_lock(lock: ConsolidateLock) -> None:
    """Give the lock up with its mtime wound back (or remove a lock this dream made)."""
    try:
        if lock.prior_mtime_ns is None:
            os.unlink(lock.path)
        else:
            write_atomic(lock.path, b"")
            os.utime(lock.path, ns=(lock.prior_mtime_ns, lock.prior_mtime_ns))
    except OSError:
        pass
    finally:
        os.close(lock.dir_fd)


def is_dream_running(memory_dir: str) -> bool:
    """Return True while a dream holds `memory_dir` (memd's flock or a live lock pid).

    The check takes nothing: a team sync only needs to stay out of a dream's way.
    """
    if _is_flocked(memory_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC):
        return True
    path = os.path.join(memory_dir, CONSOLIDATE_LOCK_NAME)
    holder = _read_pid(path)
    if holder is None or holder == os.getpid():
        return False
    try:
        age = time.time() - os.lstat(path).st_mtime
    except OSError:
        return False
    return age < CONSOLIDATE_STALE_SECONDS and pid_alive(holder)
