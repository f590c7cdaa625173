"""Searching the recall index: BM25 over name, description and body, with recency.

`RecallSearch.search` ranks one query's matches (`WEIGHTS`, then a small
recency factor from `memd.recall.text`), narrowing a few directories inside
FTS5 by their `scope` tokens and reading bodies only for the candidates.
`memd.recall.index.recall` refreshes the directories first: this module
knows nothing of updates, so the two never import each other.
"""

from __future__ import annotations

import time

from memd.lint.secrets import mask_secrets
from memd.recall.store import (
    RecallDatabase,
    from_db,
    scope_token,
)
from memd.recall.text import match_expression, query_terms, recency_factor, snippet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

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
_NS_PER_DAY = 86_400 * 1_000_000_000


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


class RecallSearch(RecallDatabase):
    """A recall database that answers queries, best first."""

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
                scopes = " OR ".join(scope_token(i) for i in ids)
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
                relpath=from_db(relpath),
                name=name,
                type=kind_,
                description=description,
                snippet=_snippet_of(body or "", description or "", terms),
                score=round(score, 6),
                mtime_ns=mtime_ns or 0,
            )
            for score, path, relpath, name, kind_, description, body, mtime_ns in best
        )


def _snippet_of(body: str, description: str, terms: tuple[str, ...]) -> str:
    body, description = mask_secrets(body), mask_secrets(description)  # whole, then cut
    lowered = body.lower()
    if description and not any(t in lowered for t in terms):
        return snippet(description, terms)
    return snippet(body, terms)
