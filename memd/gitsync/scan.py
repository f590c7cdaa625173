"""memd's own walk of a memory folder: what may travel, and what it saw gone.

git never opens a working-tree file: `scan_folder` reads each file once,
below the folder's descriptor, and those exact bytes are scanned for
secrets (`secret_refusal`) and committed. A path the walk did not reach
is *not seen*, never a deletion (`Scan.is_gone`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from memd.gitsync.merge import (
    without_links_to,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


MAX_SCAN_FILES = 10_000  # per memory folder; past it, the rest is "not seen"


MAX_SCAN_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Scan:
    """What one walk of a memory folder found, and which folders it read whole.

    `files` maps each relpath to its bytes, or to why it may not travel.
    `listed` maps each folder read whole (``""`` is the root) to every name
    in it. A path the walk did not reach (past `MAX_SCAN_FILES`, deeper than
    `MAX_SCAN_DEPTH`, in a folder it could not list) is *not seen*, never
    deleted: only `is_gone` turns an absence into a deletion.
    """

    files: dict[str, bytes | str]
    listed: dict[str, frozenset[str]]

    def is_gone(self, relpath: str) -> bool:
        """Return True when the walk saw that `relpath` is not there."""
        folder = ""
        for part in relpath.split("/"):
            names = self.listed.get(folder)
            if names is None:
                return False  # a folder never read whole: not seen
            if part not in names:
                return True
            folder = f"{folder}/{part}" if folder else part
        return False  # it is there: a file kept out, or now a folder


def scan_folder(
    root: str,
    *,
    max_file_bytes: int,
    refusal: Callable[[str], str | None],
    skip: Callable[[str], bool] = lambda relpath: False,
) -> Scan:
    """Walk `root` below its descriptor (no link followed) and read what may travel.

    Hidden entries and those `skip` names are passed over silently;
    `refusal(relpath)` gives why a file may not travel (its bytes are then
    not read). Each file is read once: these are the bytes scanned and
    committed.
    """
    from memd.fsread import open_dir, open_dir_beneath

    files: dict[str, bytes | str] = {}
    listed: dict[str, frozenset[str]] = {}
    try:
        root_fd = open_dir(root, follow=True)  # the memory dir above may be a link
    except OSError:
        return Scan(files, listed)
    try:
        stack: list[tuple[str, int]] = [("", 0)]
        while stack and len(files) < MAX_SCAN_FILES:
            relative, depth = stack.pop()
            try:
                dir_fd = open_dir_beneath(
                    root_fd, relative.split("/") if relative else []
                )
            except OSError:
                continue
            try:
                complete = _scan_one(
                    dir_fd, relative, depth, files, stack, max_file_bytes, refusal, skip
                )
            finally:
                os.close(dir_fd)
            if complete is not None:
                listed[relative] = complete
    finally:
        os.close(root_fd)
    return Scan(files, listed)


def _scan_one(
    dir_fd: int,
    relative: str,
    depth: int,
    files: dict[str, bytes | str],
    stack: list[tuple[str, int]],
    max_file_bytes: int,
    refusal: Callable[[str], str | None],
    skip: Callable[[str], bool],
) -> frozenset[str] | None:
    """Read one folder into `files`; return its names, or None when cut short."""
    from memd.fsread import list_dir, open_regular, read_fd

    try:
        entries = list_dir(dir_fd)
    except OSError:
        return None
    for entry in entries:
        name = entry.name
        relpath = f"{relative}/{name}" if relative else name
        if name.startswith(".") or skip(relpath):
            continue
        if len(files) >= MAX_SCAN_FILES:
            return None  # the rest of this folder is not seen
        try:
            mode = entry.stat(follow_symlinks=False).st_mode
        except OSError:
            return None
        if stat.S_ISDIR(mode):
            if depth < MAX_SCAN_DEPTH:
                stack.append((relpath, depth + 1))
            continue
        why = refusal(relpath)
        if why is None and stat.S_ISLNK(mode):
            why = "symlink (never committed)"
        elif why is None and not stat.S_ISREG(mode):
            why = "not a regular file"
        if why is not None:
            files[relpath] = why
            continue
        try:
            fd = open_regular(name, dir_fd=dir_fd)
        except OSError as error:
            files[relpath] = f"unreadable ({error.strerror})"
            continue
        try:
            files[relpath] = read_fd(fd, max_file_bytes + 1)
        except OSError as error:
            files[relpath] = f"unreadable ({error.strerror})"
        finally:
            os.close(fd)
        data = files[relpath]
        if isinstance(data, bytes) and len(data) > max_file_bytes:
            files[relpath] = f"larger than {max_file_bytes} bytes"
    return frozenset(entry.name for entry in entries)


def secret_refusal(data: bytes, allow: frozenset[str]) -> str | None:
    """Return why these exact bytes may not be pushed (a likely secret), or None."""
    from memd.lint.secrets import find_secrets_in_bytes

    secrets = find_secrets_in_bytes(data, allow=allow)
    if not secrets:
        return None
    return f"line {secrets[0].line}: {secrets[0].message()}"


def index_to_commit(data: bytes, held_back: frozenset[str]) -> bytes:
    """Return the index bytes to commit: no entry links a file held back.

    The local index keeps every line; the other machine never gets a link
    to a file that did not travel with it.
    """
    if not held_back:
        return data
    text = data.decode("utf-8", "surrogateescape")
    kept = without_links_to(text, held_back)
    return data if kept == text else kept.encode("utf-8", "surrogateescape")
