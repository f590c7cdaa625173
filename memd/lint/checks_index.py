"""Checks on MEMORY.md against the topic files it indexes (SPEC §4, REFERENCE.md §3).

The agent loads MEMORY.md through `truncate_entrypoint`, which trims it, keeps
200 lines and then 25,000 UTF-16 units, cutting from the bottom: the newest
entries are the ones lost. These checks name exactly which entries that is.
Team memory is its own index: files under `team/` are linked from
`team/MEMORY.md` (linted as a directory of its own, `memd.lint.targets`), so
they are never orphans of the private index; a private link to `team/x.md`
still reaches its file. `./x.md` is the same as `x.md`. Links that leave the
directory are reported, never followed.

Any link reaches its file (the agent reads the whole index), so every link
counts against orphans and dangling targets, and so do `[[name]]` links in
topic files; only entries (`IndexEntry.is_entry`) can be too long or repeat.
A `[[name]]` that names no memory is info: the agent is told such a link
"marks something worth writing later, not an error" (REFERENCE.md, "`[[name]]`
links").
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.claude_code.jscompat import JS_WHITESPACE
from memd.claude_code.prompt import view_index
from memd.claude_code.terms import INDEX_NAME, TEAM_DIR
from memd.claude_code.truncation import (
    MAX_ENTRYPOINT_LINES,
    MAX_ENTRYPOINT_UNITS,
    WARNING_PREFIX,
    EntrypointTruncation,
)
from memd.lint.reach import classify_links, hub_targets
from memd.memory.index import (
    entry_line_numbers,
    parse_index,
    resolve_wiki_link,
    wiki_names,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memd.diagnostics import Diagnostic
    from memd.lint.context import LintContext, RuleSpec
    from memd.memory.index import IndexEntry
    from memd.memory.memfile import MemoryFile

MAX_ENTRY_LINE_CHARS = 200
MAX_LISTED = 20  # entries named in one message; the line span covers the rest


def check_missing(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """No MEMORY.md although topic files exist: nothing points the agent at them."""
    if (
        ctx.is_memdir
        and ctx.index_text is None
        and ctx.files
        and INDEX_NAME not in ctx.known_paths
    ):
        yield rule.diag(
            INDEX_NAME,
            f"MEMORY.md is missing but {len(ctx.files)} topic file(s) exist; "
            "the agent loads none of them up front",
            "run `memd fix` to create an index entry for every topic file",
        )


def _kept_offset(text: str, result: EntrypointTruncation) -> tuple[int, int, int]:
    """Return (trim start, end of the line cut, end of the final cut) in `text`.

    `result` is `truncate_entrypoint(text)`.
    """
    start = len(text) - len(text.lstrip(JS_WHITESPACE))
    trimmed_len = len(text.strip(JS_WHITESPACE))
    kept = result.content
    if result.was_line_truncated or result.was_byte_truncated:
        suffix_start = kept.rfind(WARNING_PREFIX + "MEMORY.md is ")
        kept = kept[:suffix_start]
    # A hard cut may leave a lone high surrogate: that character is not loaded whole.
    kept_len = len(
        kept.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")
    )
    trimmed = text[start : start + trimmed_len]
    line_end = trimmed_len
    if result.was_line_truncated:
        line_end = len("\n".join(trimmed.split("\n")[:MAX_ENTRYPOINT_LINES]))
    return start, start + line_end, start + min(kept_len, trimmed_len)


def _line_starts(text: str) -> list[int]:
    starts, pos = [0], 0
    for line in text.split("\n")[:-1]:
        pos += len(line) + 1
        starts.append(pos)
    return starts


def _lost(
    text: str, entries: tuple[IndexEntry, ...], begin: int, end: int
) -> list[IndexEntry]:
    """Entries whose line is not wholly inside text[:begin] but starts before `end`."""
    starts = _line_starts(text)
    lost = []
    for entry in entries:
        line_start = (
            starts[entry.line - 1] if entry.line - 1 < len(starts) else len(text)
        )
        line_end = starts[entry.line] - 1 if entry.line < len(starts) else len(text)
        if line_end > begin and line_start < end:
            lost.append(entry)
    return lost


def _describe(entries: list[IndexEntry]) -> str:
    """Return `N entries will not be loaded (lines 201-230): a.md (line 201), …`."""
    if len(entries) == 1:
        return (
            f"1 entry will not be loaded: {entries[0].target} (line {entries[0].line})"
        )
    shown = ", ".join(f"{e.target} (line {e.line})" for e in entries[:MAX_LISTED])
    more = (
        f", and {len(entries) - MAX_LISTED} more" if len(entries) > MAX_LISTED else ""
    )
    span = f"lines {entries[0].line}-{entries[-1].line}"
    return f"{len(entries)} entries will not be loaded ({span}): {shown}{more}"


@dataclass(frozen=True, slots=True)
class _Cut:
    """What the agent drops from MEMORY.md, in the file's own line numbers."""

    result: EntrypointTruncation
    lost_to_lines: tuple[IndexEntry, ...]  # past line 200
    lost_to_units: tuple[IndexEntry, ...]  # within 200 lines, past 25,000 units
    first_dropped_line: int | None  # first line not loaded by the line cut
    unit_cut_line: int | None  # the line the unit cut falls on


