"""Warm prompt snapshots: build, store, publish and serve them, plus telemetry.

`build` turns a read directory into a `Snapshot` (prompt, lint, manifest);
`store` is the cache layout and the warm read path (standard library only);
`publish` writes versions atomically; `serve` resolves a project and returns
a fresh prompt, rendering only when stale; `telemetry` builds the
`memdir_loaded` events and `telemetry_sink` appends them.

May import: `memd.claude_code`, `memd.memory`, `memd.lint`, the shared top-level
modules.
"""
