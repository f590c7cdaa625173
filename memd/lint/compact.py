"""Compact an over-long MEMORY.md into hubs it links, so nothing is cut (pure).

The agent loads MEMORY.md through `truncate_entrypoint` (REFERENCE.md §3):
after frontmatter and top-level HTML comments are stripped, the first 200
lines and then 25,000 UTF-16 units; what lies past the cut is never seen,
and that is the newest entries. An index over `TRIGGER` (90 % of either
limit, measured exactly as the agent measures it) is rewritten to fit
`TARGET` (80 % of both: 160 lines, 20,000 units), which leaves room for about
20 more one-line entries before the next compaction:

- Entries are grouped by their section heading; entries above any heading,
  or under the index's own title (a leading level-1 heading), by the memory
  type of the file they link.
- The most recently changed entries (their topic files' mtimes) stay in
  MEMORY.md, at the top of their group; the others move, byte for byte, into
  a hub file per group (`index-<group>.md`, split into parts that stay under
  the 4 KiB recall shows), and the group ends with a line linking each hub.
  A hub's index line and its `description` name the group and the first
  entries it holds, so the agent's recall, which picks files by their
  descriptions, still finds them.
- Lines that are not entries (prose, notes, comments, code) move, in order
  and under their headings, into one notes hub, `index-notes.md`; nothing is
  deleted.
- Every file MEMORY.md reached stays reachable: directly, or through one hub
  MEMORY.md links (hubs carry `HUB_MARKER`, and lint counts their links).
  The result is checked for that before it is returned.

`place_entries` is the one way memd adds entries to an index: it appends
them, and compacts instead when the result would cross `TRIGGER`, or, when
the caller cannot compact, refuses (naming `memd fix`) rather than put an
entry past the cut.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from memd.claude_code.prompt import view_index
from memd.claude_code.terms import MEMORY_TYPES
from memd.claude_code.truncation import MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_UNITS
from memd.lint.reach import classify_links, file_body, reachable
from memd.memory.index import (
    DEFINITION,
    HEADING,
    HUB_MARKER,
    LIST_ITEM,
    escape_inline,
    is_hub,
    parse_index,
    visible_lines,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from memd.memory.index import IndexEntry
    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile


@dataclass(frozen=True, slots=True)
class Limits:
    """An index size as the agent counts it: lines and UTF-16 units."""

    lines: int
    units: int


AGENT_LIMITS = Limits(MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_UNITS)
TRIGGER = Limits(MAX_ENTRYPOINT_LINES * 9 // 10, MAX_ENTRYPOINT_UNITS * 9 // 10)
TARGET = Limits(MAX_ENTRYPOINT_LINES * 8 // 10, MAX_ENTRYPOINT_UNITS * 8 // 10)
HUB_BYTES = 3_900  # under the 4,096 bytes recall shows of a file (2.1.332)
HUB_LINE_CHARS = 150  # the reference's prompt asks for index lines under ~150
NOTES_STEM = "index-notes"
FIX_COMMAND = "memd fix"
_WHY = (
    "**Why:** MEMORY.md loads only its first 200 lines (25,000 units), so "
    "`memd fix` moved these entries here to keep every memory reachable."
)
_HOW = (
    "**How to apply:** read the memory below whose line matches the task; "
    "`memd fix --undo` puts them back."
)
_NOTES_WHY = (
    "**Why:** MEMORY.md loads only its first 200 lines (25,000 units), so "
    "`memd fix` moved its prose and notes here, unchanged."
)
_NOTES_HOW = "**How to apply:** read these notes as part of MEMORY.md."
_PREAMBLE = frozenset({HUB_MARKER, _WHY, _HOW, _NOTES_WHY, _NOTES_HOW})
_SEPARATOR_CELL = frozenset("-: ")


def index_size(text: str | None) -> Limits:
    """Return MEMORY.md's size as the agent counts it (after strip and trim)."""
    truncation = view_index(text).truncation
    if truncation is None:
        return Limits(0, 0)
    return Limits(truncation.line_count, truncation.byte_count)


def _within(size: Limits, limits: Limits) -> bool:
    return size.lines <= limits.lines and size.units <= limits.units


def loads_whole(text: str) -> bool:
    """Return True when the agent loads all of `text` (nothing past the cut)."""
    return _within(index_size(text), AGENT_LIMITS)


def needs_compaction(text: str | None) -> bool:
    """Return True when an index is past `TRIGGER` (90 % of either limit)."""
    return not _within(index_size(text), TRIGGER)


