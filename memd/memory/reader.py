"""Read one memory directory safely: the full walk, the incremental re-read.

The walk (SPEC §3, §11) holds a directory file descriptor per level and opens
every name relative to it with `O_NOFOLLOW`, so a directory swapped for a
symlink mid-walk is never entered. A symlink is read only when its target
(`os.path.realpath`) lies inside the memory directory; one pointing outside is
reported and never opened, so its content can appear nowhere. Files are opened
with `O_NONBLOCK` and checked with `fstat` to be regular: a FIFO, socket or
device would otherwise block `open()` or `read()` forever.

At most `max_file_bytes + 1` bytes of a file are read, so a 50 MB file costs
256 KiB of memory; its frontmatter is still parsed from that first part.

Given its previous result and the relpaths a watcher batch named,
`load_memdir` re-reads only those (`reload_memdir`); anything that shortcut
cannot vouch for (a new, deleted or non-Markdown entry, a symlink, a
directory) falls back to the full walk. The result equals a full read.

Which entries count (hidden ones skipped, topic files, logs) and what
`inputs` records are described in `memd.memory.memdir`, with the values a walk fills.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
import os
import stat
import time
from types import MappingProxyType

from memd.claude_code.recall import is_reserved_folder
from memd.claude_code.terms import INDEX_NAME
from memd.claude_code.truncation import format_file_size
from memd.diagnostics import Diagnostic, Severity, one_line
from memd.fsread import list_dir, open_dir, open_dir_beneath, open_regular, read_fd
from memd.memory.memdir import (
    DEFAULT_MAX_FILE_BYTES,
    LOGS_DIR,
    InputStat,
    MemDir,
    ParseCache,
    input_stat,
    missing_input,
)
from memd.memory.memfile import MemoryFile, decode_text, parse_memory_file
from memd.racy import is_racy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import TypeVar  # `typing` costs a hook 2 ms at run time

MAX_DEPTH = 64  # one open descriptor per level; real trees are two or three deep


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


def log_dir_symlink_diagnostic(rel: str, target: str) -> Diagnostic:
    """Return F009: `logs/` or a directory under it is a symlink."""
    return _diag(
        "F009",
        "log-dir-symlink",
        Severity.ERROR,
        rel,
        f"{rel} is a symlink to {target}; the daily log, the dream and retention "
        "never follow it, so its logs are never written or consolidated",
        "replace the symlink with a real directory inside the memory directory",
    )


def too_large_diagnostic(rel: str, size: int, max_file_bytes: int) -> Diagnostic:
    """Return F003 for a topic file of `size` bytes over `max_file_bytes`."""
    return _diag(
        "F003",
        "file-too-large",
        Severity.WARNING,
        rel,
        f"{rel} is {format_file_size(size)}, over memd's cap of "
        f"{format_file_size(max_file_bytes)} for one file "
        "(lint.max_topic_file_bytes); only that much of its start was read",
        "split it into smaller topic files; keep each memory short",
    )


class Walk:
    """The state of one `load_memdir` call; never outlives it.

    Public for `memd.memory.reader`, which re-reads single files through it.
    """

    def __init__(self, root: str, cache: ParseCache | None, max_file_bytes: int):
        self.root = root
        self.root_real = os.path.realpath(root)
        self.root_fd = -1  # set by load_memdir while the walk runs
        self.cache = cache
        # A file parsed within a tick of its last write may be rewritten unseen
        # (same size, same mtime): such a parse is not kept for the next load.
        self.read_ns = time.time_ns()
        self.max_file_bytes = max_file_bytes
        self.files: list[MemoryFile] = []
        self.mtimes: dict[str, int] = {}
        self.logs: list[str] = []
        self.inputs: list[InputStat] = []
        self.diags: list[Diagnostic] = []
        self.unreadable: list[str] = []
        self.index_text: str | None = None
        self.index_has_bom = False
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
        entries = sorted(list_dir(fd), key=lambda e: e.name)
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
            if rel == INDEX_NAME:
                # Its listing is recorded as an input; it is not "missing".
                self.index_seen = True
                self.diags.append(
                    unreadable_diagnostic(rel, "a directory, not a file (never read)")
                )
            if rel != LOGS_DIR and rel == entry.name and is_reserved_folder(rel):
                return  # sessions/, proposals/, Logs./: the agent's, not topic files
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
        child = open_dir(name, dir_fd=fd)
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
            self.read_index(lambda: open_regular(entry.name, dir_fd=fd))
        elif entry.name.endswith(".md") and entry.name != INDEX_NAME:
            # The pre-read lstat only keys the cache; without one, fstat suffices.
            lst = entry.stat(follow_symlinks=False) if self.cache is not None else None
            self.read_topic(rel, lambda: open_regular(entry.name, dir_fd=fd), lst)

    def _symlink(self, rel: str, name: str, in_logs: bool) -> None:
        link = os.path.join(self.root, rel)
        target = os.path.realpath(link)
        if (rel == LOGS_DIR or in_logs) and os.path.isdir(target):
            self.diags.append(log_dir_symlink_diagnostic(rel, os.readlink(link)))
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
        parent = open_dir_beneath(self.root_fd, parts[:-1])
        try:
            return open_regular(parts[-1], dir_fd=parent)
        finally:
            os.close(parent)

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
            return read_fd(fd, self.max_file_bytes + 1, st.st_size), st
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
            if self.cache is not None and not is_racy(st.st_mtime_ns, self.read_ns):
                self.cache.put(where, _key(st, self.max_file_bytes), parsed)
        if st.st_size > self.max_file_bytes:
            self.diags.append(self._too_large(rel, st.st_size))
        self.files.append(parsed)
        self.mtimes[rel] = st.st_mtime_ns
        if path == where:
            self.positions[rel] = len(self.inputs)
        self.inputs.append(input_stat(path, st))

    def _too_large(self, rel: str, size: int) -> Diagnostic:
        return too_large_diagnostic(rel, size, self.max_file_bytes)

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
        text, diags, has_bom, _ = decode_text(
            INDEX_NAME, data, normalize_newlines=False
        )
        self.diags.extend(diags)
        self.index_text = text
        self.index_has_bom = has_bom


def _prefix(data: bytes) -> bytes:
    """Cut a byte prefix back to its last whole line (or whole character)."""
    newline = data.rfind(b"\n")
    return data[: newline + 1] if newline >= 0 else _trim_partial_utf8(data)


# -- the incremental re-read ---------------------------------------------------

if TYPE_CHECKING:
    _T = TypeVar("_T")

MAX_RELOAD_PATHS = 256  # more changes than this (a checkout): read everything


def reload_memdir(
    previous: MemDir,
    changed: frozenset[str],
    cache: ParseCache | None,
    max_file_bytes: int,
) -> MemDir | None:
    """Re-read only `changed` in `previous`; None when a full read is needed.

    Only a change that replaces nothing but contents is taken: an existing
    topic file or MEMORY.md that is still a regular file (it was read directly,
    not through a symlink), a log file already known, or a hidden name. Each
    changed path's directory is re-stated, since its mtime is an input.
    """
    positions = previous.input_positions
    if not positions or len(changed) > MAX_RELOAD_PATHS:
        return None
    walk = Walk(previous.path, cache, max_file_bytes)
    # Replacements by position; the tuples are patched once at the end.
    inputs: dict[int, InputStat] = {}
    files: dict[int, MemoryFile] = {}
    mtimes: dict[str, int] = {}
    diags = list(previous.diagnostics)
    index_text = previous.index_text
    index_has_bom = previous.index_has_bom
    logs = frozenset(previous.log_files)
    hidden_counted = dict(previous.hidden_counted)
    try:
        walk.root_fd = open_dir(previous.path, follow=True)
    except OSError:
        return None
    try:
        for rel in sorted(changed):
            parts = rel.split("/")
            hidden = [k for k, part in enumerate(parts) if part.startswith(".")]
            if hidden and hidden[0] < len(parts) - 1:
                continue  # inside a hidden directory: nothing memd reads
            parent = "".join(part + "/" for part in parts[:-1])
            if not rel or "" in parts or parent not in positions:
                return None
            fd = open_dir_beneath(walk.root_fd, parts[:-1])
            try:
                where = positions[parent]
                inputs[where] = input_stat(previous.inputs[where].path, os.fstat(fd))
                if hidden and parent:
                    continue  # a hidden name: never read, its directory changed
                if hidden:
                    _recount(fd, parts[-1], hidden_counted)
                    continue
                st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    return None
                if parts[0] == LOGS_DIR:
                    if rel in logs:
                        continue  # a log is listed, never read
                    return None
                if rel not in positions or rel in previous.unreadable_paths:
                    return None
                walk.diags.clear()
                name = parts[-1]

                def opener(fd: int = fd, name: str = name) -> int:
                    return open_regular(name, dir_fd=fd)

                if rel == INDEX_NAME:
                    walk.read_index(opener)
                    index_text = walk.index_text
                    index_has_bom = walk.index_has_bom
                else:
                    walk.files.clear()
                    walk.read_topic(rel, opener, st)
                    files[previous.file_positions[rel]] = walk.files[0]
                    mtimes[rel] = walk.mtimes[rel]
                inputs[positions[rel]] = walk.inputs[-1]
                mine = [d for d in diags if d.path == rel]
                if mine != walk.diags:
                    diags = [d for d in diags if d.path != rel] + walk.diags
            finally:
                os.close(fd)
    except OSError:
        return None  # vanished or unreadable meanwhile: the full read reports it
    finally:
        os.close(walk.root_fd)
    before, after = (
        list(previous.hidden_counted.values()),
        list(hidden_counted.values()),
    )
    return dataclasses.replace(
        previous,
        total_file_count=previous.total_file_count
        + after.count("file")
        - before.count("file"),
        total_subdir_count=previous.total_subdir_count
        + after.count("dir")
        - before.count("dir"),
        hidden_counted=MappingProxyType(hidden_counted),
        index_text=index_text,
        index_has_bom=index_has_bom,
        files=_patched(previous.files, files),
        mtimes_ns=_updated(previous.mtimes_ns, mtimes),
        inputs=_patched(previous.inputs, inputs),
        diagnostics=tuple(diags),
    )


def _recount(fd: int, name: str, counted: dict[str, str]) -> None:
    """Record what the top-level hidden `name` now counts as (as `_Walk._count`)."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = 0
    kind = "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else None
    if kind is None:
        counted.pop(name, None)
    else:
        counted[name] = kind


