"""The history write lock: an `flock` on `<state_dir>/history/write.lock`.

Held by every writer's `recording` block and by the daemon's records, so a
change memd makes is recorded with its own cause and never as an "edit".
A killed holder's lock goes with its process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time

from memd.fsread import open_dir, open_regular
from memd.history.store import history_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

LOCK_NAME = "write.lock"


class _Lock:
    """The history write lock: an `flock` on a file of the state dir."""

    def __init__(self, state_dir: str) -> None:
        directory = history_dir(state_dir)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        folder = open_dir(directory)  # a link in its place is refused, not followed
        try:
            self.fd = open_regular(
                LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600, dir_fd=folder
            )
        finally:
            os.close(folder)

    def acquire(self, timeout: float | None) -> bool:
        if timeout is None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            return True
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.01)

    def close(self) -> None:
        os.close(self.fd)  # releases the flock


@contextlib.contextmanager
def write_lock(state_dir: str, *, timeout: float | None = None) -> Iterator[bool]:
    """Hold the history write lock; yields False when `timeout` passed first."""
    lock = _Lock(state_dir)
    try:
        yield lock.acquire(timeout)
    finally:
        lock.close()