@dataclass(frozen=True, slots=True, kw_only=True)
class HubWrite:
    """One hub file to write (`old` None: create it)."""

    relpath: str
    old: bytes | None
    new: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """What one compaction writes: the hubs, then MEMORY.md; and what it removes."""

    index: str  # MEMORY.md's new text
    hubs: tuple[HubWrite, ...]
    deletes: tuple[str, ...]  # old hubs no longer needed
    moved: int  # entries moved into hubs
    kept: int  # entries left in MEMORY.md
    size: Limits  # MEMORY.md's new size


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """What `place_entries` decided: the new index text, a compaction, or a refusal."""

    index_text: str | None  # None: refused
    compaction: Compaction | None = None
    refusal: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Topics:
    """What compaction needs to know of the directory's topic files."""

    files: tuple[MemoryFile, ...]
    mtimes_ns: Mapping[str, int]
    raw: Mapping[str, bytes]  # current bytes of the hubs (at least)
    taken: frozenset[str]  # every relpath that exists

    @classmethod
    def of(cls, memdir: MemDir, raw: Mapping[str, bytes]) -> Topics:
        taken = {f.relpath for f in memdir.files} | set(memdir.unreadable_paths)
        taken.update(memdir.log_files)
        taken.update(d.path for d in memdir.diagnostics)
        return cls(
            files=memdir.files,
            mtimes_ns=memdir.mtimes_ns,
            raw=raw,
            taken=frozenset(taken),
        )

    def hub_relpaths(self) -> tuple[str, ...]:
        return tuple(f.relpath for f in self.files if is_hub(f.body))


def full_message(size: Limits) -> str:
    """Return the refusal for an index with no room: it names `memd fix`."""
    return (
        f"MEMORY.md has no room for another entry within the "
        f"{AGENT_LIMITS.lines} lines / {AGENT_LIMITS.units:,} units the agent "
        f"loads (it is {size.lines} lines, {size.units:,} units); run "
        f"`{FIX_COMMAND}` to compact it into hub files it links"
    )


def place_entries(
    index_text: str, lines: Sequence[str], topics: Topics | None
) -> Placement:
    """Return `index_text` with `lines` appended, within budget.

    When the result would cross `TRIGGER` and `topics` is given, the index is
    compacted instead (the new lines included); without `topics`, an index
    that would no longer load whole is refused with a message naming
    `memd fix`. No entry is ever placed past the agent's cut.
    """
    body = index_text.rstrip("\r\n") if index_text.strip() else ""
    eol = "\r\n" if _is_crlf(index_text) else "\n"
    candidate = eol.join([body, *lines] if body else list(lines))
    if candidate:
        candidate += eol
    if not lines and not needs_compaction(candidate):
        return Placement(index_text=index_text)
    if topics is not None and needs_compaction(candidate):
        compaction = compact_index(candidate, topics)
        if compaction is not None:
            return Placement(
                index_text=compaction.index,
                compaction=compaction,
            )
    if loads_whole(candidate):
        return Placement(index_text=candidate if lines else index_text)
    return Placement(index_text=None, refusal=full_message(index_size(candidate)))


# -- reading an index into blocks ---------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _Block:
    """Consecutive lines that move together: one entry, or one run of prose."""

    lines: tuple[str, ...]
    section: int  # index into the sections; 0: above any heading
    is_entry: bool
    targets: tuple[str, ...] = ()  # local relpaths its links reach
    title: str = ""  # the first link's text
    table: tuple[str, ...] = ()  # the header and separator rows of its table
    order: int = 0  # position in the pool


@dataclass(frozen=True, slots=True, kw_only=True)
class _Section:
    heading: str | None  # the heading line as written
    level: int
    label: str  # the heading's words, for hub names


@dataclass(slots=True)
class _Parsed:
    front: list[str]
    sections: list[_Section]
    blocks: list[_Block]
    definitions: list[tuple[str, str]]  # (label, line) used by some link
    title: int | None = None  # the section that is the index's own title


def _is_crlf(text: str) -> bool:
    return text.count("\r\n") * 2 > text.count("\n")


def _label_key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _is_separator_row(line: str) -> bool:
    cells = line.strip().strip("|").split("|")
    return all(c.strip() and set(c) <= _SEPARATOR_CELL and "-" in c for c in cells)


