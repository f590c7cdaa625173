"""Edit JSON with comments (Gemini CLI's settings.json), keeping every other byte.

Gemini CLI strips `//` and `/* */` comments before `JSON.parse`, so its
settings may hold them; re-serialising the file would lose them. `parse`
reads the text once, linearly and depth-bounded, into `Node`s that know their
spans; `set_member`, `append_element` and `remove` each change one span and
leave the rest of the text as it was. `loads` is the validation: comments
blanked, then strict JSON, as the agent reads it. Pure: text in, text out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_DEPTH = 64
_WHITESPACE = " \t\r\n"


@dataclass(slots=True)
class Node:
    """One JSON value and where it sits in the text."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int  # just past the value
    members: list[tuple[str, int, Node]] = field(default_factory=list)  # key, key start
    items: list[Node] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        for name, _, value in self.members:
            if name == key:
                return value
        return None


def blank_comments(text: str) -> str:
    """`text` with each comment replaced by spaces (newlines kept): offsets stay."""
    out: list[str] = []
    position, length = 0, len(text)
    while position < length:
        char = text[position]
        if char == '"':
            end = _string_end(text, position)
            out.append(text[position:end])
            position = end
        elif text.startswith("//", position):
            end = text.find("\n", position)
            end = length if end < 0 else end
            out.append(" " * (end - position))
            position = end
        elif text.startswith("/*", position):
            end = text.find("*/", position + 2)
            end = length if end < 0 else end + 2
            out.append("".join(c if c in "\r\n" else " " for c in text[position:end]))
            position = end
        else:
            out.append(char)
            position += 1
    return "".join(out)


def loads(text: str) -> object:
    """The settings as the agent reads them. Raises `ValueError` when it cannot."""
    from memd import fastjson

    return fastjson.loads(blank_comments(text).encode("utf-8"), max_depth=MAX_DEPTH)


def parse(text: str) -> Node:
    """The top-level value's node. Raises `ValueError` for text `loads` refuses."""
    loads(text)  # the agent's own verdict first; the walk below trusts the shape
    clean = blank_comments(text)
    node, end = _value(clean, _skip(clean, 0), 0)
    return node if _skip(clean, end) == len(clean) else _fail("text after the value")


def set_member(text: str, path: tuple[str, ...], value: object) -> str:
    """`text` with `value` at `path` (objects made as needed), the rest untouched.

    Raises `ValueError` when a parent on the path is not an object.
    """
    root = parse(text)
    node, depth = root, 0
    while depth < len(path) - 1:
        child = node.get(path[depth]) if node.kind == "object" else None
        if child is None:
            break
        node, depth = child, depth + 1
    if node.kind != "object":
        raise ValueError(f"'{'.'.join(path[:depth])}' is not an object")
    key = path[depth]
    for name in reversed(path[depth + 1 :]):
        value = {name: value}
    existing = node.get(key)
    if existing is not None and depth == len(path) - 1:
        indent = _indent_at(text, existing.start)
        return text[: existing.start] + _dump(value, indent) + text[existing.end :]
    member = f"{json.dumps(key, ensure_ascii=False)}: "
    return _insert(text, node, member, value, closer="}")


def append_element(text: str, path: tuple[str, ...], value: object) -> str:
    """`text` with `value` appended to the array at `path` (made when missing)."""
    root = parse(text)
    node: Node | None = root
    for key in path:
        node = node.get(key) if node is not None and node.kind == "object" else None
    if node is None:
        return set_member(text, path, [value])
    if node.kind != "array":
        raise ValueError(f"'{'.'.join(path)}' is not an array")
    return _insert(text, node, "", value, closer="]")


def find(text: str, path: tuple[str, ...]) -> Node | None:
    node: Node | None = parse(text)
    for key in path:
        node = node.get(key) if node is not None and node.kind == "object" else None
    return node


