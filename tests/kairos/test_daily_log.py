"""Tests for memd.kairos.daily_log: appends, concurrent writers, rotation, retention."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from datetime import date, datetime
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.errors import UsageError
from memd.kairos.daily_log import (
    append_entry,
    apply_retention,
    collect_entries,
    ensure_today,
    list_logs,
    rotate,
)
from memd.state import read_state

NOW = datetime(2026, 11, 29, 14, 5)
LOG = Path("logs/2026/11/2026-11-29.md")


class TestAppendEntry:
    def test_creates_folders_and_heading(self, tmp_path: Path) -> None:
        """The first entry creates logs/YYYY/MM/ and the file's date heading."""
        path = append_entry(str(tmp_path), "hello", now=NOW)

        assert str(tmp_path / LOG) == path
        assert "# 2026-11-29\n\n- 14:05 hello\n" == (tmp_path / LOG).read_text()

    def test_multiline_is_one_bullet(self, tmp_path: Path) -> None:
        """Several lines become one bullet with indented continuation lines."""
        append_entry(str(tmp_path), "first\n\nthird\r\n", now=NOW)

        text = (tmp_path / LOG).read_text()

        assert text.endswith("- 14:05 first\n  \n  third\n")

    def test_empty_text_refused(self, tmp_path: Path) -> None:
        """Whitespace is not an entry."""
        with pytest.raises(UsageError, match="empty"):
            append_entry(str(tmp_path), "  \n", now=NOW)

    def test_partial_line_not_glued(self, tmp_path: Path) -> None:
        """An entry never continues someone else's unterminated line."""
        (tmp_path / LOG).parent.mkdir(parents=True)
        (tmp_path / LOG).write_text("# 2026-11-29\n\n- 13:00 half")

        append_entry(str(tmp_path), "whole", now=NOW)

        assert (tmp_path / LOG).read_text().endswith("- 13:00 half\n- 14:05 whole\n")

    def test_symlinked_logs_dir_refused(self, tmp_path: Path) -> None:
        """A logs/ symlink pointing out of the memory dir is never written through."""
        outside = tmp_path / "outside"
        outside.mkdir()
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "logs").symlink_to(outside)

        with pytest.raises(UsageError, match="symlink"):
            append_entry(str(memory), "x", now=NOW)

        assert [] == list(outside.iterdir())

    def test_symlinked_log_file_refused(self, tmp_path: Path) -> None:
        """A log file that is a symlink is not appended to."""
        target = tmp_path / "target.md"
        target.write_text("keep\n")
        (tmp_path / LOG).parent.mkdir(parents=True)
        (tmp_path / LOG).symlink_to(target)

        with pytest.raises(UsageError, match="symlink"):
            append_entry(str(tmp_path), "x", now=NOW)

        assert "keep\n" == target.read_text()


def _writer(memory_dir: str, worker: int, count: int) -> None:
    for i in range(count):
        append_entry(memory_dir, f"w{worker:02d} n{i:03d} " + "x" * 200, now=NOW)


class TestControlCharacters:
    @given(text=st.text(st.characters(), min_size=1, max_size=200))
    @example(text="a\x00b\x1b[2Jc\x7f\x9b")
    @example(text="rtl \u202e evil \udcff byte \ud83d lone")
    def test_an_entry_is_printable_text(self, text: str) -> None:
        """Whatever is logged, the log holds UTF-8 with no control character
        (lint's F010 set) and the entry reads back as one."""
        from memd.lint.checks_files import CONTROL_CHARACTERS

        try:
            path = append_entry(tempfile.mkdtemp(prefix="log-"), text, now=NOW)
        except UsageError:  # nothing printable to log
            assert not text.strip()
            return
        logged = Path(path).read_bytes().decode("utf-8")

        assert CONTROL_CHARACTERS.search(logged) is None
        assert logged.endswith("\n")

    def test_escapes_say_what_was_sent(self, tmp_path: Path) -> None:
        """NUL, ESC and an undecodable byte become visible escapes; tabs stay."""
        path = append_entry(str(tmp_path), "a\x00b\x1b[2J\tc \udcff", now=NOW)

        assert Path(path).read_text().endswith("a\\x00b\\x1b[2J\tc \\xff\n")


