"""Memory that stays true: what memory names that the code left behind, duplicates.

`claims` finds the paths and commands a memory names (pure), `scripts` reads
the commands a project defines (pure), `facts` holds a repository at one
`HEAD` and parses git's output (pure), `judge` decides which claims are gone
and what replaced them (pure), `duplicates` finds two topic files saying one
thing (pure); `repo` reads the repository through the one bounded git
runner, cached by `HEAD`, and `check` is what lint, the daemon, the hooks,
MCP and the viewer call (the edges).

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.gitsync`, the shared top-level modules.
"""
