"""Personal sync: a user's memory for every project, through their own git remote.

`identity` derives a project's stable identity (the pure rules are in
`memd.claude_code.identity`) by asking the hardened git of `memd.gitsync.git`;
`tree` is the repository's layout and path rule; `engine` keeps one
repository in the state dir whose ``projects/<identity>/`` folders are
placed in each project's memory dir on this machine, and runs the git
engine's one sync loop (`memd.gitsync.loop.locked_sync`, with a `Layout`)
over them; `claims` gives each night's dream to one machine; `schedule` is
what `memd sync` and the daemon call; `status` is the state as data; `pull`
is the SessionStart hook's bounded pull.

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.gitsync`, the shared top-level modules.
"""
