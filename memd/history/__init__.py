"""The local history of every memory directory: record, list, restore, purge, alarm.

Every settled change to a watched memory directory (`team/` included) is kept
as a version in one SQLite database under `<state_dir>/history/` (docs/history.md):
blobs deduplicated by sha256 and zlib-compressed, a small edit stored as a zlib
stream primed (`zdict`) with the file's previous version, a full copy every
`codec.FULL_EVERY` versions so no read follows a long chain.

- `codec` (core): encode and decode a version against its base.
- `when` (core): the one parser of `--at` / `--since` times.
- `loss` (core): the loss rule (files deleted or emptied, index entries, bytes).
- `scan` (edge): the bounded, descriptor-relative listing of a memory directory.
- `store` (edge): `History`, `Change`, `FileChange`; record, list, read, prune, purge.
- `record` (edge): `recording(...)`, the writers' wrapper; which session made a change.
- `lock` (edge): the write lock every recorder holds.
- `notice` (edge, `os` only): the loss notices SessionStart tells once.
- `restore` (edge): `restore_file`, `restore_all`, `RestorePlan`; the journal that makes
  `restore --all` all-or-nothing across a kill.

Local only: nothing here is synced or leaves the machine.
May import: `memd.agent`, `memd.projects`, `memd.memory`, `memd.lint`, the shared
top-level modules.

The kairos, team, sync, mcp_server, daemon, hooks and cli folders import it.
"""
