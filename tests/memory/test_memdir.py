"""Tests for memd.memory.memdir: what one read of a real memory directory returns."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memd.memory.memdir import InputStat, MemDir, ParseCache
from memd.memory.reader import load_memdir
from tests.conftest import MemDirMaker


def topic(maker: MemDirMaker, relpath: str, kind: str = "user") -> Path:
    return maker.topic(relpath, name=relpath, description=f"about {relpath}", type=kind)


def codes(memdir: MemDir) -> list[tuple[str, str]]:
    return [(d.code, d.path) for d in memdir.diagnostics]


def stat_of(memdir: MemDir, path: Path) -> InputStat | None:
    return next((i for i in memdir.inputs if i.path == str(path)), None)


class TestLayout:
    def test_topic_files_index_and_logs(self, make_memdir: MemDirMaker) -> None:
        """Topic files (team/ too) are sorted, logs listed, MEMORY.md is the index."""
        topic(make_memdir, "user_role.md")
        topic(make_memdir, "team/conventions.md", "project")
        topic(make_memdir, "a-b.md")
        make_memdir.write("MEMORY.md", "- [Role](user_role.md) \u2014 who\n")
        make_memdir.write("logs/2026/11/2026-11-02.md", "- 10:00 did a thing\n")
        make_memdir.write("notes.txt", "not markdown")

        memdir = load_memdir(str(make_memdir.root))

        assert ["a-b.md", "team/conventions.md", "user_role.md"] == [
            f.relpath for f in memdir.files
        ]
        assert ("logs/2026/11/2026-11-02.md",) == memdir.log_files
        assert "- [Role](user_role.md) \u2014 who\n" == memdir.index_text
        assert [] == codes(memdir)
        assert str(make_memdir.root) == memdir.path

    def test_path_has_no_trailing_separator(self, make_memdir: MemDirMaker) -> None:
        """A path given with a trailing slash is recorded without it."""
        memdir = load_memdir(str(make_memdir.root) + os.sep)

        assert str(make_memdir.root) == memdir.path

    def test_hidden_entries_and_nested_index_are_skipped(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Lock files, memd temp files, dot-dirs and nested MEMORY.md are not topics."""
        topic(make_memdir, "kept.md")
        make_memdir.write(".consolidate-lock", "123")
        make_memdir.write(".memd-tmp-abc.md", "partial")
        make_memdir.write(".git/notes.md", "x")
        make_memdir.write("team/MEMORY.md", "- [x](x.md)\n")

        memdir = load_memdir(str(make_memdir.root))

        assert ["kept.md"] == [f.relpath for f in memdir.files]

    def test_counts_are_top_level_only(self, make_memdir: MemDirMaker) -> None:
        """Counts are non-recursive; symlinks are neither files nor directories."""
        topic(make_memdir, "a.md")
        topic(make_memdir, "team/b.md")
        make_memdir.write(".consolidate-lock", "1")
        (make_memdir.root / "logs").mkdir()
        (make_memdir.root / "link.md").symlink_to("a.md")
        (make_memdir.root / "dirlink").symlink_to("team")

        memdir = load_memdir(str(make_memdir.root))

        assert (2, 2) == (memdir.total_file_count, memdir.total_subdir_count)

    def test_mtimes(self, make_memdir: MemDirMaker) -> None:
        """Each topic file's mtime_ns is recorded by relpath."""
        path = topic(make_memdir, "a.md")
        os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))

        memdir = load_memdir(str(make_memdir.root))

        assert {"a.md": 1_700_000_000_123_456_789} == dict(memdir.mtimes_ns)


