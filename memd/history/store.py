"""The history store: one SQLite database of every memory directory's versions.

Tables (`SCHEMA`): `dirs` (one row per memory directory), `blobs` (one row
per distinct content, by sha256, zlib-compressed, maybe a delta against
`base`), `changes` (one row per recorded change: time, cause, session,
bytes, loss), `versions` (one row per file a change touched: its blob, or
NULL for a deletion), `tree` (the last recorded state of each directory,
with each file's stat key, so a record reads only files whose key moved) and
`losses` (each loss `memd.history.loss` judged, with the (relpath, revision)
pairs it took and whether it was restored or dismissed).

A record is one `BEGIN IMMEDIATE` transaction: a kill before its commit
leaves the store as it was, after it the whole change. WAL with
`synchronous=NORMAL`: a commit survives a killed process; a power cut may
lose the last few, never tear one. `secure_delete` is on, so deleted rows
are overwritten in place; `purge` then VACUUMs and truncates the WAL
(docs/history.md says why that leaves no byte behind).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass
from hashlib import sha256
from typing import NamedTuple

from memd.atomic import crash_point
from memd.errors import MemdError
from memd.fsread import open_dir
from memd.history import codec
from memd.history.ledger import RENAMED_AWAY as _MOVED_AWAY  # not listed on its own
from memd.history.ledger import LossLedger, LossRecord
from memd.history.scan import MAX_FILE_BYTES, StatKey, read_kept, scan_dir
from memd.racy import is_racy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

DB_NAME = "history.sqlite3"
RESTORE_JOURNAL = "restore.json"  # memd.history.restore's journal, in history_dir
CAUSES = (
    "edit",
    "stopped",
    "fix",
    "fix-undo",
    "dream",
    "dream-undo",
    "mcp",
    "team-sync",
    "sync",
    "restore",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS dirs(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
    last_rev INTEGER NOT NULL DEFAULT 0,
    pruned_at REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS blobs(
    id INTEGER PRIMARY KEY, sha BLOB NOT NULL UNIQUE, size INTEGER NOT NULL,
    base INTEGER, depth INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS blobs_base ON blobs(base) WHERE base IS NOT NULL;
CREATE TABLE IF NOT EXISTS changes(
    rev INTEGER PRIMARY KEY AUTOINCREMENT, dir INTEGER NOT NULL, at REAL NOT NULL,
    cause TEXT NOT NULL, session TEXT, note TEXT, bytes_added INTEGER NOT NULL,
    bytes_removed INTEGER NOT NULL, loss TEXT);
CREATE INDEX IF NOT EXISTS changes_dir ON changes(dir, at);
CREATE TABLE IF NOT EXISTS versions(
    dir INTEGER NOT NULL, relpath TEXT NOT NULL, rev INTEGER NOT NULL, blob INTEGER,
    kind TEXT NOT NULL, old_relpath TEXT, size_before INTEGER NOT NULL,
    size_after INTEGER NOT NULL, blank INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(dir, relpath, rev)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS versions_rev ON versions(rev);
CREATE INDEX IF NOT EXISTS versions_blob ON versions(blob);
CREATE TABLE IF NOT EXISTS losses(
    rev INTEGER PRIMARY KEY, dir INTEGER NOT NULL, first_rev INTEGER NOT NULL,
    sentence TEXT NOT NULL, taken TEXT NOT NULL, state TEXT NOT NULL,
    settled_at REAL);
CREATE TABLE IF NOT EXISTS tree(
    dir INTEGER NOT NULL, relpath TEXT NOT NULL, blob INTEGER, sha BLOB NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, checked_ns INTEGER NOT NULL,
    PRIMARY KEY(dir, relpath)) WITHOUT ROWID;
"""


class FileChange(NamedTuple):
    """One file a change touched; sizes are -1 where the file was absent.

    A NamedTuple, not a dataclass: `memd history` builds 10,000 of them.
    """

    relpath: str
    kind: str  # "created" | "modified" | "deleted" | "renamed"
    old_relpath: str | None = None
    size_before: int = -1
    size_after: int = -1


