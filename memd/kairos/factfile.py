"""The fact block of a topic file memd's dream keeps: read it back, write it (pure).

A consolidated topic file is the user's text (frontmatter, preamble and any
line they add) plus one block memd owns:

    <!-- memd:facts v2 -->
    - The timeout is 60 s <!-- memd:fact 2026-11-15 2026-11-29 9 -->
      - previously: timeout is 30 s, until 2026-11-15 <!-- memd:was 2026-11-01 -->
    Older facts and values: .archive/gateway/ (outside the agent's recall scan)
    <!-- memd:end -->

`v2` names the rule that wrote the block (memd.kairos.facts); a block
without it was filed by the rule that masked identifiers, and the next dream
rebuilds it from the daily logs still there. An archive page holds the same
block, plus older values on their own, one a line, shorter:
`- previously: timeout is 10 s (2026-09-01/10-01)`, an ISO 8601 interval.

The facts are re-derived from this block every night, so the files are the
dream's whole state: a second dream over the same facts adds nothing.
(A kill between applying a dream and recording its watermark is caught up
from the generation it applied, memd.kairos.dream, so an entry is never
counted twice.) A line inside the block that is none of
memd's is the user's: it is kept, after the block. A file from before the
block existed (dated `## YYYY-MM-DD` sections of `<!-- memd:entry -->`
bullets) is read as facts, so its repeats merge on the first new dream.

Every date in a mark goes through memd.kairos.dates: a mark whose date is
not a real day is still read (its fact is never dropped or frozen), with the
date left empty for the dream to settle and the problem in `problems`.

Every scan is a single pass over lines with `rfind` and fixed-shape
regexes on the line's tail: linear in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memd.kairos.dates import valid_day
from memd.kairos.facts import Fact, Past

BLOCK_START = "<!-- memd:facts"
BLOCK_VERSION = 2
BLOCK_OPEN = f"{BLOCK_START} v{BLOCK_VERSION} -->"
BLOCK_END = "<!-- memd:end -->"
ARCHIVE_LEAD = "Older facts and values:"
_OLD_ARCHIVE_LEAD = "Older facts, by the month last seen:"
_ORPHAN_PAST = "- previously: "
_ALSO = "  - also: "
_ALSO_MARK = " <!-- memd:also -->"
_FACT_MARK = " <!-- memd:fact "
_PAST_MARK = " <!-- memd:was "
_ENTRY_MARK = " <!-- memd:entry "
_DATE = r"\d{4}-\d{2}-\d{2}"
_FACT_TAIL = re.compile(rf" <!-- memd:fact ({_DATE}) ({_DATE}) (\d{{1,9}}) -->")
_PAST_TAIL = re.compile(rf" <!-- memd:was ({_DATE}) -->")
_UNTIL = re.compile(rf", until ({_DATE})")
# An ISO 8601 interval, the end's year (and month) left out when the same.
_ORPHAN_TAIL = re.compile(
    rf" \(({_DATE})/(\d{{4}}-\d{{2}}-\d{{2}}|\d{{2}}-\d{{2}}|\d{{2}})\)"
)
_ENTRY_TAIL = re.compile(r" <!-- memd:entry ([0-9a-f]{16}) -->")
_OLD_SECTION = re.compile(rf"## ({_DATE})")
_OLD_TIME = re.compile(r"\d{2}:\d{2} ")


@dataclass(slots=True)
class FactFile:
    """A topic file split into the user's text and memd's facts."""

    head: str  # everything before the block, verbatim ("" for a new file)
    facts: list[Fact] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # the user's lines in the block
    tail: str = ""  # everything after the block, verbatim
    entry_ids: frozenset[str] = frozenset()  # old-format bullets' ids
    had_block: bool = False
    version: int = 0  # the rule that wrote the block (0: no block)
    pasts: list[Past] = field(default_factory=list)  # archived values on their own
    problems: list[str] = field(default_factory=list)  # "line N: ..." date problems


def parse_fact_file(text: str) -> FactFile:
    """Split `text` into head, facts, the user's extra lines and tail."""
    lines = text.split("\n")
    start = next(
        (i for i, line in enumerate(lines) if line.startswith(BLOCK_START)), None
    )
    if start is None:
        return _parse_old_format(lines)
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i] == BLOCK_END), len(lines)
    )
    result = FactFile(
        head="\n".join(lines[:start]) + "\n" if start else "",
        tail="\n".join(lines[end + 1 :]),
        had_block=True,
        version=BLOCK_VERSION if lines[start] == BLOCK_OPEN else 1,
    )
    current: Fact | None = None
    for number, line in enumerate(lines[start + 1 : end], start + 2):
        fact = _fact_line(line)
        if fact is not None:
            current = fact
            result.facts.append(fact)
            fact.first, fact.last = _settle(result, number, fact.first, fact.last)
            if fact.first and fact.last:
                fact.last = max(fact.first, fact.last)
            continue
        past = _past_line(line)
        orphan = _orphan_line(line) if line.startswith(_ORPHAN_PAST) else None
        if current is not None and line.startswith(_ALSO) and line.endswith(_ALSO_MARK):
            current.also.append(line[len(_ALSO) : -len(_ALSO_MARK)])
        elif past is not None and current is not None:
            current.history.append(past)
            past.first, past.until = _settle(result, number, past.first, past.until)
        elif current is not None and line.startswith("  ") and past is None:
            current.text += "\n" + line[2:]
        elif orphan is not None:
            result.pasts.append(orphan)
            orphan.first, orphan.until = _settle(
                result, number, orphan.first, orphan.until
            )
            current = None
        elif line.startswith((ARCHIVE_LEAD, _OLD_ARCHIVE_LEAD)) or not line.strip():
            current = None
        else:
            current = None
            result.extra.append(line)
    return result


