"""The built-in consolidator: daily-log entries -> planned topic-file edits (pure).

Routing: a `[user]`, `[feedback]`, `[project]` or `[reference]` tag chooses
the memory type of a new topic file; a `#topic` tag chooses the file
(`topic.md`); an entry with only a type goes to `<type>-notes.md`, and an
untagged one to `journal.md`.

Consolidation: each topic file keeps one fact block (memd.kairos.factfile)
holding every distinct fact once, with when it was first and last seen and
how often; a restatement with a new value supersedes the old one, which stays
as history (memd.kairos.facts has the similarity rule). Relative dates are
resolved from the log's own date before matching.

Bounds (REFERENCE.md, 2.1.332 "Topic-file limit of 4096 bytes"): recall reads
the first 4096 bytes of a topic file and the memory prompt asks for files
under 4KB, so each file memd writes stays within `TOPIC_BYTES`. Facts seen
longest ago move to `archive/<topic>/YYYY-MM.md` pages (a second page
`YYYY-MM-2.md` when one month is too big), which the topic file links with
`[[name]]`. Only the user's own text can make a file larger; it is never cut.

MEMORY.md gets a one-line entry for each touched topic file that has none,
while the index stays within the reference's limits (200 lines, 25,000
UTF-16 units after the JS trim, REFERENCE.md §3). When a new line would cross
them, the lines memd wrote itself are grouped into one line of links; only if
that is not enough is the file reported in `unindexed`. The user's own lines
are never cut.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memd.agent.jscompat import js_trim, utf16_len
from memd.agent.terms import INDEX_NAME, MEMORY_TYPES
from memd.agent.truncation import MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_UNITS
from memd.kairos.factfile import (
    ARCHIVE_LEAD,
    FactFile,
    parse_fact_file,
    render_fact,
    render_fact_file,
)
from memd.kairos.facts import Changes, Fact, FactBook, resolve_relative_dates
from memd.lint.compact import Topics, place_entries
from memd.lint.fixes import FileEdit, compaction_edits
from memd.memory.index import linked_relpaths
from memd.memory.memfile import parse_memory_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_TYPE_TAG = re.compile(rf"\[({'|'.join(MEMORY_TYPES)})\]", re.IGNORECASE)
_TOPIC_TAG = re.compile(r"(?<![\w#&/])#([A-Za-z][\w-]{0,63})")
_TIME = re.compile(r"(\d{2}:\d{2})(?:\s+|$)")
TOPIC_BYTES = 4096  # what recall reads of a topic file (REFERENCE.md, 2.1.332)
_RESERVED = frozenset({"memory", "journal-index"})


@dataclass(frozen=True, slots=True, kw_only=True)
class LogEntry:
    """One bullet of a daily log, located by byte offsets in its file."""

    log: str  # relpath of the log, "logs/YYYY/MM/YYYY-MM-DD.md"
    offset: int  # byte offset where the bullet starts
    end: int  # byte offset just past its last line
    date: str  # the log's date, YYYY-MM-DD
    time: str | None  # HH:MM when the bullet has one
    text: str  # first line plus dedented continuation lines, "\n"-joined

    @property
    def entry_id(self) -> str:
        """Return a stable id: one bullet at one place always hashes the same."""
        key = f"{self.log}\0{self.offset}\0{self.text}".encode()
        return hashlib.sha256(key).hexdigest()[:16]

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.entry_id,
            "log": self.log,
            "offset": self.offset,
            "date": self.date,
            "time": self.time,
            "text": self.text,
        }


@dataclass(frozen=True, slots=True)
class Route:
    """Where an entry goes: the topic file, its type if new, and the text to file."""

    relpath: str
    type: str
    topic: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamSummary:
    """What a dream did to the facts: new, repeats merged, values replaced, moved."""

    added: int = 0
    merged: int = 0
    superseded: int = 0
    archived: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "added": self.added,
            "merged": self.merged,
            "superseded": self.superseded,
            "archived": self.archived,
        }

    def describe(self) -> str:
        """Return "3 added, 12 merged, 1 superseded, 0 archived"."""
        return (
            f"{self.added} added, {self.merged} merged, "
            f"{self.superseded} superseded, {self.archived} archived"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationPlan:
    """The edits a dream would make: archive pages, topic files, MEMORY.md last."""

    edits: tuple[FileEdit, ...]
    deletes: tuple[str, ...] = ()  # archive pages emptied of memd's facts
    filed: tuple[str, ...]  # entry ids written by these edits
    already_filed: tuple[str, ...]  # entry ids a previous (interrupted) run wrote
    unindexed: tuple[str, ...]  # touched files left out of MEMORY.md by its limits
    summary: DreamSummary = DreamSummary()


def parse_log_entries(
    relpath: str, data: bytes, start: int = 0
) -> tuple[tuple[LogEntry, ...], int]:
    """Return the bullets in `data[start:]` up to its last newline, and that offset.

    A partial last line is left for the next run; headings, blank lines and
    prose end a bullet and are not entries.
    """
    cut = data.rfind(b"\n") + 1
    if cut <= start:
        return (), start
    date = relpath.rsplit("/", 1)[-1][:10]
    entries: list[LogEntry] = []
    current: list[str] = []
    begin = start
    last_end = start

    def close(end: int) -> None:
        if current:
            entries.append(_make_entry(relpath, date, begin, end, current))
            current.clear()

    position = start
    for raw in data[start:cut].split(b"\n")[:-1]:
        line_end = position + len(raw) + 1
        line = raw.decode("utf-8", errors="replace").rstrip("\r")
        if line.startswith(("- ", "* ")):
            close(last_end)
            begin = position
            current.append(line[2:])
            last_end = line_end
        elif current and line.startswith(("  ", "\t")):
            current.append(line[2:] if line.startswith("  ") else line[1:])
            last_end = line_end
        else:
            close(last_end)
        position = line_end
    close(last_end)
    return tuple(entries), cut


def _make_entry(
    relpath: str, date: str, begin: int, end: int, lines: list[str]
) -> LogEntry:
    first = lines[0]
    match = _TIME.match(first)
    time = match.group(1) if match else None
    if match:
        first = first[match.end() :]
    text = "\n".join([first.strip(), *(line.rstrip() for line in lines[1:])]).strip()
    return LogEntry(log=relpath, offset=begin, end=end, date=date, time=time, text=text)


def route(entry: LogEntry) -> Route:
    """Return the topic file an entry belongs to, by its tags."""
    first, _, rest = entry.text.partition("\n")
    type_match = _TYPE_TAG.search(first)
    topic_match = _TOPIC_TAG.search(first)
    kind = type_match.group(1).lower() if type_match else None
    topic = _slug(topic_match.group(1)) if topic_match else ""
    if topic:
        relpath = f"{topic}.md"
    elif kind:
        topic, relpath = f"{kind}-notes", f"{kind}-notes.md"
    else:
        topic, relpath = "journal", "journal.md"
    cleaned = _strip_edge_tags(first)
    text = cleaned + ("\n" + rest if rest else "")
    return Route(relpath, kind or "project", topic, text or entry.text)


def _slug(tag: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", tag.lower()).strip("-_")[:64]
    return f"{slug}-notes" if slug in _RESERVED else slug


def _strip_edge_tags(line: str) -> str:
    """Drop tag tokens at either end of a line; tags mid-sentence stay."""
    tokens = line.split()

    def is_tag(token: str) -> bool:
        return bool(_TYPE_TAG.fullmatch(token) or _TOPIC_TAG.fullmatch(token))

    while tokens and is_tag(tokens[0]):
        tokens.pop(0)
    while tokens and is_tag(tokens[-1]):
        tokens.pop()
    return " ".join(tokens)


def _title(topic: str) -> str:
    words = re.sub(r"[-_]+", " ", topic).strip()
    return words[:1].upper() + words[1:] if words else "Notes"


def _description(route_: Route) -> str:
    if route_.topic == "journal":
        return "Untagged notes from the KAIROS daily logs, filed nightly by memd"
    if route_.topic.endswith("-notes") and route_.topic[:-6] in MEMORY_TYPES:
        return (
            f"Daily-log notes tagged [{route_.topic[:-6]}] with no topic, filed by memd"
        )
    return f"Daily-log notes tagged #{route_.topic}, filed nightly by memd's dream"


def new_topic_text(route_: Route) -> str:
    """Return the frontmatter and preamble of a topic file memd creates.

    The frontmatter comes from a YAML emitter, never string formatting: a
    name such as `Null` or `Yes`, or a description with ` #` or `: `, must
    read back as the same string.
    """
    from memd.memory.yaml_safe import dump_yaml

    head = dump_yaml(intended_frontmatter(route_))
    lines = [
        "---",
        head.rstrip("\n"),
        "---",
        "Facts from the KAIROS daily logs, each once: first and last seen, how often.",
    ]
    if route_.type in ("feedback", "project"):
        lines += [
            "",
            "**Why:** recorded in the daily logs as it happened.",
            "**How to apply:** the current value is the bullet; verify it before use.",
        ]
    return "\n".join(lines) + "\n"


def intended_frontmatter(route_: Route) -> dict[str, object]:
    """Return the name, description and type a new topic file for `route_` gets."""
    return {
        "name": _title(route_.topic),
        "description": _description(route_),
        "type": route_.type,
    }


def _archive_prefix(topic_relpath: str) -> str:
    return f"archive/{topic_relpath[:-3]}/"


def _archive_page(topic: str, month: str, page: int) -> tuple[str, str]:
    """Return (relpath, name) of page `page` (1-based) of a topic's month archive."""
    suffix = f"-{page}" if page > 1 else ""
    return (
        f"archive/{topic}/{month}{suffix}.md",
        f"{topic}-archive-{month}{suffix}",
    )


