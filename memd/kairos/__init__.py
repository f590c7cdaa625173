"""KAIROS: daily logs, the nightly dream, its schedule and its external command.

`daily_log` appends and rotates `logs/YYYY/MM/YYYY-MM-DD.md`; `consolidate`
plans a dream's edits as pure functions; `dream` runs one under the
directory's lock; `external` runs a user's dream command; `schedule` computes
when dreams are due; `scheduler` runs them through APScheduler (the only
module that imports it).

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.snapshot`, `memd.history`, the shared modules.
"""
