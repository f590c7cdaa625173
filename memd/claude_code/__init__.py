"""What the agent (Claude Code) does, as a compatibility contract.

Where memory lives (paths, git root, settings, enablement), JavaScript string
semantics, the index truncation, the prompt and its wording, and the recall
manifest. Pure functions of their inputs plus the few reads the agent itself
makes (settings files, `.git`); nothing here writes.

Each supported release is one `AgentProfile` (`profile.py`); everything here
that differs between releases asks a profile. `choice.py` is the one edge: it
picks the profile in force (config pin, or `claude --version`, cached).

May import: the standard library, `memd.errors`, `memd.diagnostics`;
`choice.py` also `memd.atomic`.
"""