def _archive_head(topic: str, name: str, month: str, kind: str) -> str:
    from memd.memory.yaml_safe import dump_yaml

    front: dict[str, object] = {
        "name": name,
        "description": (
            f"Facts from {topic}.md last seen in {month}, moved here by memd's "
            "dream to keep the topic file within what recall reads"
        ),
        "type": kind,
    }
    return f"---\n{dump_yaml(front).rstrip()}\n---\nArchived from {topic}.md.\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


@dataclass(slots=True)
class _Topic:
    """One topic's files as planned: the main file and its archive pages."""

    route: Route
    parsed: FactFile
    book: FactBook
    pages: dict[str, FactFile]  # archive relpath -> parsed page
    archived_before: set[int]  # id() of the facts that were in archive pages
    changes: Changes


def _load_topic(target: Route, files: Mapping[str, bytes | None]) -> _Topic:
    old = files.get(target.relpath)
    parsed = (
        parse_fact_file(old.decode("utf-8", errors="surrogateescape"))
        if old is not None
        else FactFile(head=new_topic_text(target))
    )
    prefix = _archive_prefix(target.relpath)
    pages = {
        rel: parse_fact_file(data.decode("utf-8", errors="surrogateescape"))
        for rel, data in sorted(files.items())
        if rel.startswith(prefix) and data is not None
    }
    changes = Changes()
    book = FactBook()
    for fact in parsed.facts:
        if parsed.had_block:
            book.load(fact)
        else:  # a file from before the fact block: its repeats merge now
            book.file(fact.text, fact.first, changes)
    archived: set[int] = set()
    for page in pages.values():
        for fact in page.facts:
            book.load(fact)
            archived.add(id(fact))
    return _Topic(target, parsed, book, pages, archived, changes)


