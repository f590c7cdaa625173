"""How much session-start context each agent passes on whole, in UTF-8 bytes.

Read by the SessionStart hook before anything else of `memd.agents` is
imported (the hook's warm path stays as cheap as Claude Code's own), and by
each agent's module for its `Agent.context_limit_bytes`.

- Claude Code: 10,000 characters of a hook's context (`memd.hooks.wording`).
- Codex CLI: 2,500 of its tokens, a token counted as 4 bytes; past that the
  text is cut to a preview and saved under `$CODEX_HOME/hook_outputs/`
  (hooks/src/output_spill.rs in 0.171.0).
- Gemini CLI: no limit of its own in 0.61.0; memd keeps to the same budget,
  so one memory costs every agent the same.
"""

CONTEXT_LIMIT_BYTES = {"claude-code": 10_000, "codex": 10_000, "gemini": 10_000}