def _heading_label(line: str) -> str:
    return " ".join(line.strip().lstrip("#").strip().rstrip("#").split())


def _parse(text: str, *, start_sections: list[_Section] | None = None) -> _Parsed:
    """Split an index (or a hub's body) into frontmatter, sections and blocks."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    visible = {number: shown for number, _, shown in visible_lines(text)}
    front: list[str] = []
    if lines and lines[0].rstrip() == "---":  # the frontmatter, as the parser reads it
        end = next(
            (n for n in range(1, len(lines)) if lines[n].rstrip() == "---"), None
        )
        front = lines[: end + 1] if end is not None else lines
    links_by_line: dict[int, list[str]] = {}
    titles: dict[int, str] = {}
    links = parse_index(text)
    for link, (relpath, _) in zip(links, classify_links(links, ()), strict=True):
        target = relpath if not link.is_wiki else None
        if link.is_wiki:
            target = "[[" + link.target + "]]"  # resolved by name later
        if target is not None:
            links_by_line.setdefault(link.line, []).append(target)
            titles.setdefault(link.line, link.title)
    definition_lines = {
        n: DEFINITION.match(v) for n, v in visible.items() if DEFINITION.match(v)
    }
    used_labels = _used_labels(lines)
    defined: set[str] = set()
    first_links: dict[int, IndexEntry] = {}
    for link in links:
        first_links.setdefault(link.line, link)
    sections = start_sections if start_sections is not None else []
    if not sections:
        sections.append(_Section(heading=None, level=0, label=""))
    parsed = _Parsed(front=front, sections=sections, blocks=[], definitions=[])
    section = 0
    prose: list[str] = []

    counted = [0, 0]  # lines of `prose` counted so far, and their bytes

    def split_long_prose() -> None:
        # A long run of plain lines is cut at a visible line, never in a fence
        # or a comment, so a notes hub stays within what recall shows.
        lines_counted, size = counted
        size += sum(len(line.encode("utf-8")) + 1 for line in prose[lines_counted:])
        counted[:] = [len(prose), size]
        if size > HUB_BYTES // 2:
            flush_prose()

    def flush_prose() -> None:
        while prose and not prose[-1].strip():
            prose.pop()
        if prose:
            parsed.blocks.append(
                _Block(lines=tuple(prose), section=section, is_entry=False)
            )
        prose.clear()
        counted[:] = [0, 0]

    number = len(front) + 1
    while number <= len(lines):
        raw = lines[number - 1]
        shown = visible.get(number)
        if raw in _PREAMBLE:  # what memd wrote at the top of a hub
            number += 1
            continue
        if shown is None or (not shown.strip() and raw.strip()):
            prose.append(raw)  # fenced code, an HTML comment
            number += 1
            continue
        if not raw.strip():
            if prose and prose[-1].strip():
                prose.append("")
            number += 1
            continue
        if HEADING.match(shown):
            flush_prose()
            level = len(shown.lstrip()) - len(shown.lstrip().lstrip("#"))
            sections.append(
                _Section(heading=raw, level=level, label=_heading_label(shown))
            )
            section = len(sections) - 1
            number += 1
            continue
        match = definition_lines.get(number)
        if match is not None:
            label = _label_key(match.group(1))
            if label in used_labels and label not in defined:
                parsed.definitions.append((label, raw))
                defined.add(label)  # the first of a label is the one links use
            else:
                split_long_prose()
                prose.append(raw)  # used by nothing: a plain link, kept as a note
            number += 1
            continue
        if shown.lstrip().startswith("|"):
            end = number
            while (
                end + 1 <= len(lines)
                and visible.get(end + 1, "").lstrip().startswith("|")
                and lines[end].strip()
            ):
                end += 1
            rows = list(range(number, end + 1))
            header: tuple[str, ...] = ()
            if len(rows) >= 2 and _is_separator_row(lines[rows[1] - 1]):
                header = (lines[rows[0] - 1], lines[rows[1] - 1])
                rows = rows[2:]
            pending: list[str] = []
            for row in rows:
                targets = links_by_line.get(row, [])
                if targets:
                    if pending:
                        prose.extend([*header, *pending] if header else pending)
                        pending = []
                    flush_prose()
                    parsed.blocks.append(
                        _Block(
                            lines=(lines[row - 1],),
                            section=section,
                            is_entry=True,
                            targets=tuple(targets),
                            title=titles.get(row, ""),
                            table=header,
                        )
                    )
                else:
                    pending.append(lines[row - 1])
            if pending or (header and not rows):
                prose.extend([*header, *pending])
            number = end + 1
            continue
        item = LIST_ITEM.match(shown)
        if item is not None:
            indent = len(shown) - len(shown.lstrip())
            end = number
            while end + 1 <= len(lines):
                nxt = visible.get(end + 1)
                if nxt is None or not nxt.strip() or HEADING.match(nxt):
                    break
                if len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                end += 1
            span = range(number, end + 1)
            targets = [t for n in span for t in links_by_line.get(n, [])]
            block_lines = tuple(lines[n - 1] for n in span)
            if targets:
                flush_prose()
                parsed.blocks.append(
                    _Block(
                        lines=block_lines,
                        section=section,
                        is_entry=True,
                        targets=tuple(targets),
                        title=next((titles[n] for n in span if n in titles), ""),
                    )
                )
            else:
                split_long_prose()
                prose.extend(block_lines)
            number = end + 1
            continue
        targets = links_by_line.get(number, [])
        first = first_links.get(number)
        if targets and first is not None and first.is_entry:
            flush_prose()
            parsed.blocks.append(
                _Block(
                    lines=(raw,),
                    section=section,
                    is_entry=True,
                    targets=tuple(targets),
                    title=first.title,
                )
            )
        else:
            split_long_prose()
            prose.append(raw)
        number += 1
    flush_prose()
    if start_sections is None:
        level_one = [n for n, s in enumerate(sections) if s.level == 1]
        if level_one == [1]:
            parsed.title = 1
    return parsed


_BRACKETED = re.compile(r"\[([^\[\]\n]{1,999})\]")


def _used_labels(lines: Iterable[str]) -> set[str]:
    """Return every `[label]` the lines (not definitions) may use (over-inclusive)."""
    used: set[str] = set()
    for line in lines:
        if "[" in line and not DEFINITION.match(line):
            used.update(_label_key(m.group(1)) for m in _BRACKETED.finditer(line))
    return used


# -- grouping and rendering ------------------------------------------------------


@dataclass(slots=True)
class _Group:
    key: tuple[str, str]  # ("section", label) or ("type", type)
    label: str
    section: int | None  # the MEMORY.md section it renders under; None: the top
    blocks: list[_Block]


def _slug(label: str) -> str:
    from memd.memory.dialect import slugify

    slug = slugify(label.lower())[:40].strip("-_")
    if not slug or not slug.isascii():
        slug = f"{zlib.crc32(label.encode('utf-8', 'replace')):08x}"
    return slug


def _type_of(block: _Block, types: Mapping[str, str]) -> str:
    for target in block.targets:
        kind = types.get(target)
        if kind in MEMORY_TYPES:
            return kind
    return "other"


def _groups(
    blocks: list[_Block],
    parsed: _Parsed,
    types: Mapping[str, str],
    coarse: bool,
) -> list[_Group]:
    groups: dict[tuple[str, str], _Group] = {}
    sections = parsed.sections
    for block in blocks:
        if coarse or block.section in (0, parsed.title):
            kind = _type_of(block, types)
            key, label, at = ("type", kind), kind, None
        else:
            section = sections[block.section]
            key = ("section", _label_key(section.label))
            label, at = section.label[:60] or "notes", block.section
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(key=key, label=label, section=at, blocks=[])
        group.blocks.append(block)
    order = {kind: n for n, kind in enumerate((*MEMORY_TYPES, "other"))}
    return sorted(
        groups.values(),
        key=lambda g: (
            g.section is not None,
            g.section or 0,
            order.get(g.key[1], 0) if g.key[0] == "type" else 0,
        ),
    )


def _render_blocks(
    blocks: Sequence[_Block], parsed: _Parsed, under: int | None
) -> list[str]:
    """Entry lines as written, each table run under its header, headings kept.

    `under` is the section the lines are placed in, whose heading is already there.
    """
    out: list[str] = []
    table: tuple[str, ...] = ()
    section: int | None = under
    for block in blocks:
        heading = parsed.sections[block.section].heading
        if block.section in (0, parsed.title, under):
            heading = None
        if block.section != section and heading is not None:
            if out and out[-1] != "":
                out.append("")
            out.append(heading)
            table = ()
        section = block.section
        if block.table != table:
            if out and out[-1] != "":  # a table starts, or ends, a block of its own
                out.append("")
            out.extend(block.table)
            table = block.table
        out.extend(block.lines)
    return out


def _hub_text(name: str, description: str, kind: str, body: list[str]) -> str:
    """Return a hub file: classic frontmatter, the marker, then `body`.

    A JSON string is a YAML double-quoted scalar, so `name` and `description`
    (printable text, `_plain`) need no YAML dumper: a layout is rendered
    many times while the one that fits is searched for.
    """
    from memd.fastjson import dumps

    head = f"name: {dumps(name)}\ndescription: {dumps(description)}\ntype: {kind}\n"
    return "---\n" + head + "---\n" + HUB_MARKER + "\n" + "\n".join(body) + "\n"


def _plain(text: str) -> str:
    return "".join(c for c in " ".join(text.split()) if c.isprintable())


def _describe(lead: str, blocks: Sequence[_Block], limit: int) -> str:
    """Return `lead` and the titles of the entries, within `limit` display columns.

    Columns as lint counts them (`display_columns`: a wide character is two),
    so a hub's description never draws M013.
    """
    from memd.lint.checks_frontmatter import display_columns

    text = lead
    for number, block in enumerate(blocks):
        title = _plain(block.title)
        if not title:
            continue
        candidate = f"{text}{': ' if text == lead else ', '}{title}"
        if display_columns(candidate) > limit - 2:
            return text + "…" if number else text
        text = candidate
    return text


@dataclass(slots=True)
class _Layout:
    index: str
    hubs: dict[str, str]  # relpath -> text
    moved: int
    kept: int


_HUB_HEAD_BYTES = 900  # frontmatter, marker and the Why/How lines, at most


def _hub_parts(blocks: list[_Block], hub_bytes: int) -> list[list[_Block]]:
    """Split `blocks` into hubs of at most `hub_bytes`, as even as it goes."""

    def cost(block: _Block) -> int:
        return sum(
            len(line.encode("utf-8")) + 1 for line in (*block.lines, *block.table)
        )

    def split(limit: int) -> list[list[_Block]]:
        parts: list[list[_Block]] = [[]]
        size = _HUB_HEAD_BYTES
        for block in blocks:
            if parts[-1] and size + cost(block) > limit:
                parts.append([])
                size = _HUB_HEAD_BYTES
            parts[-1].append(block)
            size += cost(block)
        return parts

    greedy = split(hub_bytes)
    if len(greedy) == 1:
        return greedy
    total = sum(cost(b) for b in blocks)
    even = split(_HUB_HEAD_BYTES + total // len(greedy) + max(map(cost, blocks)))
    return even if len(even) == len(greedy) else greedy


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pool:
    """Everything a layout is made of, gathered once."""

    parsed: _Parsed
    entries: list[_Block]
    prose: list[_Block]
    old_notes: tuple[tuple[str, str], ...]  # (relpath, text) of the notes hubs
    reusable: frozenset[str]  # hubs whose entries are in the pool
    topics: Topics
    eol: str


def _render(pool: _Pool, keep: set[int], coarse: bool, hub_bytes: int) -> _Layout:
    parsed, topics = pool.parsed, pool.topics
    types = {f.relpath: f.type or "" for f in topics.files}
    sections = parsed.sections
    groups = _groups(pool.entries, parsed, types, coarse)
    hub_names: dict[str, str] = {}
    existing = pool.reusable
    used_names = {
        f.name.casefold() for f in topics.files if f.name and not is_hub(f.body)
    }

    def hub_path(stem: str) -> str:
        relpath, number = f"{stem}.md", 1
        while (relpath in topics.taken and relpath not in existing) or (
            relpath in hub_names
        ):
            number += 1
            relpath = f"{stem}-{number}.md"
        return relpath

    hubs: dict[str, str] = {}
    top: list[str] = []
    by_section: dict[int, list[str]] = {}
    moved = kept = 0
    for group in groups:
        staying = [b for b in group.blocks if b.order in keep]
        leaving = [b for b in group.blocks if b.order not in keep]
        kept += len(staying)
        moved += len(leaving)
        lines = _render_blocks(staying, parsed, group.section)
        if leaving:
            parts = _hub_parts(leaving, hub_bytes)
            stem = f"index-{_slug(group.label)}"
            if lines and lines[-1].lstrip().startswith("|"):
                lines.append("")
            for number, part in enumerate(parts, start=1):
                relpath = hub_path(stem if number == 1 else f"{stem}-part{number}")
                hub_names[relpath] = relpath
                which = f" (part {number} of {len(parts)})" if len(parts) > 1 else ""
                kind = group.key[1] if group.key[0] == "type" else "reference"
                if kind not in MEMORY_TYPES:
                    kind = "reference"
                name = f"MEMORY.md hub: {_plain(group.label)}{which}"
                while name.casefold() in used_names:
                    name += " (memd)"
                used_names.add(name.casefold())
                description = _describe(
                    f"{_plain(group.label)} memories moved out of MEMORY.md{which}",
                    part,
                    240,
                )
                body = ["", _WHY, _HOW, "", *_render_blocks(part, parsed, None)]
                hubs[relpath] = _hub_text(name, description, kind, body)
                label = escape_inline(f"{_plain(group.label)}: older entries{which}")
                line = f"- [{label}]({relpath})"
                hook = escape_inline(
                    _describe(
                        f"{len(part)} more", part, HUB_LINE_CHARS - len(line) - 3
                    ),
                    keep_code=False,
                )
                lines.append(f"{line} — {hook}")
        if group.section is None:
            top.extend(lines)
        else:
            by_section.setdefault(group.section, []).extend(lines)
    head: list[str] = list(parsed.front)
    title = None if parsed.title is None else sections[parsed.title]
    if title is not None and title.heading is not None:
        head.extend([title.heading, ""])
    out: list[str] = list(top)
    shown = set(by_section)
    for index in sorted(shown):
        for parent in _parents(sections, index):
            shown.add(parent)
    for index, section in enumerate(sections):
        if index not in shown or section.heading is None or section is title:
            continue
        if out and out[-1] != "":
            out.append("")
        out.append(section.heading)
        out.extend(by_section.get(index, []))
    # A heading that is neither in MEMORY.md nor above any moved line (a section
    # with nothing in it) goes to the notes too: no line of the index is lost.
    present = {*head, *out, *(line for t in hubs.values() for line in t.split("\n"))}
    prose = list(pool.prose)
    with_prose = {b.section for b in prose}
    prose += [
        _Block(lines=(), section=index, is_entry=False)
        for index, section in enumerate(sections)
        if section.heading is not None
        and section.heading not in present
        and index not in with_prose
    ]
    prose.sort(key=lambda b: b.section)
    notes = _notes_texts(prose, parsed, pool.old_notes, hub_bytes)
    for number, (old_relpath, notes_text) in enumerate(notes, start=1):
        relpath = old_relpath or hub_path(
            NOTES_STEM if number == 1 else f"{NOTES_STEM}-part{number}"
        )
        hub_names[relpath] = relpath
        hubs[relpath] = notes_text
        which = f" (part {number})" if number > 1 else ""
        head.append(
            f"- [Notes moved from MEMORY.md{which}]({relpath}) — the index's prose "
            "and notes, kept word for word"
        )
    out = head + out
    first_of_label: dict[str, str] = {}  # in order; the first of a label wins
    for label, line in parsed.definitions:
        first_of_label.setdefault(label, line)
    all_definitions = list(first_of_label.items())
    used = _used_labels(out)
    definitions = [line for label, line in all_definitions if label in used]
    for relpath, text in list(hubs.items()):
        hub_lines = text.split("\n")
        used, present = _used_labels(hub_lines), set(hub_lines)
        extra = [
            line
            for label, line in all_definitions
            if label in used and line not in present
        ]
        if extra:
            # Before the hub's own lines: a later definition of the same label
            # (kept word for word among the notes) must not win over these.
            at = next(
                (
                    n + 1
                    for n, line in enumerate(hub_lines)
                    if line in (_HOW, _NOTES_HOW)
                ),
                len(hub_lines),
            )
            hubs[relpath] = "\n".join([*hub_lines[:at], "", *extra, *hub_lines[at:]])
    if definitions:  # shadowed ones went to the notes: these win in MEMORY.md
        out.extend(["", *definitions])
    while out and out[-1] == "":
        out.pop()
    eol = pool.eol
    return _Layout(index=eol.join(out) + eol, hubs=hubs, moved=moved, kept=kept)


def _parents(sections: list[_Section], index: int) -> list[int]:
    """The headings above section `index` that contain it (lower levels)."""
    found: list[int] = []
    level = sections[index].level
    for above in range(index - 1, 0, -1):
        if sections[above].level < level:
            found.append(above)
            level = sections[above].level
    return found


def _notes_texts(
    prose: list[_Block],
    parsed: _Parsed,
    old: tuple[tuple[str, str], ...],
    hub_bytes: int,
) -> list[tuple[str | None, str]]:
    """Return the notes hubs as (relpath or None: new, text), each within size.

    The old ones stay as they are, the last of them grown with the new prose
    while it fits, then new parts follow. Prose moves in runs (a run ends
    only at a heading, an entry or a visible line of a long paragraph), so a
    code fence or a comment is never split between two files.
    """
    parts: list[list[str]] = [[]]
    size = len(old[-1][1].encode("utf-8")) if old else _HUB_HEAD_BYTES
    section: int | None = None
    for block in prose:
        chunk: list[str] = []
        heading = parsed.sections[block.section].heading if block.section else None
        if block.section != section and heading is not None:
            chunk.extend(["", heading])
        section = block.section
        chunk.extend(["", *block.lines])
        cost = sum(len(line.encode("utf-8")) + 1 for line in chunk)
        if (parts[-1] or old) and size + cost > hub_bytes:
            parts.append([])
            size = _HUB_HEAD_BYTES
            if heading is not None and chunk[:2] != ["", heading]:
                chunk[:0] = ["", heading]  # a new part repeats its heading
        parts[-1].append("\n".join(chunk))
        size += cost
    notes: list[tuple[str | None, str]] = list(old[:-1])

    def head(position: int) -> str:
        which = f" (part {position})" if position > 1 else ""
        return _hub_text(
            f"Notes moved from MEMORY.md{which}",
            "The prose and notes memd fix moved out of MEMORY.md so the index "
            "loads whole",
            "reference",
            ["", _NOTES_WHY, _NOTES_HOW],
        ).rstrip("\n")

    for number, part in enumerate(parts):
        if number == 0 and old:
            relpath: str | None = old[-1][0]
            start = old[-1][1].rstrip("\n")
        elif not part:
            continue
        else:
            relpath = None
            start = head(len(notes) + 1)
        notes.append((relpath, start + "".join("\n" + c for c in part) + "\n"))
    return notes


def compact_index(text: str, topics: Topics) -> Compaction | None:
    """Return the compaction of `text` into hubs, or None when it cannot be done.

    None when `text` has an unclosed frontmatter, or when no layout fits
    `TARGET` with every file still reachable.
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""  # stays first, as it was
    text = text.removeprefix(bom)
    if text.startswith("---") and not _closes(text):
        return None
    eol = "\r\n" if _is_crlf(text) else "\n"
    parsed = _parse(text)
    hub_texts = {
        relpath: topics.raw[relpath].decode("utf-8", "replace")
        for relpath in topics.hub_relpaths()
        if relpath in topics.raw
    }
    linked = reachable(text, hub_texts, topics.files)
    direct = reachable(text, {}, topics.files)
    entries = [
        b for b in parsed.blocks if b.is_entry and not _is_hub_line(b, hub_texts)
    ]
    prose = [b for b in parsed.blocks if not b.is_entry]
    old_notes: list[tuple[str, str]] = []
    pooled: set[str] = set()
    for relpath in sorted(hub_texts):
        if relpath not in direct:
            continue  # a hub MEMORY.md no longer links: the user's file now
        pooled.add(relpath)
        hub_body = file_body(hub_texts[relpath])
        if _is_notes(hub_body):
            old_notes.append((relpath, hub_texts[relpath]))
            continue
        inner = _parse(hub_body, start_sections=parsed.sections)
        entries.extend(b for b in inner.blocks if b.is_entry)
        prose.extend(b for b in inner.blocks if not b.is_entry)
        parsed.definitions.extend(inner.definitions)
    resolve = _wiki_resolver(topics.files)
    entries = [
        _with_order(b, n, tuple(resolve(t) for t in b.targets))
        for n, b in enumerate(_unique(entries))
    ]
    pool = _Pool(
        parsed=parsed,
        entries=entries,
        prose=prose,
        old_notes=tuple(sorted(old_notes, key=lambda n: (len(n[0]), n[0]))),
        reusable=frozenset(pooled),
        topics=topics,
        eol=eol,
    )
    mtimes = topics.mtimes_ns
    # A target with no mtime is being written now (the dream's new files): newest.
    unknown = 1 << 62
    newest = sorted(
        (b for b in entries if _may_stay(b)),
        key=lambda b: (
            -max((mtimes.get(t, unknown) for t in b.targets), default=0),
            b.order,
        ),
    )
    for coarse, hub_bytes in (
        (False, HUB_BYTES),
        (True, HUB_BYTES),
        (True, 4 * HUB_BYTES),
        (True, 1 << 40),
    ):
        layout = _fit(pool, newest, coarse, hub_bytes)
        if layout is None:
            continue
        after = reachable(layout.index, {**hub_texts, **layout.hubs}, topics.files)
        if not linked - (pooled - set(layout.hubs)) <= after:
            continue  # a dissolved hub need not be reached, all it linked must
        layout.index = bom + layout.index
        return _edits(layout, topics, pooled)
    return None


