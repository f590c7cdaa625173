"""What the hooks say to the model: one line per finding, naming file, rule and fix.

Findings arrive as plain mappings in `Diagnostic.to_dict()`'s shape (what the
snapshot's diagnostics.json holds), so the warm SessionStart path words them
without importing `memd.diagnostics` and `dataclasses`.

Claude Code moves any `additionalContext` over 10,000 characters into a file
and shows the model only a 2,000-character preview, so every context built
here stays under `MAX_CONTEXT_UNITS` UTF-16 units (JavaScript string length).
"""

from __future__ import annotations

from memd.claude_code.jscompat import js_trim, utf16_len
from memd.claude_code.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    Finding = Mapping[str, object]

MAX_CONTEXT_UNITS = 9_500  # under Claude Code's 10,000, with room for its wrapper
MAX_FINDINGS = 12
# Index findings the model must hear about at session start: entries silently
# not loaded, links to nothing, and memories that will not be recalled.
SESSION_START_CODES = frozenset({"I002", "I003", "I005", "T001"})  # T001: team
# Index errors and the measure that tells whether a change made them worse.
INDEX_MEASURES = {"I002": 0, "I003": 1}  # index into (line count, UTF-16 units)


def index_measure(text: str | None) -> tuple[int, int] | None:
    """Return MEMORY.md's (line count, UTF-16 units) as the agent counts them."""
    if text is None:
        return None
    trimmed = js_trim(text)
    return trimmed.count("\n") + 1, utf16_len(trimmed)


def is_error(finding: Finding) -> bool:
    return finding.get("severity") == "error"


def is_session_start_finding(finding: Finding) -> bool:
    """Whether a finding is worth the model's attention at the start of a session."""
    return is_error(finding) or finding.get("code") in SESSION_START_CODES


def describe(finding: Finding) -> str:
    """One line a model can act on: place, rule, message and the fix."""
    line = finding.get("line")
    place = (
        f"{finding.get('path')}:{line}"
        if isinstance(line, int)
        else finding.get("path")
    )
    hint = finding.get("hint")
    fix = f" Fix: {hint}" if hint else ""
    return (
        f"- {place} [{finding.get('code')} {finding.get('name')}] "
        f"{finding.get('message')}{fix}"
    )


def _listing(findings: Sequence[Finding], memory_dir: str) -> str:
    lines = [describe(f) for f in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        lines.append(
            f"- … and {len(findings) - MAX_FINDINGS} more "
            f"(run `memd lint {memory_dir}`)"
        )
    return "\n".join(lines)


def findings_context(memory_dir: str, findings: Sequence[Finding]) -> str:
    """The SessionStart text for problems found in memory."""
    return (
        f"memd found problems in your auto memory at `{memory_dir}`; "
        "fix them when convenient:\n" + _listing(findings, memory_dir)
    )


def notice_context(memory_dir: str, findings: Sequence[Finding]) -> str:
    """The PostToolUse text for problems that were there before this tool call."""
    return (
        f"memd: your auto memory at `{memory_dir}` already had these problems "
        "before this tool call (it did not cause them; this is said once per "
        "session). Fix them when convenient:\n" + _listing(findings, memory_dir)
    )


def block_reason(memory_dir: str, caused: Sequence[Finding]) -> str:
    """The `reason` fed back when this tool call left memory broken."""
    files = sorted({str(f.get("path")) for f in caused})
    named = ", ".join(f"`{name}`" for name in files)
    if files == [INDEX_NAME] and all(f.get("code") in INDEX_MEASURES for f in caused):
        return (
            f"Your last tool call grew `{INDEX_NAME}` in the auto memory at "
            f"`{memory_dir}` "
            "past the agent's limit: the entries named below are now cut and will "
            "not be loaded into future sessions. Run `memd fix` to compact it (it "
            "moves older entries into hub files MEMORY.md links, and "
            "`memd fix --undo` takes that back), or shorten it now:\n"
            + _listing(caused, memory_dir)
        )
    return (
        f"Your last tool call left {named} in the auto memory at `{memory_dir}` "
        "broken: it will not load or be recalled as intended. Repair it now:\n"
        + _listing(caused, memory_dir)
    )


def session_start_context(
    findings_text: str | None, prompt: str | None, prompt_path: str
) -> str | None:
    """The SessionStart `additionalContext`: prompt first, then findings, within budget.

    A prompt that does not fit is cut at a line and followed by a pointer to
    `prompt_path`, the snapshot's prompt.md, so the model can read the rest.
    """
    tail = f"\n\n{findings_text}" if findings_text else ""
    if not prompt:
        return _clip(findings_text, MAX_CONTEXT_UNITS) if findings_text else None
    prompt = prompt.rstrip("\n")
    if utf16_len(prompt) + utf16_len(tail) <= MAX_CONTEXT_UNITS:
        return prompt + tail
    pointer = (
        f"\n\n[memd: the memory prompt is longer than fits here; this is its "
        f"beginning. Read the whole prompt in `{prompt_path}`.]"
    )
    tail = _clip(tail, MAX_CONTEXT_UNITS // 3)
    room = MAX_CONTEXT_UNITS - utf16_len(pointer) - utf16_len(tail)
    return _clip(prompt, room) + pointer + tail


def _clip(text: str, room: int) -> str:
    """Return the longest prefix of `text` within `room` units, cut after a line."""
    if utf16_len(text) <= room:
        return text
    # Code points are at most two units, so `room // 2` characters always fit.
    cut = text[: room // 2]
    extra = text[room // 2 : room]
    while extra and utf16_len(cut + extra) > room:
        extra = extra[: len(extra) // 2]
    cut += extra
    newline = cut.rfind("\n")
    return cut[:newline] if newline > 0 else cut
