"""The safe fixes `memd fix` applies, planned as whole-file edits; never writes.

Safe means a person would make the same change without thinking: add an
index entry for each orphan topic file (title from `name`, hook from
`description`), drop index entries whose file is gone, collapse duplicate
entries, and turn CRLF into LF and drop a byte-order mark. A file whose YAML
cannot be parsed is never touched: memd cannot know what its author meant.
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.claude_code.terms import INDEX_NAME
from memd.lint.checks_index import is_team_file, topic_wiki_targets
from memd.lint.compact import Topics, place_entries
from memd.lint.reach import classify_links, hub_targets
from memd.memory.index import (
    escape_inline,
    linked_relpaths,
    normalize_target,
    parse_index,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memd.lint.compact import Compaction
    from memd.memory.index import IndexEntry
    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

TARGET_LINE_CHARS = (
    150  # the reference's prompt asks for index lines under ~150 characters
)
_BOM = b"\xef\xbb\xbf"
_UNSAFE_CODES = frozenset({"F001", "F002", "M002", "M004"})


@dataclass(frozen=True, slots=True, kw_only=True)
class FileEdit:
    """Replace the file at `relpath` (`old` None: create it) with `new`.

    `is_removal`: remove the file instead (`new` is then empty).
    """

    relpath: str
    old: bytes | None
    new: bytes
    reason: str
    is_removal: bool = False


def is_utf8_name(relpath: str) -> bool:
    """Return False for a name with undecodable bytes: no index line can link it."""
    try:
        relpath.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plan_fixes(
    memdir: MemDir,
    raw: Mapping[str, bytes],
    *,
    dialect: str | None = None,
    index: bool = True,
) -> tuple[FileEdit, ...]:
    """Return the safe edits for `memdir`, given its files' current bytes by relpath.

    A file missing from `raw` is left alone (it vanished, or the caller chose
    not to read it); MEMORY.md missing from `raw` is created when topic files exist.
    With `dialect` ("classic" or "nested"), topic files are also rewritten into
    that frontmatter dialect where that can be done faithfully. With
    `index=False` (MEMORY.md is a directory or a FIFO) the index is left alone.
    """
    edits = []
    for f in memdir.files:
        edit = _normalise(f, raw.get(f.relpath))
        if dialect is not None:
            edit = _convert(f, raw.get(f.relpath), edit, dialect)
        if edit is not None:
            edits.append(edit)
    index_edits = _plan_index(memdir, raw) if index else ()
    # The index's own edits keep their order (hubs, MEMORY.md, removals) last:
    # MEMORY.md never links a hub that is not written yet.
    planned = {e.relpath for e in index_edits}
    edits = [e for e in edits if e.relpath not in planned]
    ordered = sorted(edits, key=lambda e: e.relpath)
    return (*ordered, *index_edits)


def compaction_edits(
    compaction: Compaction,
    index_old: bytes | None,
    reason: str,
    raw: Mapping[str, bytes],
) -> tuple[FileEdit, ...]:
    """Return a compaction as edits: the hubs first, MEMORY.md, then removals.

    `raw` holds the current bytes of the hubs it removes.
    """
    hubs = tuple(
        FileEdit(
            relpath=h.relpath,
            old=h.old,
            new=h.new,
            reason="hold entries compacted out of MEMORY.md",
        )
        for h in compaction.hubs
    )
    index = FileEdit(
        relpath=INDEX_NAME,
        old=index_old,
        new=compaction.index.encode("utf-8"),
        reason=reason,
    )
    removals = tuple(
        FileEdit(
            relpath=relpath,
            old=raw.get(relpath),
            new=b"",
            reason="remove a hub compaction no longer needs",
            is_removal=True,
        )
        for relpath in compaction.deletes
    )
    return (*hubs, index, *removals)


def _convert(
    f: MemoryFile, data: bytes | None, normalised: FileEdit | None, dialect: str
) -> FileEdit | None:
    """Add a dialect rewrite on top of the normalisation edit, if any."""
    from memd.memory.dialect import convert_dialect
    from memd.memory.memfile import parse_memory_file

    if data is None:
        return normalised
    parsed = f if normalised is None else parse_memory_file(f.relpath, normalised.new)
    converted = convert_dialect(parsed, dialect)
    if converted is None:
        return normalised
    reason = f"rewrite frontmatter in the {dialect} dialect"
    if normalised is not None:
        reason = f"{normalised.reason}; {reason}"
    return FileEdit(relpath=f.relpath, old=data, new=converted, reason=reason)


def is_safe_to_rewrite(f: MemoryFile) -> bool:
    """Return False when the file's YAML (or its encoding) could not be parsed."""
    if any(d.code in _UNSAFE_CODES for d in f.diagnostics):
        return False
    opened_not_closed = (
        f.frontmatter_start_line is not None and f.frontmatter_end_line is None
    )
    return not opened_not_closed


def normalise_bytes(data: bytes) -> bytes:
    """Return `data` without a leading UTF-8 BOM and with CRLF turned into LF.

    A run of CRs before an LF goes with it (`\\r\\r\\n` -> `\\n`), so the
    result has no CRLF left and a second pass changes nothing.
    """

    # Line by line, not `\r+\n`: that regex rescans a long run of lone CRs
    # from each one. CRs before a newline go; CRs at the very end stay.
    *lines, last = data.removeprefix(_BOM).split(b"\n")
    return b"\n".join([*(line.rstrip(b"\r") for line in lines), last])


def _normalise(f: MemoryFile, data: bytes | None) -> FileEdit | None:
    if data is None or not is_safe_to_rewrite(f):
        return None
    new = normalise_bytes(data)
    if new == data:
        return None
    reasons = [
        r
        for r, hit in (
            ("drop BOM", data.startswith(_BOM)),
            ("CRLF to LF", b"\r\n" in data),
        )
        if hit
    ]
    return FileEdit(relpath=f.relpath, old=data, new=new, reason=", ".join(reasons))


