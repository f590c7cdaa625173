"""A repository at one `HEAD`, as values, and the parsers of git's output (pure).

`RepoFacts` is what the judge needs and what the cache keeps per `HEAD`: the
files at `HEAD`, the newest deletion or rename of each path that is no
longer there, the commands every definition file at `HEAD` defines, and the
versions of the root definition files (newest first), so a command that went
can be dated. The parsers read git's ``-z`` output in one pass each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

CACHE_VERSION = 1
NO_MAPPING: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Event:
    """How a path left: in commit `sha` on `date` (YYYY-MM-DD), renamed or removed."""

    sha: str
    date: str
    renamed_to: str | None = None


@dataclass(frozen=True, slots=True)
class Version:
    """One version of a root definition file: the commit, its date, what it defines.

    `names` is None when the file is absent at that commit.
    """

    sha: str
    date: str
    names: frozenset[str] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RepoFacts:
    """A repository at one `HEAD`: files, what left, commands, definition history."""

    head: str
    files: frozenset[str]
    # newest departure first (git log's order), kept so through the cache
    gone: Mapping[str, Event] = field(default_factory=lambda: MappingProxyType({}))
    commands: Mapping[str, frozenset[str] | None] = field(
        default_factory=lambda: MappingProxyType({})
    )  # kind -> every name defined at HEAD; None: a definition file could not be read
    versions: Mapping[str, tuple[Version, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )  # kind -> the root definition file's versions, newest first
    definition_names: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({})
    )  # kind -> the root definition file's name ("Makefile")
    ordered: tuple[str, ...] = ()  # `files` sorted (the cache keeps them so)

    def to_json(self) -> dict[str, object]:
        """The facts as JSON-ready data (the cache's body)."""
        return {
            "version": CACHE_VERSION,
            "head": self.head,
            "files": list(self.ordered or sorted(self.files)),
            "gone": {
                path: [e.sha, e.date, e.renamed_to] for path, e in self.gone.items()
            },
            "commands": {
                kind: None if names is None else sorted(names)
                for kind, names in self.commands.items()
            },
            "versions": {
                kind: [
                    [v.sha, v.date, None if v.names is None else sorted(v.names)]
                    for v in versions
                ]
                for kind, versions in self.versions.items()
            },
            "definition_names": dict(self.definition_names),
        }

    @classmethod
    def from_json(cls, data: object) -> RepoFacts | None:
        """The facts `to_json` wrote, or None for anything else (an old, torn cache)."""
        try:
            if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
                return None
            return cls(
                head=str(data["head"]),
                files=frozenset(data["files"]),
                ordered=tuple(data["files"]),
                gone=MappingProxyType(
                    {p: Event(s, d, r) for p, (s, d, r) in data["gone"].items()}
                ),
                commands=MappingProxyType(
                    {
                        k: None if v is None else frozenset(v)
                        for k, v in data["commands"].items()
                    }
                ),
                versions=MappingProxyType(
                    {
                        k: tuple(
                            Version(s, d, None if n is None else frozenset(n))
                            for s, d, n in v
                        )
                        for k, v in data["versions"].items()
                    }
                ),
                definition_names=MappingProxyType(dict(data["definition_names"])),
            )
        except (KeyError, TypeError, ValueError):
            return None


def parse_tree_names(output: bytes) -> frozenset[str]:
    """The paths of ``git ls-tree -r -z --name-only`` output."""
    return frozenset(
        name.decode("utf-8", "surrogateescape") for name in output.split(b"\0") if name
    )


def parse_departures(output: bytes, files: frozenset[str]) -> dict[str, Event]:
    """The newest deletion or rename of each path not in `files`.

    `output` is ``git log -M --diff-filter=DR --name-status -z
    --format=%x01%h %cs`` (newest first): a ``\\x01`` header per commit,
    then ``D\\0path\\0`` or ``R<score>\\0old\\0new\\0`` records.
    """
    gone: dict[str, Event] = {}
    for chunk in output.split(b"\x01"):
        if not chunk:
            continue
        header, _, body = chunk.partition(b"\0")
        sha, _, date = header.decode("ascii", "replace").strip().partition(" ")
        fields = body.lstrip(b"\n").split(b"\0")
        index = 0
        while index < len(fields):
            status = fields[index].strip()
            if not status:
                index += 1
                continue
            if status[:1] == b"R" and index + 2 < len(fields):
                old = fields[index + 1].decode("utf-8", "surrogateescape")
                new = fields[index + 2].decode("utf-8", "surrogateescape")
                if old not in files and old not in gone:
                    gone[old] = Event(sha, date, new)
                index += 3
            elif status[:1] == b"D" and index + 1 < len(fields):
                old = fields[index + 1].decode("utf-8", "surrogateescape")
                if old not in files and old not in gone:
                    gone[old] = Event(sha, date)
                index += 2
            else:
                index += 1
    return gone


def parse_commit_list(output: bytes) -> list[tuple[str, str]]:
    """(sha, date) of each line of ``git log --format=%H %cs`` output."""
    found = []
    for line in output.decode("ascii", "replace").splitlines():
        sha, _, date = line.strip().partition(" ")
        if sha:
            found.append((sha, date))
    return found


def parse_batch(output: bytes, count: int) -> list[bytes | None]:
    """The `count` objects of ``git cat-file --batch`` output; None: missing."""
    results: list[bytes | None] = []
    position = 0
    for _ in range(count):
        end = output.find(b"\n", position)
        if end == -1:
            break
        header = output[position:end].split(b" ")
        position = end + 1
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            results.append(
                output[position : position + size] if header[1] == b"blob" else None
            )
            position += size + 1
        else:
            results.append(None)  # "<name> missing"
    results.extend([None] * (count - len(results)))
    return results


def union(names: Iterable[frozenset[str] | None]) -> frozenset[str] | None:
    """Every name in `names`, or None when any of them could not be read."""
    found: set[str] = set()
    for item in names:
        if item is None:
            return None
        found.update(item)
    return frozenset(found)
