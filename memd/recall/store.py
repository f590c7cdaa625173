"""The recall index: one SQLite database for every memory directory, in memd's cache.

Layout: `dirs` (one row per memory directory: its stat signature and the pid
of the daemon that keeps it current), `files` (one row per topic file: its
stat, name, type, description and body) and `docs`, an FTS5 table whose rowid
is the file's id and whose columns are name, description and body as
`memd.recall.text.index_text` shapes them.

Two writers keep it current:

- the daemon calls `RecallIndex.update(memdir, changed=..., owner_pid=...)`
  with the `MemDir` it has just read for the snapshots, touching only the
  changed relpaths, and records itself as the directory's owner;
- the CLI, for a directory no live daemon owns, compares a `stat` signature
  of the directory's topic files with the recorded one and re-reads the
  directory when they differ (`refresh`). A signature taken within
  `RACY_WINDOW_NS` of a file's mtime is not recorded, as git does for racily
  clean files, so a second write within one timestamp tick is not missed.

Reads run while another process writes (WAL, a busy timeout). A database that
is corrupt, not a database, of another schema or deleted under an open
connection is removed and built again; it is a cache, never the only copy.
FTS5 must be compiled into the interpreter's SQLite: `open_index` says so
clearly when it is not (`RecallUnavailableError`).

The index only ever costs speed. Its files are never opened through a link:
a symlink at the database's name or at any of its side files (`-wal`,
`-shm`, `-journal`) is removed (the link, never its target) before SQLite
opens them by name, and anything else that is not a regular file there is
refused. When the index cannot be used at all (a read-only or full cache,
another process holding its write lock past the busy timeout, a refused
file), `open_index` and `recall` search a fresh in-memory index built from
the memory directories instead, and say why in `RecallIndex.unusable`.
"""

from __future__ import annotations

# The C module `sqlite3` wraps, imported directly: the package adds only date
# adapters memd never uses, and loading `datetime` for them costs the warm
# `memd recall` a tenth of a bare interpreter's start-up. The exception and
# connection classes are the very same objects.
import _sqlite3 as sqlite3
import errno
import os
import stat
import time

from memd.agent.terms import INDEX_NAME, MEMORY_TYPES
from memd.errors import MemdError
from memd.fsread import list_dir, open_dir
from memd.lint.secrets import mask_secrets
from memd.recall.text import (
    DEFAULT_TOKENIZER,
    TOKENIZERS,
    index_text,
    match_expression,
    query_terms,
    recency_factor,
    snippet,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import TypeVar

    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

    _T = TypeVar("_T")
    # A directory's row: (stat signature, owning daemon's pid, id).
    DirRecord = tuple[str | None, int | None, int]


INDEX_FILE = "recall.sqlite3"
IN_MEMORY = ":memory:"
# What SQLite opens by name next to the database.
_SIDE_FILES = ("-wal", "-shm", "-journal")
SCHEMA_VERSION = "3"
# bm25 column weights: name, description, body. The description is what the
# agent's own recall judges, so it counts most.
WEIGHTS = (3.0, 6.0, 1.0, 0.0)  # scope only filters
_BM25 = f"bm25(docs, {', '.join(str(w) for w in WEIGHTS)})"
# A search of this many directories or fewer is narrowed inside FTS5 by the
# `scope` column (one token per directory), so BM25 scores only their rows;
# ORing more tokens costs more than it saves. One token per row: FTS5's bm25
# counts every column in a row's length, so more would shift every score.
MAX_SCOPED_DIRS = 32
CANDIDATES_PER_RESULT = 5  # re-ranked by recency; a near-tie never hides a hit
MAX_DEPTH = 64
_NS_PER_DAY = 86_400 * 1_000_000_000
_INT64_MAX = 2**63 - 1
_UINT64_MASK = 2**64 - 1


class RecallUnavailableError(MemdError):
    """This Python's SQLite has no FTS5, so recall cannot index anything."""


class Hit:
    """One ranked memory: where it is, what it says, why it matched.

    A plain slotted class, not a dataclass: `memd recall` is timed against a
    bare `python -c`, and importing `dataclasses` costs more than a search.
    """

    __slots__ = (
        "description",
        "memory_dir",
        "mtime_ns",
        "name",
        "relpath",
        "score",
        "snippet",
        "type",
    )

    def __init__(
        self,
        *,
        memory_dir: str,
        relpath: str,
        name: str | None,
        type: str | None,
        description: str | None,
        snippet: str,
        score: float,
        mtime_ns: int,
    ) -> None:
        self.memory_dir = memory_dir
        self.relpath = relpath
        self.name = name
        self.type = type
        self.description = description
        self.snippet = snippet
        self.score = score
        self.mtime_ns = mtime_ns

    def to_dict(self) -> dict[str, object]:
        """The hit as JSON-ready data."""
        return {name: getattr(self, name) for name in _HIT_FIELDS}


_HIT_FIELDS = (
    "name",
    "type",
    "description",
    "relpath",
    "memory_dir",
    "snippet",
    "score",
    "mtime_ns",
)


def index_path(cache_dir: str) -> str:
    """Return where the recall database lives in `cache_dir`."""
    return os.path.join(cache_dir, INDEX_FILE)


def _schema(tokenizer: str) -> tuple[str, ...]:
    return (
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE dirs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, "
        "signature TEXT, owner_pid INTEGER)",
        "CREATE TABLE files(id INTEGER PRIMARY KEY, dir_id INTEGER NOT NULL, "
        "relpath TEXT NOT NULL, size INTEGER, mtime_ns INTEGER, inode INTEGER, "
        "digest INTEGER, "
        "name TEXT, type TEXT, description TEXT, body TEXT, "
        "UNIQUE(dir_id, relpath))",
        "CREATE INDEX files_type ON files(type)",
        "CREATE VIRTUAL TABLE docs USING fts5(name, description, body, scope, "
        f"tokenize='{TOKENIZERS[tokenizer]}')",
    )


def check_fts5() -> None:
    """Raise RecallUnavailableError unless this interpreter's SQLite has FTS5."""
    # The compile options answer in a tenth of the time a probe table takes.
    probe = sqlite3.connect(":memory:")
    try:
        options = {row[0] for row in probe.execute("PRAGMA compile_options")}
        if "ENABLE_FTS5" not in options:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x)")  # built in anyway?
    except sqlite3.OperationalError:
        raise RecallUnavailableError(
            f"this Python's SQLite {sqlite3.sqlite_version} was built without FTS5; "
            "memd recall needs it (install a Python linked against a full SQLite)"
        ) from None
    finally:
        probe.close()


