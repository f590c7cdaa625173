"""The recall database: one SQLite file for every memory directory, in memd's cache.

Layout: `dirs` (one row per memory directory: its stat signature and the pid
of the daemon that keeps it current), `files` (one row per topic file: its
stat, name, type, description and body) and `docs`, an FTS5 table whose rowid
is the file's id and whose columns are name, description and body as
`memd.recall.text.index_text` shapes them.

This module opens it (`RecallDatabase`); `memd.recall.index` builds and
updates it (`RecallIndex`, `open_index`, the daemon's `RecallUpdater`) and
`memd.recall.query` searches and ranks it (`Hit`); `memd.recall.index.recall`
refreshes, then searches.

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
the memory directories instead, and say why in `RecallDatabase.unusable`.
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

from memd.errors import MemdError
from memd.recall.text import DEFAULT_TOKENIZER, TOKENIZERS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Self, TypeVar

    _T = TypeVar("_T")


INDEX_FILE = "recall.sqlite3"
IN_MEMORY = ":memory:"
# What SQLite opens by name next to the database.
_SIDE_FILES = ("-wal", "-shm", "-journal")
SCHEMA_VERSION = "3"
_INT64_MAX = 2**63 - 1


class RecallUnavailableError(MemdError):
    """This Python's SQLite has no FTS5, so recall cannot index anything."""


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


class RecallDatabase:
    """An open recall database; one per process, used from one thread at a time.

    The connection and its lifecycle only: `memd.recall.query.RecallSearch`
    adds searching, `memd.recall.index.RecallIndex` updating.
    """

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
            with transaction(conn):
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

    def __enter__(self) -> Self:
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


def to_db(relpath: str) -> str | bytes:
    """A relpath as SQLite can keep it: text, or the file name's own bytes.

    SQLite text must be valid UTF-8, and a name that is not (its bytes held
    as lone surrogates, Python's `surrogateescape`) is still memory: it is
    kept as a BLOB, which `from_db` turns back into the same str.
    """
    try:
        relpath.encode("utf-8")
    except UnicodeEncodeError:
        return relpath.encode("utf-8", "surrogateescape")
    return relpath


def from_db(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return value


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


def why_unusable(path: str, error: OSError | sqlite3.Error) -> str:
    if isinstance(error, sqlite3.OperationalError) and _is_busy(error):
        return f"{path} is busy (another process is writing it)"
    if isinstance(error, OSError):
        where = error.filename or path
        return f"{where}: {error.strerror or error}"
    return f"{path}: {error}"


def scope_token(dir_id: int) -> str:
    """The `scope` token of a directory's rows: letters and digits only."""
    return f"memddir{dir_id}x"


def int64(number: int) -> int:
    """`number` within SQLite's INTEGER range: past 2262 an mtime in ns is not.

    `touch -d 2300-01-01` is enough; SQLite would refuse the whole row.
    """
    return max(min(number, _INT64_MAX), -_INT64_MAX - 1)


def _inode_of(path: str) -> int:
    try:
        return os.lstat(path).st_ino
    except OSError:
        return 0


def _is_busy(error: sqlite3.OperationalError) -> bool:
    return "locked" in str(error) or "busy" in str(error)


class transaction:  # used as `with transaction(conn):`, like a function
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
