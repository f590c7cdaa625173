"""Tests for memd.snapshot.telemetry events and the telemetry_sink JSON-lines sink."""

from __future__ import annotations

import fcntl
import json
import os
import threading
from pathlib import Path

import pytest

from memd.claude_code.enablement import Enablement
from memd.claude_code.truncation import truncate_entrypoint
from memd.snapshot.build import Snapshot
from memd.snapshot.telemetry import memdir_disabled_event, memdir_loaded_event
from memd.snapshot.telemetry_sink import TelemetrySink, read_events

LOADED_FIELDS = {
    "event",
    "time",
    "time_ns",
    "memory_type",
    "memory_dir",
    "mode",
    "content_length",
    "line_count",
    "was_truncated",
    "was_byte_truncated",
    "index_empty",
    "total_file_count",
    "total_subdir_count",
    "render_seconds",
    "lint_errors",
    "lint_warnings",
    "sha256",
    "agent_profile",
    "memory_access_mode",  # 2.1.332 on
    "prompt_variant",
}


def _snapshot(index: str | None, profile: str = "2.1.332") -> Snapshot:
    return Snapshot(
        profile=profile,
        memory_dir="/m/",
        mode="standard",
        text="prompt\n",
        sha256="0" * 64,
        built_ns=1_700_000_000_123_000_000,
        inputs=(),
        truncation=None if index is None else truncate_entrypoint(index),
        diagnostics=(),
        manifest=(),
        lint_errors=2,
        lint_warnings=3,
        total_file_count=4,
        total_subdir_count=1,
        render_seconds=0.25,
    )


class TestMemdirLoadedEvent:
    def test_fields(self) -> None:
        """The event carries the reference's fields plus memd's own."""
        index = "".join(f"- [E{i}](e{i}.md) — é😀\n" for i in range(201))
        event = memdir_loaded_event(_snapshot(index), "auto")
        truncation = truncate_entrypoint(index)

        assert LOADED_FIELDS == set(event)
        assert "memdir_loaded" == event["event"]
        assert "2023-11-14T22:13:20.123Z" == event["time"]
        assert truncation.byte_count == event["content_length"]
        assert 201 == event["line_count"]
        assert True is event["was_truncated"]
        assert False is event["was_byte_truncated"]
        assert (4, 1) == (event["total_file_count"], event["total_subdir_count"])
        assert (2, 3) == (event["lint_errors"], event["lint_warnings"])

    def test_release_fields_follow_the_profile(self) -> None:
        """2.1.332 events say `files` and `base`; team ones are not steered."""
        auto = memdir_loaded_event(_snapshot(None), "auto")
        team = memdir_loaded_event(_snapshot(None), "team")
        old = memdir_loaded_event(_snapshot(None, "2.1.112"), "team")

        assert ("files", "base", "2.1.332") == (
            auto["memory_access_mode"],
            auto["prompt_variant"],
            auto["agent_profile"],
        )
        assert "team_write_steered" not in auto
        assert False is team["team_write_steered"]
        assert set() == {"memory_access_mode", "team_write_steered"} & set(old)

    def test_content_length_counts_utf16(self) -> None:
        """content_length counts UTF-16 units, as the reference does."""
        event = memdir_loaded_event(_snapshot("😀"), "team")

        assert 2 == event["content_length"]
        assert "team" == event["memory_type"]

    def test_empty_index(self) -> None:
        """A blank index gives zero sizes and index_empty."""
        event = memdir_loaded_event(_snapshot(None), "auto")

        assert (0, 0, True) == (
            event["content_length"],
            event["line_count"],
            event["index_empty"],
        )

    def test_bad_memory_type(self) -> None:
        """Only auto, team and agent are memory types."""
        with pytest.raises(ValueError, match="memory_type"):
            memdir_loaded_event(_snapshot(None), "private")


