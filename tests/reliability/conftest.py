"""Reliability tests reuse the daemon tests' real `memd run` fixtures and helpers."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tests.daemon.conftest import _project, _start_daemon

__all__ = ["_project", "_start_daemon", "hash_tree", "scale"]


# Read at import: the autouse isolated_home fixture clears MEMD_* before each test.
SCALE = max(1, int(os.environ.get("MEMD_RELIABILITY_SCALE", "1")))


def scale(count: int) -> int:
    """Return `count` times MEMD_RELIABILITY_SCALE (1 in CI; 10 for a long run)."""
    return count * SCALE


def hash_tree(root: Path) -> dict[str, str]:
    """Return relpath -> sha256 (or link target) of everything under `root`."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[rel] = "dir"
    return found
