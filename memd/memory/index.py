"""Read MEMORY.md's links: every Markdown link to a file, wherever it stands.

The agent reads the whole index text (SPEC §4), so a link anywhere in it
reaches its file: in list items, table rows, headings, paragraphs and
blockquotes, as `[x](x.md)`, as a reference-style `[x][1]` with its
`[1]: x.md` definition, or as a `[[name]]` wiki-link (current Claude Code
tells the model to link memories by their `name:` slug, REFERENCE.md
"`[[name]]` links"). The reference strips HTML comments and a frontmatter
block before loading MEMORY.md (REFERENCE.md §3), so links inside those, and
inside fenced or inline code, do not count.

An *entry* is a link that is the first content of its line, of its list
item or of its table row (after any emphasis or task box); every other link
is a *reference*. Both reach their file; only entries can be duplicates.
For line lengths, every list item and table row counts as an entry line.

The scanner works line by line and is linear in the text: brackets, parens
and code spans are matched once per line with stacks, never by backtracking.

A link target is never followed outside the memory directory: `normalize_target`
turns URLs (any scheme), absolute paths and `..` escapes into `None`.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from dataclasses import dataclass

from memd.claude_code.html_comments import comment_free_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

_ITEM = re.compile(r"^\s{0,12}(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
# `[label]: target "title"` at the start of a line (CommonMark link definitions).
_DEFINITION = re.compile(r"^\s{0,3}\[([^\[\]]{1,999})\]:\s*(<[^<>]*>|\S+)")
_TITLE = re.compile(r"\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\))\s*")
# Leading emphasis or a task box may stand before a line's first link.
_LEAD = re.compile(r"[\s*_~]*(?:\[[ xX]\]\s+)?[\s*_~]*")
# em dash, en dash, ASCII dashes, colon, bar, comma
_HOOK_SEPARATORS = ("\u2014", "\u2013", "--", "-", ":", "|", ",")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_SLUG_OTHER = re.compile(r"[^a-z0-9_-]+")
# The line shapes compaction (memd.lint.compact) needs, shared so both agree.
LIST_ITEM, HEADING, DEFINITION = _ITEM, _HEADING, _DEFINITION
# The first body line of a hub: a topic file memd wrote that MEMORY.md links
# in place of entries it moved there; links in a hub reach their files.
HUB_MARKER = "<!-- memd:hub -->"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexEntry:
    """One link in MEMORY.md; `target` as written, without `<>`.

    For a wiki-link (`is_wiki`) the target is the linked name, which
    `resolve_wiki_link` turns into a file.
    """

    line: int  # 1-based
    title: str
    target: str
    hook: str
    raw: str  # the whole line, without its line ending
    column: int = 1  # 1-based column of the link's `[`
    is_entry: bool = True  # False: a reference inside some other line
    is_wiki: bool = False
    in_list_item: bool = False  # the line is a list item (what `memd fix` writes)


def parse_index(text: str) -> tuple[IndexEntry, ...]:
    """Return every link of an index, entries and references, in order; never raises."""
    lines = tuple(_visible_lines(text))
    definitions = _definitions(lines)
    used: set[str] = set()
    found: list[IndexEntry] = []
    for number, raw, visible in lines:
        definition = _DEFINITION.match(visible)
        if definition is not None and _label(definition.group(1)) in definitions:
            continue  # a definition is counted where it is used, or below if never
        found.extend(_line_links(number, raw, visible, definitions, used))
    for label, (number, raw, column, target) in definitions.items():
        if label not in used:
            found.append(
                IndexEntry(
                    line=number,
                    title=label,
                    target=target,
                    hook="",
                    raw=raw,
                    column=column,
                    is_entry=False,
                )
            )
    return tuple(sorted(found, key=lambda e: (e.line, e.column)))


def entry_line_numbers(text: str, links: tuple[IndexEntry, ...]) -> frozenset[int]:
    """Return the lines of `text` that are entries: list items, table rows, and
    lines whose first content is a link (`links` is `parse_index(text)`)."""
    numbers = {e.line for e in links if e.is_entry}
    for number, _, visible in _visible_lines(text):
        if _ITEM.match(visible) or visible.lstrip().startswith("|"):
            numbers.add(number)
    return frozenset(numbers)


# What would change how an entry line reads, in memd's parser or the agent's:
# a bracket opening a link, reference or wiki-link, `<!` opening a comment,
# `<` a tag or autolink, and the backslash that would escape our escapes.
_INLINE_SPECIALS = "\\[]<>!`"


def escape_inline(text: str, *, keep_code: bool = False) -> str:
    """Return `text` with Markdown's inline specials backslash-escaped.

    The escaped text reads as plain words on one line: no link, comment, tag
    or code span starts in it (`keep_code` leaves backticks, whose spans end
    within the text they start in when it is the last part of a line).
    """
    specials = _INLINE_SPECIALS.replace("`", "") if keep_code else _INLINE_SPECIALS
    if not any(c in text for c in specials):
        return text
    return "".join("\\" + c if c in specials else c for c in text)


def appended_entry_problem(old_text: str, new_text: str, relpath: str) -> str | None:
    """Return why `new_text` does not read as `old_text` plus one entry, else None.

    `new_text` is `old_text` with one line appended. It is right only when that
    line holds exactly one link, an entry reaching `relpath`, and every other
    line reads exactly as before: so a written entry can never hide, add or
    change another line's links (an unclosed comment or fence would).
    """
    line = new_text.rstrip("\n").count("\n") + 1

    def shape(links: tuple[IndexEntry, ...]) -> list[tuple[object, ...]]:
        return [
            (e.line, e.column, e.title, e.target, e.hook, e.is_entry, e.is_wiki)
            for e in links
            if e.line != line
        ]

    new_links = parse_index(new_text)
    own = [e for e in new_links if e.line == line]
    if not own:
        return (
            "MEMORY.md leaves an HTML comment (<!--) or a code fence (```) open "
            "above its end, so a new entry would be hidden; close it first"
        )
    if (
        len(own) != 1
        or not own[0].is_entry
        or own[0].is_wiki
        or normalize_target(own[0].target) != relpath
    ):
        return "the index line would not read as one entry linking the new file"
    if shape(new_links) != shape(parse_index(old_text)):
        return "the index line would change how other lines of MEMORY.md read"
    return None


def wiki_names(text: str) -> tuple[str, ...]:
    """Return the names of the `[[name]]` links in a Markdown body, in order."""
    if "[[" not in text:
        return ()  # the common case: no wiki-link at all
    return tuple(e.target for e in parse_index(text) if e.is_wiki)


def slug(name: str) -> str:
    """Return `name` as the agent slugs it (REFERENCE.md §8, "Writing")."""
    if re.fullmatch(r"[a-z0-9_-]+", name):
        return name
    return _SLUG_OTHER.sub("-", name.lower()).strip("-")


def resolve_wiki_link(
    name: str, names: Mapping[str, str], relpaths: Iterable[str]
) -> str | None:
    """Return the relpath a `[[name]]` reaches: by `name:` first, then by file stem.

    `names` maps each topic file's relpath to its `name:`; the agent links by
    the name slug, so a name matches as written or slugged.
    """
    wanted = name.strip()
    for relpath, value in names.items():
        if value.strip() == wanted:
            return relpath
    wanted_slug = slug(wanted)
    for relpath, value in names.items():
        if wanted_slug and slug(value.strip()) == wanted_slug:
            return relpath
    for relpath in relpaths:
        stem = relpath.rsplit("/", 1)[-1].removesuffix(".md")
        if wanted in (stem, relpath.removesuffix(".md")):
            return relpath
    return None


def visible_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """Yield (number, line, visible text) of the lines the parser reads."""
    return _visible_lines(text)


def is_hub(body: str) -> bool:
    """Return True when a topic file's body is a hub memd wrote (`HUB_MARKER`)."""
    return body.lstrip("\n").startswith(HUB_MARKER)