class TestConcurrentAppends:
    def test_twenty_processes_lose_nothing(self, tmp_path: Path) -> None:
        """20 processes x 200 appends: every entry is there exactly once and whole."""
        ctx = multiprocessing.get_context("fork")
        workers = [
            ctx.Process(target=_writer, args=(str(tmp_path), w, 200)) for w in range(20)
        ]
        for process in workers:
            process.start()
        for process in workers:
            process.join(timeout=120)
        lines = (tmp_path / LOG).read_text().splitlines()
        bullets = sorted(line for line in lines if line.startswith("- "))

        expected = sorted(
            f"- 14:05 w{w:02d} n{i:03d} " + "x" * 200
            for w in range(20)
            for i in range(200)
        )

        assert [0] * 20 == [p.exitcode for p in workers]
        assert expected == bullets
        assert ["# 2026-11-29", ""] == lines[:2]


class TestRotation:
    def test_ensure_today_creates_once(self, tmp_path: Path) -> None:
        """Today's file is created with its heading once; a second call is a no-op."""
        created = ensure_today(str(tmp_path), date(2026, 11, 29))
        again = ensure_today(str(tmp_path), date(2026, 11, 29))

        assert (True, False) == (created, again)
        assert "# 2026-11-29\n\n" == (tmp_path / LOG).read_text()

    def test_rotate_queues_closed_logs(self, tmp_path: Path) -> None:
        """Rotation queues yesterday's log in dreams.json once, and creates today's."""
        state = tmp_path / "state"
        append_entry(str(tmp_path), "old", now=datetime(2026, 11, 28, 23, 59))

        first = rotate(str(tmp_path), str(state), today=date(2026, 11, 29))
        second = rotate(str(tmp_path), str(state), today=date(2026, 11, 29))

        record = read_state(str(state), "dreams.json")[os.path.realpath(tmp_path)]
        assert (("logs/2026/11/2026-11-28.md",), ()) == (first, second)
        assert ["logs/2026/11/2026-11-28.md"] == record["closed_logs"]
        assert (tmp_path / LOG).is_file()


class TestListAndCollect:
    def test_odd_names_and_symlinks_skipped(self, tmp_path: Path) -> None:
        """Only real logs/YYYY/MM/YYYY-MM-DD.md files are listed."""
        append_entry(str(tmp_path), "a", now=NOW)
        (tmp_path / "logs/2026/11/notes.md").write_text("- x\n")
        (tmp_path / "logs/2026/11/2026-11-31.md").write_text("- x\n")
        (tmp_path / "logs/2026/11/2026-11-30.md").symlink_to(tmp_path / LOG)

        assert ("logs/2026/11/2026-11-29.md",) == list_logs(str(tmp_path))

    def test_collect_past_watermark(self, tmp_path: Path) -> None:
        """Entries before the watermark are not collected again."""
        append_entry(str(tmp_path), "one", now=NOW)
        _, marks = collect_entries(str(tmp_path), {})
        append_entry(str(tmp_path), "two", now=NOW)

        entries, _ = collect_entries(str(tmp_path), marks)

        assert ["two"] == [e.text for e in entries]


class TestRetention:
    def _logs(self, root: Path) -> dict[str, int]:
        append_entry(str(root), "old", now=datetime(2026, 10, 1, 9, 0))
        append_entry(str(root), "new", now=NOW)
        return {rel: (root / rel).stat().st_size for rel in list_logs(str(root))}

    def test_archive_consolidated_old_logs(self, tmp_path: Path) -> None:
        """An old, fully consolidated log moves to logs/archive/; a recent one stays."""
        marks = self._logs(tmp_path)

        done = apply_retention(
            str(tmp_path), marks, today=date(2026, 11, 29), days=30, action="archive"
        )

        assert ["logs/archive/2026/10/2026-10-01.md"] == [d.destination for d in done]
        assert (tmp_path / "logs/archive/2026/10/2026-10-01.md").is_file()
        assert (tmp_path / LOG).is_file()

    def test_unconsolidated_log_kept(self, tmp_path: Path) -> None:
        """A log with entries past the watermark is never removed."""
        marks = self._logs(tmp_path)
        marks["logs/2026/10/2026-10-01.md"] -= 1

        done = apply_retention(
            str(tmp_path), marks, today=date(2026, 11, 29), days=30, action="remove"
        )

        assert () == done
        assert (tmp_path / "logs/2026/10/2026-10-01.md").is_file()

    def test_remove(self, tmp_path: Path) -> None:
        """With action remove, the consolidated old log is deleted."""
        marks = self._logs(tmp_path)

        apply_retention(
            str(tmp_path), marks, today=date(2026, 11, 29), days=30, action="remove"
        )

        assert ("logs/2026/11/2026-11-29.md",) == list_logs(str(tmp_path))
