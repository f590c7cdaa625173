"""What the agent can reach from MEMORY.md: the one answer, hubs included (pure).

The agent reads the whole index, so every link in MEMORY.md reaches its
file; a hub `memd fix` wrote (`memd.memory.index.is_hub`) is an index too,
one hop deep: the links in a hub MEMORY.md links reach their files as well.
The index keeper (`memd.lint.compact`, which checks that a compaction keeps
every file reachable), lint's orphan check, `memd fix`, and the loss alarm
(`memd.history.loss`, which judges memd's own changes by what is still
reachable) all ask `reachable` or `hub_targets`, so they agree.
"""

from __future__ import annotations

from typing import Protocol

from memd.memory.index import (
    classify_target,
    is_hub,
    parse_index,
    resolve_wiki_link,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from memd.memory.index import IndexEntry
    from memd.memory.memfile import MemoryFile


class Linkable(Protocol):
    """What a `[[name]]` link resolves against: a file's relpath and `name:`
    (a `MemoryFile`, or just a relpath with no name, resolved by its stem)."""

    @property
    def relpath(self) -> str: ...

    @property
    def name(self) -> str | None: ...


def classify_links(
    links: tuple[IndexEntry, ...], files: Sequence[Linkable]
) -> tuple[tuple[str | None, str], ...]:
    """Return (relpath or None, why) per link; a wiki-link resolves by name, then stem.

    `why` is as `classify_target` says, or "wiki-dangling" for a `[[name]]`
    that names no topic file.
    """
    names = {f.relpath: f.name for f in files if f.name}
    relpaths = [f.relpath for f in files]
    result: list[tuple[str | None, str]] = []
    for link in links:
        if link.is_wiki:
            relpath = resolve_wiki_link(link.target, names, relpaths)
            result.append((relpath, "ok" if relpath else "wiki-dangling"))
        else:
            result.append(classify_target(link.target))
    return tuple(result)


def linked(text: str, files: Sequence[Linkable] = ()) -> set[str]:
    """The relpaths `text`, read as an index, links to (wiki links through `files`)."""
    return targets(parse_index(text), files)


def targets(links: tuple[IndexEntry, ...], files: Sequence[Linkable] = ()) -> set[str]:
    """The relpaths parsed `links` reach (wiki links through `files`)."""
    return {r for r, _ in classify_links(links, files) if r is not None}


def through_hubs(
    direct: Iterable[str],
    body_of: Callable[[str], str | None],
    files: Sequence[Linkable] = (),
) -> frozenset[str]:
    """The relpaths reached through the hubs among `direct`, one hop deep.

    `body_of(relpath)` is the file's body (after its frontmatter), or None
    when there is no such file.
    """
    reached: set[str] = set()
    for relpath in direct:
        body = body_of(relpath)
        if body is not None and is_hub(body):
            reached.update(linked(body, files))
    return frozenset(reached)


def hub_targets(
    direct: frozenset[str] | set[str], files: Sequence[MemoryFile]
) -> frozenset[str]:
    """`through_hubs` for parsed topic files (lint's orphan check, `memd fix`)."""
    bodies = {f.relpath: f.body for f in files if f.relpath in direct}
    return through_hubs(direct, bodies.get, files)


def reachable(
    index_text: str,
    texts: Mapping[str, str],
    files: Sequence[MemoryFile] = (),
) -> set[str]:
    """Return the relpaths `index_text` links, and those the hubs it links link.

    `texts` maps relpaths to whole file texts (at least the hubs');
    `files` resolves `[[name]]` links.
    """
    direct = linked(index_text, files)

    def body_of(relpath: str) -> str | None:
        text = texts.get(relpath)
        return None if text is None else file_body(text)

    return direct | through_hubs(direct, body_of, files)


def file_body(text: str) -> str:
    """Return a file's body: after its frontmatter's closing `---` line.

    Hubs memd wrote split at once; anything else goes through the parser.
    """
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end >= 0 and "\r" not in text[:end]:
            return text[end + 5 :]
    from memd.memory.memfile import parse_memory_file

    return parse_memory_file("hub.md", text.encode("utf-8", "surrogatepass")).body
