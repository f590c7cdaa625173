"""The losses the history keeps: the store's side of the loss alarm.

`LossLedger` is a part of `memd.history.store.History` (its base class),
cut out so the store stays the store: for a change that removed something it
gathers the burst (the files the burst's changes touched, what each held
before and holds now) and hands it to `memd.history.loss.judge`, which
decides; it keeps each loss in the `losses` table with the (relpath,
revision) pairs it took, folds the earlier losses of a burst into the last,
and settles a loss restored (every file it took back, byte for byte) or
dismissed. The rule itself is all in `memd.history.loss`.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

from memd import fastjson
from memd.history import loss as loss_rule
from memd.history.wording import MERGED, OPEN, RESTORED

# The kind of a versions row for the old name of a rename (the store's table):
# its bytes live on under the new name, so it is never lost.
RENAMED_AWAY = "renamed-away"

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    import threading
    from collections.abc import Iterable

    from memd.history.store import _Entry


@dataclass(frozen=True, slots=True, kw_only=True)
class LossRecord:
    """A kept loss: when, by what, what it took, and whether it was settled."""

    rev: int
    memory_dir: str
    at: float
    cause: str
    sentence: str
    taken: tuple[tuple[str, int], ...]  # (relpath, revision of what it held)
    state: str  # memd.history.wording: OPEN, RESTORED, DISMISSED
    settled_at: float | None
    first_rev: int  # the burst's first change

    def to_dict(self) -> dict[str, object]:
        return {
            "rev": self.rev,
            "memory_dir": self.memory_dir,
            "at": self.at,
            "cause": self.cause,
            "sentence": self.sentence,
            "taken": [list(pair) for pair in self.taken],
            "state": self.state,
            "settled_at": self.settled_at,
        }


def _taken(raw: object) -> tuple[tuple[str, int], ...]:
    """The `taken` column back: (relpath, revision) pairs; () when unreadable."""
    try:
        value = fastjson.loads(str(raw), max_depth=3)
    except ValueError:
        return ()
    if not isinstance(value, list):
        return ()
    return tuple(
        (pair[0], pair[1])
        for pair in value
        if isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], int)
    )


class LossLedger:
    """The loss half of `History`: judge a change's burst, keep and settle losses."""

    _db: sqlite3.Connection
    _lock: threading.RLock

    if TYPE_CHECKING:  # History's own, which these methods read through

        def _dir_id(self, path: str, *, create: bool = False) -> int | None: ...
        def _file_at_id(self, dir_id: int, relpath: str, rev: int) -> bytes | None: ...
        def _blob_bytes(self, blob: int) -> bytes: ...
        def _tree_bytes(self, entry: _Entry | None) -> bytes | None: ...

    def _judge_change(
        self,
        dir_id: int,
        rev: int,
        when: float,
        cause: str,
        removed: int,
        tree: dict[str, _Entry],
        memory_dir: str = "",
    ) -> loss_rule.Loss | None:
        """Judge the change `rev` just recorded (in its transaction); keep its loss."""
        if not loss_rule.may_be_loss(cause, removed):
            return None
        judged = self._judge(dir_id, rev, when, cause, tree, memory_dir)
        if judged is None:
            return None
        loss, first = judged
        self._keep_loss(dir_id, rev, first, loss)
        return loss

    def _judge(
        self,
        dir_id: int,
        rev: int,
        when: float,
        cause: str,
        tree: dict[str, _Entry],
        memory_dir: str,
    ) -> tuple[loss_rule.Loss, int] | None:
        """Gather this change's burst for `memd.history.loss.judge`, which decides;
        (the loss, the burst's first revision) or None."""
        causes = loss_rule.burst_causes(cause) or (cause,)
        marks = ",".join("?" * len(causes))
        first = rev
        if loss_rule.burst_causes(cause):
            found = self._db.execute(
                "SELECT MIN(rev) FROM changes WHERE dir=? AND rev<? AND at>=?"  # noqa: S608 -- only ? placeholders
                f" AND bytes_removed>0 AND cause IN ({marks})",
                (dir_id, rev, when - loss_rule.BURST_SECONDS, *causes),
            ).fetchone()
            if found and found[0] is not None:
                first = int(found[0])
        # Each file the burst's changes touched, with the kind of its last touch
        # (SQLite's bare column beside MAX(): the newest row's).
        last_kind = self._db.execute(
            "SELECT v.relpath, v.kind, MAX(v.rev) FROM versions v JOIN changes c"  # noqa: S608 -- only ? placeholders
            " ON c.rev=v.rev WHERE v.dir=? AND v.rev>=? AND v.rev<=?"
            f" AND (c.cause IN ({marks}) OR v.rev=?) GROUP BY v.relpath",
            (dir_id, first, rev, *causes, rev),
        ).fetchall()
        fates = []
        for rel, kind, _ in sorted(last_kind):
            if kind == RENAMED_AWAY or not loss_rule.is_memory_file(rel):
                continue  # renamed away: its bytes live on under the new name
            fate = self._fate(dir_id, rel, first, rev, tree)
            if fate is not None:
                fates.append(fate)
        if not fates:
            return None

        def after(rel: str) -> bytes | None:
            return self._tree_bytes(tree.get(rel))

        def everything_after() -> Iterable[bytes]:  # facts live in Markdown
            return (
                data
                for rel, entry in list(tree.items())
                if rel.endswith(".md") and (data := self._tree_bytes(entry)) is not None
            )

        verdict = loss_rule.judge(
            loss_rule.Burst(
                cause=cause,
                files=tuple(fates),
                memory_dir=memory_dir,
                read_before=lambda rel: self._file_at_id(dir_id, rel, first - 1),
                existed_before=functools.cache(
                    lambda: self._relpaths_at(dir_id, first - 1)
                ),
                read_after=after,
                exists_after=lambda: frozenset(tree),
                everything_after=everything_after,
            )
        )
        return None if verdict is None else (verdict, first)

    def _fate(
        self, dir_id: int, rel: str, first: int, rev: int, tree: dict[str, _Entry]
    ) -> loss_rule.FileFate | None:
        """What `rel` held before the burst took it (at the burst's start, or its
        last version with content inside the burst), and what it holds now."""
        after = self._tree_bytes(tree.get(rel))
        versions = (
            "SELECT v.rev, v.blob, c.cause FROM versions v JOIN changes c"
            " ON c.rev=v.rev WHERE v.dir=? AND v.relpath=? AND v.rev>=? AND v.rev<?"
            " ORDER BY v.rev DESC LIMIT ?"
        )
        start = self._db.execute(versions, (dir_id, rel, 0, first, 1)).fetchall()
        inside = self._db.execute(versions, (dir_id, rel, first, rev, 8)).fetchall()
        for found_rev, blob, by in start + inside:
            if blob is None:
                continue
            before = self._blob_bytes(int(blob))
            if before.strip() and before != after:
                return loss_rule.FileFate(
                    relpath=rel,
                    before=before,
                    before_rev=int(found_rev),
                    after=after,
                    memd_wrote=by in loss_rule.OWN_CAUSES,
                )
        return None

    def _relpaths_at(self, dir_id: int, rev: int) -> frozenset[str]:
        """The relpaths the directory held as of `rev`."""
        return frozenset(
            str(rel)
            for rel, blob, _ in self._db.execute(
                "SELECT relpath, blob, MAX(rev) FROM versions WHERE dir=? AND rev<=?"
                " GROUP BY relpath",
                (dir_id, rev),
            )
            if blob is not None
        )

    def _keep_loss(
        self, dir_id: int, rev: int, first: int, loss: loss_rule.Loss
    ) -> None:
        """Keep a loss with what it took; the earlier ones of its burst fold into it."""
        self._db.execute(
            "UPDATE losses SET state=? WHERE dir=? AND state=? AND rev>=? AND rev<?",
            (MERGED, dir_id, OPEN, first, rev),
        )
        self._db.execute(
            "INSERT OR REPLACE INTO losses(rev, dir, first_rev, sentence, taken, state)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                rev,
                dir_id,
                first,
                loss.sentence,
                fastjson.dumps([list(pair) for pair in loss.taken]),
                OPEN,
            ),
        )

    def _settle_restored(
        self, dir_id: int, tree: dict[str, _Entry], when: float
    ) -> tuple[int, ...]:
        """Mark restored each open loss of the directory whose files are all back."""
        back = []
        for rev, taken in self._db.execute(
            "SELECT rev, taken FROM losses WHERE dir=? AND state=?", (dir_id, OPEN)
        ).fetchall():
            pairs = _taken(taken)
            if pairs and all(
                (entry := tree.get(rel)) is not None
                and entry.sha == self._sha_at(dir_id, rel, at)
                for rel, at in pairs
            ):
                back.append(int(rev))
        for rev in back:
            self._settle(rev, RESTORED, when)
        return tuple(back)

    def sha_at(self, memory_dir: str, relpath: str, rev: int) -> bytes | None:
        """The sha256 of `relpath`'s version recorded at exactly `rev`, or None.

        `memory_dir` as the store spells it (`memd.history.store.normalize_dir`).
        """
        with self._lock:
            dir_id = self._dir_id(memory_dir)
            return None if dir_id is None else self._sha_at(dir_id, relpath, rev)

    def _sha_at(self, dir_id: int, relpath: str, rev: int) -> bytes | None:
        row = self._db.execute(
            "SELECT b.sha FROM versions v JOIN blobs b ON b.id=v.blob"
            " WHERE v.dir=? AND v.relpath=? AND v.rev=?",
            (dir_id, relpath, rev),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def _settle(self, rev: int, state: str, when: float) -> None:
        self._db.execute(
            "UPDATE losses SET state=?, settled_at=? WHERE rev=?", (state, when, rev)
        )

    # -- losses --------------------------------------------------------------

    def losses(
        self,
        *,
        since: float | None = None,
        rev: int | None = None,
    ) -> list[LossRecord]:
        """The kept losses, newest first (those folded into a later one left out)."""
        where: list[str] = ["l.state!=?"]
        params: list[object] = [MERGED]
        if since is not None:
            where.append("c.at>=?")
            params.append(since)
        if rev is not None:
            where, params = ["l.rev=?"], [rev]
        with self._lock:
            rows = self._db.execute(
                "SELECT l.rev, d.path, c.at, c.cause, l.sentence, l.taken, l.state,"  # noqa: S608 -- constants and ? only
                " l.settled_at, l.first_rev FROM losses l JOIN changes c ON"
                " c.rev=l.rev JOIN dirs d ON d.id=l.dir"
                f" WHERE {' AND '.join(where)} ORDER BY l.rev DESC",
                params,
            ).fetchall()
        return [
            LossRecord(
                rev=int(r[0]),
                memory_dir=str(r[1]),
                at=float(r[2]),
                cause=str(r[3]),
                sentence=str(r[4]),
                taken=_taken(r[5]),
                state=str(r[6]),
                settled_at=None if r[7] is None else float(r[7]),
                first_rev=int(r[8]),
            )
            for r in rows
        ]

    def loss(self, rev: int) -> LossRecord | None:
        """The loss kept at revision `rev`, or None."""
        found = self.losses(rev=rev)
        return found[0] if found else None

    def settle_loss(self, rev: int, state: str, *, at: float | None = None) -> bool:
        """Mark loss `rev` restored or dismissed; False when there is no such loss."""
        with self._lock:
            if self.loss(rev) is None:
                return False
            self._settle(rev, state, time.time() if at is None else at)
            return True