def _visible_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """Yield (number, line, visible text) outside frontmatter and fenced code.

    The visible text loses the HTML comments the agent strips (only those of
    top-level comment blocks: `memd.claude_code.html_comments`, so a link in a
    comment inside a list item still reaches the agent and counts here) and
    has blockquote markers blanked, so a list or a link inside a blockquote
    reads as it would outside one.
    """
    lines = [raw_line.removesuffix("\r") for raw_line in text.split("\n")]
    body = _frontmatter_end(lines) if text.startswith("---") else 0
    shown = lines
    if "<!--" in text:
        shown = [""] * body + comment_free_lines(lines[body:])
    fence: str | None = None
    for number in range(body + 1, len(lines) + 1):
        line, visible = lines[number - 1], shown[number - 1]
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        opening = _FENCE.match(visible)
        if opening:
            fence = opening.group(1)
            continue
        quote = _QUOTE.match(visible)
        if quote:
            visible = " " * quote.end() + visible[quote.end() :]
        yield number, line, visible


def _frontmatter_end(lines: list[str]) -> int:
    """Return how many lines a leading `---` block takes (all when unclosed)."""
    if lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return index + 1
    return len(lines)


_Definitions = dict[
    str, tuple[int, str, int, str]
]  # label -> (line, raw, column, target)