class Change(NamedTuple):
    """One recorded change of one memory directory (a NamedTuple, as FileChange)."""

    rev: int
    memory_dir: str
    at: float  # epoch seconds
    cause: str
    session: str | None
    note: str | None
    files: tuple[FileChange, ...]
    bytes_added: int
    bytes_removed: int
    loss: str | None = None  # the loss alarm's sentence, when this change was one
    restored: tuple[int, ...] = ()  # the losses this change brought back (their revs)

    @property
    def is_loss(self) -> bool:
        return self.loss is not None

    def to_dict(self) -> dict[str, object]:
        return {
            "rev": self.rev,
            "memory_dir": self.memory_dir,
            "at": self.at,
            "cause": self.cause,
            "session": self.session,
            "note": self.note,
            "bytes_added": self.bytes_added,
            "bytes_removed": self.bytes_removed,
            "is_loss": self.is_loss,
            "loss": self.loss,
            "files": [
                {
                    "relpath": f.relpath,
                    "kind": f.kind,
                    "old_relpath": f.old_relpath,
                    "size_before": f.size_before,
                    "size_after": f.size_after,
                }
                for f in self.files
            ],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Retention:
    """How long versions are kept (`[history]` in config.toml)."""

    keep_all_days: float = 30.0
    keep_daily_days: float = 365.0
    max_bytes: int = 64 * 1024 * 1024


@dataclass(slots=True)
class _Entry:
    blob: int | None  # None: known by sha only (its versions were purged)
    sha: bytes
    size: int
    key: StatKey
    checked_ns: int


class HistoryUnusableError(MemdError):
    """The history store cannot be used: damaged, or a link (one line: the way out)."""


_SIDE_FILES = ("-wal", "-shm", "-journal")


def _refuse_links(directory: str, path: str) -> None:
    """Refuse a history folder, database or side file that is not what memd made."""
    for name in (directory, path, *(path + suffix for suffix in _SIDE_FILES)):
        try:
            mode = os.lstat(name).st_mode
        except FileNotFoundError:
            continue
        wanted = stat.S_ISDIR if name == directory else stat.S_ISREG
        if not wanted(mode):
            kind = "a link" if stat.S_ISLNK(mode) else "not a regular file"
            raise HistoryUnusableError(
                f"the history store {name} is {kind}, which memd never follows;"
                f" move it away (mv '{name}' '{name}.moved') and memd starts a new"
                " history there"
            )


def damaged(path: str, error: BaseException) -> HistoryUnusableError:
    """The one line for a store SQLite cannot read: what, and how to start again."""
    return HistoryUnusableError(
        f"the history store {path} is damaged ({error}); move it aside"
        f" (mv '{path}' '{path}.damaged') and memd starts a new history;"
        " the old one stays there for `sqlite3 .recover`"
    )


def valid_rev(rev: int) -> bool:
    """Whether `rev` can name a revision at all (SQLite's INTEGER, from 1)."""
    return 0 < rev < 1 << 63


def normalize_dir(memory_dir: str) -> str:
    """The one spelling of a memory directory in the store: real, no trailing `/`."""
    return os.path.realpath(memory_dir)


def history_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "history")


