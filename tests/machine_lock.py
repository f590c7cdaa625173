"""One lock for what a machine has once, as pytest-xdist runs workers side by side."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def held(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `lock_file` (made if missing) for the block."""
    with open(lock_file, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
