"""What each page shows, built from values: pure, no I/O (memd.ui.gather reads).

Every text that comes from a memory directory goes through `mask_secrets`
before a template sees it; the templates escape it (Jinja autoescape), so a
memory file is shown as text, never as live HTML.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import time
from dataclasses import dataclass, field

from memd.claude_code.jscompat import js_trim
from memd.claude_code.truncation import WARNING_PREFIX, EntrypointTruncation
from memd.diagnostics import escape_surrogates
from memd.lint import secrets
from memd.memory.index import parse_index
from memd.relpath import relpath_refusal

MASK = "\u2022" * 8  # what a secret shows as
MAX_DIFF_LINES = 4000  # difflib is quadratic at worst: bigger texts are not diffed
MAX_DIFF_CHARS = 400_000
MAX_INDEX_LINES = 2000  # of an index shown; the agent reads 200
_MASK_ROUNDS = 20  # find_secrets stops at 100 findings a call
_TOKEN_END = frozenset(' \t\r\n<>"&`')


def project_id(memory_dir: str) -> str:
    """Return memd's id for a memory directory: the first 16 hex of its sha256."""
    return hashlib.sha256(memory_dir.encode("utf-8", "surrogateescape")).hexdigest()[
        :16
    ]


def mask_secrets(text: str) -> str:
    """Return memory text with every likely secret S001 finds masked.

    memd.lint.secrets' own `mask_secrets` (`[secret: RULE FINGERPRINT]`)
    when it has one; otherwise `mask_page`'s token-bounded masking.
    """
    masker = getattr(secrets, "mask_secrets", None)
    if callable(masker):
        masked = masker(text)
        if isinstance(masked, str):
            return masked
    return mask_page(text)


def mask_page(html: str, *, keep: tuple[str, ...] = ()) -> str:
    """Mask what S001 finds in a rendered page, never across its markup.

    The last pass over every page (memory text was masked before the
    template saw it). Each finding is masked from its column to the end of
    its token, stopping at `<`, `>`, quotes and `&`, so no tag breaks; a
    private key from its BEGIN line to its END line. A token holding one of
    `keep` (the page's own CSRF value) is left alone.
    """
    text = html
    for _ in range(_MASK_ROUNDS):
        findings = secrets.find_secrets(text)
        lines = text.split("\n")
        changed = False
        for finding in findings:
            index = finding.line - 1
            if index >= len(lines):
                continue
            if finding.rule == "private-key":
                _mask_key_block(lines, index)
                changed = True
                continue
            line = lines[index]
            start = finding.column - 1
            end = start
            while end < len(line) and line[end] not in _TOKEN_END:
                end += 1
            token = line[start:end]
            if not token or token == MASK or any(k and k in token for k in keep):
                continue
            lines[index] = line[:start] + MASK + line[end:]
            changed = True
        text = "\n".join(lines)
        if not changed:
            return text
    return text


def _mask_key_block(lines: list[str], first: int) -> None:
    """Mask a PEM private key from its BEGIN line to its END line (or the end)."""
    for index in range(first, len(lines)):
        is_end = "-----END" in lines[index] and index > first
        lines[index] = MASK
        if is_end:
            return


# -- the index as the agent loads it ----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexLine:
    number: int  # 1-based, in the index as shown to the agent (markup stripped)
    text: str
    is_cut: bool  # past the cut: the agent never sees it


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexModel:
    """MEMORY.md as the agent loads it: what is stripped, where the cut falls."""

    raw: str  # as written (masked)
    lines: tuple[IndexLine, ...]  # the first MAX_INDEX_LINES
    hidden_lines: int  # past MAX_INDEX_LINES, not shown
    stripped_chars: int  # frontmatter and HTML comments the agent never sees
    cut_after: int | None  # the last line the agent reads whole; None: no cut
    entries_past_cut: tuple[tuple[int, str, str], ...]  # (line, title, target)
    line_count: int
    units: int
    max_lines: int
    max_units: int
    is_line_cut: bool
    is_unit_cut: bool

    @property
    def is_cut(self) -> bool:
        return self.is_line_cut or self.is_unit_cut


