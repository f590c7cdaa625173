"""The per-session record: what changed since the hooks last looked, by stat."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memd.hooks.session_state import (
    SessionState,
    changes,
    format_state,
    parse_state,
    read_state,
    record_path,
    scan,
    untouched,
    write_state,
)
from memd.racy import RACY_WINDOW_NS


def age(directory: Path, seconds: int = 60) -> None:
    when = time.time() - seconds
    for path in [*directory.rglob("*"), directory]:
        os.utime(path, (when, when), follow_symlinks=False)


class TestScanAndChanges:
    def test_in_place_rewrite_create_and_delete_are_changes(
        self, tmp_path: Path
    ) -> None:
        """An in-place edit, a new file and a removed file are all seen."""
        (tmp_path / "a.md").write_text("one")
        (tmp_path / "b.md").write_text("two")
        age(tmp_path)
        before = scan(str(tmp_path))
        recorded_ns = time.time_ns()

        with open(tmp_path / "a.md", "r+") as f:  # same inode, new bytes
            f.write("ONE!")
        (tmp_path / "team").mkdir()
        (tmp_path / "team" / "c.md").write_text("three")
        (tmp_path / "b.md").unlink()
        changed, maybe = changes(before, scan(str(tmp_path)), recorded_ns)

        assert {"a.md", "b.md", "team", "team/c.md"} == changed
        assert frozenset() == maybe

    def test_nothing_touched_is_no_change(self, tmp_path: Path) -> None:
        """Two scans of an untouched directory are equal and not racy."""
        (tmp_path / "a.md").write_text("one")
        age(tmp_path)

        assert (frozenset(), frozenset()) == changes(
            scan(str(tmp_path)), scan(str(tmp_path)), time.time_ns()
        )

    def test_a_file_written_in_the_recording_tick_is_maybe_changed(
        self, tmp_path: Path
    ) -> None:
        """Same stat but modified within the racy window of the recording: maybe."""
        (tmp_path / "a.md").write_text("one")
        entries = scan(str(tmp_path))

        changed, maybe = changes(entries, entries, time.time_ns())

        assert (frozenset(), frozenset({"a.md"})) == (changed, maybe)
        assert RACY_WINDOW_NS == 1_000_000_000

    def test_links_are_recorded_not_followed(self, tmp_path: Path) -> None:
        """A link to a directory outside is one entry; nothing behind it is listed."""
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "secret.md").write_text("x")
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "link").symlink_to(outside)

        assert {"", "link"} == set(scan(str(memory)))

    def test_missing_directory_scans_empty(self, tmp_path: Path) -> None:
        """A directory that is not there gives no entries, not an error."""
        assert {} == scan(str(tmp_path / "nope"))


class TestRecord:
    def test_round_trip_keeps_every_field(self, tmp_path: Path) -> None:
        """format then parse gives the same record, paths with spaces included."""
        state = SessionState(
            memory_dir="/m y/memory/",
            recorded_ns=42,
            entries={"": (1, 2, 3), "a b.md": (4, 5, 6)},
            index=(230, 9000),
            errors=frozenset({("I002", "MEMORY.md")}),
            said=frozenset({"I002 MEMORY.md 1:2:3"}),
            profile="2.1.112",
        )
        path = str(tmp_path / "hooks" / "s.txt")

        write_state(path, state)
        back = read_state(path)

        assert back is not None
        assert ("/m y/memory/", 42, (230, 9000)) == (
            back.memory_dir,
            back.recorded_ns,
            back.index,
        )
        assert state.entries == back.entries
        assert (state.errors, state.said) == (back.errors, back.said)
        assert "2.1.112" == back.profile
        assert 0o600 == os.stat(path).st_mode & 0o777

    def test_garbage_is_not_a_record(self) -> None:
        """Text that is not a record, or a record with a bad number, parses to None."""
        assert parse_state("hello") is None
        assert parse_state("memd-hook-session 1\nrecorded_ns x\n") is None

    def test_a_path_with_a_newline_is_not_recorded(self) -> None:
        """A name that cannot be written on one line makes the record unwritable."""
        state = SessionState(
            memory_dir="/m/", recorded_ns=1, entries={"a\nb": (1, 1, 1)}
        )

        assert format_state(state) is None

    def test_odd_session_ids_are_not_remembered(self) -> None:
        """Only plain ids name a record file; a path in the id never does."""
        env = {"HOME": "/h", "XDG_STATE_HOME": "/s"}

        assert "/s/memd/hooks/abc-1.txt" == record_path("abc-1", env)
        assert record_path("../../etc/passwd", env) is None
        assert record_path("", env) is None
        assert record_path(7, env) is None


class TestUntouched:
    def test_only_an_unchanged_directory_is_untouched(self, tmp_path: Path) -> None:
        """Untouched until a file changes; a file named in another memory dir is not."""
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "a.md").write_text("one")
        other = tmp_path / "other"
        other.mkdir()
        (other / "MEMORY.md").write_text("- [b](b.md)\n")
        age(memory)
        env = {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
        state = SessionState(
            memory_dir=str(memory) + os.sep,
            recorded_ns=time.time_ns(),
            entries=scan(str(memory)),
        )
        write_state(str(record_path("s", env)), state)
        bash = {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}}
        elsewhere = {
            "session_id": "s",
            "tool_name": "Write",
            "tool_input": {"file_path": str(other / "b.md")},
        }

        before = (untouched(bash, env), untouched(elsewhere, env))
        (memory / "a.md").write_text("two!")
        after = untouched(bash, env)

        assert (True, False) == before
        assert not after
        assert not untouched({"session_id": "unknown"}, env)
