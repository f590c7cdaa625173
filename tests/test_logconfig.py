"""memd.logconfig: structlog configured once, JSON off a TTY, console on one."""

from __future__ import annotations

import io
import json
import os
import pty
from collections.abc import Iterator

import pytest
import structlog

from memd.logconfig import choose_format, configure_logging, get_logger


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


class TestChooseFormat:
    def test_auto_off_a_tty_is_json(self) -> None:
        """A pipe or file gets JSON lines."""
        assert "json" == choose_format("auto", io.StringIO())

    def test_auto_on_a_tty_is_console(self) -> None:
        """A real terminal gets the console renderer."""
        leader, follower = pty.openpty()
        try:
            with os.fdopen(follower, "w", closefd=False) as stream:
                actual = choose_format("auto", stream)
        finally:
            os.close(leader)
            os.close(follower)

        assert "console" == actual

    def test_explicit_format_wins(self) -> None:
        """json and console are taken as given."""
        assert ("json", "console") == (
            choose_format("json", io.StringIO()),
            choose_format("console", io.StringIO()),
        )

    def test_unknown_format_is_rejected(self) -> None:
        """A format memd does not know is a ValueError."""
        with pytest.raises(ValueError, match="log format"):
            choose_format("xml", io.StringIO())


class TestConfigureLogging:
    def test_json_lines_with_level_and_utc_timestamp(self) -> None:
        """Off a TTY an event is one JSON object with level, UTC time and context."""
        stream = io.StringIO()
        configure_logging("auto", "info", stream=stream)

        get_logger(component="daemon").info("snapshot_written", mode="standard")
        event = json.loads(stream.getvalue())

        assert {
            "component": "daemon",
            "event": "snapshot_written",
            "level": "info",
            "mode": "standard",
        } == {k: v for k, v in event.items() if k != "timestamp"}
        assert event["timestamp"].endswith("Z")
        assert 1 == stream.getvalue().count("\n")

    def test_level_filters(self) -> None:
        """Events below the configured level are dropped."""
        stream = io.StringIO()
        configure_logging("json", "warning", stream=stream)
        log = get_logger()

        log.info("ignored")
        log.warning("memory_file_broken", path="a.md")

        assert ["memory_file_broken"] == [
            json.loads(line)["event"] for line in stream.getvalue().splitlines()
        ]

    def test_exceptions_render_without_locals(self) -> None:
        """A logged exception carries its type and frames but not local variables."""
        stream = io.StringIO()
        configure_logging("json", "info", stream=stream)
        private = "memory contents"

        try:
            raise RuntimeError("boom")
        except RuntimeError:
            get_logger().exception("rebuild_failed")
        event = json.loads(stream.getvalue())

        assert "RuntimeError" == event["exception"][0]["exc_type"]
        assert private not in stream.getvalue()

    def test_console_is_readable_key_value(self) -> None:
        """The console renderer prints the event and key=value pairs, no colour."""
        stream = io.StringIO()
        configure_logging("console", "debug", stream=stream)

        get_logger().debug("watch_started", dirs=3)
        line = stream.getvalue()

        assert "watch_started" in line
        assert "dirs=3" in line
        assert "\x1b[" not in line

    def test_unknown_level_is_rejected(self) -> None:
        """A level memd does not know is a ValueError."""
        with pytest.raises(ValueError, match="log level"):
            configure_logging("json", "loud", stream=io.StringIO())

    def test_default_stream_is_stderr(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Without a stream, logs go to stderr and stdout stays clean."""
        configure_logging("json", "info")

        get_logger().info("started")
        captured = capsys.readouterr()

        assert ("", "started") == (captured.out, json.loads(captured.err)["event"])
