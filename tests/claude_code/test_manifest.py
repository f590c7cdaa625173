"""Tests for memd.claude_code.manifest: the recall manifest of REFERENCE.md §5."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.claude_code.manifest import (
    ManifestEntry,
    build_manifest,
    format_manifest,
    format_manifest_line,
    iso_mtime,
)
from memd.memory.reader import load_memdir
from tests.conftest import MemDirMaker

BASE_NS = 1_764_000_000_000_000_000  # 2025-11-24T16:00:00Z


def touch(path: Path, mtime_ns: int) -> None:
    os.utime(path, ns=(mtime_ns, mtime_ns))


class TestIsoMtime:
    @pytest.mark.parametrize(
        ("mtime_ns", "expected"),
        [
            (0, "1970-01-01T00:00:00.000Z"),
            (BASE_NS, "2025-11-24T16:00:00.000Z"),
            (BASE_NS + 123_999_999, "2025-11-24T16:00:00.123Z"),
            (-1_500_000, "1969-12-31T23:59:59.999Z"),
        ],
    )
    def test_like_to_iso_string(self, mtime_ns: int, expected: str) -> None:
        """Milliseconds truncate toward zero, UTC, trailing Z, like toISOString."""
        assert expected == iso_mtime(mtime_ns)


class TestFormat:
    def test_full_line(self) -> None:
        """Type tag, relpath, mtime and description in the reference's shape."""
        entry = ManifestEntry(
            relpath="team/x.md", name="x", type="project", description="d", mtime_ns=0
        )

        assert "- [project] team/x.md (1970-01-01T00:00:00.000Z): d" == (
            format_manifest_line(entry)
        )

    def test_without_type_or_description(self) -> None:
        """Missing type and description leave out their parts entirely."""
        entry = ManifestEntry(
            relpath="x.md", name=None, type=None, description=None, mtime_ns=0
        )

        assert "- x.md (1970-01-01T00:00:00.000Z)" == format_manifest_line(entry)

    def test_lines_joined(self) -> None:
        """format_manifest joins lines with newlines and no trailing one."""
        entries = [
            ManifestEntry(relpath=n, name=None, type=None, description=None, mtime_ns=0)
            for n in ("a.md", "b.md")
        ]

        assert 2 == len(format_manifest(entries).split("\n"))
        assert not format_manifest(entries).endswith("\n")


class TestBuildManifest:
    def test_newest_first_with_types_and_descriptions(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Entries are sorted newest first and carry type and description."""
        old = make_memdir.topic("old.md", name="o", description="old one", type="user")
        new = make_memdir.topic(
            "team/new.md", name="n", description="new one", type="reference"
        )
        touch(old, BASE_NS)
        touch(new, BASE_NS + 5_000_000_000)

        text = format_manifest(build_manifest(load_memdir(str(make_memdir.root))))

        assert (
            "- [reference] team/new.md (2025-11-24T16:00:05.000Z): new one\n"
            "- [user] old.md (2025-11-24T16:00:00.000Z): old one"
        ) == text

    def test_newest_first_by_nanosecond_with_ties_in_path_order(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Order is by mtime (1 ns apart counts), newest first; equal mtimes by path."""
        mtimes = {"c.md": 3, "a.md": 1, "e.md": 2, "b.md": 2, "d/x.md": 2, "f.md": 0}
        for relpath, offset in mtimes.items():
            path = make_memdir.topic(relpath, name="n", description="d", type="user")
            touch(path, BASE_NS + offset)

        entries = build_manifest(load_memdir(str(make_memdir.root)))

        assert ["c.md", "b.md", "d/x.md", "e.md", "a.md", "f.md"] == [
            e.relpath for e in entries
        ]

    def test_both_dialects(self, make_memdir: MemDirMaker) -> None:
        """A nested-dialect type is read from metadata."""
        path = make_memdir.write(
            "n.md",
            "---\nname: n\ndescription: nested\nmetadata:\n  type: feedback\n---\n",
        )
        touch(path, 0)

        text = format_manifest(build_manifest(load_memdir(str(make_memdir.root))))

        assert "- [feedback] n.md (1970-01-01T00:00:00.000Z): nested" == text

    def test_invalid_type_is_left_out(self, make_memdir: MemDirMaker) -> None:
        """Only the four exact lowercase types are shown (parseMemoryType)."""
        path = make_memdir.topic("x.md", name="x", description="d", type="Feedback")
        touch(path, 0)

        entries = build_manifest(load_memdir(str(make_memdir.root)))

        assert (None, "d") == (entries[0].type, entries[0].description)

    def test_frontmatter_past_line_30_is_invisible(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Frontmatter that closes after line 30 gives no type or description."""
        filler = "".join(f"k{i}: v\n" for i in range(30))
        make_memdir.write(
            "late.md", f"---\ndescription: hidden\ntype: user\n{filler}---\nbody\n"
        )

        entry = build_manifest(load_memdir(str(make_memdir.root)))[0]

        assert (None, None) == (entry.type, entry.description)

    def test_numeric_description_is_stringified(self, make_memdir: MemDirMaker) -> None:
        """A YAML number description is shown as JavaScript would print it."""
        make_memdir.write("n.md", "---\ndescription: 42\ntype: user\n---\n")

        assert "42" == build_manifest(load_memdir(str(make_memdir.root)))[0].description

    def test_capped_at_200(self, make_memdir: MemDirMaker) -> None:
        """Only the 200 newest files are listed."""
        for i in range(205):
            path = make_memdir.topic(
                f"f{i:03d}.md", name="n", description="d", type="user"
            )
            touch(path, BASE_NS + i * 1_000_000)

        entries = build_manifest(load_memdir(str(make_memdir.root)))

        assert 200 == len(entries)
        assert ("f204.md", "f005.md") == (entries[0].relpath, entries[-1].relpath)

    def test_index_and_logs_are_not_listed(self, make_memdir: MemDirMaker) -> None:
        """MEMORY.md and logs/ never appear in the manifest."""
        make_memdir.write("MEMORY.md", "- [a](a.md)\n")
        make_memdir.write("logs/2026/01/2026-01-01.md", "- x\n")
        make_memdir.topic("a.md", name="a", description="d", type="user")

        entries = build_manifest(load_memdir(str(make_memdir.root)))

        assert ["a.md"] == [e.relpath for e in entries]
