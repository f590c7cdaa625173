"""`memd run`: watcher, settling, discovery, status, notify, the composition root.

`discovery` finds the memory directories to watch; `watcher` turns watchdog
events into changes (the only module that imports watchdog) and `settle`
coalesces them into batches; `watched` holds everything known about one
watched directory and rebuilds it; `status` writes `daemon.json`; `notify`
talks to systemd; `run` wires them together.

May import: `memd.agent`, `memd.memory`, `memd.lint`, `memd.snapshot`,
`memd.kairos`, `memd.team`, `memd.recall`, `memd.sync`, the shared top-level
modules.
"""