def _label(text: str) -> str:
    return " ".join(text.split()).casefold()


def _definitions(lines: tuple[tuple[int, str, str], ...]) -> _Definitions:
    """Return the `[label]: target` definitions; the first of a label wins."""
    found: _Definitions = {}
    for number, raw, visible in lines:
        match = _DEFINITION.match(visible)
        if match is None:
            continue
        label = _label(match.group(1))
        if label and not label.startswith("^") and label not in found:
            target = match.group(2).removeprefix("<").removesuffix(">").strip()
            found[label] = (number, raw, match.start(1), target)
    return found


def _line_links(
    number: int, raw: str, visible: str, definitions: _Definitions, used: set[str]
) -> Iterator[IndexEntry]:
    item = _ITEM.match(visible)
    stripped = visible.lstrip()
    is_row = stripped.startswith("|")
    if item is not None:
        start = item.end()
    elif is_row:
        start = len(visible) - len(stripped) + 1
    else:
        heading = _HEADING.match(visible)
        start = heading.end() if heading else len(visible) - len(stripped)
    lead = _LEAD.match(visible, start).end()  # type: ignore[union-attr]
    for position, (column, end, title, target, is_wiki) in enumerate(
        _scan(visible, start, definitions, used)
    ):
        is_entry = position == 0 and column == lead
        yield IndexEntry(
            line=number,
            title=title.strip(),
            target=target.strip(),
            hook=_hook(visible[end:]) if is_entry else "",
            raw=raw,
            column=column + 1,
            is_entry=is_entry,
            is_wiki=is_wiki,
            in_list_item=item is not None,
        )


_Link = tuple[int, int, str, str, bool]  # (start, end, title, target, is_wiki)


def _scan(
    line: str, start: int, definitions: _Definitions, used: set[str]
) -> Iterator[_Link]:
    """Yield the links of one line from `start`, left to right, in linear time."""
    if "[" not in line:
        return
    in_code = _code_mask(line)
    brackets, parens = _match_pairs(line, in_code)
    after = start  # a link's text and target hold no further links
    for opening in brackets:  # in the order the brackets open
        if opening < after or (opening > 0 and line[opening - 1] == "!"):
            continue
        link = _link_at(line, opening, brackets, parens, definitions, used)
        if link is not None:
            after = link[1]
            yield link


