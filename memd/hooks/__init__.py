"""Agent hooks: what SessionStart and PostToolUse feed back, and their settings.

`feedback` decides what a hook says from the memory it finds; `settings`
merges memd's hooks into the agent's settings and takes them out again (pure).

May import: `memd.agent`, `memd.memory`, `memd.lint`, `memd.snapshot`, the shared
modules.
"""
