"""List a memory directory the way history keeps it: bounded, no link followed.

Every regular file below the directory is kept, `MEMORY.md`, topic files,
`team/` and `logs/` alike, except hidden entries (`.git`, `.consolidate-lock`,
`.memd-tmp-*`), names `memd.relpath` refuses, files over `MAX_FILE_BYTES`,
and anything past `MAX_DEPTH` levels or `MAX_FILES` files. The walk holds one
directory descriptor per level (`memd.fsread.open_dir`, `O_NOFOLLOW`) and
never enters a symlink, so nothing outside the directory is read; a file is
read through `memd.fsread.read_beneath`, only when its stat key moved.
"""

from __future__ import annotations

import os
import stat

from memd.fsread import list_dir, open_dir, read_beneath
from memd.relpath import relpath_refusal
from memd.statkey import key_of

MAX_FILE_BYTES = 4 * 1024 * 1024  # far above a memory file; a bigger one is not kept
# Another agent's store that is one file of a busy folder (SPEC §17): Gemini
# CLI's `~/.gemini` also holds its settings, chats and project folders, so
# history keeps only its GEMINI.md, whoever records it (the daemon, a restore).
ONE_FILE_STORES = {".gemini": "GEMINI.md"}
MAX_FILES = 20_000
MAX_DEPTH = 8

# memd.statkey's (size, mtime_ns, inode) and ctime_ns, which an in-place rewrite
# within one mtime tick still moves: a file whose key is unchanged is not re-read
StatKey = tuple[int, int, int, int]


def scan_dir(memory_dir: str) -> dict[str, StatKey]:
    """Return relpath -> stat key of every file history keeps; `{}` if no directory."""
    single = ONE_FILE_STORES.get(os.path.basename(memory_dir.rstrip(os.sep)))
    if single is not None:
        return _scan_one(memory_dir, single)
    try:
        root = open_dir(memory_dir, follow=True)
    except OSError:
        return {}
    found: dict[str, StatKey] = {}
    pending: list[tuple[int, str, int]] = [(root, "", 0)]
    while pending:
        fd, prefix, depth = pending.pop()
        try:
            entries = list_dir(fd)
        except OSError:
            entries = []
        for entry in entries:
            if entry.name.startswith(".") or len(found) >= MAX_FILES:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            relpath = prefix + entry.name
            if relpath_refusal(relpath) is not None:
                continue  # a name restore could never write back (a lone surrogate...)
            if stat.S_ISDIR(st.st_mode) and depth + 1 < MAX_DEPTH:
                try:
                    child = open_dir(entry.name, dir_fd=fd)
                except OSError:
                    continue
                pending.append((child, relpath + "/", depth + 1))
            elif stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE_BYTES:
                found[relpath] = (*key_of(st), st.st_ctime_ns)
        os.close(fd)
    return found


def _scan_one(directory: str, name: str) -> dict[str, StatKey]:
    """The one file kept of `directory`, when it is a regular file."""
    try:
        st = os.lstat(os.path.join(directory, name))
    except OSError:
        return {}
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
        return {}
    return {name: (*key_of(st), st.st_ctime_ns)}


def read_kept(root_fd: int, relpath: str) -> bytes | None:
    """Return a kept file's bytes, or None if it vanished or turned unsafe meanwhile."""
    try:
        return read_beneath(root_fd, relpath, MAX_FILE_BYTES)
    except OSError:
        return None
