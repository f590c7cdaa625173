"""The built-in consolidator: daily-log entries -> planned topic-file edits (pure).

Routing: a `[user]`, `[feedback]`, `[project]` or `[reference]` tag chooses
the memory type of a new topic file; a `#topic` tag chooses the file
(`topic.md`); an entry with only a type goes to `<type>-notes.md`, and an
untagged one to `journal.md`. Each entry becomes a bullet under a dated
section (`## YYYY-MM-DD`) and carries an HTML comment `<!-- memd:entry ID -->`,
so a rerun after a crash recognises entries already written and never
duplicates them. Existing files are only appended to, byte for byte.

MEMORY.md gets a one-line entry for each touched file that has none, but
only while the index stays within the reference's limits (200 lines,
25,000 UTF-16 units after the JS trim, REFERENCE.md §3): an entry that would
cross them is reported in `unindexed` instead of cutting the user's lines.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memd.agent.jscompat import js_trim, utf16_len
from memd.agent.terms import INDEX_NAME, MEMORY_TYPES
from memd.agent.truncation import MAX_ENTRYPOINT_LINES, MAX_ENTRYPOINT_UNITS
from memd.lint.fixes import FileEdit
from memd.memory.index import linked_relpaths
from memd.memory.memfile import parse_memory_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

_TYPE_TAG = re.compile(rf"\[({'|'.join(MEMORY_TYPES)})\]", re.IGNORECASE)
_TOPIC_TAG = re.compile(r"(?<![\w#&/])#([A-Za-z][\w-]{0,63})")
_TIME = re.compile(r"(\d{2}:\d{2})(?:\s+|$)")
_MARKER = "<!-- memd:entry {} -->"
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
class ConsolidationPlan:
    """The edits a dream would make: topic files first, MEMORY.md last."""

    edits: tuple[FileEdit, ...]
    filed: tuple[str, ...]  # entry ids written by these edits
    already_filed: tuple[str, ...]  # entry ids a previous (interrupted) run wrote
    unindexed: tuple[str, ...]  # touched files left out of MEMORY.md by its limits


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
        "Notes gathered from the KAIROS daily logs, newest last.",
    ]
    if route_.type in ("feedback", "project"):
        lines += [
            "",
            "**Why:** recorded in the daily logs as it happened.",
            "**How to apply:** read the dated notes below; verify one before use.",
        ]
    return "\n".join(lines) + "\n"


def intended_frontmatter(route_: Route) -> dict[str, object]:
    """Return the name, description and type a new topic file for `route_` gets."""
    return {
        "name": _title(route_.topic),
        "description": _description(route_),
        "type": route_.type,
    }


def _bullet(entry: LogEntry, text: str) -> str:
    first, *rest = text.split("\n")
    stamp = f"{entry.time} " if entry.time else ""
    lines = [f"- {stamp}{first} {_MARKER.format(entry.entry_id)}"]
    lines += [f"  {line}" if line else "  " for line in rest]
    return "\n".join(lines) + "\n"


def _last_section(text: str) -> str | None:
    sections = [line for line in text.split("\n") if line.startswith("## ")]
    return sections[-1].strip() if sections else None


def plan_consolidation(
    entries: Iterable[LogEntry],
    files: Mapping[str, bytes | None],
    index: bytes | None,
) -> ConsolidationPlan:
    """Plan the topic-file and MEMORY.md edits that file `entries`.

    `files` holds the current bytes (None: missing) of every file `route`
    names for these entries; `index` is MEMORY.md's bytes (None: missing).
    """
    ordered = sorted(entries, key=lambda e: (e.date, e.log, e.offset))
    texts: dict[str, str] = {}
    routes: dict[str, Route] = {}
    filed: list[str] = []
    already: list[str] = []
    for entry in ordered:
        target = route(entry)
        relpath = target.relpath
        if relpath not in texts:
            old = files.get(relpath)
            texts[relpath] = (
                old.decode("utf-8", errors="surrogateescape")
                if old is not None
                else new_topic_text(target)
            )
            routes[relpath] = target
        text = texts[relpath]
        if _MARKER.format(entry.entry_id) in text:
            already.append(entry.entry_id)
            continue
        if text and not text.endswith("\n"):
            text += "\n"
        section = f"## {entry.date}"
        if _last_section(text) != section:
            text += f"\n{section}\n\n"
        texts[relpath] = text + _bullet(entry, target.text)
        filed.append(entry.entry_id)
    edits: list[FileEdit] = []
    for relpath, text in texts.items():
        old = files.get(relpath)
        new = text.encode("utf-8", errors="surrogateescape")
        if new != old:
            reason = "append dated notes" if old is not None else "create topic file"
            edits.append(FileEdit(relpath=relpath, old=old, new=new, reason=reason))
    index_edit, unindexed = _plan_index(routes, texts, index)
    if index_edit is not None:
        edits.append(index_edit)
    return ConsolidationPlan(
        edits=tuple(edits),
        filed=tuple(filed),
        already_filed=tuple(already),
        unindexed=unindexed,
    )


def fits_index(text: str) -> bool:
    """Return True when MEMORY.md text loads whole (200 lines, 25,000 units)."""
    trimmed = js_trim(text)
    lines = len(trimmed.split("\n"))
    return lines <= MAX_ENTRYPOINT_LINES and utf16_len(trimmed) <= MAX_ENTRYPOINT_UNITS


def _plan_index(
    routes: Mapping[str, Route], texts: Mapping[str, str], index: bytes | None
) -> tuple[FileEdit | None, tuple[str, ...]]:
    if index is None:
        current = ""
    else:
        try:
            current = index.decode("utf-8")
        except UnicodeDecodeError:
            return None, tuple(routes)  # never rewrite an index we cannot read
    text = current
    unindexed: list[str] = []
    for relpath, route_ in routes.items():
        if relpath in linked_relpaths(text):
            continue
        parsed = parse_memory_file(relpath, texts[relpath].encode("utf-8", "replace"))
        name = parsed.name or _title(route_.topic)
        hook = parsed.description or _description(route_)
        line = f"- [{name}]({relpath}) — {hook}"
        candidate = (text.rstrip("\n") + "\n" if text.strip() else "") + line + "\n"
        if fits_index(candidate):
            text = candidate
        else:
            unindexed.append(relpath)
    if text == current:
        return None, tuple(unindexed)
    edit = FileEdit(
        relpath=INDEX_NAME,
        old=index,
        new=text.encode("utf-8"),
        reason="index the consolidated topic files",
    )
    return edit, tuple(unindexed)


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
    return "".join(chunks)
