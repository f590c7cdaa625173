"""What the agent reads of a topic file: the recall read and the header scan.

REFERENCE.md "2.1.332: what changed" (topic-file limit of 4096 bytes; the
frontmatter scan cap of 65,536 bytes). Both read whole lines from the start,
count UTF-8 bytes including the newlines between kept lines, and strip a BOM;
the profile gives the limits (None: no byte limit, as in 2.1.112).
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.agent.profile import ProfileSpec, get_profile

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinePrefix:
    """The whole lines kept from the start of a file, and why it stopped."""

    text: str
    line_count: int
    was_cut_by_bytes: bool
    was_truncated: bool  # more lines than the line limit, or cut by bytes


def _keep_lines(
    data: bytes, max_lines: int | None, max_bytes: int | None
) -> LinePrefix:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    lines = data.split(b"\n", max_lines) if max_lines is not None else data.split(b"\n")
    has_more_lines = max_lines is not None and len(lines) > max_lines
    kept: list[bytes] = []
    total = 0
    cut_by_bytes = False
    for line in lines[:max_lines]:
        size = total + len(line) + (1 if kept else 0)
        if max_bytes is not None and size > max_bytes:
            cut_by_bytes = True
            break
        kept.append(line)
        total = size
    return LinePrefix(
        text=b"\n".join(kept).decode("utf-8", "replace"),
        line_count=len(kept),
        was_cut_by_bytes=cut_by_bytes,
        was_truncated=has_more_lines or cut_by_bytes,
    )


def recalled_text(data: bytes, *, profile: ProfileSpec = None) -> LinePrefix:
    """Return what recall shows of a topic file (`readRecalledMemory`)."""
    agent = get_profile(profile)
    return _keep_lines(data, agent.recall_max_lines, agent.recall_max_bytes)


def scanned_header(data: bytes, *, profile: ProfileSpec = None) -> LinePrefix:
    """Return the lines the manifest scan reads of a topic file (`scanMemoryFiles`)."""
    agent = get_profile(profile)
    return _keep_lines(data, agent.scan_max_lines, agent.scan_max_bytes)
