"""`memd prompt`: cold render, warm serving, freshness, formats, disabled memory."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import sanitize_path
from memd.claude_code.prompt import render_prompt
from memd.cli.commands import prompt as prompt_command
from memd.racy import RACY_WINDOW_NS
from memd.snapshot.telemetry_sink import read_events
from tests.conftest import Home

FORBIDDEN = (
    "re",
    "json",
    "argparse",
    "typing",
    "dataclasses",
    "hashlib",
    "yaml",
    "frontmatter",
    "watchdog",
    "structlog",
    "apscheduler",
    "tomllib",
)
INDEX = "- [Testing](feedback_testing.md) — integration tests use a real database\n"


def memd_prompt(*argv: str) -> int:
    """Run `memd prompt` as memd.cli does: the warm path first, then the full parser."""
    code = prompt_command.serve_warm(list(argv))
    if code is not None:
        return code
    parser = argparse.ArgumentParser(prog="memd prompt")
    prompt_command.add_arguments(parser)
    return prompt_command.run(parser.parse_args(list(argv)))


def _age(*roots: Path) -> None:
    """Date every file under `roots` well before now, so no input is racy."""
    then = time.time_ns() - 10 * RACY_WINDOW_NS
    for root in roots:
        for path in [root, *root.rglob("*")] if root.is_dir() else [root]:
            os.utime(path, ns=(then, then), follow_symlinks=False)


@pytest.fixture(name="memory_dir")
def _memory_dir(isolated_home: Home, git_repo: Path) -> Path:
    path = (
        isolated_home.claude
        / "projects"
        / sanitize_path(str(git_repo.resolve()))
        / "memory"
    )
    path.mkdir(parents=True)
    (path / "MEMORY.md").write_text(INDEX)
    return path


def _warm_up(git_repo: Path, memory_dir: Path, *argv: str) -> None:
    """Render once, age every input, render again: the snapshot is now servable warm."""
    assert 0 == memd_prompt("--project", str(git_repo), *argv)
    _age(memory_dir, git_repo / ".git")
    assert 0 == memd_prompt("--project", str(git_repo), *argv)


def _fresh_render(memory_dir: Path, mode: str = "standard") -> bytes:
    text, _ = render_prompt(
        mode=mode,
        memory_dir=str(memory_dir) + os.sep,
        index_text=(memory_dir / "MEMORY.md").read_text(),
    )
    return text.encode()


class TestColdRender:
    def test_prints_fresh_render(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """The printed prompt is byte-identical to a fresh render."""
        code = memd_prompt("--project", str(git_repo))

        assert 0 == code
        assert _fresh_render(memory_dir) == capfdbinary.readouterr().out

    def test_creates_no_dirs(
        self,
        isolated_home: Home,
        git_repo: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """`memd prompt` only shows: no memory dir (nor team dir) is made, in any
        mode; the prompt renders the missing directory as an empty one."""
        claude = isolated_home.claude
        for mode in ("standard", "team", "kairos"):
            memd_prompt("--project", str(git_repo), "--mode", mode)

        assert False is (claude / "projects").exists()
        assert b"# Memory\n" in capfdbinary.readouterr().out

    def test_emits_telemetry_and_remembers_project(
        self, isolated_home: Home, git_repo: Path, memory_dir: Path
    ) -> None:
        """A render emits memdir_loaded (twice in team mode) and remembers the root."""
        memd_prompt("--project", str(git_repo), "--mode", "team")
        events = list(
            read_events(str(isolated_home.state / "memd" / "telemetry.jsonl"))
        )
        projects = json.loads(
            (isolated_home.state / "memd" / "projects.json").read_text()
        )

        assert ["auto", "team"] == [e["memory_type"] for e in events]
        assert {"memdir_loaded"} == {e["event"] for e in events}
        assert len(INDEX.strip()) == events[0]["content_length"]
        assert str(memory_dir) + os.sep == events[0]["memory_dir"]
        assert [str(git_repo.resolve())] == projects["projects"]

    def test_json_format(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """--format json prints the prompt with its metadata."""
        memd_prompt("--project", str(git_repo), "--format", "json")
        out = json.loads(capfdbinary.readouterr().out)

        assert _fresh_render(memory_dir).decode() == out["prompt"]
        assert "standard" == out["mode"]
        assert 1 == out["metadata"]["truncation"]["line_count"]
        assert len(out["metadata"]["sha256"]) == 64
        assert Path(out["prompt_path"]).read_text() == out["prompt"]

    def test_path_prints_snapshot_file(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """--path prints the path of a prompt file holding the fresh prompt."""
        memd_prompt("--project", str(git_repo), "--path")
        path = capfdbinary.readouterr().out.decode().strip()

        assert _fresh_render(memory_dir) == Path(path).read_bytes()

    def test_disabled_prints_nothing(
        self,
        isolated_home: Home,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """Disabled memory: no prompt, one stderr line naming the rule, exit 0,
        nothing created, an event emitted."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
        code = memd_prompt("--project", str(git_repo))
        events = list(
            read_events(str(isolated_home.state / "memd" / "telemetry.jsonl"))
        )
        captured = capfdbinary.readouterr()

        assert 0 == code
        assert b"" == captured.out
        assert [True] == [
            b"CLAUDE_CODE_DISABLE_AUTO_MEMORY" in line
            for line in captured.err.splitlines()
        ]
        assert not (isolated_home.claude / "projects").exists()
        assert [("memdir_disabled", True)] == [
            (e["event"], e["disabled_by_env_var"]) for e in events
        ]

    def test_disabled_json(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """--format json says `"enabled": false` and the deciding rule."""
        import json

        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
        code = memd_prompt("--project", str(git_repo), "--format", "json")
        out = json.loads(capfdbinary.readouterr().out)

        assert (0, False, True) == (
            code,
            out["enabled"],
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY" in out["reason"],
        )

    def test_missing_project_is_usage_error(self, tmp_path: Path) -> None:
        """A --project that is not a directory is a UsageError."""
        from memd.errors import UsageError

        with pytest.raises(UsageError):
            memd_prompt("--project", str(tmp_path / "nope"))


class TestWarmPath:
    def test_serves_fresh_snapshot(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """After a render, serve_warm answers with the same bytes as a fresh render."""
        _warm_up(git_repo, memory_dir)
        capfdbinary.readouterr()
        code = prompt_command.serve_warm(["--project", str(git_repo)])

        assert 0 == code
        assert _fresh_render(memory_dir) == capfdbinary.readouterr().out

    def test_edit_falls_back_to_render(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """After an edit the warm path declines and the full path renders anew."""
        _warm_up(git_repo, memory_dir)
        (memory_dir / "MEMORY.md").write_text(INDEX + "- [Role](user_role.md) — role\n")
        capfdbinary.readouterr()

        assert None is prompt_command.serve_warm(["--project", str(git_repo)])
        memd_prompt("--project", str(git_repo))
        assert _fresh_render(memory_dir) == capfdbinary.readouterr().out

    def test_settings_change_makes_record_stale(
        self, isolated_home: Home, git_repo: Path, memory_dir: Path
    ) -> None:
        """A new user settings file (it may move the directory) means a cold run."""
        _warm_up(git_repo, memory_dir)
        (isolated_home.claude / "settings.json").write_text(
            '{"autoMemoryEnabled": false}'
        )

        assert None is prompt_command.serve_warm(["--project", str(git_repo)])

    def test_env_change_makes_record_stale(
        self, git_repo: Path, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A changed CLAUDE_* variable sends the request cold."""
        _warm_up(git_repo, memory_dir)
        monkeypatch.setenv("CLAUDE_CODE_SIMPLE", "1")

        assert None is prompt_command.serve_warm(["--project", str(git_repo)])

    @pytest.mark.parametrize(
        "argv",
        [["--format", "json"], ["--bogus"], ["--mode", "tiny"], ["--project"], ["-h"]],
    )
    def test_declines_other_shapes(self, argv: list[str]) -> None:
        """Argument shapes the warm path does not know go to the full parser."""
        assert None is prompt_command.serve_warm(argv)

    def test_path_and_mode(
        self,
        git_repo: Path,
        memory_dir: Path,
        capfdbinary: pytest.CaptureFixture[bytes],
    ) -> None:
        """`--mode=kairos --path` is answered warm with the kairos snapshot's path."""
        _warm_up(git_repo, memory_dir, "--mode", "kairos")
        capfdbinary.readouterr()
        code = prompt_command.serve_warm(
            [f"--project={git_repo}", "--mode=kairos", "--path"]
        )
        path = capfdbinary.readouterr().out.decode().strip()

        assert 0 == code
        assert path.endswith(f"{os.sep}kairos{os.sep}prompt.md")
        assert _fresh_render(memory_dir, "kairos") == Path(path).read_bytes()

    def test_warm_subprocess_imports_nothing_heavy(
        self, isolated_home: Home, git_repo: Path, memory_dir: Path
    ) -> None:
        """The warm path through memd.cli.main loads none of the forbidden modules."""
        _warm_up(git_repo, memory_dir)
        probe = (
            "import sys\n"
            "before = set(sys.modules)\n"
            "from memd.cli.main import main\n"
            f"code = main(['prompt', '--project', {str(git_repo)!r}])\n"
            "sys.stdout.flush()\n"
            "new = sorted(set(sys.modules) - before)\n"
            "sys.stderr.write('CODE %d\\nNEW %s\\n' % (code, ' '.join(new)))\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            env=isolated_home.env(),
            check=True,
        )
        report = result.stderr.decode().splitlines()
        new = set(report[-1].removeprefix("NEW ").split())

        assert "CODE 0" == report[-2]
        assert _fresh_render(memory_dir) == result.stdout
        assert set() == new & set(FORBIDDEN)
        assert "memd.snapshot.build" not in new
