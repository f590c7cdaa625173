"""The sentence a truncated MEMORY.md ends with, one builder per agent release.

REFERENCE.md §3 (2.1.112) and "2.1.332: what changed" (MEMORY.md truncation
warning). Both releases cut the same way and give the same `reason`; only what
follows it differs. 2.1.332 says how many lines were cut, from which line, and
quotes that line shortened to 80 UTF-16 units, or after a hard cut how many
characters of line 1 were kept.
"""

from __future__ import annotations

from memd.claude_code.jscompat import (
    JS_WHITESPACE,
    from_utf16_units,
    js_trim,
    utf16_len,
    utf16_units,
)

_ADVICE = (
    "Keep index entries to one line under ~200 chars; move detail into topic files."
)
QUOTE_MAX_UNITS = 80
_QUOTE_CUT_UNITS = QUOTE_MAX_UNITS - 1
_QUOTE_MIN_WORD_CUT_UNITS = 40
_ELLIPSIS = "\u2026"


def notice_2_1_112(reason: str, trimmed: str, kept: str, line_count: int) -> str:
    """Return the 2.1.112 sentence: the reason, and that only part was loaded."""
    return f"MEMORY.md is {reason}. Only part of it was loaded. {_ADVICE}"


def notice_2_1_332(reason: str, trimmed: str, kept: str, line_count: int) -> str:
    """Return the 2.1.332 sentence: the reason, then what was cut off and where."""
    what = _what_was_cut(trimmed, kept, line_count)
    return f"MEMORY.md is {reason}. Only part of it was loaded: {what}. {_ADVICE}"


def _what_was_cut(trimmed: str, kept: str, line_count: int) -> str:
    # `kept` is a prefix of `trimmed` unless a hard cut split a surrogate pair.
    ends_at_break = (
        len(kept) < len(trimmed)
        and trimmed.startswith(kept)
        and trimmed[len(kept)] == "\n"
    )
    if not ends_at_break:
        return (
            f"everything after the first {utf16_len(kept)} characters of line 1 "
            "was cut off"
        )
    kept_lines = kept.count("\n") + 1
    what = (
        f"{line_count - kept_lines} of {line_count} lines were cut off, "
        f"starting at line {kept_lines + 1}"
    )
    first_cut = js_trim(trimmed[len(kept) + 1 :].split("\n", 1)[0])
    return f'{what} ("{shorten_quote(first_cut)}")' if first_cut else what


def shorten_quote(line: str) -> str:
    """Return `line` if it fits 80 units, else cut at a word past 40 units, plus `…`."""
    if utf16_len(line) <= QUOTE_MAX_UNITS:
        return line
    units = utf16_units(line)[: 2 * _QUOTE_CUT_UNITS]
    last = int.from_bytes(units[-2:], "little")
    if 0xD800 <= last <= 0xDBFF:  # never end on half a surrogate pair
        units = units[:-2]
    head = from_utf16_units(units)
    # /\s\S*$/: the last whitespace character is the one with only non-space after.
    space_at = max(head.rfind(ch) for ch in JS_WHITESPACE)
    if space_at >= 0:
        before = head[:space_at].rstrip(JS_WHITESPACE)
        if utf16_len(before) > _QUOTE_MIN_WORD_CUT_UNITS:
            return before + _ELLIPSIS
    return head.rstrip(JS_WHITESPACE) + _ELLIPSIS
