"""The git engine of both syncs: memory folders as the working tree of a remote.

- `git`: the one place memd starts git (hardening, deadlines, redaction);
- `objects`: the tree rule (`read_tree`: safe files and odd entries) and
  writing blobs, trees and commits from bytes, with bounded arguments;
- `layout`: where each repository path lives on this machine;
- `scan`: memd's own walk of a folder (what may travel, what it saw gone);
- `merge`: the pure conflict rules; `merging`: the three-way merge in git;
  `index_budget`: a merged index that would pass the agent's cut is
  compacted inside the merge;
- `apply`: writing a commit into the tree behind a journal, its recovery,
  and the stop before many deletions;
- `result`: what one sync did; `loop`: the one locked sync loop;
- `repo`: making and describing a repository; `lintgate`: what lint keeps
  out of a commit; `backoff`: when the next sync is due.

`memd.team` and `memd.sync` each add their layout, init, status and schedule.

May import: `memd.claude_code`, `memd.memory`, `memd.lint`, `memd.history` (a write into
memory dirs is recorded), the shared top-level modules.
"""
