"""Rewriting a topic file's frontmatter into the other dialect (REFERENCE.md §8).

The classic dialect keeps `type` (and any extras) at the top level; the
current release's nested one writes `name` as a slug and puts `node_type:
memory` first, then `type` and the other keys, under `metadata:`. Readers treat
both alike, so memd converts only when asked (`memd fix --dialect`), and only
when the result reads back to the same values: anything it cannot rewrite
faithfully is left alone.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.memory.memfile import MemoryFile

DIALECTS = ("classic", "nested")
_SLUG_OK = re.compile(r"^[a-z0-9_-]+$")
_NOT_SLUG = re.compile(r"[^a-z0-9_-]+")


def slugify(name: str) -> str:
    """The agent's slug for a nested-dialect `name` (kept as is if already one)."""
    if _SLUG_OK.match(name):
        return name
    return _NOT_SLUG.sub("-", name.lower()).strip("-")


def convert_dialect(f: MemoryFile, target: str) -> bytes | None:
    """Return the file rewritten in `target` dialect, or None to leave it alone.

    None when the file already uses `target`, has no usable frontmatter, or
    would not read back with the same name, description, type and metadata.
    The body is kept byte for byte (CRLF files stay CRLF).
    """
    from memd.memory.memfile import parse_memory_file
    from memd.memory.yaml_safe import dump_yaml

    if f.dialect is None or f.dialect == target or f.name is None:
        return None
    if any(d.severity == "error" for d in f.diagnostics) or f.was_truncated:
        return None
    metadata = {k: v for k, v in f.metadata.items() if k != "node_type"}
    head: dict[str, object] = {"name": f.name, "description": f.description}
    if target == "nested":
        head["name"] = slugify(f.name)
        if not head["name"]:  # a name with no ASCII letters or digits has no slug
            return None
        head["metadata"] = {"node_type": "memory", **metadata}
    else:
        head.update(metadata)
    if head["description"] is None:
        del head["description"]
    newline = "\r\n" if f.has_crlf else "\n"
    text = "---\n" + dump_yaml(head) + "---\n" + f.body
    data = ("\ufeff" if f.has_bom else "") + text.replace("\n", newline)
    converted = data.encode("utf-8")
    again = parse_memory_file(f.relpath, converted)
    same = (
        again.dialect == target
        and again.name == head["name"]
        and again.description == f.description
        and again.type == f.type
        and {k: v for k, v in again.metadata.items() if k != "node_type"} == metadata
        and again.body == f.body
    )
    return converted if same else None