class RecallIndex:
    """An open recall database; one per process, used from one thread at a time."""

    def __init__(self, path: str, *, tokenizer: str = DEFAULT_TOKENIZER) -> None:
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}")
        self.path = path
        self.tokenizer = tokenizer
        self.rebuilds = 0  # how often a broken database was thrown away
        self.generation = 0  # bumped on every (re)connect: rows may be gone
        self._conn: sqlite3.Connection | None = None
        self._inode = 0
        # Why the index on disk could not be used; set when searching without it.
        self.unusable: str | None = None
        self._open()

    # Opening, and starting again ------------------------------------------

    def _open(self) -> None:
        if self.path != IN_MEMORY:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            _remove_links(self.path)
        try:
            self._connect()
        except sqlite3.DatabaseError:
            self._discard()
            self._connect()

    def _connect(self) -> None:
        # The daemon opens the index on its main thread and uses it on the
        # settle thread only; nothing shares it between threads at once.
        conn = sqlite3.connect(
            self.path, timeout=5.0, isolation_level=None, check_same_thread=False
        )
        self._conn = conn
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a cache: WAL keeps it whole
            if not self._schema_matches(conn):
                was_used = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                conn.close()
                self._conn = None
                self._discard(count=bool(was_used and was_used[0]))
                conn = sqlite3.connect(
                    self.path,
                    timeout=5.0,
                    isolation_level=None,
                    check_same_thread=False,
                )
                self._conn = conn
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                self._create(conn)
        except sqlite3.DatabaseError:
            conn.close()
            self._conn = None
            raise
        self._inode = _inode_of(self.path)
        self.generation += 1

    def _schema_matches(self, conn: sqlite3.Connection) -> bool:
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:  # no such table: a new or foreign file
            return False
        return rows == {"schema": SCHEMA_VERSION, "tokenizer": self.tokenizer}

    def _create(self, conn: sqlite3.Connection) -> None:
        try:
            with _transaction(conn):
                for statement in _schema(self.tokenizer):
                    conn.execute(statement)
                conn.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    (("schema", SCHEMA_VERSION), ("tokenizer", self.tokenizer)),
                )
        except sqlite3.OperationalError as error:
            if "fts5" in str(error).lower():
                check_fts5()
            raise

    def _discard(self, *, count: bool = True) -> None:
        """Remove the database and its WAL files; it is a cache, rebuilt from memory."""
        if self._conn is not None:
            import contextlib  # off the warm path: only a broken database gets here

            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        if self.path != IN_MEMORY:
            for suffix in ("", *_SIDE_FILES):
                try:
                    os.unlink(self.path + suffix)
                except FileNotFoundError:
                    continue
        self.rebuilds += count

    def reset(self) -> None:
        """Throw the database away and start an empty one."""
        self._discard()
        self._connect()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> RecallIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._connect()
        assert self._conn is not None  # noqa: S101 -- _connect sets it or raises
        return self._conn

    def _reopen_if_replaced(self) -> bool:
        """Reconnect when the file was deleted or replaced under this connection."""
        if self.path == IN_MEMORY or _inode_of(self.path) == self._inode:
            return False
        self.close()
        self._open()
        return True

    def _guard(self, action: Callable[[], _T], again: Callable[[], _T]) -> _T:
        """Run `action`; if the database is broken, rebuild it and run `again`."""
        try:
            return action()
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
                raise
            self.reset()
            return again()

    # Writing ---------------------------------------------------------------

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
            with _transaction(self.conn):
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
            known = {_from_db(r[0]): (r[1], r[2]) for r in rows}
            consider: Iterable[str] = set(known) | set(present)
        else:
            known = {}
            for relpath in only:
                row = conn.execute(
                    "SELECT id, digest FROM files WHERE dir_id = ? AND relpath = ?",
                    (dir_id, _to_db(relpath)),
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
            _to_db(parsed.relpath),
            *(_int64(n) for n in stat),
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
                _scope_token(dir_id),
            ),
        )

    def forget(self, memory_dir: str) -> None:
        """Drop every row of `memory_dir` (it was deleted, or is no longer memory)."""

        def run() -> None:
            conn = self.conn
            with _transaction(conn):
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

    # Reading -----------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        memory_dirs: Sequence[str] | None = None,
        limit: int = 5,
        memory_type: str | None = None,
        now_ns: int | None = None,
        dir_ids: Mapping[str, int] | None = None,
    ) -> tuple[Hit, ...]:
        """Return at most `limit` memories matching `query`, best first.

        Ranked by BM25 over name, description and body (`WEIGHTS`), times a
        small recency factor. `memory_dirs` None searches every directory.
        `dir_ids` (every directory's id, from `dir_records` when nothing was
        written since) saves the query that looks them up.
        """
        terms = query_terms(query, self.tokenizer)
        expression = match_expression(terms)
        if expression is None or limit <= 0:
            return ()
        now = time.time_ns() if now_ns is None else now_ns

        def run() -> tuple[Hit, ...]:
            return self._search(
                expression, terms, memory_dirs, limit, memory_type, now, dir_ids
            )

        def again() -> tuple[Hit, ...]:  # rebuilt: the ids are gone with it
            return self._search(expression, terms, memory_dirs, limit, memory_type, now)

        return self._guard(run, again)

    def _search(
        self,
        expression: str,
        terms: tuple[str, ...],
        memory_dirs: Sequence[str] | None,
        limit: int,
        kind: str | None,
        now_ns: int,
        dir_ids: Mapping[str, int] | None = None,
    ) -> tuple[Hit, ...]:
        # A few directories narrow the MATCH itself (the `scope` tokens), so
        # FTS5 ranks only their rows; more, or a type, are filtered by a join on
        # `files` inside the ranking query. Either way the LIMIT applies before
        # the join that reads bodies: they are read for the candidates alone.
        match = expression
        filters: list[str] = []
        params: list[object] = []
        if memory_dirs is not None:
            known = dir_ids
            if known is None:
                known = dict(self.conn.execute("SELECT path, id FROM dirs").fetchall())
            ids = sorted({known[d] for d in memory_dirs if d in known})
            if not ids:
                return ()
            if len(ids) <= MAX_SCOPED_DIRS:
                scopes = " OR ".join(_scope_token(i) for i in ids)
                match = f"({match}) AND scope:({scopes})"
            elif len(ids) < len(known):
                filters.append(f"o.dir_id IN ({', '.join('?' * len(ids))})")
                params.extend(ids)
        if kind is not None:
            filters.append("o.type = ?")
            params.append(kind)
        join = " JOIN files o ON o.id = docs.rowid" if filters else ""
        ranked = (
            f"SELECT docs.rowid AS id, {_BM25} AS rank FROM docs{join} "  # noqa: S608 -- only constants and ? placeholders
            f"WHERE {' AND '.join(['docs MATCH ?', *filters])} ORDER BY rank LIMIT ?"
        )
        params = [match, *params, limit * CANDIDATES_PER_RESULT]
        rows = self.conn.execute(
            "SELECT r.rank, d.path, f.relpath, f.name, f.type, f.description, "  # noqa: S608 -- only constants and ? placeholders
            f"f.body, f.mtime_ns FROM ({ranked}) r JOIN files f ON f.id = r.id "
            "JOIN dirs d ON d.id = f.dir_id",
            params,
        ).fetchall()
        scored = []
        for rank, path, relpath, name, kind_, description, body, mtime_ns in rows:
            age_days = (now_ns - (mtime_ns or 0)) / _NS_PER_DAY
            score = -rank * recency_factor(age_days)
            scored.append(
                (score, path, relpath, name, kind_, description, body, mtime_ns)
            )
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        best = scored[:limit]
        return tuple(
            Hit(
                memory_dir=path,
                relpath=_from_db(relpath),
                name=name,
                type=kind_,
                description=description,
                snippet=_snippet_of(body or "", description or "", terms),
                score=round(score, 6),
                mtime_ns=mtime_ns or 0,
            )
            for score, path, relpath, name, kind_, description, body, mtime_ns in best
        )


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