class TestInputs:
    def test_files_read_and_dirs_listed(self, make_memdir: MemDirMaker) -> None:
        """Every file read and every directory listed is an input with its stat."""
        a = topic(make_memdir, "a.md")
        topic(make_memdir, "team/b.md")
        index = make_memdir.write("MEMORY.md", "- [A](a.md)\n")
        make_memdir.write("logs/2026/01/2026-01-01.md", "- x\n")

        memdir = load_memdir(str(make_memdir.root))

        recorded = {i.path for i in memdir.inputs}
        root = make_memdir.root
        assert {
            str(root),
            str(index),
            str(a),
            str(root / "team"),
            str(root / "team" / "b.md"),
            str(root / "logs"),
            str(root / "logs" / "2026"),
            str(root / "logs" / "2026" / "01"),
        } == recorded
        st = a.stat()
        assert InputStat(
            path=str(a), size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino
        ) == stat_of(memdir, a)

    def test_missing_index_is_an_input(self, make_memdir: MemDirMaker) -> None:
        """A missing MEMORY.md is recorded with size -1 so its creation is noticed."""
        topic(make_memdir, "a.md")

        memdir = load_memdir(str(make_memdir.root))

        assert memdir.index_text is None
        assert InputStat(
            path=str(make_memdir.root / "MEMORY.md"), size=-1, mtime_ns=0, inode=0
        ) == stat_of(memdir, make_memdir.root / "MEMORY.md")

    def test_missing_directory(self, tmp_path: Path) -> None:
        """A directory that does not exist yet is an empty MemDir, not an error."""
        path = tmp_path / "not-yet"

        memdir = load_memdir(str(path))

        assert ((), None, ()) == (memdir.files, memdir.index_text, memdir.diagnostics)
        assert [-1, -1] == [i.size for i in memdir.inputs]

    def test_directory_mtime_follows_new_files(self, make_memdir: MemDirMaker) -> None:
        """Adding a file changes the directory's recorded stat (its mtime or size)."""
        before = stat_of(load_memdir(str(make_memdir.root)), make_memdir.root)
        os.utime(make_memdir.root, ns=(1_000_000_000, 1_000_000_000))
        topic(make_memdir, "new.md")

        after = stat_of(load_memdir(str(make_memdir.root)), make_memdir.root)

        assert before is not None
        assert after is not None
        assert before.mtime_ns != after.mtime_ns


