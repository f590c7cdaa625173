"""The recall manifest: one line per topic file, newest first (REFERENCE.md §5).

The reference's scan reads only the first 30 lines of each file, so a file's
`description` and `type` count only when its frontmatter closes within them.
`type` counts only when it is one of the four exact lowercase strings
(`parseMemoryType`). Entries are sorted by mtime, newest first, capped at 200,
and formatted as `- [type] relpath (ISO-8601 mtime): description`, where the
mtime is written like JavaScript's `Date.prototype.toISOString`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memd.claude_code.jscompat import js_number_to_string
from memd.claude_code.profile import ProfileSpec, get_profile
from memd.claude_code.terms import MEMORY_TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

MAX_MANIFEST_ENTRIES = 200
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """What recall sees of one topic file."""

    relpath: str
    name: str | None
    type: str | None
    description: str | None
    mtime_ns: int


def build_manifest(
    memdir: MemDir, *, profile: ProfileSpec = None
) -> tuple[ManifestEntry, ...]:
    """Return the manifest of `memdir`'s topic files, newest first, at most 200.

    A frontmatter counts only within the profile's scan caps (30 lines, and
    65,536 bytes under 2.1.332).
    """
    cap = get_profile(profile).scan_max_bytes
    mtimes = memdir.mtimes_ns
    # Like sorted(...)[:200], stable: equal mtimes keep the relpath order of
    # `files`; only the 200 kept files become entries (10,000 files cost ~ms).
    newest = heapq.nsmallest(
        MAX_MANIFEST_ENTRIES, memdir.files, key=lambda f: -mtimes.get(f.relpath, 0)
    )
    return tuple(_entry(f, mtimes.get(f.relpath, 0), cap) for f in newest)


def _in_scan(parsed: MemoryFile, cap: int | None) -> bool:
    end = parsed.frontmatter_end_line
    if not parsed.is_frontmatter_in_scan or end is None:
        return False
    return (
        cap is None or end > len(parsed.line_ends) or parsed.line_ends[end - 1] <= cap
    )


def _entry(parsed: MemoryFile, mtime_ns: int, cap: int | None) -> ManifestEntry:
    if not _in_scan(parsed, cap):
        return ManifestEntry(
            relpath=parsed.relpath,
            name=None,
            type=None,
            description=None,
            mtime_ns=mtime_ns,
        )
    kind = parsed.type if parsed.type in MEMORY_TYPES else None
    raw_name = parsed.fields.get("name")
    return ManifestEntry(
        relpath=parsed.relpath,
        name=raw_name if isinstance(raw_name, str) else None,
        type=kind,
        description=_js_truthy_string(parsed.fields.get("description")),
        mtime_ns=mtime_ns,
    )


def _js_truthy_string(value: object) -> str | None:
    """Return `String(value)` when `value || null` keeps it (YAML scalars only)."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, bool):
        return "true" if value else None
    if isinstance(value, int | float):
        return js_number_to_string(value) if value and value == value else None
    return None


def iso_mtime(mtime_ns: int) -> str:
    """Return `new Date(mtimeMs).toISOString()`: UTC, milliseconds, a trailing Z."""
    # The Date's time value truncates toward zero to whole milliseconds.
    ms = mtime_ns // 1_000_000 if mtime_ns >= 0 else -(-mtime_ns // 1_000_000)
    try:
        moment = _EPOCH + timedelta(milliseconds=ms)
    except OverflowError:
        return "Invalid Date"  # outside Python's years 1-9999; no real mtime is
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
        f"{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )


def format_manifest_line(entry: ManifestEntry) -> str:
    """Return one manifest line: `- [type] relpath (ISO mtime): description`."""
    tag = f"[{entry.type}] " if entry.type else ""
    tail = f": {entry.description}" if entry.description else ""
    return f"- {tag}{entry.relpath} ({iso_mtime(entry.mtime_ns)}){tail}"


def format_manifest(entries: Iterable[ManifestEntry]) -> str:
    """Return the manifest text, one line per entry, joined with newlines."""
    return "\n".join(format_manifest_line(e) for e in entries)
