"""What the agent (Claude Code) does, as a compatibility contract.

Where memory lives (paths, git root, settings, enablement), JavaScript string
semantics, the index truncation, the prompt and its wording, and the recall
manifest. Pure functions of their inputs plus the few reads the agent itself
makes (settings files, `.git`); nothing here writes.

May import: the standard library, `memd.errors`, `memd.diagnostics`.
"""