def _known_paths(memdir: MemDir) -> set[str]:
    known = {f.relpath for f in memdir.files}
    known.update(memdir.log_files)
    known.update(d.path for d in memdir.diagnostics)
    return known


def _plan_index(memdir: MemDir, raw: Mapping[str, bytes]) -> tuple[FileEdit, ...]:
    data = raw.get(INDEX_NAME)
    if data is None:
        if memdir.index_text is not None or INDEX_NAME in _known_paths(memdir):
            return ()  # exists but unread or unreadable: leave it alone
        text = ""
    else:
        try:
            text = normalise_bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return ()
    lines = text.split("\n")
    entries = parse_index(text)
    drop, reasons = _lines_to_drop(entries, _known_paths(memdir))
    kept = [line for number, line in enumerate(lines, start=1) if number not in drop]
    kept_links = tuple(e for e in entries if e.line not in drop)
    linked = {r for r, _ in classify_links(kept_links, memdir.files) if r is not None}
    linked.update(hub_targets(linked, memdir.files))
    linked.update(topic_wiki_targets(memdir.files))
    orphans = [
        f
        for f in memdir.files
        if f.relpath not in linked
        and not is_team_file(f.relpath)  # team/MEMORY.md indexes those
        and is_safe_to_rewrite(f)
        and f.dialect
        and is_utf8_name(f.relpath)
    ]
    # An entry that would not parse as one (a file name with a line break), or
    # that lands in an unclosed ``` fence or <!-- comment, would be appended
    # again by every later fix: add an orphan only where it will count.
    orphans = [f for f in orphans if _links(entry_line(f), {f.relpath})]
    body = list(kept)
    while body and not body[-1].strip():
        body.pop()
    added = [entry_line(f) for f in orphans]
    if not (
        orphans and _links("\n".join([*body, *added]), {f.relpath for f in orphans})
    ):
        orphans, added = [], []
    placement = place_entries("\n".join(kept), added, Topics.of(memdir, raw))
    if placement.compaction is not None:
        if orphans:
            reasons.append(f"index {len(orphans)} orphan(s)")
        compaction = placement.compaction
        reasons.append(
            f"compact: {compaction.moved} entries moved into "
            f"{len(compaction.hubs) or 'existing'} hub file(s), {compaction.kept} kept"
        )
        return compaction_edits(compaction, data, ", ".join(reasons), raw)
    if orphans and placement.index_text is not None:
        kept = [*body, *added, ""]
        reasons.append(f"index {len(orphans)} orphan(s)")
    else:
        orphans = []  # no room, and no way to compact: lint says so
    new_text = "\n".join(kept)
    if new_text and not new_text.endswith("\n"):
        # Stray CRs at the very end (trimmed by the agent) would become a CRLF.
        new_text = new_text.rstrip("\r")
        if new_text and not new_text.endswith("\n"):
            new_text += "\n"
    new = new_text.encode("utf-8")
    if data is not None and new == data:
        return ()
    if data is None and not orphans:
        return ()
    if data is not None and new != data and not reasons:
        reasons.append("CRLF to LF" if b"\r\n" in data else "normalise encoding")
    return (FileEdit(relpath=INDEX_NAME, old=data, new=new, reason=", ".join(reasons)),)


def _links(text: str, relpaths: set[str]) -> bool:
    """Return True when `text`, read as an index, links every one of `relpaths`."""
    return relpaths <= linked_relpaths(text)


def _lines_to_drop(
    entries: tuple[IndexEntry, ...], known: set[str]
) -> tuple[set[int], list[str]]:
    """Return the index lines whose entries are all gone or repeats, and why."""
    by_line: dict[int, list[str | None]] = {}
    for e in entries:
        if e.in_list_item and not e.is_wiki:  # never drop prose, headings or tables
            by_line.setdefault(e.line, []).append(normalize_target(e.target))
    seen: set[str] = set()
    drop: set[int] = set()
    gone = duplicates = 0
    for line, targets in by_line.items():
        local = [t for t in targets if t is not None]
        if not local or len(local) != len(targets):
            seen.update(local)
            continue  # a line with a URL or an outside link is the author's business
        is_gone = [t.lower().endswith(".md") and t not in known for t in local]
        if all(is_gone):
            drop.add(line)
            gone += 1
        elif all(t in seen for t in local):
            drop.add(line)
            duplicates += 1
        seen.update(local)
    reasons = []
    if gone:
        reasons.append(
            f"drop {gone} entr{'y' if gone == 1 else 'ies'} whose file is gone"
        )
    if duplicates:
        reasons.append(
            f"collapse {duplicates} duplicate entr{'y' if duplicates == 1 else 'ies'}"
        )
    return drop, reasons


def entry_line(f: MemoryFile) -> str:
    """Return `- [name](relpath) — description`, the hook cut to keep ~150 chars."""
    title = " ".join(
        (f.name or f.relpath.rsplit("/", 1)[-1].removesuffix(".md")).split()
    )
    target = f"<{f.relpath}>" if any(c in f.relpath for c in " ()<>") else f.relpath
    line = f"- [{escape_inline(title)}]({target})"
    hook = " ".join((f.description or "").split())
    if hook:
        room = TARGET_LINE_CHARS - len(line) - 3
        if len(hook) > room:
            hook = hook[: max(room - 1, 10)].rstrip() + "…"
        # The hook ends the line, so its code spans close inside it.
        line += f" — {escape_inline(hook, keep_code=True)}"
    return line
