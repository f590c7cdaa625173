"""`memd ui`: the local web viewer of every project's memory, served by the daemon.

- `views` (core): what each page shows, from values; every memory text masked
  (S001's secrets) before a template sees it.
- `plots` (core): the telemetry page's SVG plots, drawn on the server.
- `security` (core): the token, the cookie and CSRF values, the Host and Origin
  rules, and the rule for every request parameter.
- `gather` (edge): reads memd's own modules for the pages and runs the two
  actions (Restore through memd.history, Undo through memd.kairos).
- `urlfile` (edge): `ui.json`, where `memd ui` finds the URL and token.
- `app` (wiring): the Starlette routes, the Jinja2 templates, the gate.
- `server` (wiring): the sockets, the token, the thread that starts uvicorn on
  the first connection; `memd run` calls `start_viewer` and `stop`.

The daemon (`memd run`) and the CLI (`memd ui`) import it.

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.snapshot`, `memd.kairos`, `memd.recall`, `memd.team`, `memd.sync`, `memd.history`,
`memd.agents` (other agents' stores), `memd.truth`, and the shared top-level modules.
"""