def _place(topic: _Topic) -> tuple[list[Fact], list[Fact]]:
    """Split the facts into those the topic file keeps and those archived.

    The most recently seen stay while the file fits `TOPIC_BYTES`; the
    room for the archive links line is reserved first, so the result fits.
    """
    facts = topic.book.facts
    months = sorted({f.last[:7] for f in facts})
    name = topic.route.topic
    reserve = _size(
        ARCHIVE_LEAD + "".join(f" [[{name}-archive-{m}-99]]" for m in months) + "\n"
    )
    fixed = _size(render_fact_file(topic.parsed, [], archive_names=[]))
    room = TOPIC_BYTES - fixed - reserve
    ranked = sorted(
        facts, key=lambda f: (f.last, f.seen, f.first, f.text), reverse=True
    )
    kept: list[Fact] = []
    for fact in ranked:
        cost = _size(render_fact(fact))
        if cost > room:
            break
        room -= cost
        kept.append(fact)
    keep_ids = {id(f) for f in kept}
    archived = [f for f in facts if id(f) not in keep_ids]
    return sorted(kept, key=lambda f: (f.first, f.last, f.text)), archived


def _render_pages(topic: _Topic, archived: list[Fact]) -> dict[str, tuple[str, str]]:
    """Return archive relpath -> (page name, text), month by month, newest first."""
    name = topic.route.topic
    by_month: dict[str, list[Fact]] = {}
    for fact in sorted(archived, key=lambda f: (f.last, f.first, f.text)):
        by_month.setdefault(fact.last[:7], []).append(fact)
    pages: dict[str, tuple[str, str]] = {}
    for month in sorted(by_month, reverse=True):
        number, batch = 1, list[Fact]()
        for fact in by_month[month]:
            trial = _page_text(topic, month, number, [*batch, fact])
            if batch and _size(trial) > TOPIC_BYTES:
                rel, page_name = _archive_page(name, month, number)
                pages[rel] = (page_name, _page_text(topic, month, number, batch))
                number, batch = number + 1, []
            batch.append(fact)
        rel, page_name = _archive_page(name, month, number)
        pages[rel] = (page_name, _page_text(topic, month, number, batch))
    return pages