def _settle(result: FactFile, number: int, *days: str) -> tuple[str, str]:
    """Return the mark's two dates, each "" when it is no real day (reported)."""
    settled: list[str] = []
    for day in days:
        if valid_day(day):
            settled.append(day)
            continue
        result.problems.append(
            f"line {number}: {day!r} is not a real date; the fact is kept, "
            "read as older than any sighting"
        )
        settled.append("")
    return settled[0], settled[1]


def _fact_line(line: str) -> Fact | None:
    if not line.startswith("- "):
        return None
    cut = line.rfind(_FACT_MARK)
    if cut < 0:
        return None
    match = _FACT_TAIL.fullmatch(line, cut)
    if match is None:
        return None
    text = line[2:cut].strip()
    if not text:
        return None
    first, last, seen = match.group(1), match.group(2), int(match.group(3))
    return Fact(text=text, first=first, last=last, seen=max(1, seen))


def _past_line(line: str) -> Past | None:
    if not line.startswith("  - previously: "):
        return None
    cut = line.rfind(_PAST_MARK)
    if cut < 0 or _PAST_TAIL.fullmatch(line, cut) is None:
        return None
    body = line[len("  - previously: ") : cut]
    until_at = body.rfind(", until ")
    if until_at < 0 or _UNTIL.fullmatch(body, until_at) is None:
        return None
    first = line[cut + len(_PAST_MARK) : cut + len(_PAST_MARK) + 10]
    return Past(text=body[:until_at], first=first, until=body[until_at + 8 :])


def _orphan_line(line: str) -> Past | None:
    """Read `- previously: TEXT (FIRST..UNTIL)`, an archived value on its own."""
    cut = line.rfind(" (")
    match = _ORPHAN_TAIL.fullmatch(line, cut) if cut >= 0 else None
    if match is None:
        return None
    text = line[len(_ORPHAN_PAST) : cut]
    first, end = match.group(1), match.group(2)
    return Past(text=text, first=first, until=first[: 10 - len(end)] + end)