def index_model(
    raw: str | None,
    shown: str,
    truncation: EntrypointTruncation | None,
    *,
    max_lines: int,
    max_units: int,
) -> IndexModel:
    """Return the index page's model from `memd.claude_code.prompt.view_index`."""
    shown_lines = shown.split("\n")
    cut_after: int | None = None
    if truncation is not None and (
        truncation.was_line_truncated or truncation.was_byte_truncated
    ):
        kept = truncation.content.split(WARNING_PREFIX, 1)[0]
        trimmed = js_trim(shown)
        lead = shown.find(trimmed) if trimmed else 0  # what js_trim took off
        leading_lines = shown[:lead].count("\n")
        cut_after = leading_lines + kept.count("\n") + 1
        if not js_trim(kept):
            cut_after = leading_lines
    lines = tuple(
        IndexLine(
            number=number,
            text=mask_secrets(text),
            is_cut=cut_after is not None and number > cut_after,
        )
        for number, text in enumerate(shown_lines[:MAX_INDEX_LINES], start=1)
    )
    past: tuple[tuple[int, str, str], ...] = ()
    if cut_after is not None:
        past = tuple(
            (entry.line, mask_secrets(entry.title), mask_secrets(entry.target))
            for entry in parse_index(shown)
            if entry.line > cut_after
        )[:MAX_INDEX_LINES]
    return IndexModel(
        raw=mask_secrets((raw or "")[:MAX_DIFF_CHARS]),
        lines=lines,
        hidden_lines=max(0, len(shown_lines) - MAX_INDEX_LINES),
        stripped_chars=max(0, len(raw or "") - len(shown)),
        cut_after=cut_after,
        entries_past_cut=past,
        line_count=truncation.line_count if truncation else 0,
        units=truncation.byte_count if truncation else 0,
        max_lines=max_lines,
        max_units=max_units,
        is_line_cut=bool(truncation and truncation.was_line_truncated),
        is_unit_cut=bool(truncation and truncation.was_byte_truncated),
    )


# -- the overview ------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Gauge:
    """One budget bar: how much of a limit is used, red once past it."""

    used: int
    limit: int
    is_over: bool

    @property
    def percent(self) -> int:
        """Width of the bar, 0-100 (capped: past the limit is shown red, full)."""
        if self.limit <= 0:
            return 0
        return min(100, round(100 * self.used / self.limit))


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectRow:
    id: str
    memory_dir: str
    source: str
    errors: int | None  # None: not linted yet
    warnings: int | None
    lines: Gauge
    units: Gauge
    last_change: float | None  # epoch seconds
    last_dream: str  # one line; "" when none
    team: str  # one line; "" without team memory
    personal: str  # one line; "" without personal sync
    alarm: str  # an open loss's alarm; "" when none
    built: bool  # a snapshot exists
    settled: str = ""  # the latest loss restored or dismissed, when none is open
    name: str = ""  # the project's folder (`~/code/webshop`); "" when unknown
    loss_rev: int | None = None  # the open loss, for "Restore what was lost"
    # memories naming a path or command the project no longer has (the daemon's
    # last truth check, memd.truth: D001/D002)
    needs_review: int = 0

    @property
    def is_cut(self) -> bool:
        return self.lines.is_over or self.units.is_over

    @property
    def shown(self) -> str:
        """What a person calls the project: its folder, else the memory dir."""
        return self.name or self.memory_dir

    @property
    def attention(self) -> tuple[int, str]:
        """The overview's order: losses, errors, cut indexes, stale, then the rest."""
        if self.alarm:
            rank = 0
        elif self.errors:
            rank = 1
        elif self.is_cut:
            rank = 2
        elif self.needs_review:
            rank = 3  # stale: memories naming what the code no longer has
        elif self.warnings:
            rank = 4
        else:
            rank = 5
        return rank, self.shown.casefold()


def by_attention(rows: list[ProjectRow], name_filter: str = "") -> list[ProjectRow]:
    """The overview's rows, what needs attention first; `name_filter` keeps those
    whose folder or memory dir holds it (case-insensitive)."""
    wanted = name_filter.strip().casefold()
    kept = [
        row
        for row in rows
        if not wanted
        or wanted in row.shown.casefold()
        or wanted in row.memory_dir.casefold()
    ]
    return sorted(kept, key=lambda row: row.attention)


