"""`memd paths`: what it prints for a project, in text and JSON."""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import pytest

from memd.claude_code.paths import sanitize_path
from memd.cli.commands import paths as paths_command
from memd.errors import UsageError
from tests.conftest import Home


def run_paths(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="memd paths")
    paths_command.add_arguments(parser)
    return paths_command.run(parser.parse_args(list(argv)))


@pytest.fixture(name="memory_dir")
def _memory_dir(isolated_home: Home, git_repo: Path) -> str:
    name = sanitize_path(str(git_repo.resolve()))
    return f"{isolated_home.claude}/projects/{name}/memory/"


class TestPathsText:
    def test_lists_every_location(
        self,
        git_repo: Path,
        memory_dir: str,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Text output names enablement, dirs, index, today's log, team dir, profile."""
        monkeypatch.setenv("PATH", "/nonexistent")
        code = run_paths("--project", str(git_repo / "."))

        out = capsys.readouterr().out
        today = datetime.date.today()
        expected_log = (
            f"{memory_dir}logs/{today.year}/{today.month:02}/"
            f"{today.year}-{today.month:02}-{today.day:02}.md"
        )
        assert 0 == code
        assert [
            f"project:     {git_repo.resolve()}",
            "auto memory: enabled (default)",
            f"base dir:    {Path(memory_dir).parents[2]}",
            f"memory dir:  {memory_dir}",
            "source:      default",
            f"index:       {memory_dir}MEMORY.md",
            f"today's log: {expected_log}",
            f"team dir:    {memory_dir}team/",
            # no git on this PATH either: no remote or commit to derive it from
            "identity:    none (no remote, no commit, no [sync.projects] entry)",
            "profile:     2.1.332 (auto: no claude on PATH, so the newest profile)",
        ] == out.splitlines()

    def test_defaults_to_the_current_directory(
        self,
        git_repo: Path,
        memory_dir: str,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Without --project the cwd is the project."""
        monkeypatch.chdir(git_repo)

        run_paths()

        assert f"memory dir:  {memory_dir}" in capsys.readouterr().out.splitlines()

    def test_settings_source_and_diagnostics(
        self,
        isolated_home: Home,
        git_repo: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """A settings-chosen dir names its file; a broken file is one stderr line."""
        isolated_home.claude.mkdir()
        user = isolated_home.claude / "settings.json"
        user.write_text(json.dumps({"autoMemoryDirectory": "/srv/mem"}))
        (git_repo / ".claude").mkdir()
        broken = git_repo / ".claude" / "settings.json"
        broken.write_text('{"autoMemoryEnabled": false,}')

        run_paths("--project", str(git_repo))

        captured = capsys.readouterr()
        assert f"source:      settings:user ({user})" in captured.out.splitlines()
        assert [f"{broken.resolve()}:1:29: warning S001 settings-invalid:"] == [
            line.split(" invalid JSON")[0] for line in captured.err.splitlines()
        ]

    def test_disabled_by_environment(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """The reason names the variable that switched memory off."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")

        run_paths("--project", str(git_repo))

        expected = "auto memory: disabled (env:CLAUDE_CODE_DISABLE_AUTO_MEMORY)"
        assert expected in capsys.readouterr().out.splitlines()


class TestPathsJson:
    def test_json_fields(
        self, git_repo: Path, memory_dir: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """JSON output carries the same facts as machine-readable fields."""
        run_paths("--project", str(git_repo), "--format", "json")

        data = json.loads(capsys.readouterr().out)
        assert (memory_dir, True, "default", "default", None) == (
            data["memory_dir"],
            data["enabled"],
            data["enabled_reason"],
            data["source"],
            data["source_path"],
        )
        assert data["today_log_path"].startswith(f"{memory_dir}logs/")
        assert str(git_repo.resolve() / ".git") in data["inputs"]


class TestPathsErrorsAndCli:
    def test_missing_project_is_a_usage_error(self, tmp_path: Path) -> None:
        """A --project that is not a directory raises UsageError (exit 2)."""
        with pytest.raises(UsageError, match="not a directory") as caught:
            run_paths("--project", str(tmp_path / "missing"))

        assert 2 == caught.value.exit_code

    def test_cli_exits_2_with_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Through the CLI, a missing --project is exit 2 and one stderr line."""
        from memd.cli.main import main

        code = main(["paths", "--project", str(tmp_path / "missing")])

        err = capsys.readouterr().err
        assert (2, [f"memd: --project {tmp_path / 'missing'}: not a directory"]) == (
            code,
            err.splitlines(),
        )

    def test_cli_runs_the_command(
        self, git_repo: Path, memory_dir: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd paths --format json` through the CLI prints the memory dir."""
        from memd.cli.main import main

        code = main(["paths", "--project", str(git_repo), "--format", "json"])

        assert (0, memory_dir) == (
            code,
            json.loads(capsys.readouterr().out)["memory_dir"],
        )


def test_paths_creates_no_directory(
    isolated_home: Home, git_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`memd paths` only shows where memory would live; it makes none of it."""
    for fmt in ("text", "json"):
        assert 0 == run_paths("--project", str(git_repo), "--format", fmt)

    assert False is isolated_home.claude.exists()
