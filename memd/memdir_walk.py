"""Walk one memory directory safely: every topic file, the index, the logs' paths.

The walk (SPEC §3, §11) holds a directory file descriptor per level and opens
every name relative to it with `O_NOFOLLOW`, so a directory swapped for a
symlink mid-walk is never entered. A symlink is read only when its target
(`os.path.realpath`) lies inside the memory directory; one pointing outside is
reported and never opened, so its content can appear nowhere. Files are opened
with `O_NONBLOCK` and checked with `fstat` to be regular: a FIFO, socket or
device would otherwise block `open()` or `read()` forever.

At most `max_file_bytes + 1` bytes of a file are read, so a 50 MB file costs
256 KiB of memory; its frontmatter is still parsed from that first part.

Which entries count (hidden ones skipped, topic files, logs) and what
`inputs` records are described in `memd.memdir`, with the values a walk fills.
"""

from __future__ import annotations

import os
import stat

from memd.diagnostics import Diagnostic, Severity, one_line
from memd.memdir import DIR_FLAGS, INDEX_NAME, LOGS_DIR, input_stat
from memd.memfile import decode_text, parse_memory_file
from memd.truncation import format_file_size

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memd.memdir import InputStat, ParseCache
    from memd.memfile import MemoryFile

MAX_DEPTH = 64  # one open descriptor per level; real trees are two or three deep
_READ_CHUNK = 1 << 20
_MIN_READ = 4096
NOFOLLOW_DIR_FLAGS = DIR_FLAGS | os.O_NOFOLLOW
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _key(st: os.stat_result, max_file_bytes: int) -> tuple[int, int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, max_file_bytes)


def _diag(
    code: str, name: str, severity: Severity, path: str, message: str, hint: str
) -> Diagnostic:
    return Diagnostic(
        code=code,
        name=name,
        severity=severity,
        path=path,
        message=one_line(message),
        hint=one_line(hint),
    )


def unreadable_diagnostic(relpath: str, why: str) -> Diagnostic:
    return _diag(
        "F005",
        "file-unreadable",
        Severity.ERROR,
        relpath,
        f"cannot read {relpath}: {why}",
        "fix its permissions, or remove it if it is not a memory",
    )