def _may_stay(block: _Block) -> bool:
    """Whether an entry is small enough to stay in MEMORY.md at all.

    The entries that stay are the newest that fit, found by a binary search
    over how many: one huge entry among the newest would otherwise push every
    other one into the hubs. Such an entry goes to its hub, whole.
    """
    units = sum(len(line) + 1 for line in block.lines)
    return len(block.lines) <= 10 and units <= TARGET.units // 20


def _is_notes(body: str) -> bool:
    return _NOTES_WHY in body.split("\n")[:4]


def _closes(text: str) -> bool:
    lines = text.split("\n")
    return any(line.rstrip("\r").rstrip() == "---" for line in lines[1:])


def _is_hub_line(block: _Block, hub_texts: Mapping[str, str]) -> bool:
    return bool(block.targets) and all(t in hub_texts for t in block.targets)


def _unique(pool: list[_Block]) -> list[_Block]:
    """One block per set of lines: a hub and MEMORY.md may both hold an entry."""
    seen: set[tuple[str, ...]] = set()
    unique = []
    for block in pool:
        if block.lines not in seen:
            seen.add(block.lines)
            unique.append(block)
    return unique


def _with_order(block: _Block, order: int, targets: tuple[str, ...]) -> _Block:
    from dataclasses import replace

    return replace(block, order=order, targets=targets)


