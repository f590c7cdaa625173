"""The loss rule, all of it: when a change (or a minute's burst of them) lost memory.

A loss is memory that became unreachable (SPEC §13):

- `MIN_FILES_LOST` or more memory files deleted or emptied. Memory files are
  the `*.md` files outside `logs/` (the daily logs rotate on their own);
  MEMORY.md and the hubs memd wrote are indexes, judged by what they reach,
  never counted as lost files. Emptied is cut to almost nothing: a body
  (frontmatter stripped, whitespace trimmed) under `EMPTY_BODY_BYTES` or under
  `EMPTY_BODY_SHARE` of the body it had, and the file at most `EMPTY_SHARE`
  of its previous size.
- MEMORY.md no longer reaching `MIN_REACH_DROP` (a fifth) of the files it
  reached, hubs included (`memd.lint.reach`), once it reached `REACH_FLOOR`.
  Before, only links to files that existed count (a link to a file long gone
  reached nothing); after, every link counts (a file deleted is the first
  rule's to judge, not the index's).

memd's own changes (`OWN_CAUSES`) are judged by what the agent can still
reach: `memd fix` moving entries into hubs keeps every file reachable, so it
is no loss. A file memd's own change deletes or empties is no loss when each
of its facts (its body's lines) is still in some file (the dream moved them),
or when an undo takes back bytes memd itself wrote (the facts are back in
the daily logs the undone dream filed them from). What memd's own change
really drops is still a loss.

A person's and the agent's edits land over several saves, so a change is
judged together with the lossy changes of the same kind in the last
`BURST_SECONDS` (`burst_causes`); memd's own change is one write, judged
alone, and never joins a person's burst. A restore is never a loss.

The store (`memd.history.ledger`, `History`'s loss half) gathers the burst's
files and calls `judge`; everything that decides is here. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from memd.claude_code.terms import INDEX_NAME
from memd.history.wording import loss_sentence
from memd.lint.reach import file_body, linked, targets, through_hubs
from memd.memory.index import is_hub, parse_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

MIN_FILES_LOST = 3
MIN_REACH_DROP = 0.20
REACH_FLOOR = 5
EMPTY_BODY_BYTES = 16
EMPTY_BODY_SHARE = 0.02  # 50 KB of facts cut to 900 bytes is cut to almost nothing
EMPTY_SHARE = 0.25
BURST_SECONDS = 60.0
OWN_CAUSES = frozenset({"fix", "fix-undo", "dream", "dream-undo"})
UNDO_CAUSES = frozenset({"fix-undo", "dream-undo"})
NEVER_A_LOSS = frozenset({"restore"})  # the state a person asked for
# Whose edits pile up over a minute: people, the agent, other machines.
PEOPLE_CAUSES = ("edit", "stopped", "mcp", "sync", "team-sync")
_MIN_FACT_CHARS = 8  # shorter lines (a heading mark, "---") say nothing alone


def loads_whole(memory_dir: str, relpath: str) -> str | None:
    """The agent that loads this file whole at every session start, or None.

    Another agent's store (SPEC §17) may be one file the agent injects:
    Codex CLI's `memories/memory_summary.md`, Gemini CLI's `~/.gemini/GEMINI.md`
    and each project's `~/.gemini/tmp/<id>/memory/MEMORY.md`. Deleting or
    emptying it takes what that agent remembers at once: a loss on its own.
    """
    parts = memory_dir.rstrip("/").split("/")
    if relpath == "memory_summary.md" and parts[-1] == "memories":
        return "Codex CLI"
    if relpath == "GEMINI.md" and parts[-1] == ".gemini":
        return "Gemini CLI"
    gemini_project = len(parts) >= 4 and parts[-4] == ".gemini" and parts[-3] == "tmp"
    if relpath == INDEX_NAME and gemini_project and parts[-1] == "memory":
        return "Gemini CLI"
    return None


def is_memory_file(relpath: str) -> bool:
    """A `*.md` file outside `logs/` (MEMORY.md included)."""
    return relpath.endswith(".md") and not relpath.startswith("logs/")


def may_be_loss(cause: str, bytes_removed: int) -> bool:
    """Whether a change is judged at all: it removed something, and is no restore."""
    return bytes_removed > 0 and cause not in NEVER_A_LOSS


def burst_causes(cause: str) -> tuple[str, ...]:
    """The causes of the earlier changes judged together with one of `cause`
    (empty: it is judged alone)."""
    return PEOPLE_CAUSES if cause in PEOPLE_CAUSES else ()


def body_of(data: bytes) -> bytes:
    """A file's body: after its frontmatter (when it has one), trimmed."""
    text = data.lstrip(b"\xef\xbb\xbf")
    if text.startswith(b"---"):
        first = text.find(b"\n")
        close = text.find(b"\n---", first) if first >= 0 else -1
        if close >= 0:
            end = text.find(b"\n", close + 4)
            text = b"" if end < 0 else text[end + 1 :]
    return text.strip()


