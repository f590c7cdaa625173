"""Read MEMORY.md's entries: Markdown links in list items, each with its one-line hook.

Real indexes (SPEC §4) hold headings, prose, blockquotes, bullets without
links, `./x.md` links and links into subfolders (`team/x.md`): all legal, and
only the linked list items are entries. The reference strips HTML comments and
a frontmatter block before loading MEMORY.md (REFERENCE.md §3), so links inside
those, and inside fenced code, are not entries either.

A link target is never followed outside the memory directory: `normalize_target`
turns URLs (any scheme), absolute paths and `..` escapes into `None`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote

_ITEM = re.compile(r"^\s{0,12}(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
# [title](target "optional title"); the target may be <...> and hold balanced ().
# `[` comes before the lookbehind (same meaning) so the scan can jump between `[`s.
_LINK = re.compile(
    r"\[(?<![!\\]\[)(?P<title>(?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*)\]"
    r"\(\s*(?P<target><[^<>\n]*>|(?:[^\s()\\]|\\.|\([^\s()]*\))*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# em dash, en dash, ASCII dashes, colon, bar, comma
_HOOK_SEPARATORS = ("\u2014", "\u2013", "--", "-", ":", "|", ",")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexEntry:
    """One linked list item of MEMORY.md; `target` as written, without `<>`."""

    line: int  # 1-based
    title: str
    target: str
    hook: str
    raw: str  # the whole line, without its line ending
    column: int = 1  # 1-based column of the link's `[`


def parse_index(text: str) -> tuple[IndexEntry, ...]:
    """Return every linked list item of an index, in order; never raises."""
    entries: list[IndexEntry] = []
    fence: str | None = None
    in_comment = False
    in_frontmatter = text.startswith("---")
    for number, raw_line in enumerate(text.split("\n"), start=1):
        line = raw_line.removesuffix("\r")
        if in_frontmatter:
            # Line 1 opens the block; the next `---` line closes it.
            if (number == 1) == (line.rstrip() != "---"):
                in_frontmatter = False
            else:
                continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening and not in_comment:
            fence = opening.group(1)
            continue
        visible, in_comment = _strip_comments(line, in_comment)
        quote = _QUOTE.match(visible)
        if quote:
            # A list inside a blockquote still points at its files.
            visible = " " * quote.end() + visible[quote.end() :]
        item = _ITEM.match(visible)
        if item is None:
            continue
        entries.extend(_entries_in(visible, item.end(), number, line))
    return tuple(entries)


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """Return the line without `<!-- -->` parts, and whether a comment stays open."""
    if not in_comment and "<!--" not in line:
        return line, False  # the common case: no comment at all
    out: list[str] = []
    pos = 0
    while pos <= len(line):
        if in_comment:
            end = line.find("-->", pos)
            if end < 0:
                return "".join(out), True
            pos, in_comment = end + 3, False
        else:
            start = line.find("<!--", pos)
            if start < 0:
                out.append(line[pos:])
                break
            out.append(line[pos:start])
            pos, in_comment = start + 4, True
    return "".join(out), in_comment


def _entries_in(visible: str, start: int, number: int, raw: str) -> list[IndexEntry]:
    entries: list[IndexEntry] = []
    for position, match in enumerate(_LINK.finditer(visible, start)):
        if _in_code_span(visible, match.start()):
            continue
        target = match.group("target")
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1]
        hook = _hook(visible[match.end() :]) if position == 0 else ""
        entries.append(
            IndexEntry(
                line=number,
                title=match.group("title").strip(),
                target=target.strip(),
                hook=hook,
                raw=raw,
                column=match.start() + 1,
            )
        )
    return entries


def _in_code_span(line: str, index: int) -> bool:
    return line.count("`", 0, index) % 2 == 1


def _hook(rest: str) -> str:
    hook = rest.strip().removeprefix("**").removeprefix("*").strip()
    for separator in _HOOK_SEPARATORS:
        if hook.startswith(separator):
            return hook[len(separator) :].strip()
    return hook


def classify_target(target: str) -> tuple[str | None, str]:
    """Return (relpath or None, why): "ok", "url", "absolute", "outside" or "empty".

    The relpath is POSIX and relative to the memory directory; a `#anchor` or
    `?query` is dropped and percent-encoding is decoded first, so `%2e%2e/x`
    is caught as leaving the directory.
    """
    value = target.strip()
    if value.startswith("<") and value.endswith(">"):
        value = value[1:-1].strip()
    if value.startswith("//") or _SCHEME.match(value):
        return None, "url"  # http:, file:, mailto:, a Windows drive (C:), //host
    for mark in ("#", "?"):
        value = value.partition(mark)[0]
    value = unquote(value)
    if not value:
        return None, "empty"
    if "\x00" in value or "\\" in value:
        return None, "outside"  # a backslash is a separator on Windows: never trusted
    if value.startswith("/") or _SCHEME.match(value):
        return None, "absolute" if value.startswith("/") else "url"
    normal = posixpath.normpath(value)
    if normal in (".", "..") or normal.startswith("../"):
        return None, "outside" if normal != "." else "empty"
    return normal, "ok"


def normalize_target(target: str) -> str | None:
    """Return the target's POSIX relpath in the memory dir, or None if it leaves it."""
    return classify_target(target)[0]
