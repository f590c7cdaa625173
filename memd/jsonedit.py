"""Edit a JSON (or JSON-with-comments) document's text without re-writing it.

memd changes a few keys of files the user owns (Claude Code's settings.json,
`~/.claude.json`, other agents' settings). Parsing and re-serialising the
whole document would change what memd never touched: `1e400` comes back as
`Infinity` (which JSON.parse rejects), `1.0` as `1`, escapes and spacing
change, comments vanish. So an edit here is a splice: `load` gives the
document's value, the caller computes the value it wants, and `rewrite`
compares the two and changes only the spans that differ: a changed member's
value, a removed member with its comma, an added member laid out like its
neighbours. Everything else keeps its bytes.

    value = jsonedit.load(text)          # JsonEditError: one line, line/column
    new = with_my_keys(value)            # any pure function, dict in, dict out
    text = jsonedit.rewrite(text, new)   # only the differing spans change

Floats load as `Number` (their text kept, equal by text), so a value memd
never looked at cannot be rounded. `comments=True` accepts `//` and `/* */`
comments (JSONC, as Gemini CLI reads its settings): they are blanked to
spaces for parsing, so every offset still points into the original text, and
they survive an edit unless they sat inside a member memd removed.
Depth is bounded before any recursive parse (a line of 100,000 `[` is a
`JsonEditError`, not a RecursionError). Pure: text in, text out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_DEPTH = 256  # far deeper than any settings file; the C scanner recurses
DEFAULT_INDENT = "  "

_WS = re.compile(r"[ \t\n\r]*")
# A string (kept) or a comment (blanked); unterminated ones run to the end, so
# every match consumes what it scanned and the pass is linear.
_STRING_OR_COMMENT = re.compile(
    r'"(?:[^"\\]|\\[\s\S])*"?|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)'
)
_NOT_NEWLINE = re.compile(r"[^\n]")


class JsonEditError(ValueError):
    """The text is not a document `load` accepts; `str()` is one line."""

    def __init__(
        self, message: str, line: int | None = None, column: int | None = None
    ):
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(f"{where}{message}")
        self.line, self.column = line, column


class Number:
    """A JSON float as its text: `1e400` stays `1e400`, `1.0` stays `1.0`."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Number) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __float__(self) -> float:
        return float(self.text)

    def __repr__(self) -> str:
        return f"Number({self.text!r})"

    def __deepcopy__(self, memo: object) -> Number:
        return self


def load(text: str, *, comments: bool = False, max_depth: int = MAX_DEPTH) -> object:
    """Return the value of the document `text`, as JSON.parse reads it.

    Raises `JsonEditError` for what JSON.parse rejects (NaN, Infinity, a
    syntax error, trailing data) and for nesting deeper than `max_depth`.
    A lone surrogate escape (`"\\ud800"`) is a valid JSON string and loads as one.
    """
    return _Document(text, comments=comments, max_depth=max_depth).value


def rewrite(
    text: str | None,
    new_value: object,
    *,
    comments: bool = False,
    max_depth: int = MAX_DEPTH,
) -> str:
    """Return `text` changed so that it loads as `new_value`; only differences move.

    Members and items equal in both keep their exact bytes (and any comment
    around them). A removed member goes with its comma; an added one goes
    after the container's last member, in its layout (indent, one line or
    many). A container whose membership changed keeps its open and close.
    `text` None or blank: `new_value` laid out with a two-space indent.
    Raises `JsonEditError` as `load` does, and when a key memd must change
    appears twice in one object (which one the agent reads is unclear).
    """
    if text is None or not text.strip():
        return dump(new_value, indent=DEFAULT_INDENT) + "\n"
    document = _Document(text, comments=comments, max_depth=max_depth)
    splices: list[tuple[int, int, str]] = []
    root = _WS.match(document.scan, 0).end()  # type: ignore[union-attr]
    document.edit(root, document.root_end, document.value, new_value, splices)
    out, last = [], len(text)
    for start, end, replacement in sorted(splices, reverse=True):
        out.append(text[end:last])
        out.append(replacement)
        last = start
    out.append(text[:last])
    return "".join(reversed(out))