def project_row(
    memory_dir: str,
    *,
    source: str,
    meta: dict[str, object] | None,
    last_dream: str = "",
    team: str = "",
    personal: str = "",
    alarm: str = "",
    loss_rev: int | None = None,
    settled: str = "",
    name: str = "",
    needs_review: int = 0,
    max_lines: int,
    max_units: int,
) -> ProjectRow:
    """Return one overview row from the snapshot's metadata and the states."""
    truncation = meta.get("truncation") if meta else None
    counts = truncation if isinstance(truncation, dict) else {}
    inputs = meta.get("inputs") if meta else None
    mtimes = (
        [
            item["mtime_ns"]
            for item in inputs
            if isinstance(item, dict) and isinstance(item.get("mtime_ns"), int)
        ]
        if isinstance(inputs, list)
        else []
    )
    return ProjectRow(
        id=project_id(memory_dir),
        memory_dir=memory_dir,
        source=source,
        errors=_int_or_none(meta.get("lint_errors")) if meta else None,
        warnings=_int_or_none(meta.get("lint_warnings")) if meta else None,
        lines=Gauge(
            used=_int_or_none(counts.get("line_count")) or 0,
            limit=max_lines,
            is_over=counts.get("was_line_truncated") is True,
        ),
        units=Gauge(
            used=_int_or_none(counts.get("byte_count")) or 0,
            limit=max_units,
            is_over=counts.get("was_byte_truncated") is True,
        ),
        last_change=max(mtimes) / 1e9 if mtimes else None,
        last_dream=last_dream,
        team=team,
        personal=personal,
        alarm=alarm,
        built=meta is not None,
        name=name,
        loss_rev=loss_rev,
        settled=settled,
        needs_review=needs_review,
    )


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def local_time(stamp: object) -> str:
    """A stored ISO stamp as a person reads it (`today 23:03:51`, memd.times);
    anything else as it is."""
    from memd import times

    epoch = times.to_epoch(stamp)
    return str(stamp) if epoch is None else times.clock(epoch, now=time.time())


def dream_line(record: object) -> str:
    """One line for a dreams.json record: when, and how it went."""
    if not isinstance(record, dict):
        return ""
    result = record.get("last_result")
    result = result if isinstance(result, dict) else {}
    when = record.get("last_run") or result.get("finished") or result.get("time")
    status = result.get("status")
    if not when and not status:
        return ""
    if when:
        when = local_time(when)  # the record's ISO stamp, as a person reads it
    parts = [str(part) for part in (when, status) if part]
    entries = result.get("entries")
    if isinstance(entries, int):
        parts.append(f"{entries} entries")
    return ", ".join(parts)


def sync_line(record: object) -> str:
    """One line for a team.json or sync.json record: state, last sync, conflicts."""
    if not isinstance(record, dict) or not record:
        return ""
    state = str(record.get("state") or "never synced")
    last = record.get("last_sync")
    text = state
    if isinstance(last, int | float):
        text += f", last sync {ago(last)}"
    conflicts = record.get("conflicts")
    if isinstance(conflicts, list) and conflicts:
        text += f", {len(conflicts)} conflict(s) waiting"
    if record.get("error") and state != "synced":
        text += f": {record.get('error')}"
    return mask_secrets(text)


def ago(epoch: float | None, *, now: float | None = None) -> str:
    """Return "3 min ago", past a day "yesterday 18:02:40" ("never" for None).

    memd.times' words, each one `--at` reads back.
    """
    from memd import times

    if epoch is None:
        return "never"
    return times.ago(epoch, now=time.time() if now is None else now)


def clock(epoch: float | None) -> str:
    """Return an epoch time as local `today 23:08:13` (memd.times), "-" for None."""
    from memd import times

    if epoch is None:
        return "-"
    return times.clock(epoch, now=time.time())


# -- diffs -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    lines: tuple[tuple[str, str], ...] = ()  # (kind: add|del|hunk|ctx, text)
    note: str = ""  # why there are no lines (too large, binary, unchanged)

    @property
    def added(self) -> int:
        return sum(kind == "add" for kind, _ in self.lines)

    @property
    def removed(self) -> int:
        return sum(kind == "del" for kind, _ in self.lines)

    @property
    def counts(self) -> str:
        """ "+3 -1 lines" (a minus sign), or the note."""
        if not self.lines:
            return self.note
        return f"+{self.added} \u2212{self.removed} lines"