class TestIndexFile:
    def test_crlf_kept_bom_stripped(self, make_memdir: MemDirMaker) -> None:
        """MEMORY.md keeps its CRs (the reference splits on LF) and loses its BOM."""
        make_memdir.write("MEMORY.md", b"\xef\xbb\xbf- [A](a.md)\r\n")

        memdir = load_memdir(str(make_memdir.root))

        assert "- [A](a.md)\r\n" == memdir.index_text
        assert [("F007", "MEMORY.md"), ("F006", "MEMORY.md")] == codes(memdir)

    def test_invalid_utf8_index_is_decoded_leniently(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Bad bytes in MEMORY.md become U+FFFD plus an F001 with the line."""
        make_memdir.write("MEMORY.md", b"- [A](a.md)\n- bad \xc3\x28\n")

        memdir = load_memdir(str(make_memdir.root))

        assert "- [A](a.md)\n- bad \ufffd(\n" == memdir.index_text
        assert [("F001", "MEMORY.md")] == codes(memdir)
        assert 2 == memdir.diagnostics[0].line

    def test_large_index_is_read_only_up_to_the_limit(
        self, make_memdir: MemDirMaker
    ) -> None:
        """An index over the limit is cut at a line boundary and reported."""
        make_memdir.write("MEMORY.md", "- [A](a.md) hook\n" * 1000)

        memdir = load_memdir(str(make_memdir.root), max_file_bytes=1000)

        assert memdir.index_text is not None
        assert memdir.index_text.endswith("hook\n")
        assert len(memdir.index_text) <= 1000
        assert [("F003", "MEMORY.md")] == codes(memdir)


class TestSymlinks:
    def test_symlink_inside_is_read(self, make_memdir: MemDirMaker) -> None:
        """A symlink to a file inside the directory is read under its own name."""
        topic(make_memdir, "team/real.md")
        (make_memdir.root / "alias.md").symlink_to("team/real.md")

        memdir = load_memdir(str(make_memdir.root))

        alias = next(f for f in memdir.files if f.relpath == "alias.md")
        assert "team/real.md" == alias.name
        assert [] == codes(memdir)

    def test_symlinked_directory_inside_is_not_entered(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A symlinked directory is never walked, so nothing is read twice."""
        topic(make_memdir, "team/real.md")
        (make_memdir.root / "mirror").symlink_to("team")

        memdir = load_memdir(str(make_memdir.root))

        assert ["team/real.md"] == [f.relpath for f in memdir.files]

    def test_symlinked_root_is_followed(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """The memory directory itself may be a symlink (a dotfiles checkout)."""
        topic(make_memdir, "a.md")
        link = tmp_path / "linked-memory"
        link.symlink_to(make_memdir.root)

        memdir = load_memdir(str(link))

        assert ["a.md"] == [f.relpath for f in memdir.files]
        assert [] == codes(memdir)


def written_a_minute_ago(path: Path) -> None:
    when = time.time() - 60
    os.utime(path, (when, when))


class TestParseCache:
    def test_unchanged_files_are_not_reparsed(self, make_memdir: MemDirMaker) -> None:
        """A second load with the cache returns the very same MemoryFile objects."""
        for name in ("a.md", "b.md"):
            written_a_minute_ago(topic(make_memdir, name))
        cache = ParseCache()
        first = load_memdir(str(make_memdir.root), cache=cache)

        second = load_memdir(str(make_memdir.root), cache=cache)

        assert all(x is y for x, y in zip(first.files, second.files, strict=True))
        assert 2 == len(cache)

    def test_a_file_read_within_a_tick_of_its_write_is_not_kept(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A rewrite of the same size in the same timestamp tick keeps the stat:
        only a parse made well after the last write may be reused."""
        path = topic(make_memdir, "a.md")
        cache = ParseCache()
        load_memdir(str(make_memdir.root), cache=cache)
        assert 0 == len(cache)

        written_a_minute_ago(path)
        load_memdir(str(make_memdir.root), cache=cache)
        assert 1 == len(cache)

    def test_changed_file_is_reparsed(self, make_memdir: MemDirMaker) -> None:
        """A file whose size or mtime changed is parsed again."""
        path = topic(make_memdir, "a.md")
        cache = ParseCache()
        load_memdir(str(make_memdir.root), cache=cache)
        make_memdir.topic("a.md", name="renamed", description="d", type="user")
        os.utime(path, ns=(1, 1))

        memdir = load_memdir(str(make_memdir.root), cache=cache)

        assert "renamed" == memdir.files[0].name

    def test_prune(self, make_memdir: MemDirMaker) -> None:
        """prune forgets every path it is not told to keep."""
        a = topic(make_memdir, "a.md")
        written_a_minute_ago(a)
        written_a_minute_ago(topic(make_memdir, "b.md"))
        cache = ParseCache()
        load_memdir(str(make_memdir.root), cache=cache)

        dropped = cache.prune([str(a)])

        assert (1, 1) == (dropped, len(cache))

    def test_two_links_to_one_file_keep_their_names(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A file and a symlink to it are cached under separate names."""
        topic(make_memdir, "a.md")
        (make_memdir.root / "b.md").symlink_to("a.md")
        cache = ParseCache()
        load_memdir(str(make_memdir.root), cache=cache)

        memdir = load_memdir(str(make_memdir.root), cache=cache)

        assert ["a.md", "b.md"] == [f.relpath for f in memdir.files]


class TestIndexThatIsADirectory:
    def test_reported_once_and_recorded_by_its_listing(self, tmp_path: Path) -> None:
        """MEMORY.md as a directory: F005, and no "missing" record that never matches.

        A record of a missing MEMORY.md next to the directory's own listing
        could never stat the same, so its snapshot would never be served warm.
        """
        (tmp_path / "MEMORY.md").mkdir()
        memdir = load_memdir(str(tmp_path))

        index = str(tmp_path / "MEMORY.md")
        assert ["F005"] == [d.code for d in memdir.diagnostics]
        assert [] == [i for i in memdir.inputs if i.path == index and i.size == -1]