def _trim_partial_utf8(data: bytes) -> bytes:
    """Cut an incomplete UTF-8 sequence off the end of a byte prefix."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a lead byte (or ASCII)
            need = 1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if need <= back else data[:-back]
    return data


def _read_bounded(fd: int, limit: int, size_hint: int = _READ_CHUNK) -> bytes:
    """Read up to `limit` bytes; requests are sized by `size_hint` (the fstat size).

    os.read allocates its whole request up front: asking for 256 KiB to read a
    2 KiB file costs more than the read itself. A file that grew is still read
    to its end, in `size_hint`-sized steps.
    """
    request = min(max(size_hint + 1, _MIN_READ), _READ_CHUNK)
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, request))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


class Walk:
    """The state of one `load_memdir` call; never outlives it.

    Public for `memd.memdir_reload`, which re-reads single files through it.
    """

    def __init__(self, root: str, cache: ParseCache | None, max_file_bytes: int):
        self.root = root
        self.root_real = os.path.realpath(root)
        self.root_fd = -1  # set by load_memdir while the walk runs
        self.cache = cache
        self.max_file_bytes = max_file_bytes
        self.files: list[MemoryFile] = []
        self.mtimes: dict[str, int] = {}
        self.logs: list[str] = []
        self.inputs: list[InputStat] = []
        self.diags: list[Diagnostic] = []
        self.unreadable: list[str] = []
        self.index_text: str | None = None
        self.index_seen = False
        self.positions: dict[str, int] = {}  # see MemDir.input_positions
        self.hidden_counted: dict[str, str] = {}
        self.file_count = 0
        self.subdir_count = 0

    # Directories ---------------------------------------------------------

    def scan(self, fd: int, prefix: str, depth: int, in_logs: bool) -> None:
        """List the directory open at `fd` (relpath `prefix`) and visit each entry."""
        here = os.path.join(self.root, prefix) if prefix else self.root
        self.positions[prefix] = len(self.inputs)
        self.inputs.append(input_stat(here.rstrip(os.sep) or os.sep, os.fstat(fd)))
        with os.scandir(fd) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            if not prefix:
                self._count(entry)
            if entry.name.startswith("."):
                continue
            rel = prefix + entry.name
            try:
                self._visit(fd, entry, rel, depth, in_logs)
            except FileNotFoundError:
                continue  # deleted between listing and reading: it is gone
            except OSError as exc:
                self._fail(rel, exc)
                if rel == INDEX_NAME:
                    self._index_exists_unread(fd)

    def _count(self, entry: os.DirEntry[str]) -> None:
        try:
            if entry.is_symlink():
                return
            if entry.is_file(follow_symlinks=False):
                self.file_count += 1
                kind = "file"
            elif entry.is_dir(follow_symlinks=False):
                self.subdir_count += 1
                kind = "dir"
            else:
                return
            if entry.name.startswith("."):
                self.hidden_counted[entry.name] = kind
        except OSError:
            return

    def _visit(
        self, fd: int, entry: os.DirEntry[str], rel: str, depth: int, in_logs: bool
    ) -> None:
        if entry.is_symlink():
            self._symlink(rel, entry.name, in_logs)
        elif entry.is_dir(follow_symlinks=False):
            self._subdir(fd, entry.name, rel, depth, in_logs or rel == LOGS_DIR)
        elif in_logs:
            if entry.is_file(follow_symlinks=False):
                self.logs.append(rel)
        elif entry.is_file(follow_symlinks=False):
            self._regular(fd, entry, rel)
        elif entry.name.endswith(".md"):
            # A FIFO, socket or device: opening it could block forever.
            self.unreadable.append(rel)
            self.diags.append(
                unreadable_diagnostic(rel, "not a regular file (never opened)")
            )

    def _subdir(self, fd: int, name: str, rel: str, depth: int, in_logs: bool) -> None:
        if depth >= MAX_DEPTH:
            self.diags.append(
                unreadable_diagnostic(rel, f"nested deeper than {MAX_DEPTH} levels")
            )
            return
        child = os.open(name, NOFOLLOW_DIR_FLAGS, dir_fd=fd)
        try:
            self.scan(child, rel + "/", depth + 1, in_logs)
        finally:
            os.close(child)

    def _fail(self, rel: str, exc: OSError) -> None:
        if rel.endswith(".md"):
            self.unreadable.append(rel)
        self.diags.append(
            unreadable_diagnostic(rel, exc.strerror or type(exc).__name__)
        )

    def _index_exists_unread(self, fd: int) -> None:
        """Record an unreadable MEMORY.md by its lstat: it exists, it is not missing."""
        try:
            st = os.stat(INDEX_NAME, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return
        self.index_seen = True
        self.inputs.append(input_stat(os.path.join(self.root, INDEX_NAME), st))

    # Files ---------------------------------------------------------------

    def _regular(self, fd: int, entry: os.DirEntry[str], rel: str) -> None:
        if rel == INDEX_NAME:
            self.read_index(lambda: os.open(entry.name, FILE_FLAGS, dir_fd=fd))
        elif entry.name.endswith(".md") and entry.name != INDEX_NAME:
            # The pre-read lstat only keys the cache; without one, fstat suffices.
            lst = entry.stat(follow_symlinks=False) if self.cache is not None else None
            self.read_topic(
                rel, lambda: os.open(entry.name, FILE_FLAGS, dir_fd=fd), lst
            )

    def _symlink(self, rel: str, name: str, in_logs: bool) -> None:
        link = os.path.join(self.root, rel)
        target = os.path.realpath(link)
        if target != self.root_real and not target.startswith(self.root_real + os.sep):
            self.diags.append(
                _diag(
                    "F004",
                    "symlink-outside",
                    Severity.ERROR,
                    rel,
                    f"{rel} is a symlink to {os.readlink(link)}, outside the memory "
                    "directory; memd never reads it",
                    "copy the file into the memory directory, or remove the symlink",
                )
            )
            return
        if in_logs or not name.endswith(".md") or (name == INDEX_NAME and rel != name):
            return
        try:
            st = os.stat(target, follow_symlinks=False)
        except FileNotFoundError:
            self._broken(rel, "its target does not exist")
            return
        except OSError as exc:
            self._broken(rel, exc.strerror or "its target cannot be read")
            return
        if stat.S_ISLNK(st.st_mode):
            self._broken(rel, "it is part of a symlink loop")
        elif stat.S_ISDIR(st.st_mode):
            return  # a symlinked directory is never entered: no loops, no double reads
        elif rel == INDEX_NAME:
            self.read_index(lambda: self._open_beneath(target), path=target)
        else:
            self.read_topic(rel, lambda: self._open_beneath(target), st, path=target)

    def _open_beneath(self, target: str) -> int:
        """Open a resolved target component by component from the root, never following.

        A directory swapped for a symlink after `realpath` fails with ELOOP
        instead of leading out of the memory directory.
        """
        parts = os.path.relpath(target, self.root_real).split(os.sep)
        opened: list[int] = []
        current = self.root_fd
        try:
            for part in parts[:-1]:
                current = os.open(part, NOFOLLOW_DIR_FLAGS, dir_fd=current)
                opened.append(current)
            return os.open(parts[-1], FILE_FLAGS, dir_fd=current)
        finally:
            for fd in opened:
                os.close(fd)

    def _broken(self, rel: str, why: str) -> None:
        self.unreadable.append(rel)
        self.diags.append(unreadable_diagnostic(rel, f"broken symlink: {why}"))

    def _open_regular(self, opener: Callable[[], int]) -> tuple[bytes, os.stat_result]:
        """Open, check it is a regular file, read at most max_file_bytes + 1 bytes."""
        fd = opener()
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(0, "not a regular file (never read)")
            return _read_bounded(fd, self.max_file_bytes + 1, st.st_size), st
        finally:
            os.close(fd)

    def read_topic(
        self,
        rel: str,
        opener: Callable[[], int],
        pre: os.stat_result | None,
        *,
        path: str | None = None,
    ) -> None:
        """Read the topic file `rel` via `opener` into `files`, `inputs`, `diags`."""
        # Cached by the name it is read under: two links to one file keep two relpaths.
        where = os.path.join(self.root, rel)
        path = path or where
        parsed = None
        if self.cache is not None and pre is not None:
            parsed = self.cache.get(where, _key(pre, self.max_file_bytes))
        if parsed is not None and pre is not None:
            st = pre
        else:
            data, st = self._open_regular(opener)
            truncated = len(data) > self.max_file_bytes
            if truncated:
                data = _prefix(data[: self.max_file_bytes])
            parsed = parse_memory_file(rel, data, was_truncated=truncated)
            if self.cache is not None:
                self.cache.put(where, _key(st, self.max_file_bytes), parsed)
        if st.st_size > self.max_file_bytes:
            self.diags.append(self._too_large(rel, st.st_size))
        self.files.append(parsed)
        self.mtimes[rel] = st.st_mtime_ns
        if path == where:
            self.positions[rel] = len(self.inputs)
        self.inputs.append(input_stat(path, st))

    def _too_large(self, rel: str, size: int) -> Diagnostic:
        return _diag(
            "F003",
            "file-too-large",
            Severity.WARNING,
            rel,
            f"{rel} is {format_file_size(size)}, over the "
            f"{format_file_size(self.max_file_bytes)} limit; only its start was read",
            "split it into smaller topic files; keep each memory short",
        )

    def read_index(self, opener: Callable[[], int], *, path: str | None = None) -> None:
        """Read MEMORY.md through `opener` into `index_text`, `inputs`, `diags`."""
        data, st = self._open_regular(opener)
        self.index_seen = True
        if path is None:
            self.positions[INDEX_NAME] = len(self.inputs)
        self.inputs.append(input_stat(path or os.path.join(self.root, INDEX_NAME), st))
        if len(data) > self.max_file_bytes:
            self.diags.append(self._too_large(INDEX_NAME, st.st_size))
            data = _prefix(data[: self.max_file_bytes])
        if b"\x00" in data:
            self.diags.append(
                _diag(
                    "F002",
                    "file-binary",
                    Severity.ERROR,
                    INDEX_NAME,
                    "MEMORY.md contains NUL bytes: it is binary, not Markdown",
                    "rewrite MEMORY.md as UTF-8 text",
                )
            )
        # The reference keeps CRs inside lines (it splits on LF only): so do we.
        text, diags, _, _ = decode_text(INDEX_NAME, data, normalize_newlines=False)
        self.diags.extend(diags)
        self.index_text = text


def _prefix(data: bytes) -> bytes:
    """Cut a byte prefix back to its last whole line (or whole character)."""
    newline = data.rfind(b"\n")
    return data[: newline + 1] if newline >= 0 else _trim_partial_utf8(data)