def is_emptied(before: bytes, after: bytes) -> bool:
    """Cut to almost nothing: a body under `EMPTY_BODY_BYTES` (or a fiftieth of
    the body it had), the file at most `EMPTY_SHARE` of what it was (a one-line
    topic file trimmed is not emptied)."""
    if not before.strip() or len(after) > EMPTY_SHARE * len(before):
        return False  # it held nothing to lose, or keeps a good part of it
    left = len(body_of(after))
    return left < EMPTY_BODY_BYTES or left < EMPTY_BODY_SHARE * len(body_of(before))


def facts_of(data: bytes) -> set[str]:
    """A file's facts: its body's lines, as the words they say.

    List marks, whitespace, memd's marks (`<!-- memd:fact ... -->`, which a
    move may re-date) and a daily log's `HH:MM` stamp are not the fact.
    """
    body = body_of(data).decode("utf-8", "replace")
    facts = set()
    for line in body.splitlines():
        words = _without_comments(line).strip().lstrip("-*+>#").split()
        if words and len(words[0]) == 5 and words[0][2] == ":":
            words = words[1:]  # "09:00 the wiki is at w.example"
        fact = " ".join(words)
        if len(fact) >= _MIN_FACT_CHARS:
            facts.add(fact)
    return facts


def _without_comments(line: str) -> str:
    """`line` without its HTML comments (one linear scan)."""
    kept, at = [], 0
    while (start := line.find("<!--", at)) >= 0:
        end = line.find("-->", start + 4)
        if end < 0:
            break
        kept.append(line[at:start])
        at = end + 3
    kept.append(line[at:])
    return "".join(kept)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileFate:
    """One file the burst removed bytes from: what it held, and what it holds now."""

    relpath: str
    before: bytes  # what it held before the burst took it
    before_rev: int  # the revision holding `before`: what a restore brings back
    after: bytes | None  # now; None when deleted
    memd_wrote: bool = False  # `before` was written by memd's own change