def _wiki_resolver(files: tuple[MemoryFile, ...]) -> Callable[[str], str]:
    """Return a function giving a `[[name]]` target its relpath, as lint resolves it.

    The order of `memd.memory.index.resolve_wiki_link` (name, then slug, then
    stem), with dictionaries: one look-up per link, not a scan of every file.
    """
    from memd.memory.index import slug

    by_name: dict[str, str] = {}
    by_slug: dict[str, str] = {}
    by_stem: dict[str, str] = {}
    for f in files:
        if f.name:
            by_name.setdefault(f.name.strip(), f.relpath)
            by_slug.setdefault(slug(f.name.strip()), f.relpath)
        by_stem.setdefault(f.relpath.rsplit("/", 1)[-1].removesuffix(".md"), f.relpath)
        by_stem.setdefault(f.relpath.removesuffix(".md"), f.relpath)

    def resolve(target: str) -> str:
        if not (target.startswith("[[") and target.endswith("]]")):
            return target
        name = target[2:-2].strip()
        wanted = slug(name)
        return (
            by_name.get(name)
            or (by_slug.get(wanted) if wanted else None)
            or by_stem.get(name)
            or target
        )

    return resolve


def _fit(
    pool: _Pool, newest: list[_Block], coarse: bool, hub_bytes: int
) -> _Layout | None:
    def layout_for(count: int) -> _Layout:
        keep = {b.order for b in newest[:count]}
        return _render(pool, keep, coarse, hub_bytes)

    def fits(layout: _Layout) -> bool:
        return _within(index_size(layout.index), TARGET)

    low, high = 0, len(newest)
    best = layout_for(0)
    if not fits(best):
        return None
    while low < high:  # the most entries kept that still fit
        middle = (low + high + 1) // 2
        candidate = layout_for(middle)
        if fits(candidate):
            low, best = middle, candidate
        else:
            high = middle - 1
    return best


def _edits(layout: _Layout, topics: Topics, pooled: set[str]) -> Compaction:
    writes = []
    for relpath in sorted(layout.hubs):
        new = layout.hubs[relpath].encode("utf-8")
        old = topics.raw.get(relpath) if relpath in pooled else None
        if new != old:
            writes.append(HubWrite(relpath=relpath, old=old, new=new))
    return Compaction(
        index=layout.index,
        hubs=tuple(writes),
        deletes=tuple(sorted(r for r in pooled if r not in layout.hubs)),
        moved=layout.moved,
        kept=layout.kept,
        size=index_size(layout.index),
    )
