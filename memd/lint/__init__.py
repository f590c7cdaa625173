"""Lint and fix memory: the rule table, the checks, the engine, the formats, the fixes.

`context` holds what a check is given, `rules` the table, `checks_*` the
checks, `engine` runs them over a read directory, `formats` prints findings,
`fixes` plans safe edits, `reach` says what MEMORY.md reaches (hubs
included: the one answer the keeper, lint, fix and the loss alarm share),
`compact` fits an over-long MEMORY.md into hubs
it links (and is the one way memd adds index entries), `targets` turns
command-line paths into directories to lint, and `fix_files` reads what fix
plans from and writes a fix as one undoable change (the edges here).

May import: `memd.claude_code`, `memd.memory`, the shared top-level modules.
"""