def dump(
    value: object, *, indent: str | None = DEFAULT_INDENT, sort_keys: bool = False
) -> str:
    """`value` as JSON text: `indent` per level (None: one line), `Number`s as text.

    Strings keep non-ASCII characters; a lone surrogate is escaped, so the
    text always encodes as UTF-8.
    """
    return _dump(value, indent, "", sort_keys)


# -- the document ------------------------------------------------------------------


@dataclass(slots=True)
class _Child:
    key: str | None  # None in an array
    start: int  # the key's quote in an object, the value's first byte in an array
    value_start: int
    end: int
    value: object


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON (JSON.parse rejects it)")


class _Document:
    """The text, its comment-blanked twin (same offsets), and its value."""

    def __init__(self, text: str, *, comments: bool, max_depth: int) -> None:
        self.text = text
        self.scan = _blank_comments(text) if comments else text
        self.decoder = json.JSONDecoder(
            parse_float=Number, parse_constant=_refuse_constant
        )
        _refuse_deeper(self.scan, max_depth)
        start = _WS.match(self.scan, 0).end()  # type: ignore[union-attr]
        self.value, self.root_end = self._decode(start)
        rest = _WS.match(self.scan, self.root_end).end()  # type: ignore[union-attr]
        if rest != len(self.scan):
            raise self._error("extra data after the document", rest)
        self.unit = _indent_unit(text)
        self.multiline = "\n" in text.strip()

    def _decode(self, at: int) -> tuple[object, int]:
        try:
            return self.decoder.raw_decode(self.scan, at)
        except json.JSONDecodeError as error:
            raise JsonEditError(error.msg, error.lineno, error.colno) from None
        except RecursionError:
            raise self._error("nested too deeply", at) from None
        except ValueError as error:  # NaN/Infinity, an integer of 5,000 digits
            raise JsonEditError(str(error).split("\n")[0]) from None

    def _error(self, message: str, at: int) -> JsonEditError:
        line = self.text.count("\n", 0, at) + 1
        return JsonEditError(message, line, at - self.text.rfind("\n", 0, at))

    # -- the diff --------------------------------------------------------------

    def edit(
        self,
        start: int,
        end: int,
        old: object,
        new: object,
        splices: list[tuple[int, int, str]],
    ) -> None:
        """Add the splices that turn the value at [start, end) from `old` into `new`."""
        if type(old) is type(new) and old == new:
            return
        opener = self.scan[start]
        if isinstance(old, dict) and isinstance(new, dict) and opener == "{":
            self._edit_object(start, old, new, splices)
        elif isinstance(old, list) and isinstance(new, list) and opener == "[":
            self._edit_array(start, old, new, splices)
        else:
            indent = self._line_indent(start)
            splices.append((start, end, self._render(new, indent)))

    def _edit_object(
        self,
        start: int,
        old: dict[str, object],
        new: dict[str, object],
        splices: list[tuple[int, int, str]],
    ) -> None:
        children, close = self._children(start)
        last = {child.key: i for i, child in enumerate(children)}
        sequence: list[_Child | _New] = []
        for i, child in enumerate(children):
            key = str(child.key)  # an object's children all have one
            in_force = last[key] == i
            changes = key not in new or not _same(old[key], new[key])
            if changes and (not in_force or _count(children, key) > 1):
                raise self._error(
                    f"key {key!r} appears twice; which one is meant is unclear",
                    child.start,
                )
            if in_force and key not in new:
                continue  # removed
            sequence.append(child)
            if in_force:
                self.edit(child.value_start, child.end, old[key], new[key], splices)
        added = [(key, value) for key, value in new.items() if key not in last]
        self._relayout(start, close, children, sequence, added, splices)

    def _edit_array(
        self,
        start: int,
        old: list[object],
        new: list[object],
        splices: list[tuple[int, int, str]],
    ) -> None:
        children, close = self._children(start)
        if len(old) == len(new):
            for child, value in zip(children, new, strict=True):
                self.edit(child.value_start, child.end, child.value, value, splices)
            return
        import difflib

        matcher = difflib.SequenceMatcher(
            None,
            [dump(item, indent=None, sort_keys=True) for item in old],
            [dump(item, indent=None, sort_keys=True) for item in new],
            autojunk=False,
        )
        sequence: list[_Child | _New] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                for child, value in zip(children[i1:i2], new[j1:j2], strict=True):
                    self.edit(child.value_start, child.end, child.value, value, splices)
                    sequence.append(child)
            else:  # delete, insert, or a replace of another length
                sequence.extend(_New(value) for value in new[j1:j2])
        self._relayout(start, close, children, sequence, [], splices)

    def _relayout(
        self,
        start: int,
        close: int,
        children: list[_Child],
        sequence: list[_Child | _New],
        added: list[tuple[str, object]],
        splices: list[tuple[int, int, str]],
    ) -> None:
        """Splice the gaps between kept children: drop the removed, add the new.

        `sequence` is the container's new order: kept `_Child`ren (in their
        old order) and `_New` items; `added` are members to append.
        """
        sequence = sequence + [_New(value, key) for key, value in added]
        kept = [c for c in sequence if isinstance(c, _Child)]
        if len(kept) == len(sequence) == len(children):
            return  # kept in order, none added: only values changed, if any
        multiline, indent = self._layout(start, children)
        separator = ",\n" + indent if multiline else ", "
        colon = self._colon(children)

        def render(item: object) -> str:
            if not isinstance(item, _New):
                raise TypeError("only new items are rendered")
            value = self._render(item.value, indent, multiline=multiline)
            return value if item.key is None else _dump_str(item.key) + colon + value

        if not kept:
            if multiline:
                inner = "\n" + indent + separator.join(render(i) for i in sequence)
                inner += "\n" + self._line_indent(start)
            else:
                inner = separator.join(render(i) for i in sequence)
            if not sequence:
                inner = ""
            splices.append((start + 1, close, inner))
            return
        gaps: list[list[object]] = [
            []
        ]  # the new items before each kept child, and after
        for item in sequence:
            if isinstance(item, _Child):
                gaps.append([])
            else:
                gaps[-1].append(item)
        index = {id(child): i for i, child in enumerate(children)}
        first, final = kept[0], kept[-1]

        def joint(note: str) -> str:
            """A comma, the comment ending the kept line, the next line's start."""
            breaks = "\n" in note or "//" in note
            return (
                ","
                + note
                + ("\n" + indent if breaks and not multiline else separator[1:])
            )

        if index[id(first)] != 0 or gaps[0]:
            lead = self.text[start + 1 : children[0].start]
            text = lead + "".join(render(i) + separator for i in gaps[0])
            splices.append((start + 1, first.start, text))
        for before, after, items in zip(kept[:-1], kept[1:], gaps[1:-1], strict=True):
            if index[id(after)] != index[id(before)] + 1 or items:
                note = self._line_note(before, children[index[id(before)] + 1].start)
                text = joint(note) + "".join(render(i) + separator for i in items)
                splices.append((before.end, after.start, text))
        if index[id(final)] != len(children) - 1 or gaps[-1]:
            trail = self.text[children[-1].end : close]
            if index[id(final)] != len(children) - 1:
                following = children[index[id(final)] + 1].start
                closing = trail[len(trail.rstrip()) :]  # the space before the close
                trail = (
                    self._line_note(final, following) + closing
                )  # theirs go with them
            if gaps[-1]:  # the comma goes before a comment that ends the last line
                note = trail.rstrip()
                added_text = separator.join(render(i) for i in gaps[-1])
                trail = joint(note) + added_text + trail[len(note) :]
            splices.append((final.end, close, trail))

    def _line_note(self, child: _Child, limit: int) -> str:
        """The comment after `child` on its own line (JSONC), without the comma."""
        end = self.text.find("\n", child.end, limit)
        end = limit if end < 0 else end
        comma = self.scan.find(",", child.end, end)
        note = self.text[child.end : end]
        if comma >= 0:
            note = self.text[child.end : comma] + self.text[comma + 1 : end]
        return note.rstrip() if note.strip() else ""

    def _render(
        self, value: object, indent: str, *, multiline: bool | None = None
    ) -> str:
        """`value` laid out as its place in the document is, first line at `indent`."""
        spread = self.multiline if multiline is None else multiline
        return _dump(value, self.unit if spread else None, indent, False)

    def _children(self, start: int) -> tuple[list[_Child], int]:
        """The members or items of the container opening at `start`, and its close."""
        scan, is_object = self.scan, self.scan[start] == "{"
        closer = "}" if is_object else "]"
        at = _WS.match(scan, start + 1).end()  # type: ignore[union-attr]
        children: list[_Child] = []
        if scan[at] == closer:
            return children, at
        while True:
            child_start, key = at, None
            if is_object:
                key, at = self._decode(at)
                at = _WS.match(scan, at).end()  # type: ignore[union-attr]
                at = _WS.match(scan, at + 1).end()  # type: ignore[union-attr] # the colon
            value, end = self._decode(at)
            children.append(_Child(key, child_start, at, end, value))  # type: ignore[arg-type]
            at = _WS.match(scan, end).end()  # type: ignore[union-attr]
            if scan[at] == closer:
                return children, at
            at = _WS.match(scan, at + 1).end()  # type: ignore[union-attr] # the comma

    def _layout(self, start: int, children: list[_Child]) -> tuple[bool, str]:
        """Whether the container at `start` spans lines, and its members' indent."""
        if children:
            lead = self.scan[start + 1 : children[0].start]
            if "\n" in lead:
                indent = lead[lead.rfind("\n") + 1 :]
                if not indent.strip(" \t"):
                    return True, indent
                return True, self._line_indent(start) + self.unit
            return False, ""
        return self.multiline, self._line_indent(start) + self.unit

    def _colon(self, children: list[_Child]) -> str:
        for child in children:
            if child.key is not None:
                between = self.scan[child.start : child.value_start]
                return (
                    between[between.rfind('"') + 1 :] if "\n" not in between else ": "
                )
        return ": "

    def _line_indent(self, at: int) -> str:
        line_start = self.text.rfind("\n", 0, at) + 1
        line = self.text[line_start:at]
        return line[: len(line) - len(line.lstrip(" \t"))]


