"""`memd dream`: run now, only when due, or show the diff."""

from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.cli.commands import dream as dream_command
from memd.errors import UsageError
from memd.kairos.daily_log import append_entry
from tests.conftest import Home


def run_dream(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="memd dream")
    dream_command.add_arguments(parser)
    return dream_command.run(parser.parse_args(list(argv)))


@pytest.fixture(name="memory")
def _memory(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMD_TELEMETRY", "off")
    monkeypatch.setenv("MEMD_LOG_LEVEL", "error")
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    append_entry(str(path), "#cli one", now=datetime.datetime.now().astimezone())
    return path


class TestDream:
    def test_dry_run_prints_diff(
        self, git_repo: Path, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run prints the unified diff and writes nothing."""
        code = run_dream("--project", str(git_repo), "--dry-run")

        captured = capsys.readouterr()
        out = captured.out

        assert 0 == code
        assert (True, False) == (
            "would write" in captured.err,
            "wrote" in captured.err.replace("would write", ""),
        )
        assert "+++ b/project_cli.md" in out
        assert "+++ b/MEMORY.md" in out
        assert not (memory / "project_cli.md").exists()

    def test_disabled_memory(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Disabled memory: one stderr line naming the rule, exit 0, like prompt."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")

        code = run_dream("--project", str(git_repo), "--now")
        [line] = capsys.readouterr().err.splitlines()

        assert (0, True) == (code, "CLAUDE_CODE_DISABLE_AUTO_MEMORY" in line)

    def test_now_runs(self, git_repo: Path, memory: Path) -> None:
        """--now consolidates immediately and exits 0."""
        code = run_dream("--project", str(git_repo), "--now")

        assert 0 == code
        assert "- one <!-- memd:fact " in (memory / "project_cli.md").read_text()

    def test_not_due_after_tonights_run(
        self, git_repo: Path, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Without --now, a directory that dreamed since the last slot is skipped."""
        run_dream("--project", str(git_repo), "--now")
        append_entry(str(memory), "#cli two", now=datetime.datetime.now().astimezone())
        capsys.readouterr()

        code = run_dream("--project", str(git_repo))

        assert 0 == code
        assert "`memd dream --now` runs it now" in capsys.readouterr().out
        assert " two <!--" not in (memory / "project_cli.md").read_text()

    def test_failed_dream_exits_1(
        self, git_repo: Path, memory: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An external dream command that fails makes `memd dream` exit 1."""
        command = shlex.join([sys.executable, "-c", "import sys; sys.exit(4)"])
        monkeypatch.setenv("MEMD_DREAM_COMMAND", command)

        assert 1 == run_dream("--project", str(git_repo), "--now")

    def test_missing_memory_dir(self, git_repo: Path) -> None:
        """A project without a memory directory is a usage error."""
        with pytest.raises(UsageError, match="no memory directory"):
            run_dream("--project", str(git_repo), "--now")


class TestDreamAll:
    def test_all_discovered_directories(
        self, isolated_home: Home, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--all dreams every memory directory under <base>/projects/."""
        monkeypatch.setenv("MEMD_TELEMETRY", "off")
        monkeypatch.setenv("MEMD_LOG_LEVEL", "error")
        dirs = [isolated_home.claude / "projects" / n / "memory" for n in ("-a", "-b")]
        for path in dirs:
            path.mkdir(parents=True)
            append_entry(str(path), "#all hi", now=datetime.datetime.now().astimezone())

        code = run_dream("--all", "--now")

        assert 0 == code
        assert [True, True] == [(p / "project_all.md").is_file() for p in dirs]


class TestSummaryAndUndo:
    def test_dry_run_prints_the_summary(
        self, git_repo: Path, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run's stderr line counts facts added, merged, superseded, archived."""
        now = datetime.datetime.now().astimezone()
        append_entry(str(memory), "#cli ONE.", now=now)

        run_dream("--project", str(git_repo), "--dry-run")
        err = capsys.readouterr().err

        assert "1 added, 1 merged, 0 superseded, 0 archived" in err

    def test_status_shows_the_last_dreams_summary(
        self, git_repo: Path, memory: Path
    ) -> None:
        """`memd status` renders the summary the dream recorded in dreams.json."""
        from memd.cli.commands.status import _dream_result
        from memd.config import load_config
        from memd.kairos.dream import dream_status

        run_dream("--project", str(git_repo), "--now")
        record = dream_status(load_config().state_dir)[str(memory.resolve())]

        line = _dream_result(record["last_result"])

        assert line.startswith("ok, 1 entries (1 added, 0 merged, 0 superseded")

    def test_undo_restores_and_a_second_undo_exits_1(
        self, git_repo: Path, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd dream undo` puts back the bytes; with nothing left it exits 1."""
        before = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
        run_dream("--project", str(git_repo), "--now")

        assert 0 == run_dream("undo", "--project", str(git_repo))
        after = {
            p.name: p.read_bytes()
            for p in memory.iterdir()
            if p.is_file() and p.name != ".consolidate-lock"
        }
        assert before == after
        assert 1 == run_dream("undo", "--project", str(git_repo))
        assert "nothing to undo" in capsys.readouterr().err


class TestTrueMessages:
    def test_not_due_with_no_dream_ever_says_so(
        self,
        git_repo: Path,
        memory: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """No dream ever ran and the last slot is past its grace: not "already ran"."""
        hour_ago = datetime.datetime.now() - datetime.timedelta(hours=1)
        monkeypatch.setenv("MEMD_DREAM_TIME", hour_ago.strftime("%H:%M"))
        monkeypatch.setenv("MEMD_DREAM_GRACE_HOURS", "0")

        code = run_dream("--project", str(git_repo))

        out = capsys.readouterr().out
        assert 0 == code
        assert ": no dream has run here yet, and the last night's dream is " in out
        next_day = "today" if hour_ago.date() < datetime.date.today() else "tomorrow"
        assert f"; the next runs {next_day} {hour_ago:%H:%M}; " in out
        assert out.endswith("; `memd dream --now` runs it now\n")

    def test_not_due_after_a_run_says_when_it_ran(
        self, git_repo: Path, memory: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run_dream("--project", str(git_repo), "--now")
        capsys.readouterr()

        run_dream("--project", str(git_repo))

        out = capsys.readouterr().out
        assert "(the last ran today " in out
        assert "the next dream runs " in out
        assert "T" not in out.partition(": ")[2]  # no ISO stamp

    def test_status_after_undo_shows_the_undos_time(
        self,
        git_repo: Path,
        memory: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """`undone at` is when the undo ran, not the dream's own time."""
        import time
        from datetime import datetime

        from memd.cli.commands.status import collect_status, format_text
        from memd.kairos.daily_log import memory_key
        from memd.kairos.dream import dream_status
        from memd.times import clock

        monkeypatch.chdir(git_repo)
        run_dream("--project", str(git_repo), "--now")
        dreamed = dream_status(str(Path(os.environ["XDG_STATE_HOME"]) / "memd"))
        dream_time = dreamed[memory_key(str(memory))]["last_run"]
        assert 0 == run_dream("undo", "--project", str(git_repo))
        status = collect_status()
        status["dirs"] = {str(memory): {"last_dream": _last(memory)}}

        line = next(x for x in format_text(status).splitlines() if "last dream " in x)

        undone_at = _last(memory)["last_result"]["undone_at"]
        # the local time a person reads (#42), which `--at` takes back
        shown = clock(datetime.fromisoformat(undone_at).timestamp(), now=time.time())
        assert line.startswith(f"    last dream {shown}: "), line
        assert dream_time != undone_at


def _last(memory: Path) -> dict:  # type: ignore[type-arg]
    from memd.kairos.daily_log import memory_key
    from memd.kairos.dream import dream_status

    state = Path(os.environ["XDG_STATE_HOME"]) / "memd"
    return dict(dream_status(str(state))[memory_key(str(memory))])
