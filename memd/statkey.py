"""The stat key of a file: (size, mtime_ns, inode), the one way memd tells a change.

What watchdog keeps in one `dirsnapshot.py`: the snapshot store's inputs, the
daemon's config check, the watcher's listing fingerprint and the hooks'
session record all compare these three numbers, so they are read here.
Standard library `os` only, for the warm paths. `tests/test_terms.py` fails
on another `(st.st_size, st.st_mtime_ns, st.st_ino)` in the package.
"""

from __future__ import annotations

import os

MISSING = (-1, 0, 0)  # the key of a path that does not exist (or cannot be stat'ed)


def key_of(st: os.stat_result) -> tuple[int, int, int]:
    """Return the (size, mtime_ns, inode) of a stat result."""
    return st.st_size, st.st_mtime_ns, st.st_ino


def stat_key(path: str) -> tuple[int, int, int]:
    """Return the key of `path`, symlinks followed; MISSING if it cannot be stat'ed."""
    try:
        return key_of(os.stat(path))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return MISSING
