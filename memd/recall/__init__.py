"""Offline recall: a SQLite FTS5 index over every memory directory, and its ranking.

`text` turns memory and queries into FTS5 terms (CJK runs into bigrams,
stopwords out) and cuts snippets, as pure functions; `store` opens the one
database in memd's cache directory (WAL, rebuilt when corrupt or deleted,
never through a link); `index` builds and updates it from a read `MemDir`
(the daemon's pass, `RecallUpdater`) or by `stat` (the CLI's refresh);
`query` searches it and ranks with BM25 plus a small recency term.

May import: `memd.claude_code`, `memd.memory`, `memd.lint` (its `secrets`, to mask
snippets), `memd.snapshot` (its light `store`),
the shared top-level modules, the standard library's `sqlite3`.
"""