def _updated(mapping: Mapping[str, int], changes: dict[str, int]) -> Mapping[str, int]:
    """Return `mapping` updated by `changes` (a MappingProxyType copies in C)."""
    if not changes:
        return mapping
    copy = mapping.copy() if isinstance(mapping, MappingProxyType) else dict(mapping)
    copy.update(changes)
    return MappingProxyType(copy)


def _patched(items: tuple[_T, ...], replaced: Mapping[int, _T]) -> tuple[_T, ...]:
    """Return `items` with the items at the positions in `replaced` swapped in."""
    if not replaced:
        return items
    parts: list[tuple[_T, ...]] = []
    start = 0
    for position in sorted(replaced):
        parts += (items[start:position], (replaced[position],))
        start = position + 1
    parts.append(items[start:])
    if len(parts) > 8:  # many replacements: one pass
        return tuple(itertools.chain.from_iterable(parts))
    return functools.reduce(operator.add, parts)  # a few slices: memcpy


# -- the entry point -------------------------------------------------------------


def load_memdir(
    path: str,
    *,
    cache: ParseCache | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    previous: MemDir | None = None,
    changed: Iterable[str] | None = None,
) -> MemDir:
    """Read the memory directory at `path`; bad files become diagnostics, never raises.

    A missing directory gives an empty `MemDir` whose inputs record the
    directory and MEMORY.md as missing, so their creation is noticed.

    With `previous` (this directory's last result, read with the same
    `max_file_bytes`) and `changed` (every relpath changed since, as the
    watcher reported them), only those paths and their directories are
    re-read; anything the shortcut cannot vouch for (a new, deleted or
    non-Markdown entry, a symlink, a directory) falls back to a full read.
    """
    root = os.path.abspath(path)
    root = root.rstrip(os.sep) or os.sep
    if previous is not None and changed is not None and previous.path == root:
        reloaded = reload_memdir(previous, frozenset(changed), cache, max_file_bytes)
        if reloaded is not None:
            return reloaded
    walk = Walk(root, cache, max_file_bytes)
    index_path = os.path.join(root, INDEX_NAME)
    try:
        # The root itself may be a symlink: the user or the agent chose it.
        fd = open_dir(root, follow=True)
    except (FileNotFoundError, NotADirectoryError):
        return MemDir(
            path=root, inputs=(missing_input(root), missing_input(index_path))
        )
    except OSError as exc:
        return MemDir(
            path=root,
            inputs=(missing_input(root), missing_input(index_path)),
            diagnostics=(
                unreadable_diagnostic(".", exc.strerror or "cannot open the directory"),
            ),
        )
    walk.root_fd = fd
    try:
        walk.scan(fd, "", 0, False)
    except OSError as exc:
        walk.diags.append(
            unreadable_diagnostic(".", exc.strerror or "cannot list the directory")
        )
    finally:
        os.close(fd)
    if not walk.index_seen:
        walk.inputs.append(missing_input(index_path))
    files = tuple(sorted(walk.files, key=lambda f: f.relpath))
    return MemDir(
        path=root,
        index_text=walk.index_text,
        index_has_bom=walk.index_has_bom,
        files=files,
        mtimes_ns=MappingProxyType(walk.mtimes),
        log_files=tuple(sorted(walk.logs)),
        inputs=tuple(walk.inputs),
        diagnostics=tuple(walk.diags),
        total_file_count=walk.file_count,
        total_subdir_count=walk.subdir_count,
        unreadable_paths=tuple(sorted(walk.unreadable)),
        input_positions=MappingProxyType(walk.positions),
        file_positions=MappingProxyType({f.relpath: n for n, f in enumerate(files)}),
        hidden_counted=MappingProxyType(walk.hidden_counted),
    )
