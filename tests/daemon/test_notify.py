"""sd_notify over a real unix datagram socket."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from memd.daemon.notify import notify, watchdog_interval_seconds


class TestNotify:
    def test_no_socket_is_a_no_op(self) -> None:
        """Without NOTIFY_SOCKET nothing is sent."""
        assert notify("READY=1", env={}) is False

    def test_sends_datagram(self, tmp_path: Path) -> None:
        """The message arrives as one datagram on the named socket."""
        path = str(tmp_path / "notify.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
            server.bind(path)
            sent = notify("READY=1\nSTATUS=ok", env={"NOTIFY_SOCKET": path})
            received = server.recv(4096)

        assert sent is True
        assert b"READY=1\nSTATUS=ok" == received

    def test_abstract_namespace(self) -> None:
        """A leading @ names an abstract socket."""
        name = f"memd-test-{os.getpid()}-{os.urandom(4).hex()}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
            server.bind("\0" + name)
            notify("WATCHDOG=1", env={"NOTIFY_SOCKET": "@" + name})
            received = server.recv(4096)

        assert b"WATCHDOG=1" == received

    def test_unreachable_socket(self, tmp_path: Path) -> None:
        """A socket nobody listens on is reported, not raised."""
        assert notify("READY=1", env={"NOTIFY_SOCKET": str(tmp_path / "gone")}) is False


class TestWatchdogInterval:
    def test_half_the_interval(self) -> None:
        """WATCHDOG_USEC is halved, as sd_watchdog_enabled recommends."""
        assert 1.5 == watchdog_interval_seconds({"WATCHDOG_USEC": "3000000"})

    def test_other_pid(self) -> None:
        """A watchdog meant for another pid is ignored."""
        env = {"WATCHDOG_USEC": "3000000", "WATCHDOG_PID": str(os.getpid() + 1)}

        assert watchdog_interval_seconds(env) is None

    def test_unset(self) -> None:
        """No WATCHDOG_USEC, no pings."""
        assert watchdog_interval_seconds({}) is None


class TestNeverBlocks:
    def test_full_queue_drops(self, tmp_path: Path) -> None:
        """A listener that stopped reading makes notify drop messages, never block."""
        path = str(tmp_path / "full.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
            server.bind(path)
            results = [
                notify("STATUS=x" * 100, env={"NOTIFY_SOCKET": path})
                for _ in range(2000)
            ]

        assert results[0] is True
        assert results[-1] is False
