"""What a person sees in a terminal: real ptys (`pty.openpty`), real commands.

On a terminal no log record comes before or after a command's result (they go
to memd's log file; `-v` shows them); `memd run` says what it watches and how
to stop it, then writes findings as `memd lint` does; a command that waits on
the terminal says what for. Off a terminal the records stay JSON on stderr.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import Home, git

MEMD = str(Path(sys.executable).parent / "memd")
TIMEOUT = 30.0

GOOD = (
    "---\nname: role\ndescription: The user is a staff SRE on the payments team\n"
    "type: user\n---\nStaff SRE.\n"
)


class Terminal:
    """One command with stdin, stdout and stderr on a pty."""

    def __init__(self, *argv: str, cwd: Path | None = None) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [MEMD, *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            close_fds=True,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def read_until(self, text: str, timeout: float = TIMEOUT) -> str:
        """Read the terminal until `text` shows (or the command ends)."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the other side closed: the command ended
                    break
                if not chunk:
                    break
                self.seen += chunk
        return self.text

    def finish(self, timeout: float = TIMEOUT) -> str:
        """Wait for the command to end; everything it wrote."""
        self.read_until("\0never\0", timeout=0.5)
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.read_until("\0never\0", timeout=0.2)
        os.close(self.master)
        return self.text

    @property
    def text(self) -> str:
        return self.seen.decode("utf-8", "replace").replace("\r\n", "\n")


def run_in_terminal(*argv: str, cwd: Path | None = None) -> str:
    return Terminal(*argv, cwd=cwd).finish()


def assert_no_log_records(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith("{"), text
        assert "[info" not in line, text
        assert "[warning" not in line, text
        assert "event" not in line, text


def log_file(home: Home) -> Path:
    return home.state / "memd" / "memd.log"


def personal_remote(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    return remote


class TestNoLogRecords:
    def test_sync_prints_its_result_alone(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """`memd sync init` and `memd sync`: the result, no record; records in the
        log file."""
        remote = personal_remote(tmp_path)

        init = run_in_terminal("sync", "init", "--remote", str(remote))
        again = run_in_terminal("sync")

        # The result: the repository synced, then (run inside a project) what
        # it shared; nothing before it.
        assert init.splitlines()[0].endswith(": synced"), init
        assert again.splitlines()[0].endswith(": synced"), again
        assert_no_log_records(init + again)
        events = [
            json.loads(line)["event"]
            for line in log_file(isolated_home).read_text().splitlines()
        ]
        assert "personal_synced" in events

    def test_verbose_shows_them(self, isolated_home: Home, tmp_path: Path) -> None:
        remote = personal_remote(tmp_path)
        run_in_terminal("sync", "init", "--remote", str(remote))

        shown = run_in_terminal("sync", "-v")

        assert "personal_synced" in shown

    def test_off_a_terminal_they_stay_json(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        remote = personal_remote(tmp_path)

        done = subprocess.run(
            [MEMD, "sync", "init", "--remote", str(remote)],
            capture_output=True,
            text=True,
            check=False,
            timeout=TIMEOUT,
        )

        records = [json.loads(line) for line in done.stderr.splitlines()]
        assert "personal_synced" in [r["event"] for r in records]

    def test_team_sync_prints_its_result_alone(
        self, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        from memd.claude_code.paths import auto_mem_path

        remote = personal_remote(tmp_path)
        memory = Path(auto_mem_path(str(git_repo)))
        (memory / "team").mkdir(parents=True)
        (memory / "team" / "role.md").write_text(GOOD)
        (memory / "team" / "MEMORY.md").write_text("- [Role](role.md) — the SRE\n")

        init = run_in_terminal("team", "init", "--remote", str(remote), cwd=git_repo)
        done = run_in_terminal("team", "sync", cwd=git_repo)

        assert "synced" in done, init + done
        assert_no_log_records(init + done)

    def test_dream_prints_its_result_alone(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        from memd.claude_code.paths import auto_mem_path

        memory = Path(auto_mem_path(str(git_repo)))
        memory.mkdir(parents=True)
        log = run_in_terminal("log", "#ops the pager rotates weekly", cwd=git_repo)

        done = run_in_terminal("dream", "--now", cwd=git_repo)

        assert "" == log.strip(), log
        assert done.strip(), done
        assert_no_log_records(done)


class TestRunInATerminal:
    def test_first_line_then_findings_as_lint_writes_them(
        self, isolated_home: Home
    ) -> None:
        memory = isolated_home.claude / "projects" / "-srv-app" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Role](role.md) — the SRE\n")
        (memory / "role.md").write_text(GOOD)
        daemon = Terminal("run")
        try:
            first = daemon.read_until("Ctrl-C stops it")
            (memory / "broken.md").write_text("no frontmatter here\n")
            (memory / "MEMORY.md").write_text(
                "- [Role](role.md) — the SRE\n- [Broken](broken.md) — oops\n"
            )
            seen = daemon.read_until("frontmatter-missing")
        finally:
            daemon.proc.send_signal(signal.SIGINT)
            everything = daemon.finish()

        lines = first.splitlines()
        assert lines[0] == (
            f"memd: watching 1 memory directory"
            " (~/.claude/projects); logs in"
            f" {log_file(isolated_home)}; Ctrl-C stops it"
        ), first
        # named in its project (no root known here: its memory dir, ~ for home)
        assert "broken.md in ~/.claude/projects/-srv-app/memory\n" in seen
        assert "  error    M001 " in seen
        assert_no_log_records(everything)
        assert everything.rstrip().endswith("memd: stopped")

    def test_findings_of_the_first_scan_come_after_the_first_line(
        self, isolated_home: Home
    ) -> None:
        """A file already broken at start is told under the first line, not above."""
        memory = isolated_home.claude / "projects" / "-srv-app" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Broken](broken.md) — oops\n")
        (memory / "broken.md").write_text("no frontmatter here\n")
        daemon = Terminal("run")
        try:
            seen = daemon.read_until("frontmatter-missing")
        finally:
            daemon.proc.send_signal(signal.SIGINT)
            daemon.finish()

        assert seen.startswith("memd: watching 1 memory directory ("), seen
        assert "\nbroken.md in ~/.claude/projects/-srv-app/memory\n" in seen


class TestSaysWhatItWaitsFor:
    def test_log_without_text(self, git_repo: Path) -> None:
        from memd.claude_code.paths import auto_mem_path

        Path(auto_mem_path(str(git_repo))).mkdir(parents=True)
        term = Terminal("log", cwd=git_repo)
        try:
            said = term.read_until("Ctrl-D")
            os.write(term.master, b"#ops the pager rotates weekly\n\x04")
        finally:
            term.finish()

        assert "memd log: type the entry, then Ctrl-D" in said

    def test_mcp(self, git_repo: Path) -> None:
        term = Terminal("mcp", cwd=git_repo)
        try:
            said = term.read_until("waiting for")
        finally:
            term.proc.send_signal(signal.SIGINT)
            term.finish()

        assert "memd mcp: serving " in said
        assert "waiting for a client's JSON-RPC (Ctrl-C stops it)" in said