def text_of(data: bytes | None) -> str | None:
    """Decode a file's bytes for display (undecodable bytes as U+FFFD)."""
    return None if data is None else data.decode("utf-8", "replace")


def diff(old: bytes | None, new: bytes | None, *, name: str = "") -> Diff:
    """Return the unified diff of two versions of a file, masked, bounded."""
    if old == new:
        return Diff(note="unchanged")
    if b"\0" in (old or b"") or b"\0" in (new or b""):
        return Diff(note="binary file")
    if len(old or b"") + len(new or b"") > MAX_DIFF_CHARS:
        return Diff(note="too large to diff here")
    a = [] if old is None else (text_of(old) or "").split("\n")
    b = [] if new is None else (text_of(new) or "").split("\n")
    if len(a) + len(b) > MAX_DIFF_LINES:
        return Diff(note="too many lines to diff here")
    before = f"a/{name}" if old is not None else "/dev/null"
    after = f"b/{name}" if new is not None else "/dev/null"
    out: list[tuple[str, str]] = []
    lines = difflib.unified_diff(a, b, before, after, lineterm="", n=2)
    # The `--- a/x` / `+++ b/x` header is the first two lines, and only those: a
    # removed `---` (frontmatter) is `----`, an added one `+---`, and stay.
    for line in itertools.islice(lines, 2, None):
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "ctx")
        out.append((kind, mask_secrets(line)))
    return Diff(lines=tuple(out))


# -- findings ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    code: str
    name: str
    severity: str
    line: int | None
    message: str
    hint: str


@dataclass(slots=True, kw_only=True)
class FileRow:
    relpath: str
    type: str | None
    description: str | None
    size: int | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def shown(self) -> str:
        """The name as text: a byte that is not UTF-8 as `\\xe9`."""
        return escape_surrogates(self.relpath)

    @property
    def is_linkable(self) -> bool:
        """Whether the file page can open it (its relpath passes memd.relpath)."""
        return relpath_refusal(self.relpath) is None

    @property
    def worst(self) -> str:
        severities = {f.severity for f in self.findings}
        for level in ("error", "warning", "info"):
            if level in severities:
                return level
        return ""


# -- what a dream did to the facts -------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FactChanges:
    """One file of a dream, as facts: added, updated (old, new), archived."""

    added: tuple[str, ...] = ()
    updated: tuple[tuple[str, str], ...] = ()
    archived: tuple[str, ...] = ()  # facts that left this file (to its archive)
    seen_again: int = 0  # facts the dream saw once more, their text unchanged
    is_archive_page: bool = False  # `.archive/...`: what arrives here was archived

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.updated or self.archived or self.seen_again)


def fact_changes(
    relpath: str, before: bytes | None, after: bytes | None
) -> FactChanges | None:
    """What a dream did to one file's facts; None for a file with no fact block
    (MEMORY.md, a file of the user's): its diff says it."""
    from memd.kairos.factfile import parse_fact_file
    from memd.kairos.facts import normalise

    old = parse_fact_file(text_of(before) or "")
    new = parse_fact_file(text_of(after) or "")
    if not (old.had_block or new.had_block or old.facts or new.facts):
        return None
    was = {normalise(fact.text): fact for fact in old.facts}
    now = {normalise(fact.text) for fact in new.facts}
    added: list[str] = []
    updated: list[tuple[str, str]] = []
    replaced: set[str] = set()
    seen_again = 0
    for fact in new.facts:
        key = normalise(fact.text)
        if key in was:
            seen_again += fact.seen > was[key].seen
            continue
        older = next(
            (normalise(p.text) for p in fact.history if normalise(p.text) in was),
            None,
        )
        if older is not None and older not in now:
            replaced.add(older)
            updated.append((mask_secrets(was[older].text), mask_secrets(fact.text)))
        else:
            added.append(mask_secrets(fact.text))
    archived = tuple(
        mask_secrets(fact.text)
        for key, fact in was.items()
        if key not in now and key not in replaced
    )
    return FactChanges(
        added=tuple(added),
        updated=tuple(updated),
        archived=archived,
        seen_again=seen_again,
        is_archive_page=relpath.startswith(".archive/"),
    )


def when(stamp: object) -> str:
    """An ISO 8601 stamp as local time to the second (`2026-12-06 23:03:51`)."""
    import datetime

    try:
        moment = datetime.datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")
