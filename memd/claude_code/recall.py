"""What the agent reads of a topic file: the recall read and the header scan.

REFERENCE.md "2.1.332: what changed" (topic-file limit of 4096 bytes; the
frontmatter scan cap of 65,536 bytes). Both read whole lines from the start,
count UTF-8 bytes including the newlines between kept lines, and strip a BOM;
the profile gives the limits (None: no byte limit, as in 2.1.112).
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.claude_code.profile import ProfileSpec, get_profile

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True, kw_only=True)
class LinePrefix:
    """The whole lines kept from the start of a file, and why it stopped."""

    text: str
    line_count: int
    was_cut_by_bytes: bool
    was_truncated: bool  # more lines than the line limit, or cut by bytes


# Enough for every profile's line limit (200) plus one, to see that more follow.
LINE_ENDS_KEPT = 201
LINE_ENDS_MAX_BYTES = 65_536


def line_ends(
    data: bytes,
    *,
    max_lines: int = LINE_ENDS_KEPT,
    stop_past: int | None = LINE_ENDS_MAX_BYTES,
) -> tuple[int, ...]:
    """Return where each of the first lines ends (BOM stripped, newline excluded).

    Stops after `max_lines` lines or the first line ending past `stop_past`
    bytes, so by default a topic file keeps at most 201 numbers.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    ends: list[int] = []
    start = 0
    while len(ends) < max_lines:
        newline = data.find(b"\n", start)
        end = len(data) if newline < 0 else newline
        ends.append(end)
        if newline < 0 or (stop_past is not None and end > stop_past):
            break
        start = newline + 1
    return tuple(ends)


def kept_lines(
    ends: tuple[int, ...], max_lines: int | None, max_bytes: int | None
) -> tuple[int, bool]:
    """Return (whole lines kept, whether the byte limit stopped it) for `line_ends`."""
    limit = len(ends) if max_lines is None else min(max_lines, len(ends))
    for count in range(limit):
        if max_bytes is not None and ends[count] > max_bytes:
            return count, True
    return limit, False


def _keep_lines(
    data: bytes, max_lines: int | None, max_bytes: int | None
) -> LinePrefix:
    ends = line_ends(data, max_lines=(max_lines or 1 << 62) + 1, stop_past=max_bytes)
    count, cut_by_bytes = kept_lines(ends, max_lines, max_bytes)
    body = data[len(_BOM) :] if data.startswith(_BOM) else data
    text = body[: ends[count - 1]] if count else b""
    has_more_lines = max_lines is not None and len(ends) > max_lines
    return LinePrefix(
        text=text.decode("utf-8", "replace"),
        line_count=count,
        was_cut_by_bytes=cut_by_bytes,
        was_truncated=has_more_lines or cut_by_bytes,
    )


def is_reserved_folder(name: str, *, profile: ProfileSpec = None) -> bool:
    """Return whether top-level folder `name` holds no topic files (the scan skips it).

    Compared as the agent does: NFC, trailing dots and spaces removed, lower-cased,
    so `Logs.` is `logs`. Dot folders are skipped everywhere, separately.
    """
    import unicodedata

    key = unicodedata.normalize("NFC", name).rstrip(". ").lower()
    return key in get_profile(profile).reserved_folders


def recalled_text(data: bytes, *, profile: ProfileSpec = None) -> LinePrefix:
    """Return what recall shows of a topic file (`readRecalledMemory`)."""
    agent = get_profile(profile)
    return _keep_lines(data, agent.recall_max_lines, agent.recall_max_bytes)


def scanned_header(data: bytes, *, profile: ProfileSpec = None) -> LinePrefix:
    """Return the lines the manifest scan reads of a topic file (`scanMemoryFiles`)."""
    agent = get_profile(profile)
    return _keep_lines(data, agent.scan_max_lines, agent.scan_max_bytes)