def _page_text(topic: _Topic, month: str, number: int, facts: list[Fact]) -> str:
    rel, name = _archive_page(topic.route.topic, month, number)
    parsed = topic.pages.get(rel)
    if parsed is None or not parsed.head:
        kind = _frontmatter_type(topic) or topic.route.type
        parsed = FactFile(head=_archive_head(topic.route.topic, name, month, kind))
    return render_fact_file(parsed, facts, archive_names=[])


def _frontmatter_type(topic: _Topic) -> str | None:
    parsed = parse_memory_file("t.md", topic.parsed.head.encode("utf-8", "replace"))
    return parsed.type if parsed.type in MEMORY_TYPES else None


def _is_memd_only(page: FactFile, rel: str, topic: _Topic) -> bool:
    """Whether an archive page holds nothing but what memd wrote into it."""
    month = rel.rsplit("/", 1)[-1][:7]
    kind = _frontmatter_type(topic) or topic.route.type
    name = rel.rsplit("/", 1)[-1][:-3]
    page_name = f"{topic.route.topic}-archive-{name}"
    expected = _archive_head(topic.route.topic, page_name, month, kind)
    return page.head == expected and not page.extra and not page.tail.strip()


def plan_consolidation(
    entries: Iterable[LogEntry],
    files: Mapping[str, bytes | None],
    index: bytes | None,
    *,
    directory: Topics | None = None,
) -> ConsolidationPlan:
    """Plan the topic-file, archive and MEMORY.md edits that consolidate `entries`.

    `files` holds the current bytes (None: missing) of every topic file
    `route` names for these entries and of every page under its
    `archive/<topic>/`; `index` is MEMORY.md's bytes (None: missing).
    """
    ordered = sorted(entries, key=lambda e: (e.date, e.log, e.offset))
    topics: dict[str, _Topic] = {}
    filed: list[str] = []
    already: list[str] = []
    for entry in ordered:
        target = route(entry)
        topic = topics.get(target.relpath)
        if topic is None:
            topic = topics[target.relpath] = _load_topic(target, files)
        if entry.entry_id in topic.parsed.entry_ids:  # filed by memd before 0.x
            already.append(entry.entry_id)
            continue
        text = resolve_relative_dates(target.text, entry.date).strip()
        topic.book.file(text, entry.date, topic.changes)
        filed.append(entry.entry_id)
    edits: list[FileEdit] = []
    deletes: list[str] = []
    total = Changes()
    archived_count = 0
    texts: dict[str, str] = {}
    for relpath, topic in topics.items():
        kept, archived = _place(topic)
        while True:  # the links line can need more room than reserved: shed more
            pages = _render_pages(topic, archived)
            names = [name for name, _ in pages.values()]
            text = render_fact_file(topic.parsed, kept, archive_names=names)
            if _size(text) <= TOPIC_BYTES or not kept:
                break
            shed = min(kept, key=lambda f: (f.last, f.seen, f.first, f.text))
            kept = [f for f in kept if f is not shed]
            archived.append(shed)
        archived_count += sum(id(f) not in topic.archived_before for f in archived)
        for rel, (_, page_text) in pages.items():
            _add_edit(edits, rel, files.get(rel), page_text, "archive older facts")
        for rel, page in topic.pages.items():
            if rel in pages:
                continue
            if _is_memd_only(page, rel, topic):
                deletes.append(rel)  # its facts are in the topic or another page
            else:
                emptied = render_fact_file(page, [], archive_names=[])
                _add_edit(edits, rel, files.get(rel), emptied, "archive older facts")
        texts[relpath] = text
        reason = (
            "consolidate facts"
            if files.get(relpath) is not None
            else "create topic file"
        )
        _add_edit(edits, relpath, files.get(relpath), text, reason)
        for name in ("added", "merged", "superseded"):
            setattr(total, name, getattr(total, name) + getattr(topic.changes, name))
    # Archive pages first, the topic files that link them after: a kill between
    # two writes never leaves a fact in neither place (a rerun merges copies).
    edits.sort(key=lambda e: (not e.relpath.startswith("archive/"), e.relpath))
    routes = {rel: topic.route for rel, topic in topics.items()}
    index_edits, unindexed = _plan_index(routes, texts, index, directory)
    edits.extend(e for e in index_edits if not e.is_removal)
    deletes.extend(e.relpath for e in index_edits if e.is_removal)
    return ConsolidationPlan(
        edits=tuple(edits),
        deletes=tuple(sorted(deletes)),
        filed=tuple(filed),
        already_filed=tuple(already),
        unindexed=unindexed,
        summary=DreamSummary(
            added=total.added,
            merged=total.merged,
            superseded=total.superseded,
            archived=archived_count,
        ),
    )