class TestMemdirDisabledEvent:
    def test_env_var(self) -> None:
        """A truthy disable variable is reported as disabled_by_env_var."""
        event = memdir_disabled_event(
            Enablement(False, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY"),
            "/p",
            env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": " TRUE "},
            settings={"autoMemoryEnabled": False},
            now_ns=0,
        )

        expected = {
            "event": "memdir_disabled",
            "time": "1970-01-01T00:00:00.000Z",
            "time_ns": 0,
            "project_root": "/p",
            "disabled_by_env_var": True,
            "disabled_by_setting": False,
            "rule": "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY",
        }
        assert expected == event

    def test_setting_reported_even_when_simple_decided(self) -> None:
        """As in the reference, a false setting counts even if another rule decided."""
        event = memdir_disabled_event(
            Enablement(False, "env:CLAUDE_CODE_SIMPLE"),
            "/p",
            env={"CLAUDE_CODE_SIMPLE": "1"},
            settings={"autoMemoryEnabled": False},
        )

        assert (False, True) == (
            event["disabled_by_env_var"],
            event["disabled_by_setting"],
        )
        assert "env:CLAUDE_CODE_SIMPLE" == event["rule"]


class TestTelemetrySink:
    def test_writes_json_lines(self, tmp_path: Path) -> None:
        """Emitted events land in the JSON-lines file with every field."""
        path = tmp_path / "state" / "telemetry.jsonl"
        event = memdir_loaded_event(_snapshot("- [A](a.md) — a"), "auto")
        with TelemetrySink(str(path)) as sink:
            sink.emit(event)
            sink.emit({"event": "other", "n": 2})

        lines = path.read_text().splitlines()
        assert [event, {"event": "other", "n": 2}] == [
            json.loads(line) for line in lines
        ]
        assert 0 == sink.dropped

    def test_overflow_is_counted_not_blocking(self, tmp_path: Path) -> None:
        """With the writer stuck, emit keeps returning and counts what it drops."""
        path = tmp_path / "telemetry.jsonl"
        lock_fd = os.open(str(path) + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
        fcntl.flock(lock_fd, fcntl.LOCK_EX)  # the drain thread will block on this
        sink = TelemetrySink(str(path), queue_size=4)
        try:
            sink.emit({"n": 0})
            # Wait until the drain thread holds event 0 and is stuck on the lock.
            for _ in range(1000):
                if sink._queue.empty():
                    break
                threading.Event().wait(0.005)
            for n in range(1, 201):
                sink.emit({"n": n})
            dropped = sink.dropped
        finally:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
            os.close(lock_fd)
            sink.close()

        written = [e["n"] for e in read_events(str(path))]
        # The queue holds 4; the thread may have grabbed a few more before it blocked.
        assert dropped >= 200 - 4 - 10
        assert list(range(201 - dropped)) == written

    def test_emit_after_close_is_dropped(self, tmp_path: Path) -> None:
        """An event emitted after close() is counted as dropped, not raised."""
        sink = TelemetrySink(str(tmp_path / "t.jsonl"))
        sink.close()
        sink.emit({"n": 1})

        assert 1 == sink.dropped

    def test_rotation_keeps_n_files(self, tmp_path: Path) -> None:
        """Past max_bytes the file rotates, keeping `keep` old files, oldest dropped."""
        path = str(tmp_path / "telemetry.jsonl")
        for n in range(5):
            with TelemetrySink(path, max_bytes=5, keep=2) as sink:
                sink.emit({"n": n})

        assert [2, 3, 4] == [e["n"] for e in read_events(path, keep=2)]
        assert {"telemetry.jsonl", "telemetry.jsonl.1", "telemetry.jsonl.2"} <= set(
            os.listdir(tmp_path)
        )
        assert not (tmp_path / "telemetry.jsonl.3").exists()

    def test_unwritable_path_counts_error(self, tmp_path: Path) -> None:
        """A sink whose directory cannot exist counts a write error, never raises."""
        blocker = tmp_path / "file"
        blocker.write_text("")
        with TelemetrySink(str(blocker / "telemetry.jsonl")) as sink:
            sink.emit({"n": 1})

        assert 1 == sink.write_errors

    def test_torn_line_skipped(self, tmp_path: Path) -> None:
        """read_events skips a half-written last line."""
        path = tmp_path / "telemetry.jsonl"
        path.write_text('{"n": 1}\n{"n": 2')

        assert [{"n": 1}] == list(read_events(str(path)))
