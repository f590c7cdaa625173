"""One module per coding agent memd serves: what it reads and how memd wires it.

`claude_code` (Claude Code), `codex` (Codex CLI) and `gemini` (Gemini CLI)
each give one `Agent` (`base.py`): its config files and the edits `memd setup`
makes to them (MCP server, SessionStart hook, what lets memd's read tools run
unasked), what `memd doctor` checks, the memory stores the agent keeps itself
(kept in memd's history, never written but by a restore), the budget of its
session-start context, and its real release on npm (tests/e2e runs it).
Setup, doctor, the daemon and the e2e tests iterate over `all_agents()`.

Claude Code's own rules (where its memory lives, how it loads the index) are
`memd.claude_code`; `claude_code` here is only its wiring.

Config files are edited surgically, every byte memd does not own kept,
comments included: TOML by `toml_text`, JSON and JSONC by `memd.jsonedit`
(through `memd.hooks.settings_file`, which reads and writes them all).

May import: `memd.claude_code`, `memd.lint` (the secret scanner, for the stores),
`memd.hooks` (the Claude Code settings edit),
`memd.mcp_server` (the server entry), `memd.snapshot` (the project's
resolution record), `memd.history` (a store's loss, told at its agent's
SessionStart), the shared modules.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.agents.base import Agent

NAMES = ("claude-code", "codex", "gemini")
_MODULES = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini"}


def get_agent(name: str) -> Agent:
    """The agent called `name` (one of NAMES); `KeyError` for another name."""
    module = importlib.import_module(f"memd.agents.{_MODULES[name]}")
    agent: Agent = module.AGENT
    return agent


def all_agents() -> tuple[Agent, ...]:
    """Every agent memd serves, Claude Code first."""
    return tuple(get_agent(name) for name in NAMES)