def _add_edit(
    edits: list[FileEdit], relpath: str, old: bytes | None, text: str, reason: str
) -> None:
    new = text.encode("utf-8", errors="surrogateescape")
    if new != old:
        edits.append(FileEdit(relpath=relpath, old=old, new=new, reason=reason))


def fits_index(text: str) -> bool:
    """Return True when MEMORY.md text loads whole (200 lines, 25,000 units)."""
    trimmed = js_trim(text)
    lines = len(trimmed.split("\n"))
    return lines <= MAX_ENTRYPOINT_LINES and utf16_len(trimmed) <= MAX_ENTRYPOINT_UNITS


GROUP_LEAD = "- Daily-log topics (memd):"
_OWN_LINE = re.compile(
    r"- \[[^\]\n]{0,200}\]\(([^()\s]{1,255}\.md)\) — (?:Untagged notes from the "
    r"KAIROS daily logs, filed nightly by memd|Daily-log notes tagged \S{1,80}"
    r"(?: with no topic, filed by memd|, filed nightly by memd's dream))"
)
_LINK = re.compile(r"\[([^\]\n]{0,200})\]\(([^()\s]{1,255})\)")


def _group(text: str, extra: list[tuple[str, str]]) -> str:
    """Return `text` with memd's own one-topic lines folded into one line of links.

    Only lines memd writes (its descriptions, or its group line) are folded;
    every other line stays where it is, byte for byte.
    """
    links: list[tuple[str, str]] = []
    kept: list[str] = []
    at: int | None = None
    for line in text.split("\n"):
        own = _OWN_LINE.fullmatch(line)
        if own or line.startswith(GROUP_LEAD):
            at = len(kept) if at is None else at
            links += [(m.group(1), m.group(2)) for m in _LINK.finditer(line)]
            continue
        kept.append(line)
    links += extra
    unique: dict[str, str] = {}  # relpath -> name, first link wins
    for name, relpath in links:
        unique.setdefault(relpath, name)
    line = GROUP_LEAD + " " + " · ".join(f"[{n}]({r})" for r, n in unique.items())
    if at is None:
        body = "\n".join(kept).rstrip("\n")
        return (body + "\n" if body else "") + line + "\n"
    kept.insert(at, line)
    return "\n".join(kept)