@dataclass(slots=True)
class _New:
    value: object
    key: str | None = None


def _count(children: list[_Child], key: str) -> int:
    return sum(1 for child in children if child.key == key)


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b


def _blank_comments(text: str) -> str:
    """`text` with each comment turned into spaces (newlines kept): same offsets."""

    def blank(match: re.Match[str]) -> str:
        found = match.group()
        return found if found[0] == '"' else _NOT_NEWLINE.sub(" ", found)

    return _STRING_OR_COMMENT.sub(blank, text)


def _refuse_deeper(text: str, limit: int) -> None:
    from memd.fastjson import refuse_deeper

    try:
        refuse_deeper(text, limit)
    except ValueError:
        raise JsonEditError(f"nested deeper than {limit} levels") from None


def _indent_unit(text: str) -> str:
    """The indentation of the first indented line of `text` (two spaces by default)."""
    for line in text.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return DEFAULT_INDENT


def _dump(value: object, unit: str | None, indent: str, sort_keys: bool) -> str:
    if isinstance(value, Number):
        return value.text
    if isinstance(value, str):
        return _dump_str(value)
    if isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else list(value.items())
        if not items:
            return "{}"
        if unit is None:
            inner = (
                f"{_dump_str(k)}: {_dump(v, None, '', sort_keys)}" for k, v in items
            )
            return "{" + ", ".join(inner) + "}"
        deeper = indent + unit
        inner = (
            f"{deeper}{_dump_str(k)}: {_dump(v, unit, deeper, sort_keys)}"
            for k, v in items
        )
        return "{\n" + ",\n".join(inner) + "\n" + indent + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if unit is None:
            return "[" + ", ".join(_dump(v, None, "", sort_keys) for v in value) + "]"
        deeper = indent + unit
        inner = (deeper + _dump(v, unit, deeper, sort_keys) for v in value)
        return "[\n" + ",\n".join(inner) + "\n" + indent + "]"
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        raise ValueError(f"{value} has no JSON form")  # memd never makes one
    return json.dumps(value)


def _dump_str(text: str) -> str:
    dumped = json.dumps(text, ensure_ascii=False)
    try:
        dumped.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: keep it as its escape
        return json.dumps(text)
    return dumped
