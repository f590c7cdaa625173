"""Neutralize reserved tags in loaded memory the way 2.1.332 does it.

After truncation and `sanitize_loaded_text`, 2.1.332 rewrites every opener
(`<` or a look-alike of it) that starts a reserved tag, open or close, as
`<\\`, so memory text can never pose as a harness tag: `<system-reminder>`
loads as `<\\system-reminder>`. 2.1.112 does not.

The release matches tag names through a "reading" of the text: each
non-ASCII character that looks like a tag-name character (fullwidth,
mathematical, accented, Cyrillic, Greek...) is read as a private-use stand-in
for that letter, so one comparison covers every spelling. From each opener it
allows a run of filler (anything but a name character or a bracket, so
`< system-reminder` and `</system-reminder` match), invisible and combining
characters between the letters, any letter case, and then one of three
endings: a reserved name followed by a non-name character; `antml` followed by
a colon; `channel` followed, within 120 characters before a `>`, by `source=`.

Everything here scans: each opener is looked at from its own position over a
bounded window or its own filler run, so the cost is linear in the text.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from memd.claude_code.reserved_tag_tables import (
    BRACKET_LOOKALIKES,
    LETTER_LOOKALIKES,
    SCRIPT_LOOKALIKES,
)

# The harness's envelope tags and the tool-protocol ones, as 2.1.332 lists them.
RESERVED_TAGS = (
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "bash-exit-code",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "command-name",
    "command-message",
    "command-args",
    "task-notification",
    "agent-message",
    "teammate-message",
    "cross-session-message",
    "remote-review",
    "slack-ping",
    "slack-tag-message",
    "tick",
    "fetched-web-content",
    "untrusted-widget-state",
    "coordinator-relay",
    "artifact-type-instructions",
    "cowritten-artifact-html",
    "artifact-file-content",
    "artifact-origin-notes",
    "artifact-stored-declaration",
    "system-reminder",
    "system_reminder",
    "function_results",
    "tool_use_error",
    "sandbox_violations",
    "persisted-output",
    "total_tokens",
    "user-prompt-submit-hook",
)
CHANNEL_TAG = "channel"  # reserved only with a `source=` before its `>`
PREFIX_TAG = "antml"  # reserved only with a colon after it

NEUTRALIZED_OPENER = "<\\"

_OPENERS = frozenset(
    "<" + "".join(k for k, v in BRACKET_LOOKALIKES.items() if v == "<")
)
_CLOSERS = frozenset(
    ">" + "".join(k for k, v in BRACKET_LOOKALIKES.items() if v == ">")
)
_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

# Private-use stand-ins of the reading: a name character's first reading, the
# rest of a multi-character reading, the two ambiguous pairs, and the dash-like
# marks U+2E40, U+30A0 and U+1400.
_FIRST = 0xE000
_REST = 0xE200
_PAIRS = ("nv", "uy")
_PAIR_BASE = 0xE100
_DASH_MARK = chr(_PAIR_BASE + 240)
_DASH_MARKS = "\u2e40\u30a0\u1400"
# Text already holding one of these stand-ins reads it as U+FFFD.
_STAND_IN_RANGES = ((_FIRST + 32, _FIRST + 126), (_REST + 32, _REST + 126))
_STAND_IN_BLOCK = (_PAIR_BASE, _PAIR_BASE + 255)
# Blocks the release takes as read unchanged without looking (CJK, Hangul).
_UNREAD_BLOCKS = ((0x34, 0x9F), (0xAC, 0xD6))


def _char_class(ranges: str) -> str:
    return "[" + ranges + "]"


# Invisible characters skipped between the letters of a name: prepended
# concatenation marks, default ignorables, combining marks, C0/C1 controls
# but tab and line ends, and the line and paragraph separators.
_INVISIBLE = (
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\U0001107f\U00013430-\U0001343f\U00016fe4\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
    "\u0300-\u0344\u0346-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2"
    "\u05c4\u05c5\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc"
    "\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u1ab0-\u1aff\u1dc0-\u1dff"
    "\u20d0-\u20ff\u3099\u309a\ufe20-\ufe2f"
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029"
)
_SKIP_INVISIBLE = re.compile(_char_class(_INVISIBLE) + "*")
# JavaScript's `\s`, plus the braille blank, before the `=` of `source=`.
_JS_SPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SKIP_GAP = re.compile(_char_class(_JS_SPACE + "\u2800" + _INVISIBLE) + "*")
# Separators that let `channel` run straight into `source` (`channel\vsource=`).
_SEPARATORS = frozenset(
    "\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029\u115f\u1160\u3164\uffa0"
)
_COLONS = frozenset(
    ":\uff1a\ufe55\ufe13\ua789\u2236\u02d0\u02f8\u05c3\u0589\u0703\u0704"
    "\u16ec\u1803\u1809\u205a\ua4fd\ufe30"
)
_EQUALS = frozenset(
    "=\u207c\u208c\ufe66\uff1d\ua78a\u2550\u268c\ua4ff\U0001f7f0" + _DASH_MARK
)
_DASHES = "\u2212\u207b\u208b\u02d7\u2796\u2043\u30fc\uff70"
_CONNECTORS = "_\u2017\u02cd\u07fa\u0640" + _DASHES
_CHANNEL_SPAN = 120  # characters of a reading between `channel` and `source`
_OPENER_PATTERN = re.compile(_char_class("".join(sorted(_OPENERS))))

# Every character the release reads as an ASCII letter; a later letter wins.
_LETTER_OF: dict[str, str] = {
    char: letter
    for letter, chars in sorted(LETTER_LOOKALIKES.items())
    for char in chars
}
# The script look-alikes, with the capital of each small one too.
_SCRIPT_FOLD: dict[str, str] = dict(SCRIPT_LOOKALIKES)


def neutralize_reserved_tags(text: str) -> str:
    r"""Return `text` with each reserved tag's opener written as `<\`.

    The opener is replaced whole, so a look-alike (fullwidth U+FF1C) becomes `<\` too;
    nothing else changes.
    """
    if _OPENER_PATTERN.search(text) is None:
        return text
    reading, text_offset = _read(text)
    hits = [
        text_offset(found.start())
        for found in _OPENER_PATTERN.finditer(reading)
        if _opens_reserved_tag(reading, found.start())
    ]
    if not hits:
        return text
    out: list[str] = []
    kept_from = 0
    for offset in hits:
        out.append(text[kept_from:offset])
        out.append(NEUTRALIZED_OPENER)
        kept_from = offset + 1
    out.append(text[kept_from:])
    return "".join(out)


def _read(text: str) -> tuple[str, Callable[[int], int]]:
    """Return the reading of `text` and the map from its offsets to the text's."""
    if text.isascii():
        return text, _identity
    changed = {char: read for char in set(text) if (read := _read_char(char)) != char}
    if not changed:
        return text, _identity
    reading = text.translate({ord(char): read for char, read in changed.items()})
    resized = [char for char, read in changed.items() if len(read) != 1]
    if not resized:
        return reading, _identity
    ends: list[int] = []  # where each resized character's reading ends
    shifts: list[int] = []  # the reading's total excess up to that point
    pattern = re.compile(_char_class("".join(re.escape(c) for c in resized)))
    excess = 0
    for found in pattern.finditer(text):
        excess += len(changed[found.group()]) - 1
        ends.append(found.start() + excess + 1)
        shifts.append(excess)

    def text_offset(at: int) -> int:
        index = bisect.bisect_right(ends, at)
        return at if index == 0 else at - shifts[index - 1]

    return reading, text_offset


def _identity(at: int) -> int:
    return at


@lru_cache(maxsize=32768)
def _read_char(char: str) -> str:
    """Return how the release reads one non-ASCII character of a tag name."""
    code = ord(char)
    if code < 0x80 or any(low <= code >> 8 <= high for low, high in _UNREAD_BLOCKS):
        return char
    if any(low <= code <= high for low, high in _STAND_IN_RANGES) or (
        _STAND_IN_BLOCK[0] <= code <= _STAND_IN_BLOCK[1]
    ):
        return "\ufffd"
    if char in _DASH_MARKS:
        return _DASH_MARK
    variants = (
        char,
        char.lower(),
        char.upper(),
        char.upper().lower(),
        char.lower().upper(),
    )
    letters = "".join(sorted({_LETTER_OF[v] for v in variants if v in _LETTER_OF}))
    if len(letters) > 1:
        if letters in _PAIRS:
            return chr(_PAIR_BASE + _PAIRS.index(letters))
        return chr(_FIRST + ord(letters[0]))
    plain = letters or _plain_form(char)
    if plain and all(c in _NAME for c in plain):
        return chr(_FIRST + ord(plain[0])) + "".join(
            chr(_REST + ord(c)) for c in plain[1:]
        )
    if _is_connector(char):
        return chr(_FIRST + ord("_"))
    return char


def _plain_form(char: str) -> str:
    """The character folded, decomposed and stripped of marks, in lower case."""
    folded = "".join(_SCRIPT_FOLD.get(c, c) for c in char)
    bare = "".join(
        c
        for c in unicodedata.normalize("NFKD", folded)
        if not unicodedata.category(c).startswith("M")
    )
    plain = "".join(_SCRIPT_FOLD.get(c, c) for c in unicodedata.normalize("NFKC", bare))
    plain = "".join("-" if _is_dash(c) else c for c in plain)
    return plain.lower().replace("\u00df", "ss")


def _is_dash(char: str) -> bool:
    return unicodedata.category(char) == "Pd" or char in _DASHES


def _is_connector(char: str) -> bool:
    return unicodedata.category(char) == "Pc" or char in _CONNECTORS or _is_dash(char)


def _name_chars(char: str) -> str:
    """The tag-name characters a reading character stands for ("" for none)."""
    if char in _NAME:
        return "-_" if char in "-_" else char.lower()
    code = ord(char)
    for base in (_FIRST, _REST):
        if base + 32 <= code <= base + 126:
            plain = chr(code - base)
            if plain in "-_":
                return "-_"
            return plain if plain in _NAME else ""
    if code in (_PAIR_BASE, _PAIR_BASE + 1):
        return _PAIRS[code - _PAIR_BASE]
    return "-_" if char == _DASH_MARK else ""


def _spelled(reading: str, at: int, name: str) -> int | None:
    """Return where `name` ends if it is spelled from `at`, else None.

    Invisible characters may sit between its letters, never before the first.
    """
    for index, letter in enumerate(name):
        if index:
            at = _SKIP_INVISIBLE.match(reading, at).end()  # type: ignore[union-attr]
        if at >= len(reading) or letter not in _name_chars(reading[at]):
            return None
        at += 1
    return at


def _opens_reserved_tag(reading: str, opener: int) -> bool:
    at = opener + 1
    if reading.startswith("\\", at):
        return False
    while True:
        if _tag_starts(reading, at):
            return True
        if at >= len(reading) or not _is_filler(reading[at]):
            return False
        at += 1


def _is_filler(char: str) -> bool:
    return char not in _NAME and char not in _OPENERS and char not in _CLOSERS


def _tag_starts(reading: str, at: int) -> bool:
    if at >= len(reading):
        return False
    first = _name_chars(reading[at])
    if not first:
        return False
    for letter in first:
        for name in _TAGS_BY_FIRST.get(letter, ()):
            end = _spelled(reading, at, name)
            if end is not None and (end >= len(reading) or reading[end] not in _NAME):
                return True
    if "a" in first:
        end = _spelled(reading, at, PREFIX_TAG)
        if end is not None:
            end = _SKIP_INVISIBLE.match(reading, end).end()  # type: ignore[union-attr]
            if end < len(reading) and reading[end] in _COLONS:
                return True
    if "c" in first:
        end = _spelled(reading, at, CHANNEL_TAG)
        if end is not None and _has_source(reading, end):
            return True
    return False


def _has_source(reading: str, after_name: int) -> bool:
    """Whether a `source=` follows `channel` within its span, before any `>`."""
    at = _SKIP_INVISIBLE.match(reading, after_name).end()  # type: ignore[union-attr]
    if (
        at < len(reading)
        and reading[at] in _NAME
        and not any(c in _SEPARATORS for c in reading[after_name:at])
    ):
        return False
    counted = 0
    while True:
        if reading[at - 1] not in _NAME:  # `source` starts a word
            end = _spelled(reading, at, "source")
            if end is not None:
                end = _SKIP_GAP.match(reading, end).end()  # type: ignore[union-attr]
                if end < len(reading) and reading[end] in _EQUALS:
                    return True
        if at >= len(reading) or reading[at] in _CLOSERS:
            return False
        if not _REST + 32 <= ord(reading[at]) <= _REST + 126:
            counted += 1
            if counted > _CHANNEL_SPAN:
                return False
        at += 1


_TAGS_BY_FIRST: dict[str, tuple[str, ...]] = {
    letter: tuple(tag for tag in RESERVED_TAGS if tag[0] == letter)
    for letter in {tag[0] for tag in RESERVED_TAGS}
}
