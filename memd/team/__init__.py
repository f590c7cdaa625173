"""Team memory through git: a project's `memory/team/` as a working tree of a remote.

The git engine (`memd.gitsync`) does the merging, the journal and the tree
rule; here is team's own part: `sync` runs the engine's loop with the whole
team dir as one folder and commits what lints; `state` keeps each team dir's
last result and backoff; `schedule` is what the daemon calls; `conflicts`
lists the copies that still wait for a person, for `memd status`, lint and
the SessionStart hook.

May import: `memd.claude_code`, `memd.memory`, `memd.lint`, `memd.gitsync`, the
shared top-level modules.
"""