@dataclass(frozen=True, slots=True, kw_only=True)
class Burst:
    """What the store gathered for one judgement.

    `read_before` / `read_after` give a file's bytes at the burst's start
    and now (None: absent); `existed_before` / `exists_after` the relpaths
    then and now; `everything_after` yields every file now, for finding where
    a fact went (called only for memd's own changes).
    """

    cause: str
    files: tuple[FileFate, ...]
    memory_dir: str = ""  # where: another agent's store has files it loads whole
    read_before: Callable[[str], bytes | None]
    existed_before: Callable[[], frozenset[str]]
    read_after: Callable[[str], bytes | None]
    exists_after: Callable[[], frozenset[str]]
    everything_after: Callable[[], Iterable[bytes]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Loss:
    """A verdict: what was lost, in one sentence, and exactly what it took."""

    deleted: int
    emptied: int
    unreached: int
    reached: int
    taken: tuple[tuple[str, int], ...]  # (relpath, revision to bring back)
    # (agent, relpath) of each file an agent loads whole that went (`loads_whole`)
    whole: tuple[tuple[str, str], ...] = ()

    @property
    def count(self) -> int:
        """The files this loss took (the index's lost reach when no file went)."""
        return self.deleted + self.emptied or self.unreached or len(self.whole)

    @property
    def sentence(self) -> str:
        return loss_sentence(
            whole=self.whole,
            deleted=self.deleted,
            emptied=self.emptied,
            unreached=self.unreached,
            reached=self.reached,
        )


def judge(burst: Burst) -> Loss | None:
    """Return the loss `burst` makes, or None."""
    own = burst.cause in OWN_CAUSES
    indexes = [f for f in burst.files if f.relpath == INDEX_NAME or _is_hub(f.before)]
    judged_by_reach = {f.relpath for f in indexes}
    removed = [
        f
        for f in burst.files
        if is_memory_file(f.relpath)
        and f.relpath not in judged_by_reach
        and (f.after is None or is_emptied(f.before, f.after))
    ]
    excused: set[str] = set()
    if own and removed:
        excused = _excused(burst, removed)
    lost = [f for f in removed if f.relpath not in excused]
    # A file another agent loads whole, deleted or emptied, is all it remembers.
    whole = [
        (agent, f)
        for f in burst.files
        if (agent := loads_whole(burst.memory_dir, f.relpath))
        and (f.after is None or is_emptied(f.before, f.after))
    ]
    unreached: set[str] = set()
    reached: frozenset[str] = frozenset()
    if _may_lose_reach(burst, indexes):
        # What it reached was memory only where a file was there: a fix dropping
        # links to files long gone takes nothing; what it reaches now, by link.
        existed = burst.existed_before()
        reached = _reach(burst.read_before, existed) & existed
        now = _reach(burst.read_after, burst.exists_after())
        unreached = set(reached - now) - excused
    by_reach = len(reached) >= REACH_FLOOR and len(unreached) >= MIN_REACH_DROP * len(
        reached
    )
    if len(lost) < MIN_FILES_LOST and not by_reach and not whole:
        return None
    taken = {f.relpath: f.before_rev for f in lost}
    taken.update((f.relpath, f.before_rev) for _, f in whole)
    # An index the loss deleted or emptied went with it (counted by what it
    # reached, never as a file); one that lost reach comes back as it was.
    taken.update(
        (f.relpath, f.before_rev)
        for f in indexes
        if by_reach or f.after is None or is_emptied(f.before, f.after)
    )
    if by_reach:  # and every file it stopped reaching that went too
        taken.update(
            (f.relpath, f.before_rev) for f in removed if f.relpath in unreached
        )
    files_rule = len(lost) >= MIN_FILES_LOST
    return Loss(
        deleted=sum(f.after is None for f in lost) if files_rule else 0,
        emptied=sum(f.after is not None for f in lost) if files_rule else 0,
        unreached=len(unreached),
        reached=len(reached),
        taken=tuple(sorted(taken.items())),
        whole=tuple(sorted((agent, f.relpath) for agent, f in whole)),
    )


def _is_hub(data: bytes) -> bool:
    return is_hub(file_body(data.decode("utf-8", "replace")))


def _excused(burst: Burst, removed: list[FileFate]) -> set[str]:
    """The files memd's own change removed without losing them: each fact is
    somewhere now, or an undo took back what memd itself had written."""
    excused = set()
    if burst.cause in UNDO_CAUSES:
        excused = {f.relpath for f in removed if f.memd_wrote}
    facts = {f.relpath: facts_of(f.before) for f in removed if f.relpath not in excused}
    missing = set().union(*facts.values())
    for data in burst.everything_after() if missing else ():
        missing -= facts_of(data)
        if not missing:
            break  # every fact found: no need to read the rest
    excused.update(rel for rel, said in facts.items() if said and not said & missing)
    return excused


def _may_lose_reach(burst: Burst, indexes: list[FileFate]) -> bool:
    """Whether the burst can have cost MEMORY.md a fifth of its reach, so that
    every hub it links must be read to know: a hub touched, or enough links
    gone. An agent adding entries, or dropping a few from a long index, costs
    no reading of the files it links, and two parses."""
    if any(f.relpath != INDEX_NAME for f in indexes):
        return True  # a hub
    if not indexes:
        return False
    before, after = burst.read_before(INDEX_NAME), burst.read_after(INDEX_NAME)
    if before is None:
        return False
    if after is None:
        return True
    old, new = parse_index(_text(before)), parse_index(_text(after))
    if {e.target for e in old} <= {e.target for e in new}:
        return False  # no link went
    if any(e.is_wiki for e in old):
        return True  # resolved by name: not worth the shortcut
    # With no hub touched, what MEMORY.md stops reaching is at most the files
    # it stopped linking (and what the hubs among them reached); what it
    # reached is at least the files it linked that were there.
    was = targets(old)
    dropped = was - targets(new)
    if any(_is_hub(data) for rel in dropped if (data := burst.read_before(rel))):
        return True
    existed = burst.existed_before()
    return len(dropped & existed) >= MIN_REACH_DROP * len(was & existed)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class _Named(NamedTuple):
    """A file a `[[name]]` may reach, by its stem (`memd.lint.reach.Linkable`)."""

    relpath: str
    name: str | None = None


def _reach(
    read: Callable[[str], bytes | None], relpaths: frozenset[str]
) -> frozenset[str]:
    """What MEMORY.md reaches, through its hubs: `memd.lint.reach`'s answer."""
    index = read(INDEX_NAME)
    if index is None:
        return frozenset()
    text = index.decode("utf-8", "replace")
    files = [_Named(rel) for rel in sorted(relpaths)]
    direct = linked(text, files)

    def body(relpath: str) -> str | None:
        data = read(relpath) if relpath.endswith(".md") else None
        return None if data is None else file_body(data.decode("utf-8", "replace"))

    return frozenset(direct | through_hubs(direct, body, files))
