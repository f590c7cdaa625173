"""Which project each memory directory belongs to, and what a person calls it.

A memory directory is named by its project's folder (`~/code/webshop`), with
the directory itself as detail (SPEC §15). Two roots sharing one directory
are both named; a directory with no known root keeps its path.

- `naming` (core): `ProjectNames`, `project_label`, `tilde`: names from roots, pure.
- `roots` (edge): `roots_by_memory_dir`, `load_project_names`: the roots memd
  learned (`memd prompt`, the hooks, `--project`, sync: the state's
  projects.json; the config's `watch_projects`), the `cwd` the agent's
  transcripts record, and the folder a default directory's name spells; each
  counts only if it resolves back to the directory as the agent resolves it.
- `sessions` (edge): `sessions_by_memory_dir`: how many agent sessions loaded
  each directory (one transcript a session), for stats and the viewer.

May import: `memd.claude_code`, the shared top-level modules.

Every folder a person reads from imports it: history, hooks, kairos,
mcp_server, daemon, ui and cli.
"""