def _entries(links: tuple[IndexEntry, ...]) -> tuple[IndexEntry, ...]:
    return tuple(e for e in links if e.is_entry)


def _cut(ctx: LintContext) -> _Cut | None:
    """Truncate MEMORY.md as the agent loads it, and map what is lost back to the file.

    The agent strips frontmatter and HTML comments before truncating, so the
    cut is computed on that text; entries are matched back by position, since
    `parse_index` skips the same markup.
    """
    if ctx.index_text is None:
        return None
    text = ctx.index_text
    view = ctx.index_view if ctx.index_view is not None else view_index(text)
    shown, result = view.shown, view.truncation
    # No truncation facts: nothing but blanks is left, so nothing is cut.
    if result is None or not (result.was_line_truncated or result.was_byte_truncated):
        return None
    entries = _entries(ctx.entries)
    shown_entries = entries if shown == text else _entries(parse_index(shown))
    _, line_end, final_end = _kept_offset(shown, result)
    by_lines = _lost(shown, shown_entries, line_end, len(shown))
    by_units = _lost(shown, shown_entries, final_end, line_end)
    first_dropped: int | None = shown[:line_end].count("\n") + 2
    unit_line: int | None = shown[:final_end].count("\n") + 1
    same = [e.target for e in shown_entries] == [e.target for e in entries]
    if same:
        position = {id(e): i for i, e in enumerate(shown_entries)}
        by_lines = [entries[position[id(e)]] for e in by_lines]
        by_units = [entries[position[id(e)]] for e in by_units]
    if shown != text:
        # Line numbers of the stripped text are not the file's; use the entries'.
        first_dropped = by_lines[0].line if by_lines and same else None
        unit_line = by_units[0].line if by_units and same else None
    return _Cut(result, tuple(by_lines), tuple(by_units), first_dropped, unit_line)


