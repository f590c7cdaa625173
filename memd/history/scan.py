"""List a memory directory the way history keeps it: bounded, no link followed.

Every regular file below the directory is kept, `MEMORY.md`, topic files,
`team/` and `logs/` alike, except hidden entries (`.git`, `.consolidate-lock`,
`.memd-tmp-*`), names `memd.relpath` refuses, files over `MAX_FILE_BYTES`,
and anything past `MAX_DEPTH` levels or `MAX_FILES` files. A name whose bytes
are not UTF-8 is kept too (the agent loads it): its relpath in the store spells
each such byte `\\xHH` (`kept_name`), which no other kept name can, since
`memd.relpath` refuses a backslash; `disk_name` turns it back into the name.
The walk holds one directory descriptor per level (`memd.fsread.open_dir`,
`O_NOFOLLOW`) and never enters a symlink, so nothing outside the directory
is read; a file is read through `memd.fsread.read_beneath`, only when its
stat key moved.
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
            kept = kept_name(entry.name)
            if kept is None:
                continue  # a name restore could never write back (a control char...)
            relpath = prefix + kept
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
        return read_beneath(root_fd, disk_name(relpath), MAX_FILE_BYTES)
    except OSError:
        return None


_ESCAPED = range(0xDC80, 0xDD00)  # surrogateescape: byte 0xHH read as U+DCHH


def kept_name(name: str) -> str | None:
    """The relpath history keeps for an on-disk name (`surrogateescape` str), or None.

    None for what `memd.relpath` refuses, judged with each undecodable byte
    as a plain letter: a byte of 0x80 or more is never a slash, a dot or NUL.
    """
    if not any(ord(char) in _ESCAPED for char in name):
        return name if relpath_refusal(name) is None else None
    plain = "".join("_" if ord(char) in _ESCAPED else char for char in name)
    if relpath_refusal(plain) is not None:
        return None
    return "".join(
        f"\\x{ord(char) - 0xDC00:02x}" if ord(char) in _ESCAPED else char
        for char in name
    )


def disk_name(relpath: str) -> str:
    """The on-disk name (`surrogateescape` str, as `os` takes it) of a kept relpath."""
    if "\\" not in relpath:
        return relpath
    parts = relpath.split("\\x")
    out = [parts[0]]
    for part in parts[1:]:
        try:
            out.append(chr(0xDC00 + int(part[:2], 16)) + part[2:])
        except ValueError:
            out.append("\\x" + part)
    return "".join(out)


def kept_refusal(relpath: str) -> str | None:
    """Why a kept relpath (or one a person typed) is refused; None if it is kept."""
    return (
        None if kept_name(disk_name(relpath)) == relpath else "a name memd cannot keep"
    )
