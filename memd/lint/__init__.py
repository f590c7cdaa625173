"""Lint and fix memory: the rule table, the checks, the engine, the formats, the fixes.

`context` holds what a check is given, `rules` the table, `checks_*` the
checks, `engine` runs them over a read directory, `formats` prints findings,
`fixes` plans safe edits, and `targets` turns command-line paths into
directories to lint (the only module here that reads the filesystem).

May import: `memd.agent`, `memd.memory`, the shared top-level modules.
"""