def _plan_index(
    routes: Mapping[str, Route],
    texts: Mapping[str, str],
    index: bytes | None,
    topics: Topics | None = None,
) -> tuple[tuple[FileEdit, ...], tuple[str, ...]]:
    if index is None:
        current = ""
    else:
        try:
            current = index.decode("utf-8")
        except UnicodeDecodeError:
            return (), tuple(routes)  # never rewrite an index we cannot read
    text = current
    unindexed: list[str] = []
    left_out: list[str] = []
    for relpath, route_ in routes.items():
        if relpath in linked_relpaths(text):
            continue
        parsed = parse_memory_file(relpath, texts[relpath].encode("utf-8", "replace"))
        name = parsed.name or _title(route_.topic)
        hook = parsed.description or _description(route_)
        line = f"- [{name}]({relpath}) — {hook}"
        candidate = (text.rstrip("\n") + "\n" if text.strip() else "") + line + "\n"
        if not fits_index(candidate):
            candidate = _group(text, [(name, relpath)])
        if fits_index(candidate):
            text = candidate
        else:
            unindexed.append(relpath)
            left_out.append(line)
    if left_out and topics is not None:
        # No room: compact MEMORY.md (memd.lint.compact) rather than leave them out.
        placement = place_entries(text, left_out, topics)
        if placement.compaction is not None:
            reason = "index the consolidated topic files, compacting MEMORY.md"
            return compaction_edits(placement.compaction, index, reason, topics.raw), ()
    if text == current:
        return (), tuple(unindexed)
    edit = FileEdit(
        relpath=INDEX_NAME,
        old=index,
        new=text.encode("utf-8"),
        reason="index the consolidated topic files",
    )
    return (edit,), tuple(unindexed)


def render_diff(plan: ConsolidationPlan) -> str:
    """Return the unified diff of a plan's edits."""
    import difflib

    chunks: list[str] = []
    for edit in plan.edits:
        old = (
            (edit.old or b"")
            .decode("utf-8", errors="replace")
            .splitlines(keepends=True)
        )
        new = edit.new.decode("utf-8", errors="replace").splitlines(keepends=True)
        before = f"a/{edit.relpath}" if edit.old is not None else "/dev/null"
        chunks.extend(difflib.unified_diff(old, new, before, f"b/{edit.relpath}"))
    for relpath in plan.deletes:
        chunks.append(f"--- a/{relpath}\n+++ /dev/null\n")
    return "".join(chunks)
