"""Choosing the agent profile: a config pin, or a real `claude --version` probe."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memd.claude_code.choice import CACHE_NAME, choose_profile
from tests.conftest import Home


def fake_claude(bin_dir: Path, version: str, *, calls: Path | None = None) -> Path:
    """Write an executable `claude` that prints `version` (and counts its calls)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "claude"
    count = f'echo x >> "{calls}"\n' if calls is not None else ""
    script.write_text(f"#!/bin/sh\n{count}echo '{version}'\n")
    script.chmod(0o755)
    return script


class TestChooseProfile:
    def test_pin_wins(self, isolated_home: Home, tmp_path: Path) -> None:
        """A pinned release applies without probing."""
        fake_claude(tmp_path / "bin", "2.1.332 (Claude Code)")
        env = {**os.environ, "PATH": str(tmp_path / "bin")}

        choice = choose_profile("2.1.112", env, str(isolated_home.cache))

        assert ("2.1.112", None) == (choice.profile.version, choice.binary)
        assert "pinned" in choice.reason

    def test_no_agent_on_path_gives_newest(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """No `claude` on PATH: the newest profile, and the reason says so."""
        env = {**os.environ, "PATH": str(tmp_path / "empty")}

        choice = choose_profile("auto", env, str(isolated_home.cache))

        assert "2.1.332" == choice.profile.version
        assert "no claude on PATH" in choice.reason

    @pytest.mark.parametrize(
        ("output", "expected"),
        [
            ("2.1.332 (Claude Code)", "2.1.332"),
            ("2.1.250 (Claude Code)", "2.1.112"),
            ("2.2.0 (Claude Code)", "2.1.332"),
            ("garbage", "2.1.332"),
        ],
    )
    def test_probe_picks_newest_not_newer(
        self, isolated_home: Home, tmp_path: Path, output: str, expected: str
    ) -> None:
        """The installed agent's version picks the newest profile not newer."""
        binary = fake_claude(tmp_path / "bin", output)
        env = {**os.environ, "PATH": str(tmp_path / "bin")}

        choice = choose_profile("auto", env, str(isolated_home.cache))

        assert (expected, str(binary)) == (choice.profile.version, choice.binary)

    def test_probe_is_cached_by_the_binary_stat(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """A second choice reads the cache; an upgraded binary is probed again."""
        calls = tmp_path / "calls"
        binary = fake_claude(tmp_path / "bin", "2.1.112", calls=calls)
        env = {**os.environ, "PATH": str(tmp_path / "bin")}
        cache = str(isolated_home.cache)

        first = choose_profile("auto", env, cache)
        second = choose_profile("auto", env, cache)
        fake_claude(tmp_path / "bin", "2.1.332 (Claude Code)  ", calls=calls)
        os.utime(binary, ns=(1_000_000_000, 1_000_000_000))
        upgraded = choose_profile("auto", env, cache)

        assert ("2.1.112", "2.1.112", "2.1.332") == (
            first.profile.version,
            second.profile.version,
            upgraded.profile.version,
        )
        assert 2 == len(calls.read_text().splitlines())
        assert (isolated_home.cache / CACHE_NAME).is_file()

    def test_hanging_agent_is_bounded(
        self, isolated_home: Home, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An agent that never answers costs the timeout, then the newest profile."""
        import memd.claude_code.choice as choice_module

        monkeypatch.setattr(choice_module, "PROBE_TIMEOUT_SECONDS", 0.3)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "claude").write_text("#!/bin/sh\nexec sleep 30\n")
        (bin_dir / "claude").chmod(0o755)
        env = {**os.environ, "PATH": str(bin_dir)}

        choice = choose_profile("auto", env, str(isolated_home.cache))

        assert "2.1.332" == choice.profile.version
        assert "gave no version" in choice.reason


class TestTrueReasons:
    @pytest.mark.parametrize(
        ("output", "profile", "reason", "warns"),
        [
            ("2.1.400 (Claude Code)", "2.1.332", "newer than every profile", True),
            ("2.0.5 (Claude Code)", "2.1.112", "older than every profile", True),
            ("2.1.200 (Claude Code)", "2.1.112", "the newest profile before it", False),
            ("2.1.332 (Claude Code)", "2.1.332", "its own profile", False),
        ],
    )
    def test_reason_and_warning(
        self,
        isolated_home: Home,
        tmp_path: Path,
        output: str,
        profile: str,
        reason: str,
        warns: bool,
    ) -> None:
        """Outside the known releases a warning; a reason that is true in all four."""
        fake_claude(tmp_path / "bin", output)
        env = {**os.environ, "PATH": str(tmp_path / "bin")}

        choice = choose_profile("auto", env, str(isolated_home.cache))

        assert profile == choice.profile.version
        assert reason in choice.reason
        assert "not newer than it" not in choice.reason
        assert warns == (choice.warning is not None)

    def test_the_warning_names_the_release_and_what_memd_assumes(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        fake_claude(tmp_path / "bin", "2.1.400 (Claude Code)")
        env = {**os.environ, "PATH": str(tmp_path / "bin")}

        choice = choose_profile("auto", env, str(isolated_home.cache))

        assert choice.warning is not None
        assert choice.warning.startswith(
            "Claude Code 2.1.400 is newer than every release memd knows"
            " (2.1.112, 2.1.332); memd assumes it behaves as 2.1.332"
        )
