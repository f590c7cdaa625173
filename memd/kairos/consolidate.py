"""The built-in consolidator: daily-log entries -> planned topic-file edits (pure).

Routing: a `[user]`, `[feedback]`, `[project]` or `[reference]` tag chooses
the memory type of a new topic file; a `#topic` tag chooses the file, named
as the agent names its own (`<type>_<topic>.md`: `feedback_testing.md`,
`project_orders.md`); an entry with only a type goes to `<type>_notes.md`,
and an untagged one to the file of its subject (`Router`:
`project_<word>.md`, a few at most, then `project_journal.md`). A file of
the older naming that is already there keeps its topic.

Consolidation: each topic file keeps one fact block (memd.kairos.factfile)
holding every distinct fact once, with when it was first and last seen and
how often; a restatement with a new value supersedes the old one, which stays
as history (memd.kairos.facts has the rule). Relative dates are resolved from
the log's own date before matching, through memd.kairos.dates: a date out of
range is reported in `problems` and kept as written, never a crash.

Nothing is lost. Bounds (REFERENCE.md, 2.1.332 "Topic-file limit of 4096
bytes"): recall reads the first 4096 bytes of a topic file, so each file memd
writes stays within `TOPIC_BYTES`, showing each fact's newest `HISTORY_KEPT`
older values. Facts seen longest ago, and older values past those, move to
the topic's archive, `.archive/<topic>/N.md` pages: a dot folder, which the
agent's recall scan skips (REFERENCE.md, "Reserved subfolders"), so a year of
archive never crowds the 200 files of the recall manifest. Only the user's
own text can make a file larger; it is never cut.

A file written by an older rule (a fact block without `v2`) is rebuilt:
its facts are derived again from the entries of the logs still there
(`replay`), and what no log explains is kept as it was.

Descriptions: a topic file whose frontmatter is memd's own (byte for byte
what memd would write) gets a description naming its main subjects, kept up
to date; so does its MEMORY.md line. `place_index_entries` is the one place
the index is written; it never puts a line past the cut (200 lines, 25,000
UTF-16 units after the JS trim, REFERENCE.md §3): it folds memd's own lines
into one, and failing that reports the file in `unindexed` (`memd fix`
compacts the index). The user's own lines are never cut.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from memd.claude_code.jscompat import js_trim, utf16_len
from memd.claude_code.terms import INDEX_NAME, MEMORY_TYPES
from memd.claude_code.truncation import MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_UNITS
from memd.kairos.dates import parse_day, resolve_relative_dates
from memd.kairos.factfile import (
    ARCHIVE_LEAD,
    BLOCK_START,
    BLOCK_VERSION,
    FactFile,
    parse_fact_file,
    render_fact,
    render_fact_file,
    render_orphan,
)
from memd.kairos.facts import (
    HISTORY_KEPT,
    Changes,
    Fact,
    FactBook,
    Past,
    normalise,
    shape,
)
from memd.lint.compact import Topics, place_entries
from memd.lint.fixes import FileEdit, compaction_edits
from memd.memory.index import linked_relpaths
from memd.memory.memfile import parse_memory_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

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
    problems: tuple[str, ...] = ()  # "where: what": dates kept as written, ...


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


def route(entry: LogEntry, router: Router | None = None) -> Route:
    """Return the topic file an entry belongs to, by its tags or its subject.

    New files follow the agent's naming, `<type>_<subject>.md`
    (`feedback_testing.md`, `project_orders.md`, `user_notes.md`); a file of
    memd's older naming that is already there (`orders.md`, `user-notes.md`,
    `build-notes.md`, `journal.md`) keeps its facts coming.
    """
    router = router or Router()
    first, _, rest = entry.text.partition("\n")
    type_match = _TYPE_TAG.search(first)
    topic_match = _TOPIC_TAG.search(first)
    kind = type_match.group(1).lower() if type_match else None
    cleaned = _strip_edge_tags(first)
    text = cleaned + ("\n" + rest if rest else "")
    if topic_match:
        topic = router.tag_topic(kind, topic_match.group(1))
    elif kind:
        topic = router.existing_or(f"{kind}-notes", topic_stem(kind, "notes"))
    else:
        topic = router.subject_topic(text or entry.text)
    return Route(f"{topic}.md", kind or "project", topic, text or entry.text)


def topic_stem(kind: str, subject: str) -> str:
    """A new topic file's name without `.md`, as the agent names them:
    `<type>_<subject>`, the subject in lower case with `_` between words
    (`feedback_testing`, `project_build_cache`). A subject that already
    starts with a type (`#feedback_testing`) is taken as it is."""
    words = re.sub(r"[^a-z0-9]+", "_", subject.lower()).strip("_")[:64] or "notes"
    if any(words.startswith(f"{known}_") for known in MEMORY_TYPES):
        return words
    return f"{kind}_{words}"


JOURNAL = "project_journal"  # untagged facts with no subject, past the subject files
_LEGACY_JOURNAL = "journal"
_PRONOUN_WORDS = "i we you they he she it our my your their there here"
_PRONOUNS = frozenset(_PRONOUN_WORDS.split())
MAX_SUBJECT_FILES = 12  # untagged facts: at most this many subject files


def is_journal(topic: str) -> bool:
    return topic in (JOURNAL, _LEGACY_JOURNAL)


class Router:
    """Files untagged entries by subject: `project_<word>.md`, a few files at most.

    The word is the first word of the fact's subject (memd.kairos.facts), so
    every restatement of a fact lands where the fact is. Past
    `MAX_SUBJECT_FILES` subject files, new subjects go to the journal; the
    count only grows, so a subject's file never changes. A file of the older
    naming (`<word>-notes.md`, `journal.md`, a tag's bare `<tag>.md`) that is
    there already keeps its subject.
    """

    def __init__(self, existing: Iterable[str] = ()) -> None:
        self._names = {rel[:-3] for rel in existing if rel.endswith(".md")}
        # a tag's subject -> its file, `<type>_<subject>` of any type
        self._tags: dict[str, str] = {}
        for stem in sorted(self._names):
            kind, _, subject = stem.partition("_")
            if kind in MEMORY_TYPES and subject and "/" not in stem:
                self._tags.setdefault(subject, stem)
        legacy = {
            stem
            for stem in self._names
            if stem.endswith("-notes")
            and "/" not in stem
            and stem[: -len("-notes")] not in MEMORY_TYPES
        }
        self._files = legacy | {
            stem
            for stem in self._names
            if "/" not in stem
            and _SUBJECT_FILE.fullmatch(stem)
            and not is_journal(stem)
        }

    def tag_topic(self, kind: str | None, tag: str) -> str:
        """The file of a `#tag`: `<kind>_<tag>`; with no type tag, the file of
        that tag already there or chosen tonight, whatever its type (so
        `[feedback] #testing` and `#testing` land in one file), else
        `project_<tag>`. A file of the older naming (`tag.md`) keeps it all."""
        legacy = _slug(tag)
        if legacy in self._names:
            return legacy
        subject = topic_stem("project", tag).removeprefix("project_")
        if kind is None:
            stem = self._tags.get(subject) or topic_stem("project", tag)
        else:
            stem = topic_stem(kind, tag)
        self._tags.setdefault(subject, stem)
        return stem

    def existing_or(self, legacy: str, new: str) -> str:
        """`legacy` when a file of that (older) name is there, else `new`."""
        return legacy if legacy in self._names and legacy != new else new

    def _subject_file(self, word: str) -> str:
        return self.existing_or(_slug(f"{word}-notes"), topic_stem("project", word))

    def known_topic(self, text: str) -> str | None:
        """Return the subject file `text` would go to if it exists already, or None.

        Unlike `subject_topic`, this never starts a new file.
        """
        word = _subject_word(text)
        topic = self._subject_file(word) if word else None
        return topic if topic in self._files else None

    def subject_topic(self, text: str) -> str:
        word = _subject_word(text)
        if word is None:
            return self.existing_or(_LEGACY_JOURNAL, JOURNAL)
        topic = self._subject_file(word)
        if topic in self._files or len(self._files) < MAX_SUBJECT_FILES:
            self._files.add(topic)
            return topic
        return self.existing_or(_LEGACY_JOURNAL, JOURNAL)


_SUBJECT_FILE = re.compile(r"project_[a-z0-9]+")


def _subject_word(text: str) -> str | None:
    """Return the subject's word as a file name part (ASCII letters), or None."""
    word = re.sub(r"[^a-z0-9]+", "", shape(text).group)
    return word if len(word) >= 3 and word not in _PRONOUNS else None


def _slug(tag: str) -> str:
    """The older naming of a tag's file (`build-cache`), to find one that is there."""
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
    """A file's name for people: `project_build_cache` -> "Build cache"."""
    kind, _, subject = topic.partition("_")
    if kind in MEMORY_TYPES and subject and subject != "notes":
        topic = subject
    words = re.sub(r"[-_]+", " ", topic).strip()
    return words[:1].upper() + words[1:] if words else "Notes"


DESCRIPTION_LEAD = "Daily-log facts"
MAX_DESCRIPTION = 110  # columns: the index line stays near the prompt's ~150
MAX_INDEX_LINE = 150  # the reference's prompt asks for index lines under ~150


def _fallback_description(route_: Route) -> str:
    if is_journal(route_.topic):
        return f"{DESCRIPTION_LEAD}: untagged notes, filed nightly by memd"
    kind = route_.topic[:-6]
    if route_.topic[-6:] in ("-notes", "_notes") and kind in MEMORY_TYPES:
        return f"{DESCRIPTION_LEAD} tagged [{kind}], filed by memd"
    return f"{DESCRIPTION_LEAD} on {_title(route_.topic).lower()}, filed by memd"


def describe(route_: Route, facts: Iterable[Fact]) -> str:
    """Return a description naming the file's facts, oldest first, as written.

    "Daily-log facts: the gateway timeout is 60 s; staging runs on k3s; …":
    each fact's first line, joined by "; ", cut at a word boundary with "…"
    to stay within `MAX_DESCRIPTION` columns (well inside lint's limit).
    """
    ranked = sorted(facts, key=lambda f: (f.first, f.text))  # stable night to night
    entry = f"- [{_title(route_.topic)}]({route_.relpath}) — "
    room = min(MAX_DESCRIPTION, max(40, MAX_INDEX_LINE - len(entry)))
    said: list[str] = []
    seen: set[str] = set()
    for fact in ranked:
        text = " ".join(fact.text.split("\n", 1)[0].split()).rstrip(".;, ")
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            said.append(text)
    if not said:
        return _fallback_description(route_)
    return cut_at_word(f"{DESCRIPTION_LEAD}: " + "; ".join(said), room)


ELLIPSIS = "\u2026"


def cut_at_word(text: str, width: int) -> str:
    """`text` within `width` display columns, cut after a whole word with "…".

    Columns as lint counts them (a wide character is two). A first word
    longer than the width is cut where it must be.
    """
    from memd.lint.checks_frontmatter import display_columns

    if display_columns(text) <= width:
        return text
    room = width - display_columns(ELLIPSIS)
    kept = ""
    for word in text.split(" "):
        candidate = f"{kept} {word}" if kept else word
        if display_columns(candidate) > room:
            break
        kept = candidate
    if not kept:  # one word past the width: cut inside it, the only way
        for char in text:
            if display_columns(kept + char) > room:
                break
            kept += char
    return kept.rstrip(" ;,:") + ELLIPSIS


def new_topic_text(
    route_: Route, *, description: str | None = None, name: str | None = None
) -> str:
    """Return the frontmatter and preamble of a topic file memd creates.

    The frontmatter comes from a YAML emitter, never string formatting: a
    name such as `Null` or `Yes`, or a description with ` #` or `: `, must
    read back as the same string.
    """
    from memd.memory.yaml_safe import dump_yaml

    front = intended_frontmatter(route_)
    if description is not None:
        front["description"] = description
    if name is not None:
        front["name"] = name
    lines = [
        "---",
        dump_yaml(front).rstrip("\n"),
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
        "description": _fallback_description(route_),
        "type": route_.type,
    }


@dataclass(frozen=True, slots=True)
class _Head:
    """A topic file's frontmatter as memd wrote it: what can be refreshed."""

    name: str
    description: str
    route: Route  # with the type the file has


def _own_head(head: str, target: Route) -> _Head | None:
    """Return the head's name and description when memd wrote it and nobody changed it.

    The test is exact: the head memd would write with these fields is the
    head there, byte for byte; a head someone edited is theirs, kept as is.
    """
    parsed = parse_memory_file("t.md", head.encode("utf-8", "surrogateescape"))
    name, description = parsed.fields.get("name"), parsed.fields.get("description")
    kind = parsed.type if parsed.type in MEMORY_TYPES else None
    if not (isinstance(name, str) and isinstance(description, str) and kind):
        return None
    typed = Route(target.relpath, kind, target.topic, target.text)
    again = new_topic_text(typed, description=description, name=name)
    return (
        _Head(name, description, typed)
        if again.rstrip("\n") == head.rstrip("\n")
        else None
    )


ARCHIVE_DIR = ".archive"  # a dot folder: the agent's recall scan skips it
PAGE_BYTES = 64 * 1024  # an archive page; far below the reader's cap


def _archive_prefix(topic_relpath: str) -> str:
    return f"{ARCHIVE_DIR}/{topic_relpath[:-3]}/"


def _legacy_prefix(topic_relpath: str) -> str:
    return f"archive/{topic_relpath[:-3]}/"


def _page_head(topic: str) -> str:
    return (
        f"# Archive of {topic}.md\n\n"
        f"What memd's dream moved out of {topic}.md: facts not seen lately and "
        "older values.\nThis folder starts with a dot, so the agent's recall scan "
        "skips it and it never\ncrowds the recall manifest; grep it when you need "
        "the history.\n"
    )


def _legacy_head(topic: str, rel: str, kind: str) -> str:
    """The head memd's monthly archive pages had (0.x), to recognise them."""
    from memd.memory.yaml_safe import dump_yaml

    name = rel.rsplit("/", 1)[-1][:-3]
    month = name[:7]
    front: dict[str, object] = {
        "name": f"{topic}-archive-{name}",
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
    pages: dict[str, FactFile]  # archive relpath -> parsed page (legacy too)
    archived_before: set[str]  # normalised texts of facts that were archived
    pasts: list[Past]  # archived older values whose fact moved on
    changes: Changes
    rebuild: bool  # filed by an older rule: re-derive from the logs
    old: list[Fact] = field(default_factory=list)  # facts to keep if unexplained


def _needs_rebuild(parsed: FactFile, pages: Mapping[str, FactFile]) -> bool:
    old_block = parsed.had_block and parsed.version < BLOCK_VERSION
    old_pages = any(page.version < BLOCK_VERSION for page in pages.values())
    return old_block or bool(parsed.entry_ids) or old_pages


def _load_topic(
    target: Route, files: Mapping[str, bytes | None], ceiling: str, problems: list[str]
) -> _Topic:
    old = files.get(target.relpath)
    parsed = (
        parse_fact_file(old.decode("utf-8", errors="surrogateescape"))
        if old is not None
        else FactFile(head="")  # memd writes the head when it knows the facts
    )
    prefixes = (_archive_prefix(target.relpath), _legacy_prefix(target.relpath))
    pages = {
        rel: parse_fact_file(data.decode("utf-8", errors="surrogateescape"))
        for rel, data in sorted(files.items())
        if rel.startswith(prefixes) and data is not None
    }
    for rel, page in [(target.relpath, parsed), *pages.items()]:
        problems += [f"{rel}: {problem}" for problem in page.problems]
        for fact in page.facts:
            _settle_fact(fact, rel, ceiling, problems)
        for past in page.pasts:
            _settle_past(past, rel, ceiling, problems)
    rebuild = old is None or _needs_rebuild(parsed, pages)
    topic = _Topic(target, parsed, FactBook(), pages, set(), [], Changes(), rebuild)
    archived = [f for page in pages.values() for f in page.facts]
    topic.archived_before = {normalise(f.text) for f in archived}
    pasts = [p for page in pages.values() for p in page.pasts]
    if rebuild:  # facts come back from the logs; the rest is kept after filing
        topic.old = [*parsed.facts, *archived]
        topic.pasts = pasts
        return topic
    for fact in parsed.facts:
        topic.book.load(fact)
    for fact in archived:
        topic.book.load(fact)
    topic.pasts = pasts
    return topic


_UNDATED = "0001-01-01"  # a mark's date that was no real day: older than any


def _settle_fact(fact: Fact, rel: str, ceiling: str, problems: list[str]) -> None:
    """Give a fact real dates no later than the dream's day (never frozen).

    A date that was no real day reads as the oldest possible, so any sighting
    tonight is newer; one after the dream's day reads as that day.
    """
    if fact.last > ceiling:
        problems.append(
            f"{rel}: fact {fact.text[:60]!r} last seen {fact.last}, after "
            f"{ceiling}; dated {ceiling}"
        )
    fact.last = min(fact.last or _UNDATED, ceiling)
    fact.first = min(fact.first or _UNDATED, fact.last)
    for past in fact.history:
        _settle_past(past, rel, ceiling, problems)


def _settle_past(past: Past, rel: str, ceiling: str, problems: list[str]) -> None:
    del rel, problems  # a past's dates only order the history
    past.until = min(past.until or _UNDATED, ceiling)
    past.first = min(past.first or _UNDATED, past.until)


def _keep_unexplained(
    topic: _Topic,
    explained: set[str],
    moves: Callable[[str], _Topic | None] | None = None,
) -> None:
    """After a rebuild, keep what the old files held and no log explains.

    `moves` gives the file an old fact now belongs in (the catch-all
    journal's facts go to their subjects' files), or None to keep it here.
    """
    bullets = not topic.parsed.had_block  # dated bullets of 0.x: each a sighting
    for fact in topic.old:
        if normalise(fact.text) not in explained:
            home = (moves(fact.text) if moves else None) or topic
            if bullets and fact in topic.parsed.facts:
                home.book.file(fact.text, fact.first, home.changes)
            else:
                home.book.restore(fact)
            continue
        topic.pasts += [p for p in fact.history if normalise(p.text) not in explained]
    topic.old = []


def _place(
    topic: _Topic, rendered: Mapping[int, str], note: str
) -> tuple[list[Fact], list[Fact]]:
    """Split the facts into those the topic file keeps and those archived.

    The most recently seen stay while the file fits `TOPIC_BYTES`; the
    room for the archive line is reserved first, so the result fits.
    """
    facts = topic.book.facts
    reserve = _size(f"{ARCHIVE_LEAD} {note}\n")
    fixed = _size(render_fact_file(topic.parsed, []))
    room = TOPIC_BYTES - fixed - reserve
    ranked = sorted(
        facts, key=lambda f: (f.last, f.seen, f.first, f.text), reverse=True
    )
    kept: list[Fact] = []
    for fact in ranked:
        cost = _size(rendered[id(fact)])
        if cost > room:
            break
        room -= cost
        kept.append(fact)
    keep_ids = {id(f) for f in kept}
    archived = [f for f in facts if id(f) not in keep_ids]
    return sorted(kept, key=lambda f: (f.first, f.last, f.text)), archived


def _archive_items(topic: _Topic, kept: list[Fact], archived: list[Fact]) -> list[str]:
    """Return the archive's lines in order: old facts, then older values alone."""
    pasts: dict[tuple[str, str], Past] = {}
    overflow = [p for f in kept for p in f.history[HISTORY_KEPT:]]
    for past in [*topic.pasts, *overflow]:
        pasts.setdefault((normalise(past.text), past.until), past)
    items = [
        render_fact(f)
        for f in sorted(archived, key=lambda f: (f.last, f.first, f.text))
    ]
    items += [
        render_orphan(p)
        for p in sorted(pasts.values(), key=lambda p: (p.until, p.first, p.text))
    ]
    return items


def _render_pages(topic: _Topic, items: list[str]) -> dict[str, str]:
    """Return archive relpath -> text: items in order, pages of `PAGE_BYTES`.

    Each item is rendered once and counted once: linear in the archive.
    """
    prefix = _archive_prefix(topic.route.relpath)
    pages: dict[str, str] = {}
    number, batch, size = 1, list[str](), 0
    fixed = _size(_page_head(topic.route.topic)) + 64  # the block's own lines

    def close() -> None:
        rel = f"{prefix}{number}.md"
        parsed = topic.pages.get(rel)
        if parsed is None or not parsed.head:
            parsed = FactFile(head=_page_head(topic.route.topic))
        pages[rel] = _render_page(parsed, batch)

    for item in items:
        cost = _size(item)
        if batch and fixed + size + cost > PAGE_BYTES:
            close()
            number, batch, size = number + 1, [], 0
        batch.append(item)
        size += cost
    if batch:
        close()
    return pages


def _render_page(parsed: FactFile, items: list[str]) -> str:
    return render_fact_file(parsed, [], rendered=items)


def _is_memd_only(page: FactFile, rel: str, topic: _Topic) -> bool:
    """Whether an archive page holds nothing but what memd wrote into it."""
    if page.extra or page.tail.strip():
        return False
    if rel.startswith(ARCHIVE_DIR + "/"):
        expected = _page_head(topic.route.topic)
    else:
        head = parse_memory_file("t.md", page.head.encode("utf-8", "replace"))
        kind = head.type if head.type in MEMORY_TYPES else topic.route.type
        expected = _legacy_head(topic.route.topic, rel, kind)
    return page.head.rstrip("\n") == expected.rstrip("\n")


def _archive_note(topic: str, pages: int) -> str:
    plural = "page" if pages == 1 else "pages"
    return f"{ARCHIVE_DIR}/{topic}/ ({pages} {plural}, outside the agent's recall scan)"


def plan_consolidation(
    entries: Iterable[LogEntry],
    files: Mapping[str, bytes | None],
    index: bytes | None,
    *,
    today: str | None = None,
    replay: Iterable[LogEntry] = (),
    repair: Iterable[str] = (),
    existing: Iterable[str] = (),
    directory: Topics | None = None,
) -> ConsolidationPlan:
    """Plan the topic-file, archive and MEMORY.md edits that consolidate `entries`.

    `files` holds the current bytes (None: missing) of every topic file
    `route` names for these entries and of every page under its archive
    folders; `index` is MEMORY.md's bytes (None: missing). `today` (the
    dream's date) bounds every date: nothing is seen after it. `replay`
    holds the entries of the logs filed before, given when a file written by
    an older rule is to be rebuilt; `repair` names such files that no entry
    routes to. `existing` lists the memory dir's top-level names (the
    subject files already there). `directory` holds the memory dir's topic
    files, so a full index is compacted (memd.lint.compact) rather than a new
    file left out of it.
    """
    problems: list[str] = []
    new, old = _in_order(entries), _in_order(replay)
    ceiling = _ceiling(today, [*new, *old])
    # A file given with bytes is there: its (maybe older) name keeps its topic.
    router = Router([*existing, *(rel for rel, data in files.items() if data)])
    topics: dict[str, _Topic] = {}
    filed: list[str] = []
    already: list[str] = []

    explained: set[str] = set()
    replayed = False

    def topic_for(target: Route) -> _Topic:
        topic = topics.get(target.relpath)
        if topic is None:
            topic = topics[target.relpath] = _load_topic(
                target, files, ceiling, problems
            )
            if replayed and topic.rebuild:
                settle(topic)
        return topic

    for rel in repair:
        topic_for(_route_of_file(rel, files.get(rel)))
    # Route every entry first, in routed_files' order, so the subject files
    # of tonight are known before a rebuilt journal hands its facts on.
    old_routes = [(entry, route(entry, router)) for entry in old]
    new_routes = [(entry, route(entry, router)) for entry in new]

    def subject_file(text: str) -> _Topic | None:
        """The subject file a journal fact belongs in, if tonight reads it."""
        topic = router.known_topic(text)
        rel = f"{topic}.md" if topic else ""
        if not topic or is_journal(topic) or rel not in files:
            return None
        return topic_for(Route(rel, "project", topic, ""))

    def settle(topic: _Topic) -> None:
        moves = subject_file if is_journal(topic.route.topic) else None
        _keep_unexplained(topic, explained, moves)

    for entry, target in old_routes:  # filed before: only rebuilt files take them
        topic = topic_for(target)
        if topic.rebuild:
            day, text = _entry_day(entry, ceiling, target.text, problems)
            topic.book.file(text, day, topic.changes)
            explained.add(normalise(text))
    for topic in list(topics.values()):
        if topic.rebuild:
            settle(topic)
    replayed = True
    for entry, target in new_routes:
        topic = topic_for(target)
        if entry.entry_id in topic.parsed.entry_ids:  # filed by memd before 0.x
            already.append(entry.entry_id)
            continue
        day, text = _entry_day(entry, ceiling, target.text, problems)
        topic.book.file(text, day, topic.changes)
        filed.append(entry.entry_id)
    return _plan_files(topics, files, index, filed, already, problems, directory)


def routed_files(
    entries: Iterable[LogEntry],
    existing: Iterable[str] = (),
    replay: Iterable[LogEntry] = (),
) -> set[str]:
    """Return the topic files `plan_consolidation` would route the entries to."""
    router = Router(existing)
    ordered = [*_in_order(replay), *_in_order(entries)]  # the plan's order
    return {route(entry, router).relpath for entry in ordered}


def _in_order(entries: Iterable[LogEntry]) -> list[LogEntry]:
    return sorted(entries, key=lambda e: (e.date, e.log, e.offset))


def needs_repair(data: bytes) -> bool:
    """Return True when a topic file holds facts filed by an older rule."""
    return (BLOCK_START + " -->").encode() in data or b" <!-- memd:entry " in data


def _route_of_file(rel: str, data: bytes | None) -> Route:
    parsed = parse_memory_file(rel, data or b"")
    kind = parsed.type if parsed.type in MEMORY_TYPES else "project"
    return Route(rel, kind, rel[:-3], "")


def _ceiling(today: str | None, entries: list[LogEntry]) -> str:
    """Return the latest day a fact can be seen: the dream's, else the newest log's."""
    if today is not None and parse_day(today) is not None:
        return today  # logs are named by the local date, as `now` is
    days = [e.date for e in entries if parse_day(e.date) is not None]
    return max(days) if days else "9999-12-31"


def _entry_day(
    entry: LogEntry, ceiling: str, text: str, problems: list[str]
) -> tuple[str, str]:
    """Return the day an entry counts for and its text, relative dates resolved.

    A log date that is no real day, or later than the dream's, is reported;
    the entry is filed as of `ceiling`, its relative words as written.
    """
    where = f"{entry.log}:{entry.offset}"
    if parse_day(entry.date) is None or entry.date > ceiling:
        problems.append(
            f"{where}: the log's date {entry.date!r} is not a day up to {ceiling}; "
            f"the entry is filed as of {ceiling}, its relative dates as written"
        )
        return ceiling, text.strip()
    found: list[str] = []
    resolved = resolve_relative_dates(text, entry.date, found).strip()
    problems += [f"{where}: {problem}" for problem in found]
    return entry.date, resolved


def _plan_files(
    topics: Mapping[str, _Topic],
    files: Mapping[str, bytes | None],
    index: bytes | None,
    filed: list[str],
    already: list[str],
    problems: list[str],
    directory: Topics | None = None,
) -> ConsolidationPlan:
    edits: list[FileEdit] = []
    deletes: list[str] = []
    total = Changes()
    archived_count = 0
    heads: dict[str, tuple[_Head | None, str]] = {}
    retired: dict[str, tuple[_Head, str, str]] = {}
    for relpath, topic in topics.items():
        rendered = {id(f): render_fact(f, HISTORY_KEPT) for f in topic.book.facts}
        fresh = files.get(relpath) is None
        owned = (
            _Head(_title(topic.route.topic), "", topic.route)  # memd's from the start
            if fresh
            else _own_head(topic.parsed.head, topic.route)
        )
        description = "" if fresh else _description_in(topic.parsed.head)
        if owned is not None:  # memd's own head: its description follows the facts
            described = describe(owned.route, topic.book.facts)
            if described != owned.description:
                topic.parsed.head = new_topic_text(
                    owned.route, description=described, name=owned.name
                )
            description = described
        note = _archive_note(topic.route.topic, 99)
        kept, archived = _place(topic, rendered, note)
        while True:  # the archive line can need more room than reserved: shed more
            items = _archive_items(topic, kept, archived)
            pages = _render_pages(topic, items)
            note = _archive_note(topic.route.topic, len(pages)) if pages else ""
            text = render_fact_file(
                topic.parsed,
                [],
                archive_note=note,
                rendered=[rendered[id(f)] for f in kept],
            )
            if _size(text) <= TOPIC_BYTES or not kept:
                break
            shed = min(kept, key=lambda f: (f.last, f.seen, f.first, f.text))
            kept = [f for f in kept if f is not shed]
            archived.append(shed)
        archived_count += sum(
            normalise(f.text) not in topic.archived_before for f in archived
        )
        for rel, page_text in pages.items():
            _add_edit(edits, rel, files.get(rel), page_text, "archive older facts")
        for rel, page in topic.pages.items():
            if rel in pages:
                continue
            if _is_memd_only(page, rel, topic):
                deletes.append(rel)  # its facts are in the topic or another page
            else:
                emptied = _render_page(page, [])
                _add_edit(edits, rel, files.get(rel), emptied, "archive older facts")
        heads[relpath] = (owned, description)
        reason = (
            "consolidate facts"
            if files.get(relpath) is not None
            else "create topic file"
        )
        is_emptied = (
            topic.rebuild
            and not fresh
            and not topic.book.facts
            and not pages
            and not topic.parsed.extra
            and not topic.parsed.tail.strip()
        )
        if is_emptied and owned is not None:  # a rebuild moved all its facts away
            retired[relpath] = (owned, text, reason)
            continue
        _add_edit(edits, relpath, files.get(relpath), text, reason)
        for name in ("added", "merged", "superseded"):
            setattr(total, name, getattr(total, name) + getattr(topic.changes, name))
    index_edits, unindexed, unlinked = place_index_entries(
        {rel: topic.route for rel, topic in topics.items() if rel not in retired},
        heads,
        index,
        retired={rel: owned for rel, (owned, _, _) in retired.items()},
        topics=directory,
    )
    for rel, (_, text, reason) in retired.items():
        if rel in unlinked:
            deletes.append(rel)
        else:  # a line someone wrote still links it: keep the file, emptied
            _add_edit(edits, rel, files.get(rel), text, reason)
    # Archive pages first, the topic files that name them after: a kill between
    # two writes never leaves a fact in neither place (a rerun merges copies).
    edits.sort(key=lambda e: (not e.relpath.startswith(ARCHIVE_DIR + "/"), e.relpath))
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
        problems=tuple(problems),
    )


def _description_in(head: str) -> str:
    parsed = parse_memory_file("t.md", head.encode("utf-8", "surrogateescape"))
    value = parsed.fields.get("description")
    return value if isinstance(value, str) else ""


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
COMPACT_COMMAND = "memd fix"
_OWN_LINE = re.compile(
    r"- \[[^\]\n]{0,200}\]\(([^()\s]{1,255}\.md)\) — (?:Untagged notes from the "
    r"KAIROS daily logs, filed nightly by memd|Daily-log notes tagged \S{1,80}"
    r"(?: with no topic, filed by memd|, filed nightly by memd's dream)"
    r"|Daily-log facts[^\n]{0,200})"
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


def _entry_line(name: str, relpath: str, description: str) -> str:
    return f"- [{name}]({relpath}) — {description}"


def place_index_entries(
    routes: Mapping[str, Route],
    heads: Mapping[str, tuple[_Head | None, str]],
    index: bytes | None,
    *,
    retired: Mapping[str, _Head] | None = None,
    topics: Topics | None = None,
) -> tuple[tuple[FileEdit, ...], tuple[str, ...], frozenset[str]]:
    """Return MEMORY.md's edits, the files left out of it, and the retired unlinked.

    A retired file (emptied by a rebuild) loses memd's own line for it, or its
    link in memd's group line; it may be deleted when nothing links it then.

    The one place the dream writes the index. A file memd wrote a line for
    gets that line refreshed when its description changed (only a line that
    is exactly memd's old one: a line someone edited is theirs). A file with
    no line gets one, unless that would put it past the cut (200 lines,
    25,000 units): then memd's own lines are folded into one, and if that is
    not enough either the index is compacted into hub files when `topics`
    (the directory's topic files) is given (memd.lint.compact.place_entries,
    the one way memd adds entries within budget), else the file is left out,
    never placed past the cut, and the caller names `COMPACT_COMMAND`.
    """
    if index is None:
        current = ""
    else:
        try:
            current = index.decode("utf-8")
        except UnicodeDecodeError:  # never rewrite an index we cannot read
            return (), tuple(routes), frozenset()
    text = current
    for relpath, gone in (retired or {}).items():
        text = _unlink(text, relpath, gone)
    unindexed: list[str] = []
    linked = set(linked_relpaths(text))
    unlinked = frozenset(rel for rel in retired or () if rel not in linked)
    grouped = full = False
    left_out: list[str] = []
    for relpath, route_ in routes.items():
        owned, description = heads.get(relpath, (None, ""))
        name = owned.name if owned is not None else _title(route_.topic)
        hook = description or _fallback_description(route_)
        line = _entry_line(name, relpath, hook)
        if relpath in linked:
            if owned is not None and owned.description != hook:
                old_line = _entry_line(owned.name, relpath, owned.description)
                refreshed = _replace_line(text, old_line, line)
                if refreshed is not None and fits_index(refreshed):
                    text = refreshed
            continue
        if full:  # past the budget once: later lines wait for compaction too
            unindexed.append(relpath)
            left_out.append(line)
            continue
        candidate = (text.rstrip("\n") + "\n" if text.strip() else "") + line + "\n"
        if not fits_index(candidate) and not grouped:
            grouped = True  # fold memd's own lines once, then add to the group
            candidate = _group(text, [(name, relpath)])
        elif not fits_index(candidate):
            candidate = _group(text, [(name, relpath)])
        if fits_index(candidate):
            text = candidate
            linked.add(relpath)
        else:
            full = True
            unindexed.append(relpath)
            left_out.append(line)
    if left_out and topics is not None:
        placement = place_entries(text, left_out, topics)
        if placement.compaction is not None:
            reason = "index the consolidated topic files, compacting MEMORY.md"
            edits = compaction_edits(placement.compaction, index, reason, topics.raw)
            return edits, (), unlinked
    if text == current:
        return (), tuple(unindexed), unlinked
    edit = FileEdit(
        relpath=INDEX_NAME,
        old=index,
        new=text.encode("utf-8"),
        reason="index the consolidated topic files",
    )
    return (edit,), tuple(unindexed), unlinked


def _unlink(text: str, relpath: str, owned: _Head) -> str:
    """Drop memd's own line for `relpath`, or its link in memd's group line."""
    line = _entry_line(owned.name, relpath, owned.description)
    lines = text.split("\n")
    kept = [x for x in lines if x.rstrip("\r") != line]
    if len(kept) == len(lines):
        link = f"[{owned.name}]({relpath})"
        kept = [_drop_link(x, link) if x.startswith(GROUP_LEAD) else x for x in lines]
    return "\n".join(kept)


def _drop_link(line: str, link: str) -> str:
    links = line[len(GROUP_LEAD) :].split(" · ")
    rest = [part.strip() for part in links if part.strip() != link]
    return GROUP_LEAD + " " + " · ".join(rest) if rest else ""


def _replace_line(text: str, old: str, new: str) -> str | None:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.rstrip("\r") == old:
            lines[i] = new + ("\r" if line.endswith("\r") else "")
            return "\n".join(lines)
    return None


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
