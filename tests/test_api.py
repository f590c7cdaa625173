"""The Python API: load_memory_prompt, lint_path and append_log on real directories."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

import memd
from memd.claude_code.paths import resolve_memory_location
from memd.snapshot.build import load_and_build


@pytest.fixture(name="memory_dir")
def _memory_dir(git_repo: Path) -> Path:
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    (path / "user_role.md").write_text(
        "---\nname: Role\ndescription: The user is a data engineer on the ingest team\n"
        "type: user\n---\nData engineer.\n"
    )
    (path / "MEMORY.md").write_text("- [Role](user_role.md) — data engineer, ingest\n")
    return path


class TestLoadMemoryPrompt:
    def test_equals_a_fresh_render_cold_and_warm(
        self, git_repo: Path, memory_dir: Path
    ) -> None:
        """The prompt equals a fresh render, both when rendered and when served warm."""
        expected = load_and_build(str(memory_dir), "standard").text

        cold = memd.load_memory_prompt(git_repo)
        warm = memd.load_memory_prompt(str(git_repo))

        assert expected == cold
        assert expected == warm

    def test_sees_an_edit(self, git_repo: Path, memory_dir: Path) -> None:
        """An index edit after the first call shows in the next one."""
        memd.load_memory_prompt(git_repo)
        (memory_dir / "MEMORY.md").write_text(
            "- [Role](user_role.md) — now on platform\n"
        )

        prompt = memd.load_memory_prompt(git_repo)

        assert prompt is not None
        assert "now on platform" in prompt

    def test_disabled_memory_gives_none(
        self, git_repo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With auto memory switched off, there is no prompt."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")

        assert memd.load_memory_prompt(git_repo) is None

    def test_missing_project_raises_and_creates_nothing(
        self, tmp_path: Path, isolated_home
    ) -> None:  # type: ignore[no-untyped-def]
        """A project path that does not exist raises, as lint_path does."""
        missing = tmp_path / "nonexistent"

        with pytest.raises(memd.MemdError, match="no such directory"):
            memd.load_memory_prompt(missing)
        with pytest.raises(memd.MemdError, match="no such file"):
            memd.lint_path(missing)
        assert not (isolated_home.claude / "projects").exists()

    def test_unknown_mode_is_an_error(self, git_repo: Path) -> None:
        """A mode memd does not know is a ValueError, not a silent default."""
        with pytest.raises(ValueError, match="unknown mode"):
            memd.load_memory_prompt(git_repo, mode="tiny")

    def test_kairos_mode_names_the_log_pattern(self, git_repo: Path) -> None:
        """KAIROS mode gives the daily-log path as a pattern, never today's date."""
        prompt = memd.load_memory_prompt(git_repo, mode="kairos")

        assert prompt is not None
        assert "logs/YYYY/MM/YYYY-MM-DD.md" in prompt
        assert datetime.date.today().isoformat() not in prompt


class TestLintPath:
    def test_returns_diagnostics_for_a_bad_file(self, memory_dir: Path) -> None:
        """A topic file with an invalid type gives an error Diagnostic."""
        (memory_dir / "user_role.md").write_text(
            "---\nname: Role\ndescription: The user is a data engineer on ingest\n"
            "type: usr\n---\nx\n"
        )

        found = memd.lint_path(memory_dir)

        codes = [(d.code, d.severity) for d in found]
        assert ("M008", memd.Severity.ERROR) in codes
        assert all(isinstance(d, memd.Diagnostic) for d in found)

    def test_clean_project_root_has_no_errors(
        self, git_repo: Path, memory_dir: Path
    ) -> None:
        """A project root resolves to its memory directory, which is clean."""
        found = memd.lint_path(git_repo)

        assert [] == [d for d in found if d.severity is memd.Severity.ERROR]


class TestAppendLog:
    def test_appends_a_timestamped_bullet(self, git_repo: Path) -> None:
        """The entry lands in today's log as `- HH:MM text`."""
        now = datetime.datetime(2026, 11, 29, 9, 5).astimezone()

        path = memd.append_log(git_repo, "decided to pin numpy", now=now)

        assert path is not None
        assert path.endswith("logs/2026/11/2026-11-29.md")
        assert "- 09:05 decided to pin numpy\n" in Path(path).read_text()

    def test_disabled_memory_writes_nothing(
        self, git_repo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With auto memory off nothing is written and None comes back."""
        monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "true")

        assert memd.append_log(git_repo, "x") is None


class TestTheEnvironment:
    """The three calls take the same `env`, and only what they are given counts."""

    def test_every_call_takes_a_keyword_env(self) -> None:
        """load_memory_prompt, lint_path and append_log all accept `env=None`."""
        import inspect

        calls = (memd.load_memory_prompt, memd.lint_path, memd.append_log)
        params = [inspect.signature(call).parameters.get("env") for call in calls]

        assert [("KEYWORD_ONLY", None)] * 3 == [
            (p.kind.name, p.default) if p is not None else None for p in params
        ]

    def test_a_given_env_decides_the_memory_directory(
        self, git_repo: Path, tmp_path: Path
    ) -> None:
        """All three follow the directory override in `env`, not os.environ's."""
        import os

        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "bad.md").write_text(
            "---\nname: Bad\ndescription: d\ntype: usr\n---\nx\n"
        )
        env = {**os.environ, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": str(elsewhere)}
        now = datetime.datetime(2026, 11, 29, 9, 5).astimezone()

        found = memd.lint_path(git_repo, env=env)
        log = memd.append_log(git_repo, "noted", now=now, env=env)
        prompt = memd.load_memory_prompt(git_repo, env=env)

        assert "M008" in {d.code for d in found}
        assert str(elsewhere / "logs/2026/11/2026-11-29.md") == log
        assert prompt is not None
        assert str(elsewhere) in prompt

    def test_a_given_env_can_switch_memory_off(self, git_repo: Path) -> None:
        """append_log honours CLAUDE_CODE_DISABLE_AUTO_MEMORY from `env` alone."""
        import os

        env = {**os.environ, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}

        assert memd.append_log(git_repo, "x", env=env) is None
        assert memd.load_memory_prompt(git_repo, env=env) is None
