"""Building and updating the recall index, from a read `MemDir` or by `stat`.

Two writers keep it current:

- the daemon calls `RecallIndex.update(memdir, changed=..., owner_pid=...)`
  (through `RecallUpdater`) with the `MemDir` it has just read for the
  snapshots, touching only the changed relpaths, and records itself as the
  directory's owner;
- the CLI, for a directory no live daemon owns, compares a `stat` signature
  of the directory's topic files with the recorded one and re-reads the
  directory when they differ (`refresh`). A signature taken within
  `RACY_WINDOW_NS` of a file's mtime is not recorded, as git does for racily
  clean files, so a second write within one timestamp tick is not missed.

`RecallIndex` is the whole index: the database (`memd.recall.store`), its
search (`memd.recall.query`) and these updates; `recall` refreshes the
directories by stat, then searches them and re-checks each hit with `lstat`,
so a deleted file never returns.
"""

from __future__ import annotations

import _sqlite3 as sqlite3
import os
import time

from memd.claude_code.terms import INDEX_NAME, MEMORY_TYPES
from memd.errors import MemdError
from memd.fsread import list_dir, open_dir
from memd.recall.query import Hit, RecallSearch
from memd.recall.store import (
    IN_MEMORY,
    check_fts5,
    from_db,
    index_path,
    int64,
    scope_token,
    to_db,
    transaction,
    why_unusable,
)
from memd.recall.text import DEFAULT_TOKENIZER, index_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

    # A directory's row: (stat signature, owning daemon's pid, id).
    DirRecord = tuple[str | None, int | None, int]

MAX_DEPTH = 64
_UINT64_MASK = 2**64 - 1


