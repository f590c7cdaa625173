"""`memd status` and `memd doctor` against a real `memd run`: alive, stopped, gone.

A SIGSTOPped daemon still holds its lock and its pid lives, so only a ping
with a deadline over its socket tells that it does not answer.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from memd.daemon.liveness import check_liveness
from tests.conftest import Home
from tests.daemon.conftest import Daemon, Starter


def _stopped(daemon: Daemon) -> None:
    daemon.proc.send_signal(signal.SIGSTOP)


def _resumed(daemon: Daemon) -> None:
    daemon.proc.send_signal(signal.SIGCONT)


class TestStatus:
    def test_a_running_daemon_answers(self, start_daemon: Starter) -> None:
        """Running and answering: exit 0, "running", responding in JSON."""
        daemon = start_daemon()

        text = daemon.memd("status")
        data = json.loads(daemon.memd("status", "--format", "json").stdout)

        assert 0 == text.returncode, text.stdout + text.stderr
        assert text.stdout.startswith(f"memd is running (pid {daemon.proc.pid},")
        assert (True, True, "running") == (
            data["running"],
            data["responding"],
            data["liveness"],
        )

    def test_a_stopped_daemon_is_not_responding(self, start_daemon: Starter) -> None:
        """SIGSTOP: the lock is held and the pid lives, but status fails and says
        since when nothing was heard."""
        daemon = start_daemon()
        _stopped(daemon)
        try:
            text = daemon.memd("status")
            data = json.loads(daemon.memd("status", "--format", "json").stdout)
        finally:
            _resumed(daemon)

        assert 3 == text.returncode, text.stdout + text.stderr
        first = text.stdout.splitlines()[0]
        # a local time a person reads and `--at` takes back (#42)
        assert re.match(
            r"memd is not responding since (today|yesterday) \d\d:\d\d:\d\d ", first
        ), first
        assert f"pid {daemon.proc.pid} holds the lock but did not answer" in first
        assert (True, False, "not responding") == (
            data["running"],
            data["responding"],
            data["liveness"],
        )
        assert isinstance(data["not_responding_since"], float)

    def test_resumed_it_answers_again(self, start_daemon: Starter) -> None:
        """SIGCONT after SIGSTOP: the same daemon answers the next ping."""
        daemon = start_daemon()
        _stopped(daemon)
        _resumed(daemon)

        assert 0 == daemon.memd("status").returncode

    def test_personal_sync_has_its_own_section(self, start_daemon: Starter) -> None:
        """Off, it says so and how to turn it on."""
        daemon = start_daemon()

        text = daemon.memd("status").stdout

        assert (
            "personal sync: off (turn it on with `memd sync init --remote URL`)"
            in text.splitlines()
        )

    def test_a_stale_heartbeat_is_not_responding(
        self, start_daemon: Starter, isolated_home: Home
    ) -> None:
        """The socket answers, but the settle thread's last round is older than
        the bound: wedged (the bound is 0 here, as any real round is older)."""
        daemon = start_daemon()

        alive = check_liveness(
            str(isolated_home.state / "memd"), daemon.env, stale_seconds=0.0
        )
        fine = check_liveness(str(isolated_home.state / "memd"), daemon.env)

        assert "not responding" == alive.state
        assert "answers, but its work has not moved" in alive.detail
        assert "running" == fine.state


class TestDoctor:
    def test_a_stopped_daemon_fails_the_doctor(self, start_daemon: Starter) -> None:
        """The daemon line fails with the fix; the exit is 1."""
        daemon = start_daemon()
        _stopped(daemon)
        try:
            done = daemon.memd("doctor", "--format", "json")
        finally:
            _resumed(daemon)

        checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
        assert 1 == done.returncode
        assert "fail" == checks["daemon"]["verdict"]
        assert checks["daemon"]["message"].startswith("not responding since ")
        assert "restart" in checks["daemon"]["fix"]

    def test_no_daemon_fails_with_the_command_to_start_one(
        self, start_daemon: Starter
    ) -> None:
        daemon = start_daemon()
        daemon.stop()

        done = daemon.memd("doctor")

        lines = done.stdout.splitlines()
        assert 1 == done.returncode
        assert "FAIL  daemon: not running" == lines[0]
        assert (
            "      fix: `memd service install` (or `memd run` in a terminal)"
            == (lines[1])
        )

    def test_setup_then_doctor_is_all_green(
        self, start_daemon: Starter, isolated_home: Home, tmp_path: Path
    ) -> None:
        """A fresh HOME: setup (service left to the test's own `memd run`), then
        every check passes against the real settings files setup wrote."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        claude = bin_dir / "claude"
        claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
        claude.chmod(0o755)
        memory = isolated_home.claude / "projects" / "-srv-app" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("")
        daemon = start_daemon(PATH=f"{bin_dir}:{isolated_home.env()['PATH']}")

        setup = daemon.memd("setup", "--no-service")
        done = daemon.memd("doctor")

        assert 0 == setup.returncode, setup.stdout + setup.stderr
        assert 0 == done.returncode, done.stdout
        verdicts = [line.split()[0] for line in done.stdout.splitlines()]
        assert {"OK"} == set(verdicts), done.stdout
        settings = json.loads((isolated_home.claude / "settings.json").read_text())
        assert {"SessionStart", "PostToolUse"} == set(settings["hooks"])
        mcp = json.loads((isolated_home.home / ".claude.json").read_text())
        assert ["mcp"] == mcp["mcpServers"]["memd"]["args"]