def check_too_many_lines(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Over 200 lines: the agent loads the first 200; the newest entries are lost."""
    cut = _cut(ctx)
    if cut is None or not cut.result.was_line_truncated:
        return
    lost = list(cut.lost_to_lines)
    which = _describe(lost) if lost else "no entries are lost yet, only other lines"
    yield rule.diag(
        INDEX_NAME,
        f"MEMORY.md has {cut.result.line_count} lines (limit {MAX_ENTRYPOINT_LINES}); "
        f"the agent loads only the first {MAX_ENTRYPOINT_LINES}, so {which}",
        "run `memd fix` to compact it (older entries move into hub files it "
        "links), or shorten or merge entries; the reference cuts from the bottom",
        line=cut.first_dropped_line,
    )


def check_too_large(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Over 25,000 UTF-16 units: the agent cuts at the last line break before it."""
    cut = _cut(ctx)
    if cut is None or not cut.result.was_byte_truncated:
        return
    lost = list(cut.lost_to_units)
    if lost:
        which = _describe(lost)
    elif cut.result.was_line_truncated:
        which = "the 200-line cut already drops everything past this limit"
    else:
        which = "no entries are lost yet, only other lines"
    yield rule.diag(
        INDEX_NAME,
        f"MEMORY.md is {cut.result.byte_count:,} UTF-16 units "
        f"(limit {MAX_ENTRYPOINT_UNITS:,}); {which}",
        "run `memd fix` to compact it (older entries move into hub files it "
        "links), or keep each entry to one line under ~150 characters",
        line=cut.unit_cut_line,
    )


def check_line_too_long(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """An entry line over 200 characters (the target is about 150); prose may run on."""
    if ctx.index_text is None:
        return
    entry_lines = entry_line_numbers(ctx.index_text, ctx.entries)
    for number, line in enumerate(ctx.index_text.split("\n"), start=1):
        length = len(line.rstrip("\r"))
        if length > MAX_ENTRY_LINE_CHARS and number in entry_lines:
            yield rule.diag(
                INDEX_NAME,
                f"line is {length} characters "
                f"(limit {MAX_ENTRY_LINE_CHARS}, aim for about 150)",
                "keep the entry to `- [Title](file.md) — one-line hook` "
                "and move detail into the topic file",
                line=number,
            )


def is_team_file(relpath: str) -> bool:
    """Whether `relpath` is under `team/`: the team index's, not the private one's."""
    return relpath.startswith(TEAM_DIR + "/")


def topic_wiki_targets(files: tuple[MemoryFile, ...]) -> frozenset[str]:
    """Return the relpaths that `[[name]]` links in topic files reach."""
    names = {f.relpath: f.name for f in files if f.name}
    relpaths = [f.relpath for f in files]
    reached = set()
    for f in files:
        for name in wiki_names(f.body):
            relpath = resolve_wiki_link(name, names, relpaths)
            if relpath is not None and relpath != f.relpath:
                reached.add(relpath)
    return frozenset(reached)


def _classified(ctx: LintContext) -> Iterator[tuple[IndexEntry, str | None, str]]:
    """Yield (link, relpath or None, why) per link, classified once when possible."""
    targets = ctx.targets
    if targets is None:
        targets = classify_links(ctx.entries, ctx.files)
    for entry, (relpath, why) in zip(ctx.entries, targets, strict=True):
        yield entry, relpath, why


def _local_targets(ctx: LintContext) -> Iterator[tuple[IndexEntry, str]]:
    for entry, relpath, _ in _classified(ctx):
        if relpath is not None:
            yield entry, relpath


def _column(entry: IndexEntry) -> int:
    return entry.column


def check_dangling(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """An entry linking to a Markdown file that is not in the memory directory."""
    if ctx.index_text is None:
        return
    directories = {
        p.rsplit("/", i)[0] for p in ctx.known_paths for i in range(1, p.count("/") + 1)
    }
    for entry, relpath in _local_targets(ctx):
        if entry.is_wiki or not relpath.lower().endswith(".md"):
            continue  # memd reads only Markdown; other files are not its business
        if relpath not in ctx.known_paths and relpath.rstrip("/") not in directories:
            yield rule.diag(
                INDEX_NAME,
                f"{'entry' if entry.is_entry else 'link'} links to {entry.target}, "
                "which does not exist",
                "remove the entry or fix the link "
                "(`memd fix` drops entries whose file is gone)",
                line=entry.line,
                column=_column(entry),
            )


def check_orphans(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A topic file that nothing links to: the agent only finds it by recall."""
    if ctx.index_text is None:
        return
    linked = {relpath for _, relpath in _local_targets(ctx)}
    linked.update(hub_targets(linked, ctx.files))
    linked.update(topic_wiki_targets(ctx.files))
    for f in ctx.files:
        if f.relpath not in linked and not is_team_file(f.relpath):
            yield rule.diag(
                f.relpath,
                "nothing in MEMORY.md or another memory links to this file",
                f"add `- [Title]({f.relpath}) — one-line hook` to MEMORY.md "
                "(`memd fix` does it)",
            )


def check_duplicates(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Two entries for one file: they cost index lines twice."""
    if ctx.index_text is None:
        return
    first: dict[str, int] = {}
    for entry, relpath in _local_targets(ctx):
        if not entry.is_entry:
            continue  # a cross-reference inside another line is not a second entry
        if relpath in first:
            yield rule.diag(
                INDEX_NAME,
                f"second entry for {relpath} (first on line {first[relpath]})",
                "keep one entry per file (`memd fix` collapses duplicates)",
                line=entry.line,
                column=_column(entry),
            )
        else:
            first[relpath] = entry.line


def check_outside(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A `../`, absolute or URL link on an entry line: it leaves the directory.

    Every link of an entry line counts, the hook's too: a `[x](../../etc)`
    in a description is as much a pointer out as the entry's own link.
    """
    if ctx.index_text is None:
        return
    entry_lines = entry_line_numbers(ctx.index_text, ctx.entries)
    for entry, _, why in _classified(ctx):
        if why in _OUTSIDE and (entry.is_entry or entry.line in entry_lines):
            kind = "entry link" if entry.is_entry else "link"
            yield rule.diag(
                INDEX_NAME,
                f"{kind} {entry.target} {_OUTSIDE[why]}; memd never follows it",
                "index only files inside the memory directory; "
                "keep outside pointers in a reference memory",
                line=entry.line,
                column=_column(entry),
            )


_OUTSIDE = {
    "url": "is a URL",
    "absolute": "is an absolute path",
    "outside": "leaves the memory directory",
}


def check_wiki_dangling(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A `[[name]]` in the index or a topic file that names no memory yet."""
    if ctx.index_text is not None:
        for entry, _, why in _classified(ctx):
            if why == "wiki-dangling":
                yield rule.diag(
                    INDEX_NAME,
                    f"[[{entry.target}]] names no memory yet",
                    "fine if it marks something worth writing later; "
                    "else link by the other memory's `name:`",
                    line=entry.line,
                    column=_column(entry),
                )
    if not ctx.is_memdir:
        return
    names = {f.relpath: f.name for f in ctx.files if f.name}
    relpaths = [f.relpath for f in ctx.files]
    for f in ctx.files:
        for name in dict.fromkeys(wiki_names(f.body)):
            if resolve_wiki_link(name, names, relpaths) is None:
                yield rule.diag(
                    f.relpath,
                    f"[[{name}]] names no memory yet",
                    "fine if it marks something worth writing later; "
                    "else link by the other memory's `name:`",
                )
