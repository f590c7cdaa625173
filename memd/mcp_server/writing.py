"""Plan a `memory_write`: the topic file and its index line, or a refusal. Pure.

The file is written the way the agent writes one (REFERENCE.md §5, §8): YAML
frontmatter in the dialect the directory already uses (the nested one when
most of its files are nested, else the classic one), then the body; and one
`- [name](file.md) — hook` line in MEMORY.md. A memory with the same `name`
is replaced in place (its index entry stays); a new one gets
`<type>_<slug>.md`, whose characters are all `[a-z0-9_-]`, so no argument can
name a path.

Before anything is written the planned directory is linted: any error or
warning on the new file, or on its index line, refuses the write with the
findings, and so does an index without room for one more line within the
200 lines / 25,000 UTF-16 units the agent loads. What is written therefore
lints clean.
"""

from __future__ import annotations

import dataclasses
import zlib

from memd.claude_code.terms import INDEX_NAME, MEMORY_TYPES
from memd.errors import MemdError
from memd.lint.compact import place_entries
from memd.lint.engine import lint_memdir
from memd.lint.fixes import entry_line
from memd.memory.dialect import slugify
from memd.memory.index import appended_entry_problem, linked_relpaths
from memd.memory.memfile import parse_memory_file
from memd.memory.yaml_safe import dump_yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

MAX_NAME_CHARS = 80  # the index line must stay near 150 characters
MAX_SLUG_CHARS = 60


class WriteRefusedError(MemdError):
    """The write would not lint clean, or the index has no room: nothing written."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WritePlan:
    """What to write: the topic file and, when it needs a new entry, the index."""

    relpath: str
    data: bytes
    old_data_exists: bool  # replacing a memory with the same name
    index: bytes | None  # None: the index already links the file
    entry: str | None  # the line added to the index


def plan_write(
    memdir: MemDir,
    *,
    name: str,
    description: str,
    memory_type: str,
    body: str,
    index_bytes: bytes | None,
    severities: Mapping[str, str] | None = None,
) -> WritePlan:
    """Return the plan for writing one memory into `memdir`.

    Raises:
        WriteRefusedError: the result would not lint clean or would not fit.
    """
    if memory_type not in MEMORY_TYPES:
        raise WriteRefusedError(
            f"type must be one of {', '.join(MEMORY_TYPES)}, not {memory_type!r}"
        )
    name = " ".join(name.split())
    description = " ".join(description.split())
    if not name:
        raise WriteRefusedError("name is empty")
    if not (name + description).isprintable():
        raise WriteRefusedError(
            "name and description must be printable text (no control characters)"
        )
    if len(name) > MAX_NAME_CHARS:
        raise WriteRefusedError(
            f"name is {len(name)} characters; keep it under {MAX_NAME_CHARS} "
            "(detail belongs in the description and body)"
        )
    body = body.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    body = "\n".join(line.rstrip() for line in body.split("\n")) + "\n"
    existing = _same_name(memdir, name)
    relpath = (
        existing.relpath
        if existing is not None
        else _new_relpath(memdir, name, memory_type)
    )
    dialect = _dialect_of(memdir)
    data = _file_bytes(name, description, memory_type, body, dialect, relpath)
    parsed = parse_memory_file(relpath, data)
    written_name = name if dialect == "classic" else _nested_name(name, relpath)
    if (parsed.name, parsed.description, parsed.type) != (
        written_name,
        description,
        memory_type,
    ) or parsed.body != body:
        raise WriteRefusedError(
            "name, description or body do not survive YAML and Markdown unchanged "
            "(control characters?)"
        )
    index_text = _index_text(index_bytes)
    entry, new_index = None, None
    if not _links(index_text, relpath):
        entry = entry_line(parsed)
        placement = place_entries(index_text, [entry], None)
        if placement.index_text is None:
            raise WriteRefusedError(placement.refusal or "MEMORY.md is full")
        candidate = placement.index_text
        problem = appended_entry_problem(index_text, candidate, relpath)
        if problem is not None:
            raise WriteRefusedError(f"not written: {problem}")
        new_index = candidate
    _refuse_unless_clean(memdir, parsed, relpath, new_index, severities)
    return WritePlan(
        relpath=relpath,
        data=data,
        old_data_exists=existing is not None,
        index=None if new_index is None else new_index.encode("utf-8"),
        entry=entry,
    )


def _same_name(memdir: MemDir, name: str) -> MemoryFile | None:
    wanted = name.casefold()
    for f in memdir.files:
        if f.name is not None and " ".join(f.name.split()).casefold() == wanted:
            return f
    return None


def _new_relpath(memdir: MemDir, name: str, memory_type: str) -> str:
    slug = slugify(name)[:MAX_SLUG_CHARS].strip("-_")
    if not slug:  # a name with no ASCII letters or digits (Chinese, Japanese)
        slug = f"memory-{zlib.crc32(name.encode('utf-8', 'replace')):08x}"
    taken = {f.relpath for f in memdir.files} | set(memdir.unreadable_paths)
    taken.update(d.path for d in memdir.diagnostics)
    relpath, number = f"{memory_type}_{slug}.md", 1
    while relpath in taken:
        number += 1
        relpath = f"{memory_type}_{slug}-{number}.md"
    return relpath


def _dialect_of(memdir: MemDir) -> str:
    nested = sum(1 for f in memdir.files if f.dialect == "nested")
    classic = sum(1 for f in memdir.files if f.dialect == "classic")
    return "nested" if nested > classic else "classic"


def _nested_name(name: str, relpath: str) -> str:
    return slugify(name) or relpath.removesuffix(".md")


def _file_bytes(
    name: str, description: str, memory_type: str, body: str, dialect: str, relpath: str
) -> bytes:
    head: dict[str, object]
    if dialect == "nested":
        head = {
            "name": _nested_name(name, relpath),
            "description": description,
            "metadata": {"node_type": "memory", "type": memory_type},
        }
    else:
        head = {"name": name, "description": description, "type": memory_type}
    text = "---\n" + dump_yaml(head) + "---\n" + body
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise WriteRefusedError(
            "text is not valid Unicode (a lone surrogate)"
        ) from None


def _index_text(index_bytes: bytes | None) -> str:
    if index_bytes is None:
        return ""
    try:
        return index_bytes.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise WriteRefusedError("MEMORY.md is not valid UTF-8; fix it first") from None


def _links(index_text: str, relpath: str) -> bool:
    return relpath in linked_relpaths(index_text)


def _refuse_unless_clean(
    memdir: MemDir,
    parsed: MemoryFile,
    relpath: str,
    new_index: str | None,
    severities: Mapping[str, str] | None,
) -> None:
    files = (*(f for f in memdir.files if f.relpath != relpath), parsed)
    planned = dataclasses.replace(
        memdir,
        files=files,
        index_text=new_index if new_index is not None else memdir.index_text,
    )
    # Findings the write would add: any on the new file, any new one on the index.
    before = {
        (d.code, d.line, d.message)
        for d in lint_memdir(memdir, severities=severities)
        if d.path == INDEX_NAME
    }
    problems = [
        d
        for d in lint_memdir(planned, severities=severities)
        if d.severity in ("error", "warning")
        and (
            d.path == relpath
            or (d.path == INDEX_NAME and (d.code, d.line, d.message) not in before)
        )
    ]
    if problems:
        found = "; ".join(f"{d.code} {d.name}: {d.message}" for d in problems)
        raise WriteRefusedError(f"not written, it would not lint clean: {found}")