def _to_db(relpath: str) -> str | bytes:
    """A relpath as SQLite can keep it: text, or the file name's own bytes.

    SQLite text must be valid UTF-8, and a name that is not (its bytes held
    as lone surrogates, Python's `surrogateescape`) is still memory: it is
    kept as a BLOB, which `_from_db` turns back into the same str.
    """
    try:
        relpath.encode("utf-8")
    except UnicodeEncodeError:
        return relpath.encode("utf-8", "surrogateescape")
    return relpath


def _from_db(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return value


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
        spare.unusable = _why_unusable(path, error)
        return spare


def _remove_links(path: str) -> None:
    """Remove a symlink at the database's name or a side file's; refuse the rest.

    SQLite opens these files by name and would follow a link, writing its
    header into whatever the link names. Unlinking removes only the link.

    Raises:
        OSError: one of them is there and is neither a link nor a regular file.
    """
    for name in (path, *(path + suffix for suffix in _SIDE_FILES)):
        try:
            mode = os.lstat(name).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(mode):
            os.unlink(name)
        elif not stat.S_ISREG(mode):
            raise OSError(errno.EEXIST, "not a regular file", name)


def _why_unusable(path: str, error: OSError | sqlite3.Error) -> str:
    if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
        return f"{path} is busy (another process is writing it)"
    if isinstance(error, OSError):
        where = error.filename or path
        return f"{where}: {error.strerror or error}"
    return f"{path}: {error}"


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
        index.unusable = _why_unusable(index.path, error)
    with RecallIndex(IN_MEMORY, tokenizer=index.tokenizer) as spare:
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


def _scope_token(dir_id: int) -> str:
    """The `scope` token of a directory's rows: letters and digits only."""
    return f"memddir{dir_id}x"


def _normal(memory_dir: str) -> str:
    """The directory as `load_memdir` records it: absolute, no trailing separator."""
    return os.path.abspath(memory_dir).rstrip(os.sep) or os.sep


def _digest(parsed: MemoryFile, mtime_ns: int) -> int:
    """A checksum of what the index keeps of a file (its mtime feeds recency)."""
    import zlib

    text = "\0".join(
        (str(mtime_ns), parsed.name or "", parsed.type or "", parsed.description or "")
    )
    crc = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    return zlib.crc32(parsed.body.encode("utf-8", "surrogatepass"), crc)


def _snippet_of(body: str, description: str, terms: tuple[str, ...]) -> str:
    body, description = mask_secrets(body), mask_secrets(description)  # whole, then cut
    lowered = body.lower()
    if description and not any(t in lowered for t in terms):
        return snippet(description, terms)
    return snippet(body, terms)


def _still_there(hit: Hit) -> bool:
    try:
        st = os.lstat(os.path.join(hit.memory_dir, hit.relpath))
    except OSError:
        return False
    return _int64(st.st_mtime_ns) == hit.mtime_ns


def _int64(number: int) -> int:
    """`number` within SQLite's INTEGER range: past 2262 an mtime in ns is not.

    `touch -d 2300-01-01` is enough; SQLite would refuse the whole row.
    """
    return max(min(number, _INT64_MAX), -_INT64_MAX - 1)


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


def _inode_of(path: str) -> int:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return 0


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


def _is_busy(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


class _transaction:  # used as `with _transaction(conn):`, like a function
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an exception.

    A class rather than `contextlib.contextmanager`: importing contextlib
    costs the warm `memd recall` more than its query.
    """

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
