"""Every limit in memd at the limit, one below and one above it.

A flipped `<`/`<=` or an off-by-one moves a limit by one unit, which a test far
from the edge never sees. Each class here pins one limit with three cases;
the truncation limits (200 lines, 25,000 units) and the sanitised path's 200
units are pinned the same way in tests/claude_code/.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.claude_code.manifest import MAX_MANIFEST_ENTRIES, build_manifest
from memd.claude_code.recall import recalled_text, scanned_header
from memd.claude_code.truncation_notice import QUOTE_MAX_UNITS, shorten_quote
from memd.config import Config
from memd.lint.checks_frontmatter import (
    DESCRIPTION_MAX_COLUMNS,
    DESCRIPTION_MIN_COLUMNS,
)
from memd.lint.checks_index import MAX_ENTRY_LINE_CHARS
from memd.lint.engine import DEFAULT_MAX_FILE_BYTES, lint_memdir
from memd.memory.reader import load_memdir
from memd.snapshot.telemetry_sink import TelemetrySink
from memd.state import MAX_KNOWN_PROJECTS, known_projects, remember_project
from tests.conftest import MemDirMaker

NEW = "2.1.332"  # the release with recall's and the scan's byte limits
AROUND = [-1, 0, 1]  # one below, at, one above


def codes(make_memdir: MemDirMaker, **load: int) -> list[str]:
    return [d.code for d in lint_memdir(load_memdir(str(make_memdir.root), **load))]


class TestRecallRead:
    @pytest.mark.parametrize("delta", AROUND)
    def test_200_lines(self, delta: int) -> None:
        """Recall shows up to 200 lines; a 201st makes it truncated."""
        count = 200 + delta

        actual = recalled_text(b"\n".join([b"l"] * count), profile=NEW)

        assert (min(count, 200), count > 200) == (
            actual.line_count,
            actual.was_truncated,
        )

    @pytest.mark.parametrize("delta", AROUND)
    def test_4096_bytes_with_the_newlines_between_lines(self, delta: int) -> None:
        """Two lines whose bytes and newline come to 4,096 are both shown."""
        data = b"a" * 100 + b"\n" + b"b" * (4096 - 101 + delta)

        actual = recalled_text(data, profile=NEW)

        assert (2 if delta <= 0 else 1, delta > 0) == (
            actual.line_count,
            actual.was_cut_by_bytes,
        )


class TestHeaderScan:
    @pytest.mark.parametrize("delta", AROUND)
    def test_30_lines(self, delta: int) -> None:
        """The manifest scan reads 30 lines in every profile; a 31st is not read."""
        count = 30 + delta
        data = b"\n".join([b"k: v"] * count)

        for profile in ("2.1.112", NEW):
            actual = scanned_header(data, profile=profile)

            assert (min(count, 30), count > 30) == (
                actual.line_count,
                actual.was_truncated,
            )

    @pytest.mark.parametrize("delta", AROUND)
    def test_65536_bytes(self, delta: int) -> None:
        """A line ending at byte 65,536 is read; one byte more and it is not."""
        data = b"---\n" + b"d" * (65_536 - 4 + delta)

        actual = scanned_header(data, profile=NEW)

        assert (2 if delta <= 0 else 1, delta > 0) == (
            actual.line_count,
            actual.was_cut_by_bytes,
        )

    def test_a_line_ending_at_the_cap_is_read_and_the_next_is_seen(self) -> None:
        """Line 2 ends at byte 65,536 and is kept; line 3 past it is cut by bytes."""
        data = b"---\n" + b"d" * (65_536 - 4) + b"\n---\n"

        actual = scanned_header(data, profile=NEW)

        assert (2, True, True) == (
            actual.line_count,
            actual.was_cut_by_bytes,
            actual.was_truncated,
        )

    @pytest.mark.parametrize("delta", AROUND)
    def test_frontmatter_closing_on_line_30(
        self, make_memdir: MemDirMaker, delta: int
    ) -> None:
        """Frontmatter closing on line 30 gives the manifest a type; on line 31, not."""
        filler = "".join(f"k{i}: v\n" for i in range(30 - 4 + delta))
        make_memdir.write(
            "a.md", f"---\ndescription: seen\ntype: user\n{filler}---\nbody\n"
        )

        [entry] = build_manifest(load_memdir(str(make_memdir.root)))

        expected = ("user", "seen") if delta <= 0 else (None, None)
        assert expected == (entry.type, entry.description)


class TestManifestCap:
    @pytest.mark.parametrize("delta", AROUND)
    def test_200_newest_files(self, make_memdir: MemDirMaker, delta: int) -> None:
        """199 and 200 files are all listed; of 201 the oldest is left out."""
        count = MAX_MANIFEST_ENTRIES + delta
        for i in range(count):
            path = make_memdir.topic(
                f"f{i:03d}.md", name="n", description="d", type="user"
            )
            os.utime(path, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))

        entries = build_manifest(load_memdir(str(make_memdir.root)))

        expected = [f"f{i:03d}.md" for i in reversed(range(count))][:200]
        assert expected == [e.relpath for e in entries]


class TestTopicFileSize:
    @pytest.mark.parametrize("delta", AROUND)
    def test_max_topic_file_bytes(self, make_memdir: MemDirMaker, delta: int) -> None:
        """A file of max_topic_file_bytes (by default) is whole; a byte more is F003."""
        limit = Config(cache_dir="c", state_dir="s").max_topic_file_bytes
        head = (
            "---\nname: Big\ndescription: a file at the size limit\ntype: user\n---\n"
        )
        make_memdir.write("big.md", head + "x" * (limit - len(head) + delta))
        make_memdir.write("MEMORY.md", "- [Big](big.md) — a file at the size limit\n")

        memdir = load_memdir(str(make_memdir.root))
        found = [d.code for d in lint_memdir(memdir)]

        assert (delta > 0) == ("F003" in found), found
        assert [delta > 0] == [f.was_truncated for f in memdir.files]
        assert DEFAULT_MAX_FILE_BYTES == limit


class TestIndexLineLength:
    @pytest.mark.parametrize("delta", AROUND)
    def test_200_characters(self, make_memdir: MemDirMaker, delta: int) -> None:
        """An entry line of 200 characters (CR not counted) is fine; 201 is I004."""
        make_memdir.topic(
            "a.md", name="A", description="a file for the index", type="user"
        )
        prefix = "- [A](a.md) — "
        line = prefix + "h" * (MAX_ENTRY_LINE_CHARS - len(prefix) + delta)
        make_memdir.write("MEMORY.md", line + "\r\n")

        found = codes(make_memdir)

        assert (delta > 0) == ("I004" in found), found


class TestIndexLimits:
    @pytest.mark.parametrize("delta", AROUND)
    def test_200_lines(self, make_memdir: MemDirMaker, delta: int) -> None:
        """An index of 200 lines loads whole; 201 is I002."""
        make_memdir.topic(
            "a.md", name="A", description="a file for the index", type="user"
        )
        make_memdir.write("MEMORY.md", "- [A](a.md) — a\n" + "prose\n" * (199 + delta))

        found = codes(make_memdir)

        assert (delta > 0) == ("I002" in found), found

    @pytest.mark.parametrize("delta", AROUND)
    def test_25000_units(self, make_memdir: MemDirMaker, delta: int) -> None:
        """An index of 25,000 UTF-16 units loads whole; 25,001 is I003."""
        make_memdir.topic(
            "a.md", name="A", description="a file for the index", type="user"
        )
        first = "- [A](a.md) — a\n"
        make_memdir.write("MEMORY.md", first + "p" * (25_000 - len(first) + delta))

        found = codes(make_memdir)

        assert (delta > 0) == ("I003" in found), found


class TestDescriptionColumns:
    @pytest.mark.parametrize("delta", AROUND)
    def test_at_least_10_columns(self, make_memdir: MemDirMaker, delta: int) -> None:
        """A description of 10 columns is specific enough; 9 is M011."""
        text = "d" * (DESCRIPTION_MIN_COLUMNS + delta)
        make_memdir.topic("a.md", name="A", description=text, type="user")

        assert (delta < 0) == ("M011" in codes(make_memdir))

    @pytest.mark.parametrize("delta", AROUND)
    def test_wide_characters_count_two(
        self, make_memdir: MemDirMaker, delta: int
    ) -> None:
        """Five CJK characters are 10 columns; four are not enough."""
        text = "記" * (5 + delta)
        make_memdir.topic("a.md", name="A", description=text, type="user")

        assert (delta < 0) == ("M011" in codes(make_memdir))

    @pytest.mark.parametrize("delta", AROUND)
    def test_at_most_250_columns(self, make_memdir: MemDirMaker, delta: int) -> None:
        """A description of 250 columns fits; 251 is M013."""
        text = "d" * (DESCRIPTION_MAX_COLUMNS + delta)
        make_memdir.topic("a.md", name="A", description=text, type="user")

        assert (delta > 0) == ("M013" in codes(make_memdir))


class TestTelemetryRotation:
    @pytest.mark.parametrize("delta", AROUND)
    def test_rotates_once_the_file_reaches_max_bytes(
        self, tmp_path: Path, delta: int
    ) -> None:
        """A log below max_bytes is appended to; at max_bytes it becomes `.1`."""
        path = tmp_path / "telemetry.jsonl"
        max_bytes = 1000
        path.write_bytes(b"x" * (max_bytes + delta - 1) + b"\n")

        with TelemetrySink(str(path), max_bytes=max_bytes) as sink:
            sink.emit({"event": "e"})

        is_rotated = (tmp_path / "telemetry.jsonl.1").exists()
        assert (delta >= 0) == is_rotated
        assert path.read_bytes().endswith(b'{"event": "e"}\n')


class TestQuote:
    @pytest.mark.parametrize("delta", AROUND)
    def test_80_units(self, delta: int) -> None:
        """A line of 80 units is quoted whole; 81 is shortened with an ellipsis."""
        line = "q" * (QUOTE_MAX_UNITS + delta)

        actual = shorten_quote(line)

        assert (delta > 0) == (actual != line)
        assert len(actual) <= QUOTE_MAX_UNITS


class TestKnownProjects:
    @pytest.mark.parametrize("delta", AROUND)
    def test_200_projects(self, tmp_path: Path, delta: int) -> None:
        """projects.json keeps the 200 most recent roots, newest first."""
        count = MAX_KNOWN_PROJECTS + delta
        for i in range(count):
            remember_project(str(tmp_path), f"/p/{i:03d}")

        actual = known_projects(str(tmp_path))

        assert [f"/p/{i:03d}" for i in reversed(range(count))][:200] == list(actual)
