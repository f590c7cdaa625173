"""`memd run`: watcher, settling, discovery, status, notify, the composition root.

`discovery` finds the memory directories to watch; `watcher` turns watchdog
events into changes (with `watchdog_probes`, the only modules that import
watchdog; `watch_plan` plans the watches, `flood` decides what to shed) and
`settle` coalesces them into batches; `watched` holds everything known about
one watched directory and rebuilds it; `rebuild` decides what a batch
rebuilds, `sweep` when to sweep and retry native watching, `reload` what a
new config or profile redoes; `status` builds and writes `daemon.json`;
`recall_feed` feeds the recall index; `notify` talks to systemd; `run`
wires them together and decides nothing.

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.snapshot`, `memd.kairos`, `memd.gitsync`, `memd.team`, `memd.recall`, `memd.sync`,
`memd.history`, `memd.ui` (the viewer), `memd.agents` (other agents' stores),
`memd.truth`, the shared top-level modules.
"""