class RecallIndex(RecallSearch):
    """The recall index: search it, and bring its rows up to date."""

    def update(
        self,
        memdir: MemDir,
        *,
        changed: Iterable[str] | None = None,
        owner_pid: int | None = None,
        signature: str | None = None,
    ) -> int:
        """Bring `memdir`'s rows up to date with that read; return rows written.

        With `changed` (the relpaths a watcher batch named), only those are
        looked at; without, every row of the directory is compared by stat.
        `owner_pid` marks the directory as kept current by that daemon.
        """
        wanted = None if changed is None else frozenset(changed)
        if wanted is not None and any(not r.endswith(".md") for r in wanted):
            wanted = None  # a directory or a log moved: compare every row

        def run(only: frozenset[str] | None) -> int:
            self._reopen_if_replaced()
            with transaction(self.conn):
                return self._update(memdir, only, owner_pid, signature)

        return self._guard(lambda: run(wanted), lambda: run(None))

    def _update(
        self,
        memdir: MemDir,
        only: frozenset[str] | None,
        owner_pid: int | None,
        signature: str | None,
    ) -> int:
        conn = self.conn
        dir_id = self._dir_id(memdir.path)
        conn.execute(
            "UPDATE dirs SET signature = ?, owner_pid = ? WHERE id = ?",
            (signature, owner_pid, dir_id),
        )
        stats = _file_stats(memdir, only)
        present = {f.relpath: f for f in memdir.files}
        if only is None:
            rows = conn.execute(
                "SELECT relpath, id, digest FROM files WHERE dir_id = ?", (dir_id,)
            ).fetchall()
            known = {from_db(r[0]): (r[1], r[2]) for r in rows}
            consider: Iterable[str] = set(known) | set(present)
        else:
            known = {}
            for relpath in only:
                row = conn.execute(
                    "SELECT id, digest FROM files WHERE dir_id = ? AND relpath = ?",
                    (dir_id, to_db(relpath)),
                ).fetchone()
                if row is not None:
                    known[relpath] = (row[0], row[1])
            consider = only
        written = 0
        for relpath in consider:
            old = known.get(relpath)
            parsed = present.get(relpath)
            if parsed is None:
                if old is not None:
                    conn.execute("DELETE FROM files WHERE id = ?", (old[0],))
                    conn.execute("DELETE FROM docs WHERE rowid = ?", (old[0],))
                    written += 1
                continue
            stat = stats.get(relpath, (0, memdir.mtimes_ns.get(relpath, 0), 0))
            # Content, not stat: two writes within one mtime tick differ only here.
            digest = _digest(parsed, stat[1])
            if old is not None and old[1] == digest:
                continue
            self._write_file(dir_id, parsed, stat, digest, old[0] if old else None)
            written += 1
        return written

    def _dir_id(self, path: str) -> int:
        conn = self.conn
        row = conn.execute("SELECT id FROM dirs WHERE path = ?", (path,)).fetchone()
        if row is not None:
            return int(row[0])
        cursor = conn.execute("INSERT INTO dirs(path) VALUES (?)", (path,))
        assert cursor.lastrowid is not None  # noqa: S101 -- an INSERT sets it
        return cursor.lastrowid

    def _write_file(
        self,
        dir_id: int,
        parsed: MemoryFile,
        stat: tuple[int, int, int],
        digest: int,
        file_id: int | None,
    ) -> None:
        conn = self.conn
        kind = parsed.type if parsed.type in MEMORY_TYPES else None
        values = (
            to_db(parsed.relpath),
            *(int64(n) for n in stat),
            digest,
            parsed.name,
            kind,
            parsed.description,
            parsed.body,
        )
        if file_id is None:
            cursor = conn.execute(
                "INSERT INTO files(dir_id, relpath, size, mtime_ns, inode, digest, "
                "name, type, description, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (dir_id, *values),
            )
            assert cursor.lastrowid is not None  # noqa: S101 -- an INSERT sets it
            file_id = cursor.lastrowid
        else:
            conn.execute(
                "UPDATE files SET relpath = ?, size = ?, mtime_ns = ?, inode = ?, "
                "digest = ?, name = ?, type = ?, description = ?, body = ? "
                "WHERE id = ?",
                (*values, file_id),
            )
            conn.execute("DELETE FROM docs WHERE rowid = ?", (file_id,))
        shape = self.tokenizer
        conn.execute(
            "INSERT INTO docs(rowid, name, description, body, scope) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                file_id,
                index_text(parsed.name or "", shape),
                index_text(parsed.description or "", shape),
                index_text(parsed.body, shape),
                scope_token(dir_id),
            ),
        )

    def forget(self, memory_dir: str) -> None:
        """Drop every row of `memory_dir` (it was deleted, or is no longer memory)."""

        def run() -> None:
            conn = self.conn
            with transaction(conn):
                row = conn.execute(
                    "SELECT id FROM dirs WHERE path = ?", (memory_dir,)
                ).fetchone()
                if row is None:
                    return
                conn.execute(
                    "DELETE FROM docs WHERE rowid IN "
                    "(SELECT id FROM files WHERE dir_id = ?)",
                    (row[0],),
                )
                conn.execute("DELETE FROM files WHERE dir_id = ?", (row[0],))
                conn.execute("DELETE FROM dirs WHERE id = ?", (row[0],))

        self._guard(run, lambda: None)

    # Keeping current without the daemon --------------------------------------

    def memory_dirs(self) -> tuple[str, ...]:
        """Every memory directory the index holds rows for."""
        return self._guard(
            lambda: tuple(
                r[0] for r in self.conn.execute("SELECT path FROM dirs ORDER BY path")
            ),
            tuple,
        )

    def _dir_record(self, memory_dir: str) -> DirRecord | None:
        row = self.conn.execute(
            "SELECT signature, owner_pid, id FROM dirs WHERE path = ?", (memory_dir,)
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def dir_records(self) -> dict[str, DirRecord]:
        """Every directory's (signature, owner pid, id), in one query."""
        return self._guard(
            lambda: {
                r[0]: (r[1], r[2], r[3])
                for r in self.conn.execute(
                    "SELECT path, signature, owner_pid, id FROM dirs"
                )
            },
            dict,
        )

    def refresh(
        self,
        memory_dir: str,
        *,
        max_file_bytes: int | None = None,
        force: bool = False,
        records: Mapping[str, DirRecord] | None = None,
        alive: dict[int, bool] | None = None,
    ) -> bool:
        """Re-read `memory_dir` if its stat signature changed; return True if it did.

        A directory a live daemon owns is trusted (the daemon updates it on
        every batch) unless `force`. A missing directory is forgotten.
        `records`, from `dir_records`, saves a query per directory, and
        `alive` remembers each owner's liveness across calls: one check per
        daemon, not per directory.
        """
        if records is not None:
            record = records.get(memory_dir)
        else:
            record = self._guard(
                lambda: self._dir_record(memory_dir),
                lambda: self._dir_record(memory_dir),
            )
        if not force and record is not None and _is_owned(record[1], alive):
            return False
        taken_ns = time.time_ns()
        found = stat_signature(memory_dir, taken_ns)
        if found is None:
            if record is not None:
                self.forget(memory_dir)
                return True
            return False
        signature, racy = found
        if record is not None and record[0] == signature and not force:
            return False
        from memd.memory.reader import load_memdir

        memdir = (
            load_memdir(memory_dir)
            if max_file_bytes is None
            else load_memdir(memory_dir, max_file_bytes=max_file_bytes)
        )
        # Racily clean: a write in the same timestamp tick would look unchanged.
        keep = None if racy else signature
        self.update(memdir, signature=keep)
        return True


class RecallUpdater:
    """The daemon's side of the index: one per daemon, used from its settle thread.

    `update` is called with each `MemDir` the daemon has just read for its
    snapshots. A directory's first update, and every one after the database
    was rebuilt or replaced, compares all its rows; later ones touch only the
    batch's changed relpaths. It never raises: a failure is returned as a
    message to log, and that directory is compared in full next time.
    """

    def __init__(self, cache_dir: str, *, owner_pid: int | None = None) -> None:
        self.cache_dir = cache_dir
        self.owner_pid = os.getpid() if owner_pid is None else owner_pid
        self._index: RecallIndex | None = None
        self._generation = 0
        self._synced: set[str] = set()

    def update(self, memdir: MemDir, changed: Iterable[str] | None) -> str | None:
        """Bring `memdir`'s rows up to date; return None, or why it failed."""
        try:
            if self._index is None:
                # The index on disk or a failure to log: an in-memory spare
                # would take the daemon's updates and keep none of them.
                check_fts5()
                self._index = RecallIndex(index_path(self.cache_dir))
            index = self._index
            index._reopen_if_replaced()
            if index.generation != self._generation:
                self._synced.clear()
                self._generation = index.generation
            only = changed if memdir.path in self._synced else None
            index.update(memdir, changed=only, owner_pid=self.owner_pid)
            if index.generation != self._generation:  # rebuilt during the update
                self._synced.clear()
                self._generation = index.generation
            self._synced.add(memdir.path)
        except (sqlite3.Error, OSError, MemdError) as error:
            self._synced.discard(memdir.path)
            return f"{type(error).__name__}: {error}"
        return None

    def forget(self, memory_dir: str) -> None:
        """Drop a directory the daemon no longer watches (it was removed)."""
        self._synced.discard(memory_dir)
        if self._index is not None:
            import contextlib

            with contextlib.suppress(sqlite3.Error, OSError):
                self._index.forget(memory_dir)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None


def open_index(cache_dir: str, *, tokenizer: str = DEFAULT_TOKENIZER) -> RecallIndex:
    """Open (creating or rebuilding as needed) the recall index in `cache_dir`.

    An index that cannot be opened (a read-only cache, a refused file) gives
    an empty in-memory one, its `unusable` saying why: a search then reads
    the memory directories afresh.

    Raises:
        RecallUnavailableError: this Python's SQLite has no FTS5.
    """
    check_fts5()
    path = index_path(cache_dir)
    try:
        return RecallIndex(path, tokenizer=tokenizer)
    except (OSError, sqlite3.Error) as error:
        spare = RecallIndex(IN_MEMORY, tokenizer=tokenizer)
        spare.unusable = why_unusable(path, error)
        return spare


def stat_signature(memory_dir: str, taken_ns: int) -> tuple[str, bool] | None:
    """Return (signature, racy) of the topic files' `lstat`, or None if gone.

    Racy: some entry's mtime or ctime is within the racy window of
    `taken_ns` (memd.racy), so the signature cannot be trusted next time.

    The signature covers every topic-file candidate (`*.md` but `MEMORY.md`,
    no hidden entries, nothing under top-level `logs/`) by relpath, size,
    mtime, ctime and inode, and every directory's mtime (an entry added or
    removed changes it). The memory dir's own symlink is followed, as the
    agent follows it; symlinked directories inside it are never entered.

    Every file is stat'ed: an in-place save moves only the file's own mtime,
    never its directory's. Each stat is relative to its directory's
    descriptor (`fstatat`), so the kernel does not walk the memory
    directory's path again for each of its files.
    """
    try:
        # The agent follows the memory dir's own link, so memd does; below it,
        # every directory is opened relative to its parent with O_NOFOLLOW.
        root_fd = open_dir(memory_dir, follow=True)
    except OSError:
        return None
    # Only a stat refresh needs these; a daemon-owned search does not.
    import zlib

    from memd.racy import RACY_WINDOW_NS, is_racy

    try:
        root = os.fstat(root_fd)
        window = (taken_ns - RACY_WINDOW_NS, taken_ns + RACY_WINDOW_NS)
        names, numbers, files, racy = _scan(root_fd, window)
    finally:
        os.close(root_fd)
    racy = racy or is_racy(root.st_mtime_ns, taken_ns)
    names.sort()
    crc = zlib.crc32("\0".join(names).encode("utf-8", "surrogateescape"))
    signature = f"{files}:{root.st_mtime_ns}:{root.st_ino}:{crc:08x}:{numbers:016x}"
    return signature, racy


def _scan(root_fd: int, window: tuple[int, int]) -> tuple[list[str], int, int, bool]:
    """Every entry's relpath, a checksum of their stats, how many are files, racy.

    The checksum sums `hash((size, mtime, ctime, inode))` over the entries (a
    directory's size counts as -1): a tuple of ints hashes alike in every
    process (only str and bytes hashes are salted), and a sum needs no
    sorting, so the listing's order does not matter and each entry costs
    less than its stat call. Which name goes with which stat is left out:
    renaming one file over another moves its directory's mtime, and that
    directory's stat is in the sum (the memory directory's in the signature).

    Racy: some mtime or ctime falls in `window` (low, high), `memd.racy.is_racy`
    compared inline, as a call per entry costs more than the comparison.
    """
    low, high = window
    racy = False
    names: list[str] = []
    numbers = 0
    not_files = 0  # directories, and the ones that could not be listed
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        prefix, depth = pending.pop()
        try:
            fd = open_dir(prefix[:-1], dir_fd=root_fd) if prefix else root_fd
        except OSError:
            names.append("!" + prefix)
            not_files += 1
            continue
        try:
            listing = list_dir(fd)
            for entry in listing:
                name = entry.name
                if name[0] == ".":
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if is_dir:
                        if (not prefix and name == "logs") or depth >= MAX_DEPTH:
                            continue
                        pending.append((prefix + name + "/", depth + 1))
                    elif name[-3:] != ".md" or name == INDEX_NAME:
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
                if low <= mtime <= high or low <= ctime <= high:
                    racy = True
                if is_dir:
                    size = -1
                    not_files += 1
                else:
                    size = st.st_size
                names.append(prefix + name)
                numbers += hash((size, mtime, ctime, st.st_ino))
        except OSError:
            names.append("!" + prefix)
            not_files += 1
        finally:
            if fd != root_fd:
                os.close(fd)
    return names, numbers & _UINT64_MASK, len(names) - not_files, racy


def _digest(parsed: MemoryFile, mtime_ns: int) -> int:
    """A checksum of what the index keeps of a file (its mtime feeds recency)."""
    import zlib

    text = "\0".join(
        (str(mtime_ns), parsed.name or "", parsed.type or "", parsed.description or "")
    )
    crc = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    return zlib.crc32(parsed.body.encode("utf-8", "surrogatepass"), crc)


def _file_stats(
    memdir: MemDir, only: frozenset[str] | None
) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of topic files, from the inputs the read recorded."""
    root = memdir.path.rstrip(os.sep) + os.sep
    stats: dict[str, tuple[int, int, int]] = {}
    if only is not None and memdir.input_positions:
        for relpath in only:
            at = memdir.input_positions.get(relpath)
            if at is not None and at < len(memdir.inputs):
                item = memdir.inputs[at]
                if item.path == root + relpath:
                    stats[relpath] = (item.size, item.mtime_ns, item.inode)
        return stats
    for item in memdir.inputs:
        if item.path.startswith(root):
            stats[item.path[len(root) :]] = (item.size, item.mtime_ns, item.inode)
    return stats


def _is_owned(pid: int | None, alive: dict[int, bool] | None) -> bool:
    """Whether a live daemon owns a directory; `alive` remembers each answer."""
    if not pid:
        return False
    if alive is None:
        return _is_alive(pid)
    known = alive.get(pid)
    if known is None:
        known = alive[pid] = _is_alive(pid)
    return known


def _is_alive(pid: int | None) -> bool:
    """Whether the daemon that owns a directory still runs.

    Not `memd.locks`: it imports `dataclasses`, which costs `memd recall` more
    than its search.
    """
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists; another user owns it
    return True


def recall(
    index: RecallIndex,
    query: str,
    memory_dirs: Sequence[str],
    *,
    limit: int = 5,
    memory_type: str | None = None,
    max_file_bytes: int | None = None,
) -> tuple[Hit, ...]:
    """Refresh `memory_dirs` by stat, then search them; a deleted file never returns.

    Each hit is checked with `lstat` before it is returned: a file deleted or
    changed since the index saw it (a daemon's batch still settling) sends
    its directory through a forced re-read and the search runs again.

    When the index cannot be written or read (busy past its timeout, a
    read-only or full cache), the directories are searched through a fresh
    in-memory index instead, and `index.unusable` says why.
    """
    try:
        return _recall(index, query, memory_dirs, limit, memory_type, max_file_bytes)
    except (OSError, sqlite3.OperationalError) as error:
        if index.path == IN_MEMORY:
            raise
        index.unusable = why_unusable(index.path, error)
    with type(index)(IN_MEMORY, tokenizer=index.tokenizer) as spare:
        return _recall(spare, query, memory_dirs, limit, memory_type, max_file_bytes)


def _recall(
    index: RecallIndex,
    query: str,
    memory_dirs: Sequence[str],
    limit: int,
    memory_type: str | None,
    max_file_bytes: int | None,
) -> tuple[Hit, ...]:
    memory_dirs = tuple(_normal(d) for d in memory_dirs)
    records = index.dir_records() if len(memory_dirs) > 1 else None
    generation = index.generation
    alive: dict[int, bool] = {}
    wrote = False
    for memory_dir in memory_dirs:
        if index.generation != generation:  # rebuilt meanwhile: records are stale
            records, generation = index.dir_records(), index.generation
            wrote = True
        wrote |= index.refresh(
            memory_dir, max_file_bytes=max_file_bytes, records=records, alive=alive
        )
    # Nothing written: the ids read with the records still name every directory.
    dir_ids = (
        None
        if wrote or records is None or index.generation != generation
        else {path: record[2] for path, record in records.items()}
    )
    hits = index.search(
        query,
        memory_dirs=memory_dirs,
        limit=limit,
        memory_type=memory_type,
        dir_ids=dir_ids,
    )
    stale = {h.memory_dir for h in hits if not _still_there(h)}
    if not stale:
        return hits
    for memory_dir in sorted(stale):
        index.refresh(memory_dir, max_file_bytes=max_file_bytes, force=True)
    return index.search(
        query, memory_dirs=memory_dirs, limit=limit, memory_type=memory_type
    )


def _normal(memory_dir: str) -> str:
    """The directory as `load_memdir` records it: absolute, no trailing separator."""
    return os.path.abspath(memory_dir).rstrip(os.sep) or os.sep


def _still_there(hit: Hit) -> bool:
    try:
        st = os.lstat(os.path.join(hit.memory_dir, hit.relpath))
    except OSError:
        return False
    return int64(st.st_mtime_ns) == hit.mtime_ns
