"""The local history of every memory directory: record, list, restore, purge, alarm.

Every settled change to a watched memory directory (`team/` included) is kept
as a version in one SQLite database under `<state_dir>/history/` (docs/history.md):
blobs deduplicated by sha256 and zlib-compressed, a small edit stored as a zlib
stream primed (`zdict`) with the file's previous version, a full copy every
`codec.FULL_EVERY` versions so no read follows a long chain.

- `codec` (core): encode and decode a version against its base.
- `when` (core): the one parser of `--at` / `--since` times.
- `loss` (core): the whole loss rule (files deleted or emptied, what MEMORY.md
  reaches; memd's own changes judged by reachability and where each fact went).
- `wording` (core): every sentence the loss alarm says.
- `scan` (edge): the bounded, descriptor-relative listing of a memory directory.
- `store` (edge): `History`, `Change`, `FileChange`; record, list, read, prune, purge.
- `ledger` (edge): the losses the store keeps (`History`'s base): gathers a burst
  for `loss.judge`, keeps each loss with what it took, settles it.
- `record` (edge): `recording(...)`, the writers' wrapper; which session made a change.
- `lock` (edge): the write lock every recorder holds.
- `notice` (edge, `os` only): the loss notices SessionStart tells once.
- `report` (edge): the losses `memd status` and the viewer show, in their state.
- `restore` (edge): `restore_file`, `restore_all`, `restore_loss`, `RestorePlan`;
  the journal that makes `restore --all` all-or-nothing across a kill; the swap
  that never loses a save.
- `copies` (edge): the other places memd keeps memory bytes, and purging them.

Local only: nothing here is synced or leaves the machine.
May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`, the shared
top-level modules.

The kairos, team, sync, mcp_server, daemon, hooks and cli folders import it.
"""
