"""`memd stats`: per-directory summaries of the telemetry JSON lines."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from memd.cli.commands import stats as stats_command
from memd.snapshot.telemetry_sink import TelemetrySink
from tests.conftest import Home


def run_stats(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="memd stats")
    stats_command.add_arguments(parser)
    return stats_command.run(parser.parse_args(list(argv)))


def _loaded(
    memory_dir: str, length: int, lines: int, **extra: object
) -> dict[str, object]:
    return {
        "event": "memdir_loaded",
        "memory_type": "auto",
        "memory_dir": memory_dir,
        "content_length": length,
        "line_count": lines,
        "was_truncated": False,
        "was_byte_truncated": False,
        "time": "2026-11-29T00:00:00.000Z",
        "lint_errors": 0,
        "lint_warnings": 1,
        **extra,
    }


@pytest.fixture(name="telemetry")
def _telemetry(isolated_home: Home) -> Path:
    path = isolated_home.state / "memd" / "telemetry.jsonl"
    with TelemetrySink(str(path)) as sink:
        sink.emit(_loaded("/a/", 100, 3))
        sink.emit(_loaded("/a/", 50, 2))
        sink.emit(_loaded("/a/", 300, 201, was_truncated=True))
        sink.emit(_loaded("/a/", 300, 201, memory_type="team"))
        sink.emit(_loaded("/b/", 10, 1))
        sink.emit({"event": "memdir_disabled", "project_root": "/p"})
    return path


class TestStats:
    def test_json_summary(
        self, telemetry: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """JSON gives counts, latest/min/max and trend, truncations, disabled."""
        code = run_stats("--format", "json")
        summary = json.loads(capsys.readouterr().out)
        a = summary["memory_dirs"]["/a/"]

        assert 0 == code
        assert (4, 3) == (a["events"], a["renders"])
        expected_size = {
            "first": 100,
            "latest": 300,
            "min": 50,
            "max": 300,
            "trend": 200,
        }
        assert expected_size == a["content_length"]
        assert 198 == a["line_count"]["trend"]
        assert 1 == a["truncation_events"]
        assert 1 == summary["memory_dirs"]["/b/"]["renders"]
        assert {"/p": 1} == summary["disabled"]

    def test_text_summary(
        self, telemetry: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Text lists each directory with its trend and truncations."""
        run_stats()
        out = capsys.readouterr().out

        # the prompt against the agent's limits, with units (#42)
        assert (
            "/a\n  memory prompt (MEMORY.md): 201 of 200 lines,"
            " 300 of 25,000 characters"
            " (over the agent's limit: `memd fix` compacts it)\n"
        ) in out
        assert ": +200 characters, +198 lines (100 -> 300 characters)\n" in out
        assert "  cut at the agent's limit: once (the agent loaded only" in out
        assert "  memd built the prompt 3 times\n" in out
        assert "/p  auto memory was off when memd built its prompt (once)" in out
        for internal in ("renders", "units", "access mode", "prompt variant", "->  "):
            assert internal not in out

    def test_no_telemetry(self, capsys: pytest.CaptureFixture[str]) -> None:
        """With no telemetry file, stats says so and exits 0."""
        code = run_stats()

        assert 0 == code
        assert capsys.readouterr().out.startswith("nothing measured yet: ")
