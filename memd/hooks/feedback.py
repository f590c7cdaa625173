"""Claude Code hooks: tell the agent, in its own session, what is wrong with its memory.

Payloads follow Claude Code's hook input schema: every event carries
`session_id`, `transcript_path`, `cwd` and `hook_event_name`; `PostToolUse`
adds `tool_name`, `tool_input` and `tool_response`. Outputs are the JSON
Claude Code reads from a hook's stdout on exit 0:

- SessionStart: `{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": ...}}` adds context the model sees from the start.
- PostToolUse: `{"decision": "block", "reason": ...}` feeds `reason` back to the
  model after the tool ran, so it repairs the file in the same turn.

Each function returns the output as a dict, or None when there is nothing to
say; the command prints it. Hooks must never break a session, so the command,
not this module, turns any failure into "print nothing, exit 0".
"""

from __future__ import annotations

import os

from memd.diagnostics import Diagnostic, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.config import Config

WRITING_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Index findings the model must hear about at session start: entries silently
# not loaded, links to nothing, and memories that will not be recalled.
SESSION_START_CODES = frozenset({"I002", "I003", "I005"})
MAX_FINDINGS = 12


def touched_paths(
    payload: Mapping[str, object], memory_dirs: Iterable[str]
) -> tuple[str, ...]:
    """Return the absolute paths the tool call may have written inside `memory_dirs`.

    Write/Edit/MultiEdit name their file. A Bash command is opaque, so memd is
    conservative: a command that mentions a memory directory counts as having
    touched that directory's index (which re-checks the whole directory).
    """
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return ()
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) else None
    if tool in WRITING_TOOLS:
        raw = tool_input.get("file_path") or tool_input.get("notebook_path")
        if not isinstance(raw, str) or not raw:
            return ()
        path = raw if os.path.isabs(raw) or cwd is None else os.path.join(cwd, raw)
        return (os.path.normpath(path),)
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return ()
        touched = []
        for directory in memory_dirs:
            bare = directory.rstrip(os.sep)
            if bare and bare in command:
                touched.append(os.path.join(bare, "MEMORY.md"))
        return tuple(touched)
    return ()


def containing_memory_dir(path: str, memory_dirs: Iterable[str]) -> str | None:
    """Return the memory directory `path` lies in, or None (compared after realpath)."""
    real = os.path.realpath(path)
    for directory in memory_dirs:
        root = os.path.realpath(directory.rstrip(os.sep) or os.sep)
        if real == root or real.startswith(root + os.sep):
            return directory
    return None


def describe(diagnostic: Diagnostic) -> str:
    """One line a model can act on: place, rule, message and the fix."""
    place = (
        diagnostic.path
        if diagnostic.line is None
        else f"{diagnostic.path}:{diagnostic.line}"
    )
    fix = f" Fix: {diagnostic.hint}" if diagnostic.hint else ""
    return f"- {place} [{diagnostic.code} {diagnostic.name}] {diagnostic.message}{fix}"


def session_start_findings(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The findings worth a model's attention at the start of a session."""
    return tuple(
        d
        for d in diagnostics
        if d.severity is Severity.ERROR or d.code in SESSION_START_CODES
    )


def session_start_context(
    memory_dir: str, findings: tuple[Diagnostic, ...], prompt: str | None
) -> str | None:
    """The `additionalContext` text, or None when there is nothing to add."""
    parts = []
    if prompt:
        parts.append(prompt.rstrip("\n"))
    if findings:
        lines = [describe(d) for d in findings[:MAX_FINDINGS]]
        if len(findings) > MAX_FINDINGS:
            lines.append(
                f"- … and {len(findings) - MAX_FINDINGS} more "
                f"(run `memd lint {memory_dir}`)"
            )
        parts.append(
            f"memd found problems in your auto memory at `{memory_dir}`; "
            "fix them when convenient:\n" + "\n".join(lines)
        )
    return "\n\n".join(parts) or None


def block_reason(memory_dir: str, errors: tuple[Diagnostic, ...]) -> str:
    """The `reason` fed back to the model when its memory write left errors."""
    lines = [describe(d) for d in errors[:MAX_FINDINGS]]
    if len(errors) > MAX_FINDINGS:
        lines.append(f"- … and {len(errors) - MAX_FINDINGS} more")
    return (
        f"The memory file you just wrote in `{memory_dir}` will not load or be "
        "recalled as intended. Repair it now:\n" + "\n".join(lines)
    )


def session_start(
    payload: Mapping[str, object], config: Config, *, inject_prompt: bool = False
) -> dict[str, object] | None:
    """Handle SessionStart: the findings (and optionally the prompt) as context."""
    from memd.snapshot.serve import serve

    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return None
    mode = "kairos" if config.kairos else "team" if config.team_memory else "standard"
    served = serve(cwd, mode, config, os.environ)
    if not served.enabled:
        return None
    context = session_start_context(
        served.location.memory_dir,
        session_start_findings(served.diagnostics()),
        served.text if inject_prompt else None,
    )
    if context is None:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    }


def post_tool_use(
    payload: Mapping[str, object], config: Config
) -> dict[str, object] | None:
    """Handle PostToolUse: block with the errors a memory write left behind."""
    memory_dirs = candidate_memory_dirs(payload.get("cwd"))
    errors: list[Diagnostic] = []
    checked: set[str] = set()
    for path in touched_paths(payload, memory_dirs):
        memory_dir = containing_memory_dir(path, memory_dirs)
        if memory_dir is None or memory_dir in checked:
            continue
        checked.add(memory_dir)
        relpath = os.path.relpath(os.path.realpath(path), os.path.realpath(memory_dir))
        relpath = relpath.replace(os.sep, "/")
        for diagnostic in lint_memory_dir(memory_dir, config=config):
            if diagnostic.severity is not Severity.ERROR:
                continue
            # The written file, plus index-wide errors it can cause (over budget).
            if diagnostic.path == relpath or diagnostic.code.startswith("I"):
                errors.append(diagnostic)
        if errors:
            return {
                "decision": "block",
                "reason": block_reason(memory_dir, tuple(errors)),
            }
    return None


def candidate_memory_dirs(cwd: object) -> tuple[str, ...]:
    """Every memory directory a tool call from `cwd` might write into."""
    from memd.agent.paths import resolve_memory_location
    from memd.lint.targets import discover_memory_dirs

    found: list[str] = []
    if isinstance(cwd, str) and os.path.isdir(cwd):
        location = resolve_memory_location(cwd)
        if location.enablement.enabled:
            found.append(location.memory_dir)
    found.extend(d + os.sep for d in discover_memory_dirs())
    return tuple(dict.fromkeys(found))


def lint_memory_dir(memory_dir: str, *, config: Config) -> tuple[Diagnostic, ...]:
    """Lint one memory directory with memd's configured severities."""
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    memdir = load_memdir(
        memory_dir.rstrip(os.sep) or os.sep, max_file_bytes=config.max_topic_file_bytes
    )
    return lint_memdir(
        memdir,
        severities=config.lint_severities,
        why_labels=config.why_labels,
        how_labels=config.how_labels,
    )
