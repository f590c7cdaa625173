"""`memd log`: append to today's daily log of a project, from arguments or stdin."""

from __future__ import annotations

import argparse
import datetime
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.claude_code.paths import daily_log_path, resolve_memory_location
from memd.cli.commands import log as log_command
from memd.errors import UsageError
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")


def run_log(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="memd log")
    log_command.add_arguments(parser)
    return log_command.run(parser.parse_args(list(argv)))


def _today_log(project: Path) -> Path:
    memory = resolve_memory_location(str(project)).memory_dir
    return Path(daily_log_path(memory, datetime.date.today()))


class TestLog:
    def test_text_arguments(self, git_repo: Path) -> None:
        """The words are joined into one timestamped bullet in today's log."""
        code = run_log("--project", str(git_repo), "ran", "the", "tests")

        text = _today_log(git_repo).read_text()

        assert 0 == code
        assert text.startswith(f"# {datetime.date.today().isoformat()}\n\n- ")
        assert text.endswith(" ran the tests\n")

    def test_stdin(self, git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without TEXT the entry comes from stdin, lines kept as one bullet."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("line one\nline two\n"))

        run_log("--project", str(git_repo))

        assert _today_log(git_repo).read_text().endswith(" line one\n  line two\n")

    def test_empty_is_usage_error(
        self, git_repo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Nothing to log is a usage error, and no file is created."""
        monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))

        with pytest.raises(UsageError, match="nothing to log"):
            run_log("--project", str(git_repo))

        assert not _today_log(git_repo).exists()

    def test_disabled_memory(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Disabled auto memory: one line naming the rule, exit 0, nothing written."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")

        code = run_log("--project", str(git_repo), "hello")
        [line] = capsys.readouterr().err.splitlines()

        assert 0 == code
        assert "CLAUDE_CODE_DISABLE_AUTO_MEMORY" in line
        assert not _today_log(git_repo).exists()


class TestLogScript:
    def test_concurrent_processes(self, git_repo: Path, isolated_home: Home) -> None:
        """Eight `memd log` processes at once: every entry lands, once, whole."""
        procs = [
            subprocess.Popen(
                [MEMD, "log", "--project", str(git_repo), f"entry-{i}"],
                env=isolated_home.env(),
                stderr=subprocess.PIPE,
            )
            for i in range(8)
        ]
        errors = [p.communicate(timeout=60)[1] for p in procs]
        codes = [p.returncode for p in procs]
        lines = _today_log(git_repo).read_text().splitlines()

        assert [0] * 8 == codes, errors
        assert [f"entry-{i}" for i in range(8)] == sorted(
            line.rsplit(" ", 1)[-1] for line in lines if line.startswith("- ")
        )
