"""memd.logconfig: structlog configured once, JSON off a TTY, console on one."""

from __future__ import annotations

import io
import json
import logging
import os
import pty
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from memd.logconfig import (
    MAX_LOG_ITEMS,
    MAX_LOG_LINE_CHARS,
    MAX_LOG_TEXT_CHARS,
    _Throttle,
    bound_event,
    choose_format,
    configure_logging,
    cut_text,
    get_logger,
    rotate_log_file,
    routed_warnings,
)


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


class TestLogFileRotation:
    def test_rotates_past_the_limit_and_follows_the_new_file(
        self, tmp_path: Path
    ) -> None:
        """Past max_bytes the file becomes .1 and the fd writes to a fresh file."""
        log = tmp_path / "memd.log"
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"x" * 200)

            rotated = rotate_log_file(fd, str(log), 100)
            os.write(fd, b"after\n")
        finally:
            os.close(fd)

        assert (True, b"x" * 200, b"after\n") == (
            rotated,
            (tmp_path / "memd.log.1").read_bytes(),
            log.read_bytes(),
        )

    def test_below_the_limit_nothing_moves(self, tmp_path: Path) -> None:
        """A small file stays where it is."""
        log = tmp_path / "memd.log"
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"small\n")
            rotated = rotate_log_file(fd, str(log), 100)
        finally:
            os.close(fd)

        assert (False, False) == (rotated, (tmp_path / "memd.log.1").exists())

    def test_never_rotates_through_a_link_or_another_file(self, tmp_path: Path) -> None:
        """The fd must be the very file at the path: a symlink there is left alone."""
        real = tmp_path / "elsewhere.log"
        fd = os.open(real, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        (tmp_path / "memd.log").symlink_to(real)
        try:
            os.write(fd, b"x" * 200)
            rotated = rotate_log_file(fd, str(tmp_path / "memd.log"), 100)
        finally:
            os.close(fd)

        assert (False, 200) == (rotated, real.stat().st_size)

    def test_a_process_logging_to_its_stderr_file_keeps_it_bounded(
        self, tmp_path: Path
    ) -> None:
        """As under `StandardOutput=append:`: stderr is the file, memd rotates it.

        The child logs 3000 lines of ~150 bytes (~450 KB) with a 100 KB limit,
        checked every 64 KiB, then writes to fd 2 directly, as a crash
        traceback would.
        """
        log = tmp_path / "memd.log"
        child = (
            "import os, memd.logconfig as lc\n"
            "lc.LOG_FILE_MAX_BYTES = 100_000\n"
            f"lc.configure_logging('json', 'info', rotate_file={str(log)!r})\n"
            "log = lc.get_logger(component='test')\n"
            "for n in range(3000): log.info('tick', n=n, pad='p' * 60)\n"
            "os.write(2, b'raw stderr after rotation\\n')\n"
        )
        with open(log, "ab") as stderr:
            subprocess.run(
                [sys.executable, "-c", child], stderr=stderr, check=True, timeout=60
            )

        current, previous = log.read_text(), (tmp_path / "memd.log.1").read_text()
        assert current.endswith("raw stderr after rotation\n")
        bound = 100_000 + 64 * 1024 + 200
        assert '"n": 2999' in current
        assert (True, True) == (
            len(current.encode()) <= bound,
            100_000 < len(previous.encode()) <= bound,
        )


def _json_lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.fixture(name="plain_warnings")
def _plain_warnings() -> Iterator[None]:
    """Python's own warning filters, not pytest's `error` (routing is under test)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        yield


class TestBoundedLines:
    def test_a_huge_value_is_cut(self) -> None:
        """A path, message or repr of any size becomes a bounded string."""
        stream = io.StringIO()
        configure_logging("json", stream=stream)

        get_logger().warning(
            "memory_file_broken",
            file="d/" * 500_000,
            diagnostics=[{"message": "x" * 100_000}] * 10_000,
            thing=object(),
            nested=[[[[[[[[[["deep"]]]]]]]]]],
        )

        line = stream.getvalue()
        assert len(line) < 2 * MAX_LOG_LINE_CHARS
        (record,) = _json_lines(stream)
        file = str(record["file"])
        assert file.startswith("d/d/")
        assert file.endswith("more chars]")
        diagnostics = record["diagnostics"]
        assert isinstance(diagnostics, list)
        assert len(diagnostics) <= MAX_LOG_ITEMS + 1
        assert str(diagnostics[-1]).endswith("more")

    def test_small_values_pass_unchanged(self) -> None:
        """Numbers, flags and short text are what was logged."""
        event = {"event": "x", "n": 3, "ok": True, "none": None, "f": 1.5, "t": "hi"}

        assert {**event} == bound_event(None, "info", {**event})

    def test_cut_text_says_how_much_went(self) -> None:
        """The cut keeps the head and counts the rest."""
        assert ("abc", "ab… [1 more chars]") == (cut_text("abc", 3), cut_text("abc", 2))


class TestThrottle:
    def test_one_per_source_per_window_with_the_count_held_back(self) -> None:
        """Repeats inside the window are held; the next one says how many."""
        throttle = _Throttle(60.0, 16)
        source = ("RuntimeWarning", "inotify.py", 365)

        first = throttle.admit(source, 0.0)
        held = [throttle.admit(source, 1.0 + i / 1000) for i in range(500)]
        other = throttle.admit(("RuntimeWarning", "inotify.py", 366), 2.0)
        later = throttle.admit(source, 61.0)

        assert (0, {None}, 0, 500) == (first, set(held), other, later)

    def test_sources_remembered_are_bounded(self) -> None:
        """Past `max_sources` the oldest is forgotten (and shown again)."""
        throttle = _Throttle(60.0, 2)
        for line in (1, 2, 3):
            throttle.admit(("W", "f", line), 0.0)

        assert (0, None) == (
            throttle.admit(("W", "f", 1), 1.0),
            throttle.admit(("W", "f", 3), 1.0),
        )


@pytest.mark.usefixtures("plain_warnings")
class TestRoutedWarnings:
    def test_a_flood_from_a_thread_is_one_bounded_line(self) -> None:
        """10,000 warnings with a new 700 KB text each, from a library's thread."""
        stream = io.StringIO()
        configure_logging("json", stream=stream)
        big = "w" * 700_000

        def flood() -> None:
            for i in range(10_000):
                warnings.warn(
                    f"Callback with id {i} {big}", RuntimeWarning, stacklevel=1
                )

        with routed_warnings(get_logger(component="library")):
            thread = threading.Thread(target=flood)
            thread.start()
            thread.join()

        records = _json_lines(stream)
        assert len(stream.getvalue()) < 8 * 1024
        assert ["python_warning"] == [r["event"] for r in records]
        assert "RuntimeWarning" == records[0]["category"]
        assert str(records[0]["message"]).startswith("Callback with id 0 www")
        assert 0 == records[0]["repeats_held_back"]

    def test_stdlib_log_records_are_routed_and_throttled(self) -> None:
        """A library's `logging` warnings become structlog lines, throttled too."""
        stream = io.StringIO()
        configure_logging("json", stream=stream)
        library = logging.getLogger("memd-test-library")

        with routed_warnings(get_logger()):
            for i in range(1000):
                library.warning("lost %s %s", i, "z" * 10_000)
            library.info("below the level")

        (record,) = _json_lines(stream)
        assert ("library_logged", "memd-test-library", "warning") == (
            record["event"],
            record["logger"],
            record["record_level"],
        )
        assert len(str(record["message"])) < 2 * MAX_LOG_TEXT_CHARS

    def test_everything_is_restored_on_exit(self) -> None:
        """Outside the block, warnings and the root logger are as they were."""
        before = (warnings.showwarning, list(warnings.filters))
        handlers = list(logging.getLogger().handlers)
        configure_logging("json", stream=io.StringIO())

        with routed_warnings(get_logger()):
            inside = warnings.showwarning

        assert inside is not before[0]
        assert before == (warnings.showwarning, list(warnings.filters))
        assert handlers == logging.getLogger().handlers
