"""The `memd` command line: `main` dispatches to one module per command.

`main` tries the warm `memd prompt` path before argparse is imported; each
module in `commands` adds its arguments and runs. CLI errors are one line on
stderr and a non-zero exit.

May import: every folder (`memd.claude_code`, `memd.projects`, `memd.memory`,
`memd.lint`, `memd.snapshot`, `memd.kairos`, `memd.hooks`, `memd.daemon`,
`memd.service`, `memd.gitsync`, `memd.team`, `memd.recall`, `memd.mcp_server`,
`memd.sync`, `memd.history`, `memd.ui`, `memd.agents`, `memd.truth`) and the shared
top-level modules.
"""
