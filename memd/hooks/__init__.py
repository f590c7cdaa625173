"""Agent hooks: what SessionStart and PostToolUse feed back, and their settings.

`session_state` keeps each session's record (the memory directory's stat, its
errors, what was said) in the state dir; `fastpath` answers the common calls
from that record and a warm snapshot by `stat` alone; `feedback` takes the long
way (lint, then tell what this tool call caused from what was already there);
`wording` is what the model reads; `settings` merges memd's hooks into the
agent's settings file and takes them out again (pure).

May import: `memd.claude_code`, `memd.projects`, `memd.memory`, `memd.lint`,
`memd.snapshot`, `memd.history`, `memd.truth`, the shared modules.
"""