def _parse_old_format(lines: list[str]) -> FactFile:
    """Read a file memd wrote before the fact block: dated entry bullets."""
    kept: list[str] = []
    facts: list[Fact] = []
    ids: set[str] = set()
    day: str | None = None
    section_at: int | None = None  # where this section's heading sits in `kept`
    section_has_user = False
    current: Fact | None = None

    def close_section() -> None:
        if section_at is not None and not section_has_user:
            del kept[section_at]  # a heading that held only memd's bullets

    for line in lines:
        heading = _OLD_SECTION.fullmatch(line)
        if heading and valid_day(heading.group(1)):
            close_section()
            day, section_at, section_has_user, current = (
                heading.group(1),
                len(kept),
                False,
                None,
            )
            kept.append(line)
            continue
        cut = line.rfind(_ENTRY_MARK)
        tail = _ENTRY_TAIL.fullmatch(line, cut) if cut >= 0 else None
        if day is not None and line.startswith("- ") and tail is not None:
            ids.add(tail.group(1))
            body = line[2:cut]
            time = _OLD_TIME.match(body)
            text = body[time.end() :] if time else body
            current = Fact(text=text.strip() or body, first=day, last=day)
            facts.append(current)
            continue
        if current is not None and line.startswith("  "):
            current.text += "\n" + line[2:]
            continue
        current = None
        if line.strip() and section_at is not None:
            section_has_user = True
        kept.append(line)
    close_section()
    head = "\n".join(kept).rstrip("\n")
    return FactFile(
        head=head + "\n" if head else "", facts=facts, entry_ids=frozenset(ids)
    )


def render_fact(fact: Fact, history: int | None = None) -> str:
    """Return one fact's lines: the bullet, its continuation, its older values.

    `history` caps how many older values are shown (None: all of them).
    """
    first, *rest = fact.text.split("\n")
    lines = [f"- {first}{_FACT_MARK}{fact.first} {fact.last} {fact.seen} -->"]
    lines += [f"  {line}" for line in rest]
    lines += [f"{_ALSO}{_flat(text)}{_ALSO_MARK}" for text in fact.also]
    lines += ["  " + _past_text(past) for past in fact.history[:history]]
    return "\n".join(lines) + "\n"


def render_orphan(past: Past) -> str:
    """Return an archived older value on its own line: `- previously: TEXT (A/B)`."""
    flat = _flat(past.text)
    first, until = past.first, past.until
    end = (
        until[8:]
        if until[:8] == first[:8]
        else until[5:]
        if until[:5] == first[:5]
        else until
    )
    return f"{_ORPHAN_PAST}{flat} ({first}/{end})\n"


def _flat(text: str) -> str:
    return " / ".join(part.strip() for part in text.split("\n"))


def _past_text(past: Past) -> str:
    flat = _flat(past.text)
    return f"- previously: {flat}, until {past.until}{_PAST_MARK}{past.first} -->"


def render_fact_file(
    parsed: FactFile,
    facts: list[Fact],
    *,
    archive_note: str = "",
    pasts: list[Past] | None = None,
    rendered: list[str] | None = None,
) -> str:
    """Return the whole file: the user's text, then memd's block, then theirs."""
    head = parsed.head.rstrip("\n")
    parts = [head + "\n\n" if head else "", BLOCK_OPEN + "\n"]
    parts += [render_fact(fact) for fact in facts]
    parts += rendered or []  # facts the caller rendered already (`render_fact`)
    parts += [render_orphan(past) for past in pasts or ()]
    if archive_note:
        parts.append(f"{ARCHIVE_LEAD} {archive_note}\n")
    parts.append(BLOCK_END + "\n")
    parts += [line + "\n" for line in parsed.extra]
    tail = parsed.tail.strip("\n")
    if tail:
        parts.append(tail + "\n")
    return "".join(parts)