def remove(text: str, container: Node, index: int) -> str:
    """`text` without the `index`th member (or item) of `container`, and its comma."""
    entries = (
        [(key_start, value.end) for _, key_start, value in container.members]
        if container.kind == "object"
        else [(item.start, item.end) for item in container.items]
    )
    clean = blank_comments(text)
    start, end = entries[index]
    if len(entries) == 1:  # the container becomes empty
        return text[: container.start + 1] + text[container.end - 1 :]
    if index + 1 < len(entries):  # the entry, its comma, the rest of its line
        start = _line_start(text, start)
        comma = clean.index(",", end)
        line_end = clean.find("\n", comma)
        whole_line = start == 0 or text[start - 1] == "\n"
        if whole_line and line_end >= 0 and not clean[comma + 1 : line_end].strip():
            return text[:start] + text[line_end + 1 :]
        return text[:start] + text[_skip(clean, comma + 1) :]
    comma = clean.rindex(",", entries[index - 1][1], start)  # after the previous entry
    line = _line_start(text, start)
    if line != start and line > comma + 1:  # on its own line: comments before it stay
        return text[:comma] + text[comma + 1 : line - 1] + text[end:]
    return text[:comma] + text[end:]


# -- internals --------------------------------------------------------------------


def _line_start(text: str, offset: int) -> int:
    """The start of `offset`'s line when only blanks precede it there; else `offset`."""
    line = text.rfind("\n", 0, offset) + 1
    return line if not text[line:offset].strip(" \t") else offset


def _insert(text: str, node: Node, member: str, value: object, *, closer: str) -> str:
    clean = blank_comments(text)
    close = node.end - 1
    if clean[close] != closer:
        raise ValueError("the text changed under the edit")
    entries = node.members if node.kind == "object" else node.items
    outer = _indent_at(text, node.start)
    if entries:
        first = node.members[0][1] if node.kind == "object" else node.items[0].start
        inner = _indent_at(text, first)
        last_end = (
            node.members[-1][2].end if node.kind == "object" else node.items[-1].end
        )
        same_line = "\n" not in clean[node.start : first]
        at = close  # after any comment that follows the last entry
        while at > last_end and text[at - 1] in _WHITESPACE:
            at -= 1
        sep = " " if same_line else "\n" + inner
        addition = sep + member + _dump(value, inner)
        return text[:last_end] + "," + text[last_end:at] + addition + text[at:]
    inner = outer + "  "
    body = "\n" + inner + member + _dump(value, inner) + "\n" + outer
    return text[: node.start + 1] + body + text[close:]


def _dump(value: object, indent: str) -> str:
    lines = json.dumps(value, indent=2, ensure_ascii=False).split("\n")
    return "\n".join([lines[0], *(indent + line for line in lines[1:])])


def _indent_at(text: str, offset: int) -> str:
    line = text.rfind("\n", 0, offset) + 1
    prefix = text[line:offset]
    return prefix[: len(prefix) - len(prefix.lstrip(" \t"))]


def _skip(text: str, position: int) -> int:
    while position < len(text) and text[position] in _WHITESPACE:
        position += 1
    return position


def _string_end(text: str, position: int) -> int:
    position += 1
    while position < len(text):
        char = text[position]
        if char == "\\":
            position += 2
            continue
        if char == '"':
            return position + 1
        position += 1
    return len(text)


def _fail(message: str) -> Node:
    raise ValueError(message)


def _value(text: str, position: int, depth: int) -> tuple[Node, int]:
    if depth > MAX_DEPTH:
        raise ValueError(f"nested deeper than {MAX_DEPTH}")
    char = text[position : position + 1]
    if char == "{":
        node = Node("object", position, position)
        position = _skip(text, position + 1)
        while text[position] != "}":
            key_start = position
            key_end = _string_end(text, position)
            key = json.loads(text[key_start:key_end])
            position = _skip(text, key_end) + 1  # the colon
            value, position = _value(text, _skip(text, position), depth + 1)
            node.members.append((key, key_start, value))
            position = _skip(text, position)
            if text[position] == ",":
                position = _skip(text, position + 1)
        node.end = position + 1
        return node, position + 1
    if char == "[":
        node = Node("array", position, position)
        position = _skip(text, position + 1)
        while text[position] != "]":
            value, position = _value(text, position, depth + 1)
            node.items.append(value)
            position = _skip(text, position)
            if text[position] == ",":
                position = _skip(text, position + 1)
        node.end = position + 1
        return node, position + 1
    if char == '"':
        end = _string_end(text, position)
        return Node("scalar", position, end), end
    end = position
    while end < len(text) and text[end] not in _WHITESPACE + ",]}":
        end += 1
    return Node("scalar", position, end), end