def _link_at(
    line: str,
    opening: int,
    brackets: dict[int, int],
    parens: dict[int, int],
    definitions: _Definitions,
    used: set[str],
) -> _Link | None:
    closing = brackets[opening]
    text = line[opening + 1 : closing]
    if text.startswith("[") and brackets.get(opening + 1) == closing - 1:
        name = text[1:-1].partition("|")[0].partition("#")[0]
        if name.strip():
            shown = text[1:-1].partition("|")[2] or name
            return opening, closing + 1, shown, name, True
        return None
    following = line[closing + 1 : closing + 2]
    if following == "(" and closing + 1 in parens:
        end = parens[closing + 1]
        inline = _INLINE.match(line, closing + 2, end)
        if inline is not None and inline.end() == end:
            target = inline.group("target") or ""
            return (
                opening,
                end + 1,
                text,
                target.removeprefix("<").removesuffix(">"),
                False,
            )
        return None
    label, end = text, closing + 1
    if following == "[" and closing + 1 in brackets:
        label = line[closing + 2 : brackets[closing + 1]] or text
        end = brackets[closing + 1] + 1
    key = _label(label)
    if key in definitions:
        used.add(key)
        return opening, end, text, definitions[key][3], False
    return None


_INLINE = re.compile(
    r"\s*(?P<target><[^<>\n]*>|[^\s<]\S*)?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*"
)
_TOKEN = re.compile(r"\\.|[\[\]()]")
_TICKS = re.compile(r"`+")


def _code_mask(line: str) -> bytearray:
    """Return 1 for each character of `line` inside an inline code span, else 0.

    A run of N backticks opens a span closed by the next run of exactly N
    (CommonMark); an unmatched run is literal text, and so is a backtick
    escaped by a backslash outside a span (inside one a backslash is literal).
    """
    mask = bytearray(len(line))
    if "`" not in line:
        return mask
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}  # run length -> indexes of such runs
    for k, (begin, end) in enumerate(runs):
        by_length.setdefault(end - begin, []).append(k)
    k = 0
    while k < len(runs):
        begin, end = runs[k]
        slashes = 0  # the backslashes between the last run and this one
        while begin - slashes > 0 and line[begin - slashes - 1] == "\\":
            slashes += 1
        begin += slashes % 2
        same = by_length.get(end - begin, [])
        after = bisect.bisect_right(same, k)
        if begin == end or after == len(same):
            k += 1
            continue
        partner = same[after]
        close = runs[partner][1]
        mask[begin:close] = b"\x01" * (close - begin)
        k = partner + 1
    return mask


def _match_pairs(
    line: str, in_code: bytearray
) -> tuple[dict[int, int], dict[int, int]]:
    """Return the matched `[`→`]` (in opening order) and `(`→`)` positions,
    skipping escapes and code."""
    brackets: dict[int, int] = {}
    parens: dict[int, int] = {}
    open_brackets: list[int] = []
    open_parens: list[int] = []
    for token in _TOKEN.finditer(line):
        at = token.start()
        if in_code[at] or len(token.group()) != 1:
            continue
        char = token.group()
        if char == "[":
            open_brackets.append(at)
            brackets[at] = -1  # a placeholder keeps the dict in opening order
        elif char == "(":
            open_parens.append(at)
        elif char == "]" and open_brackets:
            brackets[open_brackets.pop()] = at
        elif char == ")" and open_parens:
            parens[open_parens.pop()] = at
    for unmatched in open_brackets:
        del brackets[unmatched]
    return brackets, parens


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
    if "%" in value:  # urllib.parse costs a hook 1.4 ms; nothing to decode without
        from urllib.parse import unquote

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


def linked_relpaths(text: str) -> frozenset[str]:
    """Return the relpaths `text`, read as an index, links to (entries and references).

    The one answer to "is this file linked from MEMORY.md": the dream, an MCP
    write and `memd fix` ask it, so they agree on `./x.md#a`, a link in a
    code fence or an HTML comment (none there), and a reference definition.
    """
    found = (normalize_target(entry.target) for entry in parse_index(text))
    return frozenset(relpath for relpath in found if relpath is not None)
