"""MEMORY.md truncation and file-size wording, exactly as the reference does them.

REFERENCE.md §3 (truncateEntrypointContent, formatFileSize). The "bytes" limit
counts UTF-16 code units (JS `string.length`), the trim is the JS trim, lines
split on LF only, and a hard cut may split a surrogate pair, so the cut works
on UTF-16 units rather than on Python characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.claude_code.jscompat import (
    from_utf16_units,
    js_number_to_string,
    js_to_fixed_1,
    js_trim,
    utf16_len,
    utf16_units,
)
from memd.claude_code.profile import ProfileSpec, get_profile

# Every profile so far shares these; `truncate_entrypoint` reads its profile's.
MAX_ENTRYPOINT_LINES = 200
MAX_ENTRYPOINT_UNITS = 25_000

WARNING_PREFIX = "\n\n> WARNING: "


@dataclass(frozen=True, slots=True, kw_only=True)
class EntrypointTruncation:
    """What the agent loads from MEMORY.md, with the counts of the trimmed original."""

    content: str
    line_count: int
    byte_count: int  # UTF-16 code units, named after the reference's field
    was_line_truncated: bool
    was_byte_truncated: bool


def truncate_entrypoint(
    raw: str, *, profile: ProfileSpec = None
) -> EntrypointTruncation:
    """Return `raw` trimmed, and cut with a warning past 200 lines or 25,000 units.

    `profile` is a release (`"2.1.112"`) or profile, default the newest: it
    chooses the warning sentence.
    """
    agent = get_profile(profile)
    trimmed = js_trim(raw)
    lines = trimmed.split("\n")
    line_count = len(lines)
    byte_count = utf16_len(trimmed)
    max_lines, max_units = agent.entrypoint_max_lines, agent.entrypoint_max_units
    was_line_truncated = line_count > max_lines
    was_byte_truncated = byte_count > max_units
    if not was_line_truncated and not was_byte_truncated:
        return EntrypointTruncation(
            content=trimmed,
            line_count=line_count,
            byte_count=byte_count,
            was_line_truncated=False,
            was_byte_truncated=False,
        )
    kept = "\n".join(lines[:max_lines]) if was_line_truncated else trimmed
    kept = _cut_to_units(kept, max_units)
    if was_byte_truncated and not was_line_truncated:
        reason = (
            f"{format_file_size(byte_count)} "
            f"(limit: {format_file_size(max_units)})"
            " — index entries are too long"
        )
    elif was_line_truncated and not was_byte_truncated:
        reason = f"{line_count} lines (limit: {max_lines})"
    else:
        reason = f"{line_count} lines and {format_file_size(byte_count)}"
    return EntrypointTruncation(
        content=kept
        + WARNING_PREFIX
        + agent.truncation_notice(reason, trimmed, kept, line_count),
        line_count=line_count,
        byte_count=byte_count,
        was_line_truncated=was_line_truncated,
        was_byte_truncated=was_byte_truncated,
    )


def _cut_to_units(text: str, limit: int) -> str:
    """Cut `text` at its last LF at a unit index in 1..`limit`, else hard at `limit`."""
    if utf16_len(text) <= limit:
        return text
    units = utf16_units(text)
    # Units 0..limit inclusive: JS lastIndexOf("\n", limit) may match at index `limit`.
    head = from_utf16_units(units[: 2 * (limit + 1)])
    newline = head.rfind("\n")
    if newline > 0:  # index 0 (or none) means a hard cut, as in the reference
        return head[:newline]
    return from_utf16_units(units[: 2 * limit])


def format_file_size(n: int | float, *, profile: ProfileSpec = None) -> str:
    """Return the reference's human size: `1 bytes`, `24.4KB`, `1MB`, `1024GB`.

    Every profile so far formats alike; `profile` is checked, then unused.
    """
    get_profile(profile)
    kb = n / 1024
    if kb < 1:
        return f"{js_number_to_string(n)} bytes"
    if kb < 1024:
        return f"{_strip_point_zero(js_to_fixed_1(kb))}KB"
    mb = kb / 1024
    if mb < 1024:
        return f"{_strip_point_zero(js_to_fixed_1(mb))}MB"
    return f"{_strip_point_zero(js_to_fixed_1(mb / 1024))}GB"


def _strip_point_zero(fixed: str) -> str:
    return fixed[:-2] if fixed.endswith(".0") else fixed
