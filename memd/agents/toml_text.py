"""Find and cut whole tables in TOML text, keeping every other byte.

memd edits Codex CLI's `config.toml` surgically: it never re-serialises the
user's file (that would lose comments, order and spacing). It finds table
headers with one linear pass that knows where strings and comments are (a
`[` inside a multi-line string is not a header), cuts the tables it owns and
appends its own block. `tomllib` only validates, before and after.
Pure: text in, text out.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPES = {'"': '"', "\\": "\\", "b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}


@dataclass(frozen=True, slots=True)
class Table:
    """One table: its dotted key, `[[...]]` or not, and its span in the text."""

    key: tuple[str, ...]
    is_array: bool
    start: int  # offset of the header line
    end: int  # offset just past the table's last line (the next header's start)


def tables(text: str) -> list[Table]:
    """Every table header in `text` with the span it governs, in order.

    The text before the first header (the root table) is not listed.
    Raises `ValueError` for a header memd cannot read (tomllib would refuse it too).
    """
    headers: list[tuple[tuple[str, ...], bool, int]] = []
    # Inside a multi-line string ('"""' or "'''"), or an array value spanning
    # lines (its bracket depth): a `[` there opens no table.
    in_string: str | None = None
    depth = 0
    offset = 0
    for line in text.splitlines(keepends=True):
        if in_string is None and depth == 0 and line.lstrip(" \t").startswith("["):
            key, is_array = _header(line.lstrip(" \t"))
            headers.append((key, is_array, offset))
        else:
            in_string, depth = _scan_values(line, in_string, depth)
        offset += len(line)
    spans = []
    for index, (key, is_array, start) in enumerate(headers):
        end = headers[index + 1][2] if index + 1 < len(headers) else len(text)
        spans.append(Table(key, is_array, start, end))
    return spans


def cut_tables(text: str, unwanted: Callable[[Table, str], bool]) -> str:
    """`text` without each table for which `unwanted(table, its text)` holds."""
    kept: list[str] = []
    position = 0
    for table in tables(text):
        if unwanted(table, text[table.start : table.end]):
            kept.append(text[position : table.start])
            position = table.end
    kept.append(text[position:])
    return "".join(kept)


def quote_key(part: str) -> str:
    """One key part as a header writes it: bare when it can be, else a basic string."""
    if part and all(char in _BARE for char in part):
        return part
    return basic_string(part)


def basic_string(value: str) -> str:
    """`value` as a TOML basic string (JSON's escapes are all valid TOML)."""
    out = ['"']
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _header(line: str) -> tuple[tuple[str, ...], bool]:
    """Parse `[a."b c".d]` or `[[a.b]]` at the start of `line`."""
    is_array = line.startswith("[[")
    position = 2 if is_array else 1
    parts: list[str] = []
    while True:
        position = _skip_blanks(line, position)
        if position >= len(line):
            raise ValueError("unterminated table header")
        char = line[position]
        if char == '"':
            part, position = _basic(line, position + 1)
        elif char == "'":
            close = line.find("'", position + 1)
            if close < 0:
                raise ValueError("unterminated key in a table header")
            part, position = line[position + 1 : close], close + 1
        else:
            start = position
            while position < len(line) and line[position] in _BARE:
                position += 1
            if position == start:
                raise ValueError("empty key in a table header")
            part = line[start:position]
        parts.append(part)
        position = _skip_blanks(line, position)
        if line.startswith(".", position):
            position += 1
            continue
        closer = "]]" if is_array else "]"
        if not line.startswith(closer, position):
            raise ValueError("malformed table header")
        return tuple(parts), is_array


def _basic(line: str, position: int) -> tuple[str, int]:
    """A basic string's value (after its opening quote) and the offset past it."""
    out: list[str] = []
    while position < len(line):
        char = line[position]
        if char == '"':
            return "".join(out), position + 1
        if char == "\\":
            escape = line[position + 1 : position + 2]
            if escape in _ESCAPES:
                out.append(_ESCAPES[escape])
                position += 2
                continue
            width = {"u": 4, "U": 8}.get(escape)
            digits = line[position + 2 : position + 2 + width] if width else ""
            if not width or len(digits) != width:
                raise ValueError("bad escape in a table header")
            out.append(chr(int(digits, 16)))
            position += 2 + width
            continue
        out.append(char)
        position += 1
    raise ValueError("unterminated key in a table header")


def _skip_blanks(line: str, position: int) -> int:
    while position < len(line) and line[position] in " \t":
        position += 1
    return position


def _scan_values(
    line: str, in_string: str | None, depth: int
) -> tuple[str | None, int]:
    """Where a line leaves us: inside a multi-line string (its delimiter) or
    not, and how many value brackets are open."""
    position = 0
    length = len(line)
    while position < length:
        if in_string is not None:
            close = _find_close(line, position, in_string)
            if close < 0:
                return in_string, depth
            position, in_string = close, None
            continue
        char = line[position]
        if char == "#":
            return None, depth
        if char in "[{":
            depth += 1
            position += 1
        elif char in "]}":
            depth = max(0, depth - 1)
            position += 1
        elif line.startswith('"""', position) or line.startswith("'''", position):
            in_string = line[position : position + 3]
            position += 3
        elif char == '"':
            position = _skip_basic(line, position + 1)
        elif char == "'":
            close = line.find("'", position + 1)
            position = length if close < 0 else close + 1
        else:
            position += 1
    return in_string, depth


def _find_close(line: str, position: int, delimiter: str) -> int:
    """The offset just past `delimiter` closing a multi-line string, or -1."""
    while True:
        found = line.find(delimiter, position)
        if found < 0:
            return -1
        if delimiter == '"""' and _escaped(line, found):
            position = found + 1
            continue
        end = found + 3
        while end < len(line) and line[end] == delimiter[0] and end - found < 5:
            end += 1  # up to two quotes may end the content: `""""` closes after one
        return end


def _escaped(line: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and line[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _skip_basic(line: str, position: int) -> int:
    while position < len(line):
        char = line[position]
        if char == "\\":
            position += 2
            continue
        if char == '"':
            return position + 1
        position += 1
    return position