def _changed_span(old: bytes, new: bytes) -> tuple[int, int]:
    """(bytes removed, bytes added): what differs once a common prefix and suffix go."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return len(old) - start - end, len(new) - start - end


class History(LossLedger):
    """The history database; thread-safe within a process, shared across processes."""

    def __init__(self, connection: sqlite3.Connection, path: str) -> None:
        self._db = connection
        self.path = path
        self._lock = threading.RLock()
        self._dir_ids: dict[str, int] = {}
        # memory dir -> (last_rev it was loaded at, relpath -> entry)
        self._trees: dict[str, tuple[int, dict[str, _Entry]]] = {}
        self._decoded: dict[int, bytes] = {}  # a few recent blobs, for delta bases

    @classmethod
    def open(cls, state_dir: str) -> History:
        """Open (creating it if need be) the store under `<state_dir>/history/`.

        Raises:
            HistoryUnusableError: the store is damaged, or a link (never
                followed: SQLite would write wherever it leads); one line
                naming the way to recover.
        """
        directory = history_dir(state_dir)
        path = os.path.join(directory, DB_NAME)
        _refuse_links(directory, path)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        connection = sqlite3.connect(
            path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA secure_delete=ON")
            connection.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:
            connection.close()
            raise damaged(path, error) from None
        return cls(connection, path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- recording -----------------------------------------------------------

    def record(
        self,
        memory_dir: str,
        *,
        cause: str,
        session: str | None = None,
        note: str | None = None,
        at: float | None = None,
        only: Callable[[str], bool] | None = None,
    ) -> Change | None:
        """Record how `memory_dir` differs from its last recorded state, as one change.

        Only files whose stat key moved (or is racily clean) are read; a file
        rewritten with the same bytes is no change. Returns None when nothing
        changed. A missing directory records every file as deleted. `only`:
        record just the relpaths it accepts, leaving the rest for the next record.
        """
        if cause not in CAUSES:
            raise ValueError(f"unknown history cause {cause!r}")
        path = normalize_dir(memory_dir)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                change = self._record(path, cause, session, note, at, only)
                crash_point()
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback(path)
                raise
            crash_point()
            return change

    def _rollback(self, path: str) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")
        self._trees.pop(path, None)

    def _record(
        self,
        path: str,
        cause: str,
        session: str | None,
        note: str | None,
        at: float | None,
        only: Callable[[str], bool] | None = None,
    ) -> Change | None:
        dir_id = self._dir_id(path, create=True)
        if dir_id is None:  # create=True always gives one
            raise ValueError(f"no history row for {path}")
        tree = self._tree(path, dir_id)
        now_ns = time.time_ns()
        on_disk = scan_dir(path)
        try:
            root: int | None = open_dir(path, follow=True)
        except OSError:
            root, on_disk = None, {}
        if only is not None:  # the others keep their recorded state for next time
            on_disk = {rel: key for rel, key in on_disk.items() if only(rel)}
            on_disk.update((rel, e.key) for rel, e in tree.items() if not only(rel))
            skip = {rel for rel in on_disk if not only(rel)}
        else:
            skip = set()
        try:
            wrote, touched = self._compare(root, tree, on_disk, now_ns, skip)
        finally:
            if root is not None:
                os.close(root)
        deleted = {rel: tree[rel] for rel in tree if rel not in on_disk}
        for rel in [r for r in deleted if r in wrote]:  # vanished while read
            deleted.pop(rel)
        for rel, entry in touched.items():
            self._db.execute(
                "UPDATE tree SET mtime_ns=?, inode=?, ctime_ns=?, checked_ns=?, size=?"
                " WHERE dir=? AND relpath=?",
                (
                    entry.key[1],
                    entry.key[2],
                    entry.key[3],
                    entry.checked_ns,
                    entry.size,
                    dir_id,
                    rel,
                ),
            )
            tree[rel] = entry
        changed = {
            rel: (data, key)
            for rel, (data, key) in wrote.items()
            if data is not None and key is not None
        }
        gone = {rel for rel, item in wrote.items() if item[0] is None}
        for rel in gone:
            if rel in tree:
                deleted[rel] = tree[rel]
        if not changed and not deleted:
            return None
        when = time.time() if at is None else at
        cursor = self._db.execute(
            "INSERT INTO changes(dir, at, cause, session, note, bytes_added,"
            " bytes_removed) VALUES (?, ?, ?, ?, ?, 0, 0)",
            (dir_id, when, cause, session, note),
        )
        rev = int(cursor.lastrowid or 0)
        files: list[FileChange] = []
        added = removed = 0
        renamed_from = self._pair_renames(changed, deleted, tree)
        for rel in sorted(changed):
            data, key = changed[rel]
            sha = sha256(data).digest()
            old = tree.get(rel)
            source = renamed_from.get(rel)
            base = old if old is not None else None
            blob = self._store_blob(data, sha, base.blob if base else None)
            if source is not None:
                kind, before = "renamed", -1
                self._version(
                    dir_id,
                    source,
                    rev,
                    None,
                    _MOVED_AWAY,
                    None,
                    deleted[source].size,
                    -1,
                    False,
                )
            elif old is None:
                kind, before = "created", -1
                added += len(data)
            else:
                kind, before = "modified", old.size
                old_bytes = self._blob_bytes(old.blob) if old.blob is not None else b""
                gone_bytes, new_bytes = _changed_span(old_bytes, data)
                removed += gone_bytes
                added += new_bytes
            self._version(
                dir_id,
                rel,
                rev,
                blob,
                kind,
                source,
                before,
                len(data),
                not data.strip(),
            )
            files.append(
                FileChange(
                    relpath=rel,
                    kind=kind,
                    old_relpath=source,
                    size_before=before,
                    size_after=len(data),
                )
            )
            entry = _Entry(blob, sha, len(data), key, now_ns)
            self._set_tree(dir_id, rel, entry)
            tree[rel] = entry
        moved = set(renamed_from.values())
        for rel in sorted(deleted):
            entry = deleted[rel]
            self._db.execute(
                "DELETE FROM tree WHERE dir=? AND relpath=?", (dir_id, rel)
            )
            tree.pop(rel, None)
            if rel in moved:
                continue
            removed += entry.size
            self._version(
                dir_id, rel, rev, None, "deleted", None, entry.size, -1, False
            )
            files.append(
                FileChange(relpath=rel, kind="deleted", size_before=entry.size)
            )
        files.sort(key=lambda f: f.relpath)
        loss = self._judge_change(dir_id, rev, when, cause, removed, tree, path)
        self._db.execute(
            "UPDATE changes SET bytes_added=?, bytes_removed=?, loss=? WHERE rev=?",
            (added, removed, loss.sentence if loss else None, rev),
        )
        restored = self._settle_restored(dir_id, tree, when)
        self._db.execute("UPDATE dirs SET last_rev=? WHERE id=?", (rev, dir_id))
        self._trees[path] = (rev, tree)
        return Change(
            rev=rev,
            memory_dir=path,
            at=when,
            cause=cause,
            session=session,
            note=note,
            files=tuple(files),
            bytes_added=added,
            bytes_removed=removed,
            loss=loss.sentence if loss else None,
            restored=restored,
        )

    def _compare(
        self,
        root: int | None,
        tree: dict[str, _Entry],
        on_disk: dict[str, StatKey],
        now_ns: int,
        skip: set[str],
    ) -> tuple[dict[str, tuple[bytes | None, StatKey | None]], dict[str, _Entry]]:
        """Read the files whose key moved: (what changed, entries only re-stamped)."""
        wrote: dict[str, tuple[bytes | None, StatKey | None]] = {}
        touched: dict[str, _Entry] = {}
        for rel, key in on_disk.items():
            if rel in skip:
                continue
            old = tree.get(rel)
            if (
                old is not None
                and old.key == key
                and not is_racy(key[1], old.checked_ns)
            ):
                continue
            data = read_kept(root, rel) if root is not None else None
            if data is None:
                wrote[rel] = (None, None)
                continue
            if old is not None and sha256(data).digest() == old.sha:
                if old.key != key or not is_racy(key[1], now_ns):
                    touched[rel] = _Entry(old.blob, old.sha, len(data), key, now_ns)
                continue
            wrote[rel] = (data, key)
        return wrote, touched

    @staticmethod
    def _pair_renames(
        changed: dict[str, tuple[bytes, StatKey]],
        deleted: dict[str, _Entry],
        tree: dict[str, _Entry],
    ) -> dict[str, str]:
        """New relpath -> old one, for a created file whose bytes a deleted one held."""
        by_sha: dict[bytes, list[str]] = {}
        for rel in sorted(deleted):
            by_sha.setdefault(deleted[rel].sha, []).append(rel)
        pairs: dict[str, str] = {}
        for rel in sorted(changed):
            data = changed[rel][0]
            if rel in tree:
                continue
            olds = by_sha.get(sha256(data).digest())
            if olds:
                pairs[rel] = olds.pop(0)
        return pairs

    def _version(
        self,
        dir_id: int,
        rel: str,
        rev: int,
        blob: int | None,
        kind: str,
        old_relpath: str | None,
        before: int,
        after: int,
        blank: bool,
    ) -> None:
        self._db.execute(
            "INSERT INTO versions(dir, relpath, rev, blob, kind, old_relpath,"
            " size_before, size_after, blank) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (dir_id, rel, rev, blob, kind, old_relpath, before, after, int(blank)),
        )

    def _set_tree(self, dir_id: int, rel: str, entry: _Entry) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO tree(dir, relpath, blob, sha, size, mtime_ns,"
            " inode, ctime_ns, checked_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                dir_id,
                rel,
                entry.blob,
                entry.sha,
                entry.size,
                entry.key[1],
                entry.key[2],
                entry.key[3],
                entry.checked_ns,
            ),
        )

    def _store_blob(self, data: bytes, sha: bytes, base: int | None) -> int:
        """Return the blob id of `data`, storing it (as a delta when it pays) if new."""
        row = self._db.execute("SELECT id FROM blobs WHERE sha=?", (sha,)).fetchone()
        if row is not None:
            return int(row[0])
        base_bytes, depth = None, 0
        if base is not None:
            base_row = self._db.execute(
                "SELECT depth, size FROM blobs WHERE id=?", (base,)
            ).fetchone()
            if base_row is not None and base_row[1] <= codec.DELTA_MAX_BYTES:
                base_bytes, depth = self._blob_bytes(base), int(base_row[0])
        if codec.can_delta(data, base_bytes, depth):
            stored, base_id, depth = codec.encode(data, base_bytes), base, depth + 1
        else:
            stored, base_id, depth = codec.encode(data), None, 0
        cursor = self._db.execute(
            "INSERT INTO blobs(sha, size, base, depth, data) VALUES (?, ?, ?, ?, ?)",
            (sha, len(data), base_id, depth, stored),
        )
        blob = int(cursor.lastrowid or 0)
        self._remember(blob, data)
        return blob

    def _remember(self, blob: int, data: bytes) -> None:
        if len(self._decoded) >= 64:
            self._decoded.pop(next(iter(self._decoded)))
        self._decoded[blob] = data

    def _blob_bytes(self, blob: int) -> bytes:
        """Decode one blob, following its delta chain (at most `FULL_EVERY` long)."""
        cached = self._decoded.get(blob)
        if cached is not None:
            return cached
        chain: list[tuple[int, int, bytes]] = []
        current: int | None = blob
        while current is not None and current not in self._decoded:
            row = self._db.execute(
                "SELECT base, size, data FROM blobs WHERE id=?", (current,)
            ).fetchone()
            if row is None:
                raise codec.DamagedBlobError(f"history blob {current} is missing")
            chain.append((current, int(row[1]), bytes(row[2])))
            current = row[0]
            if len(chain) > codec.FULL_EVERY * 4:
                raise codec.DamagedBlobError("history delta chain is too long")
        data = self._decoded.get(current) if current is not None else None
        for blob_id, size, stored in reversed(chain):
            data = codec.decode(stored, data, limit=max(size, 0))
            if len(data) != size:
                raise codec.DamagedBlobError(
                    f"corrupt history blob {blob_id}: {len(data)} bytes, not {size}"
                )
            self._remember(blob_id, data)
        if data is None:
            raise codec.DamagedBlobError(f"history blob {blob} decodes to nothing")
        return data

    def _tree_bytes(self, entry: _Entry | None) -> bytes | None:
        if entry is None or entry.blob is None:
            return None
        return self._blob_bytes(entry.blob)

    # -- reading -------------------------------------------------------------

    def _dir_id(self, path: str, *, create: bool = False) -> int | None:
        found = self._dir_ids.get(path)
        if found is not None:
            return found
        row = self._db.execute("SELECT id FROM dirs WHERE path=?", (path,)).fetchone()
        if row is None:
            if not create:
                return None
            cursor = self._db.execute("INSERT INTO dirs(path) VALUES (?)", (path,))
            row = (cursor.lastrowid,)
        self._dir_ids[path] = int(row[0])
        return int(row[0])

    def _tree(self, path: str, dir_id: int) -> dict[str, _Entry]:
        """The last recorded state, from the cache unless another writer moved it."""
        row = self._db.execute(
            "SELECT last_rev FROM dirs WHERE id=?", (dir_id,)
        ).fetchone()
        last_rev = int(row[0]) if row else 0
        cached = self._trees.get(path)
        if cached is not None and cached[0] == last_rev:
            return cached[1]
        tree = {
            rel: _Entry(blob, bytes(sha), size, (size, mtime, inode, ctime), checked)
            for rel, blob, sha, size, mtime, inode, ctime, checked in self._db.execute(
                "SELECT relpath, blob, sha, size, mtime_ns, inode, ctime_ns, checked_ns"
                " FROM tree WHERE dir=?",
                (dir_id,),
            )
        }
        self._trees[path] = (last_rev, tree)
        return tree

    def memory_dirs(self) -> list[str]:
        """Every memory directory the store has a history of."""
        with self._lock:
            return [
                r[0] for r in self._db.execute("SELECT path FROM dirs ORDER BY path")
            ]

    def changes(
        self,
        memory_dir: str | None = None,
        *,
        relpath: str | None = None,
        since: float | None = None,
        limit: int | None = None,
        losses_only: bool = False,
        rev: int | None = None,
    ) -> list[Change]:
        """Recorded changes, newest first; `relpath` keeps those touching that file."""
        where: list[str] = ["1=1"]
        params: list[object] = []
        if rev is not None and not valid_rev(rev):
            return []
        if rev is not None:
            where.append("c.rev=?")
            params.append(rev)
        if memory_dir is not None:
            with self._lock:
                dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return []
            where.append("c.dir=?")
            params.append(dir_id)
            if relpath is not None:
                where.append(
                    "c.rev IN (SELECT rev FROM versions WHERE dir=? AND relpath=?"
                    " AND kind != ?)"
                )
                params += [dir_id, relpath, _MOVED_AWAY]
        if since is not None:
            where.append("c.at>=?")
            params.append(since)
        if losses_only:
            where.append("c.loss IS NOT NULL")
        query = (
            "SELECT c.rev, d.path, c.at, c.cause, c.session, c.note, c.bytes_added,"  # noqa: S608 -- constants and ? only
            " c.bytes_removed, c.loss FROM changes c JOIN dirs d ON d.id=c.dir"
            f" WHERE {' AND '.join(where)} ORDER BY c.rev DESC"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._lock:
            rows = self._db.execute(query, params).fetchall()
            if not rows:
                return []
            files: dict[int, list[FileChange]] = {}
            low, high = rows[-1][0], rows[0][0]
            file_query = (
                "SELECT rev, relpath, kind, old_relpath, size_before, size_after"
                " FROM versions WHERE rev BETWEEN ? AND ? AND kind != ?"
            )
            file_params: list[object] = [low, high, _MOVED_AWAY]
            if memory_dir is not None:
                file_query += " AND dir=?"
                file_params.append(dir_id)
            wanted = {r[0] for r in rows}
            make_file = FileChange._make
            for row in self._db.execute(file_query, file_params):
                if row[0] in wanted:
                    files.setdefault(row[0], []).append(make_file(row[1:]))
        by_name = _by_relpath
        return [
            Change(
                rev,
                path,
                at,
                cause,
                session,
                note,
                tuple(sorted(files[rev], key=by_name)) if rev in files else (),
                added,
                removed,
                loss,
            )
            for rev, path, at, cause, session, note, added, removed, loss in rows
        ]

    def change(self, rev: int) -> Change | None:
        """The change `rev`, or None."""
        found = self.changes(rev=rev)
        return found[0] if found else None

    def rev_at(self, memory_dir: str, when: float) -> int | None:
        """The last revision of `memory_dir` at or before `when` (epoch seconds)."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return None
            row = self._db.execute(
                "SELECT MAX(rev) FROM changes WHERE dir=? AND at<=?", (dir_id, when)
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def file_at(self, memory_dir: str, relpath: str, rev: int) -> bytes | None:
        """A file's bytes as of revision `rev`; None when it did not exist then."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return None
            return self._file_at_id(dir_id, relpath, rev)

    def _file_at_id(self, dir_id: int, relpath: str, rev: int) -> bytes | None:
        rev = min(rev, (1 << 63) - 1)
        row = self._db.execute(
            "SELECT blob FROM versions WHERE dir=? AND relpath=? AND rev<=?"
            " ORDER BY rev DESC LIMIT 1",
            (dir_id, relpath, rev),
        ).fetchone()
        if row is None or row[0] is None:
            return None
        return self._blob_bytes(int(row[0]))

    def tree_at(self, memory_dir: str, rev: int) -> dict[str, bytes]:
        """relpath -> sha256 of every file the directory held as of `rev`."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return {}
            rev = min(rev, (1 << 63) - 1)
            # SQLite's bare columns with MAX(): the row holding the newest rev.
            return {
                rel: bytes(sha)
                for rel, sha, _ in self._db.execute(
                    "SELECT v.relpath, b.sha, MAX(v.rev) FROM versions v"
                    " LEFT JOIN blobs b ON b.id=v.blob WHERE v.dir=? AND v.rev<=?"
                    " GROUP BY v.relpath",
                    (dir_id, rev),
                )
                if sha is not None
            }

    def recorded_tree(self, memory_dir: str) -> dict[str, bytes]:
        """relpath -> sha256 of the directory's last recorded state."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return {}
            return {
                rel: bytes(sha)
                for rel, sha in self._db.execute(
                    "SELECT relpath, sha FROM tree WHERE dir=?", (dir_id,)
                )
            }

    def has_versions(self, memory_dir: str, relpath: str) -> bool:
        """Whether any version of `relpath` is kept (none once purged or pruned)."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return False
            row = self._db.execute(
                "SELECT 1 FROM versions WHERE dir=? AND relpath=? LIMIT 1",
                (dir_id, relpath),
            ).fetchone()
        return row is not None

    def content(self, sha: bytes) -> bytes | None:
        """The bytes whose sha256 is `sha`, if the store holds them."""
        with self._lock:
            row = self._db.execute(
                "SELECT id FROM blobs WHERE sha=?", (sha,)
            ).fetchone()
            return None if row is None else self._blob_bytes(int(row[0]))

    def rev_before(self, memory_dir: str, rev: int) -> int | None:
        """The directory's last revision before `rev`; None if `rev` was its first."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            row = self._db.execute(
                "SELECT MAX(rev) FROM changes WHERE dir=? AND rev<?", (dir_id, rev)
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def last_rev(self, memory_dir: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT last_rev FROM dirs WHERE path=?", (normalize_dir(memory_dir),)
            ).fetchone()
        return int(row[0]) if row else 0

    def keep_version(
        self, memory_dir: str, relpath: str, data: bytes, *, note: str
    ) -> int | None:
        """Record `data` as `relpath`'s newest version (cause "edit"); its rev.

        For a save a writer displaced from the disk (a restore that met a
        newer save): it is in the history before it can go. The tree keeps
        its sha with no stat key, so the next record reads the file again.
        None when that was already the recorded version.
        """
        path = normalize_dir(memory_dir)
        sha = sha256(data).digest()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                dir_id = self._dir_id(path, create=True)
                if dir_id is None:  # create=True always gives one
                    raise ValueError(f"no history row for {path}")
                tree = self._tree(path, dir_id)
                old = tree.get(relpath)
                if old is not None and old.sha == sha:
                    self._db.execute("COMMIT")
                    return None
                old_bytes = b"" if old is None or old.blob is None else None
                if old_bytes is None and old is not None and old.blob is not None:
                    old_bytes = self._blob_bytes(old.blob)
                removed, added = _changed_span(old_bytes or b"", data)
                rev = int(
                    self._db.execute(
                        "INSERT INTO changes(dir, at, cause, session, note,"
                        " bytes_added, bytes_removed) VALUES (?, ?, 'edit', NULL,"
                        " ?, ?, ?)",
                        (dir_id, time.time(), note, added, removed),
                    ).lastrowid
                    or 0
                )
                blob = self._store_blob(data, sha, old.blob if old else None)
                kind = "created" if old is None else "modified"
                before = -1 if old is None else old.size
                self._version(
                    dir_id,
                    relpath,
                    rev,
                    blob,
                    kind,
                    None,
                    before,
                    len(data),
                    not data.strip(),
                )
                entry = _Entry(blob, sha, len(data), (len(data), 0, 0, 0), 0)
                self._set_tree(dir_id, relpath, entry)
                tree[relpath] = entry
                self._db.execute("UPDATE dirs SET last_rev=? WHERE id=?", (rev, dir_id))
                self._trees[path] = (rev, tree)
                crash_point()
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback(path)
                raise
        return rev

    # -- retention and purge -------------------------------------------------

    def prune(
        self, memory_dir: str, retention: Retention, *, now: float | None = None
    ) -> int:
        """Apply retention to one directory; return how many versions went.

        Every version younger than `keep_all_days`; then the last one of each
        day for `keep_daily_days`; then none; then, while the directory's
        blobs pass `max_bytes`, the oldest first. The newest version of a
        file that exists is never pruned.
        """
        from memd.history.retention import plan_prune

        now = time.time() if now is None else now
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return 0
            self._db.execute("BEGIN IMMEDIATE")
            try:
                rows = self._db.execute(
                    "SELECT v.relpath, v.rev, c.at, v.blob IS NULL FROM versions v"
                    " JOIN changes c ON c.rev=v.rev WHERE v.dir=? ORDER BY v.rev",
                    (dir_id,),
                ).fetchall()
                existing = {
                    r[0]
                    for r in self._db.execute(
                        "SELECT relpath FROM tree WHERE dir=?", (dir_id,)
                    )
                }
                sizes = self._version_sizes(dir_id)
                doomed = plan_prune(
                    [(rel, rev, at, bool(gone)) for rel, rev, at, gone in rows],
                    existing=existing,
                    sizes=sizes,
                    now=now,
                    keep_all_seconds=retention.keep_all_days * 86400.0,
                    keep_daily_seconds=retention.keep_daily_days * 86400.0,
                    max_bytes=retention.max_bytes,
                )
                self._delete_versions(dir_id, doomed)
                self._db.execute(
                    "UPDATE dirs SET pruned_at=? WHERE id=?", (now, dir_id)
                )
                crash_point()
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback(normalize_dir(memory_dir))
                raise
            crash_point()
            return len(doomed)

    def pruned_at(self, memory_dir: str) -> float:
        with self._lock:
            row = self._db.execute(
                "SELECT pruned_at FROM dirs WHERE path=?", (normalize_dir(memory_dir),)
            ).fetchone()
        return float(row[0]) if row else 0.0

    def _version_sizes(self, dir_id: int) -> dict[tuple[str, int], int]:
        """(relpath, rev) -> stored bytes of its blob (each blob at its first use)."""
        sizes: dict[tuple[str, int], int] = {}
        seen: set[int] = set()
        for rel, rev, blob, stored in self._db.execute(
            "SELECT v.relpath, v.rev, v.blob, length(b.data) FROM versions v"
            " LEFT JOIN blobs b ON b.id=v.blob WHERE v.dir=? ORDER BY v.rev",
            (dir_id,),
        ):
            if blob is None or blob in seen:
                sizes[(rel, rev)] = 0
                continue
            seen.add(blob)
            sizes[(rel, rev)] = int(stored or 0)
        return sizes

    def _delete_versions(self, dir_id: int, doomed: Iterable[tuple[str, int]]) -> None:
        """Delete version rows, then changes left empty, then unreferenced blobs."""
        self._db.executemany(
            "DELETE FROM versions WHERE dir=? AND relpath=? AND rev=?",
            [(dir_id, rel, rev) for rel, rev in doomed],
        )
        self._db.execute(
            "DELETE FROM changes WHERE dir=? AND rev NOT IN"
            " (SELECT rev FROM versions WHERE dir=?)",
            (dir_id, dir_id),
        )
        self._collect_blobs()

    def _collect_blobs(self) -> int:
        """Delete blobs nothing refers to; re-encode in full any delta built on one."""
        doomed = {
            int(r[0])
            for r in self._db.execute(
                "SELECT id FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM versions v"
                " WHERE v.blob=b.id) AND NOT EXISTS (SELECT 1 FROM tree t WHERE"
                " t.blob=b.id)"
            )
        }
        if not doomed:
            return 0
        marks = ",".join("?" * len(doomed))
        children = [
            int(r[0])
            for r in self._db.execute(
                f"SELECT id FROM blobs WHERE base IN ({marks})",  # noqa: S608 -- only ? placeholders
                tuple(doomed),
            )
            if int(r[0]) not in doomed
        ]
        for child in children:
            data = self._blob_bytes(child)
            self._db.execute(
                "UPDATE blobs SET data=?, base=NULL, depth=0 WHERE id=?",
                (codec.encode(data), child),
            )
        self._db.executemany(
            "DELETE FROM blobs WHERE id=?", [(blob,) for blob in doomed]
        )
        self._decoded.clear()
        return len(doomed)

    def lineage(self, memory_dir: str, relpath: str) -> list[tuple[str, int]]:
        """(relpath, rev) of every version of `relpath`, and of the file it was
        renamed from, up to that rename, and so on back (its whole past)."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return []
            found: list[tuple[str, int]] = []
            pending: list[tuple[str, int]] = [(relpath, (1 << 63) - 1)]
            seen: set[tuple[str, int]] = set()
            while pending and len(seen) < 4096:  # a rename chain is short
                name, upto = pending.pop()
                if (name, upto) in seen:
                    continue
                seen.add((name, upto))
                for rev, kind, old in self._db.execute(
                    "SELECT rev, kind, old_relpath FROM versions"
                    " WHERE dir=? AND relpath=? AND rev<=?",
                    (dir_id, name, upto),
                ).fetchall():
                    found.append((name, int(rev)))
                    if kind == "renamed" and old:
                        pending.append((str(old), int(rev)))
            return sorted(set(found), key=lambda item: (item[1], item[0]))

    def renamed_to(self, memory_dir: str, relpath: str) -> list[str]:
        """The names `relpath` was renamed to (its later versions live on there)."""
        with self._lock:
            dir_id = self._dir_id(normalize_dir(memory_dir))
            return sorted(
                {
                    str(row[0])
                    for row in self._db.execute(
                        "SELECT relpath FROM versions WHERE dir=? AND kind='renamed'"
                        " AND old_relpath=?",
                        (dir_id, relpath),
                    )
                }
            )

    def purge_path(self, memory_dir: str, relpath: str) -> int:
        """Remove every version of `relpath`, under its old names too; how many went.

        The file's last recorded sha stays (a hash, not its bytes), so a file
        still on disk is not recorded again until it changes.
        """
        path = normalize_dir(memory_dir)
        doomed = self.lineage(path, relpath)
        with self._lock:
            dir_id = self._dir_id(path)
            if dir_id is None:
                return 0
            markers = {
                (str(rel), int(rev))
                for rel, rev in self._db.execute(
                    "SELECT relpath, rev FROM versions WHERE dir=? AND kind=?",
                    (dir_id, _MOVED_AWAY),
                )
            }
            self._purge(path, dir_id, doomed, {relpath})
            return sum(1 for item in doomed if item not in markers)

    def purge_secret(self, fingerprint: str) -> list[tuple[str, str, int]]:
        """Remove every version holding the S001 secret `fingerprint`.

        Returns (memory dir, relpath, how many versions) for each file touched.
        """
        from memd.lint.secrets import find_secrets_in_bytes

        hits: list[tuple[str, str, int]] = []
        with self._lock:
            holding = [
                int(r[0])
                for r in self._db.execute("SELECT id FROM blobs ORDER BY id")
                if any(
                    f.fingerprint == fingerprint
                    for f in find_secrets_in_bytes(self._blob_bytes(int(r[0])))
                )
            ]
            if not holding:
                return []
            marks = ",".join("?" * len(holding))
            for path, dir_id in list(
                self._db.execute("SELECT path, id FROM dirs ORDER BY path")
            ):
                rows = [
                    (str(r[0]), int(r[1]))
                    for r in self._db.execute(
                        "SELECT relpath, rev FROM versions WHERE dir=?"  # noqa: S608 -- only ? placeholders
                        f" AND blob IN ({marks})",
                        (dir_id, *holding),
                    )
                ]
                tree_rels = {
                    str(r[0])
                    for r in self._db.execute(
                        f"SELECT relpath FROM tree WHERE dir=? AND blob IN ({marks})",  # noqa: S608 -- only ? placeholders
                        (dir_id, *holding),
                    )
                }
                if not rows and not tree_rels:
                    continue
                self._purge(path, int(dir_id), rows, tree_rels)
                counts: dict[str, int] = {}
                for rel, _ in rows:
                    counts[rel] = counts.get(rel, 0) + 1
                hits += [(path, rel, n) for rel, n in sorted(counts.items())]
        return hits

    def _purge(
        self, path: str, dir_id: int, doomed: list[tuple[str, int]], tree_rels: set[str]
    ) -> int:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for rel in tree_rels:
                self._db.execute(
                    "UPDATE tree SET blob=NULL WHERE dir=? AND relpath=?", (dir_id, rel)
                )
            self._delete_versions(dir_id, doomed)
            crash_point()
            self._db.execute("COMMIT")
        except BaseException:
            self._rollback(path)
            raise
        self._trees.pop(path, None)
        crash_point()
        self.compact()
        return len(doomed)

    def compact(self) -> None:
        """VACUUM and truncate the WAL: no freed page keeps old bytes."""
        with self._lock:
            self._db.execute("VACUUM")
            crash_point()
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            crash_point()

    def stored_bytes(self, memory_dir: str | None = None) -> int:
        """Compressed bytes of the blobs (of one directory, each blob once)."""
        with self._lock:
            if memory_dir is None:
                row = self._db.execute("SELECT SUM(length(data)) FROM blobs").fetchone()
                return int(row[0] or 0)
            dir_id = self._dir_id(normalize_dir(memory_dir))
            if dir_id is None:
                return 0
            return sum(self._version_sizes(dir_id).values())

    def every_blob(self) -> Iterable[bytes]:
        """Every stored content, decoded (the purge test reads them all)."""
        with self._lock:
            ids = [int(r[0]) for r in self._db.execute("SELECT id FROM blobs")]
            return [self._blob_bytes(blob) for blob in ids]


def _by_relpath(file: FileChange) -> str:
    return file.relpath


__all__ = [
    "MAX_FILE_BYTES",
    "Change",
    "FileChange",
    "History",
    "HistoryUnusableError",
    "LossRecord",
    "Retention",
]
