"""The agent profile through the CLI: `memd paths`, `memd status`, `memd prompt`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import sanitize_path
from memd.snapshot.telemetry_sink import read_events
from tests.conftest import Home, git

MEMD = str(Path(sys.executable).with_name("memd"))  # the installed script

OLD_SENTENCE = "Only part of it was loaded. Keep"
NEW_SENTENCE = "Only part of it was loaded: 50 of 250 lines were cut off"


def memd(
    home: Home, *argv: str, cwd: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the installed `memd` in the isolated environment."""
    return subprocess.run(
        [MEMD, *argv],
        cwd=cwd,
        env=home.env(**env),
        capture_output=True,
        text=True,
        check=False,
    )


def pin(home: Home, version: str) -> None:
    config = home.config / "memd" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[agent]\nversion = "{version}"\n')


@pytest.fixture(name="long_index")
def _long_index(isolated_home: Home, git_repo: Path) -> Path:
    """A memory dir whose MEMORY.md has 250 lines, old enough to be served warm."""
    memory = (
        isolated_home.claude
        / "projects"
        / sanitize_path(str(git_repo.resolve()))
        / "memory"
    )
    memory.mkdir(parents=True)
    index = memory / "MEMORY.md"
    index.write_text("".join(f"- [N{i}](n{i}.md) — hook {i}\n" for i in range(1, 251)))
    old = time.time_ns() - 10_000_000_000
    os.utime(index, ns=(old, old))
    os.utime(memory, ns=(old, old))
    return memory


class TestPaths:
    def test_names_the_profile_and_why(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """Text output has the profile line; JSON has profile and reason."""
        text = memd(isolated_home, "paths", cwd=git_repo, PATH="/nonexistent")
        pin(isolated_home, "2.1.112")
        data = json.loads(
            memd(isolated_home, "paths", "--format", "json", cwd=git_repo).stdout
        )

        assert "profile:     2.1.332 (auto: no claude on PATH" in text.stdout
        assert ("2.1.112", "pinned by [agent] version in config.toml") == (
            data["profile"],
            data["profile_reason"],
        )

    def test_says_when_trust_decided(self, isolated_home: Home, git_repo: Path) -> None:
        """A trusted project's settings choose the dir, and `trust:` says why."""
        root = git_repo.resolve()
        settings = root / ".claude" / "settings.json"
        settings.parent.mkdir()
        settings.write_text(json.dumps({"autoMemoryDirectory": "/tmp/memd-proj-mem"}))
        untrusted = memd(isolated_home, "paths", cwd=git_repo).stdout
        (isolated_home.home / ".claude.json").write_text(
            json.dumps({"projects": {str(root): {"hasTrustDialogAccepted": True}}})
        )
        trusted = memd(isolated_home, "paths", cwd=git_repo).stdout

        assert "project settings ignored" in untrusted
        assert "memory dir:  /tmp/memd-proj-mem/" in trusted
        assert (
            f"trust:       trusted project folder {root}: project settings read"
            in trusted
        )

    def test_git_root_follows_the_profile(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """Bare repo holding a `.git`: its worktree is its own root under 2.1.332."""
        bare = git_repo.parent.resolve() / "bare.git"
        git("clone", "-q", "--bare", str(git_repo), str(bare), cwd=git_repo.parent)
        bare_wt = git_repo.parent.resolve() / "bare-wt"
        git("worktree", "add", "-q", str(bare_wt), cwd=bare)
        (bare / ".git").mkdir()
        newest = memd(isolated_home, "paths", "--format", "json", cwd=bare_wt)
        pin(isolated_home, "2.1.112")
        pinned = memd(isolated_home, "paths", "--format", "json", cwd=bare_wt)

        projects = isolated_home.claude / "projects"
        assert (
            f"{projects}/{sanitize_path(str(bare_wt))}/memory/",
            f"{projects}/{sanitize_path(str(bare))}/memory/",
        ) == (
            json.loads(newest.stdout)["memory_dir"],
            json.loads(pinned.stdout)["memory_dir"],
        )

    def test_bad_pin_is_a_config_error(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """An unknown release in config.toml: one stderr line, exit 2."""
        pin(isolated_home, "3.0.0")

        result = memd(isolated_home, "paths", cwd=git_repo)

        assert 2 == result.returncode
        assert 1 == len(result.stderr.strip().splitlines())
        assert "agent.version" in result.stderr


class TestStatus:
    def test_names_the_profile(self, isolated_home: Home, git_repo: Path) -> None:
        """`memd status` says which profile is in force and why."""
        pin(isolated_home, "2.1.112")

        result = memd(isolated_home, "status", "--format", "json", cwd=git_repo)

        data = json.loads(result.stdout)
        assert ("2.1.112", "pinned by [agent] version in config.toml") == (
            data["agent_profile"],
            data["agent_profile_reason"],
        )


class TestPromptFollowsTheProfile:
    def test_profile_change_re_renders(
        self, isolated_home: Home, git_repo: Path, long_index: Path
    ) -> None:
        """A warm 2.1.332 prompt is re-rendered when 2.1.112 is pinned, and back."""
        first = memd(isolated_home, "prompt", cwd=git_repo).stdout
        warm = memd(isolated_home, "prompt", cwd=git_repo).stdout
        pin(isolated_home, "2.1.112")
        pinned = memd(isolated_home, "prompt", cwd=git_repo).stdout
        (isolated_home.config / "memd" / "config.toml").unlink()
        back = memd(isolated_home, "prompt", cwd=git_repo).stdout

        assert NEW_SENTENCE in first
        assert first == warm
        assert OLD_SENTENCE in pinned
        assert NEW_SENTENCE not in pinned
        assert first == back

    def test_agent_upgrade_re_renders(
        self, isolated_home: Home, git_repo: Path, long_index: Path, tmp_path: Path
    ) -> None:
        """Replacing the `claude` binary (an upgrade) changes the profile in force."""
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        claude = bin_dir / "claude"
        claude.write_text("#!/bin/sh\necho '2.1.112 (Claude Code)'\n")
        claude.chmod(0o755)
        path = f"{bin_dir}:/usr/bin:/bin"
        before = memd(isolated_home, "prompt", cwd=git_repo, PATH=path).stdout
        claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
        os.utime(claude, ns=(1_000_000_000, 1_000_000_000))
        after = memd(isolated_home, "prompt", cwd=git_repo, PATH=path).stdout

        assert OLD_SENTENCE in before
        assert NEW_SENTENCE in after

    def test_telemetry_names_the_access_mode(
        self, isolated_home: Home, git_repo: Path, long_index: Path
    ) -> None:
        """memdir_loaded says `files`, and `memd stats` shows it."""
        memd(isolated_home, "prompt", cwd=git_repo)
        stats = memd(isolated_home, "stats", cwd=git_repo).stdout

        events = list(
            read_events(str(isolated_home.state / "memd" / "telemetry.jsonl"))
        )
        assert "files" == events[-1]["memory_access_mode"]
        # the release in words a person uses; the agent's internals stay out (#42)
        assert "; agent release 2.1.332\n" in stats
        assert "access mode" not in stats


class TestLintFollowsTheProfile:
    def test_recall_limit_only_under_2_1_332(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """`memd lint` warns M016 about a 5 KB topic file, unless 2.1.112 is pinned."""
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "MEMORY.md").write_text("- [Big](big.md) — a big memory\n")
        (memory / "big.md").write_text(
            "---\nname: big\ndescription: A big memory about everything\n"
            "type: user\n---\n" + "words and more words\n" * 250
        )

        default = memd(isolated_home, "lint", str(memory), cwd=tmp_path)
        pin(isolated_home, "2.1.112")
        pinned = memd(isolated_home, "lint", str(memory), cwd=tmp_path)

        assert "M016" in default.stdout
        assert "M016" not in pinned.stdout


def test_upgrade_through_a_relinked_launcher(
    isolated_home: Home, git_repo: Path, long_index: Path, tmp_path: Path
) -> None:
    """`claude` re-pointed from versions/2.1.112 to versions/2.1.332 re-renders."""
    versions = tmp_path / "versions"
    versions.mkdir()
    for version in ("2.1.112", "2.1.332"):
        binary = versions / version
        binary.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
        binary.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(versions / "2.1.112")
    path = f"{bin_dir}:/usr/bin:/bin"

    before = memd(isolated_home, "prompt", cwd=git_repo, PATH=path).stdout
    (bin_dir / "claude").unlink()
    (bin_dir / "claude").symlink_to(versions / "2.1.332")
    after = memd(isolated_home, "prompt", cwd=git_repo, PATH=path).stdout

    assert OLD_SENTENCE in before
    assert NEW_SENTENCE in after


class TestEveryCommandResolvesUnderTheProfile:
    """An untrusted project's local settings choose the directory under 2.1.112 only."""

    @pytest.fixture(name="custom")
    def _custom(self, git_repo: Path, tmp_path: Path) -> Path:
        custom = tmp_path / "custom-memory"
        custom.mkdir()
        (git_repo / ".claude").mkdir()
        settings = {"autoMemoryDirectory": str(custom)}
        (git_repo / ".claude" / "settings.local.json").write_text(json.dumps(settings))
        return custom

    @pytest.mark.parametrize(
        ("version", "in_custom"), [("2.1.112", True), ("2.1.332", False)]
    )
    def test_log_writes_where_the_pinned_release_would(
        self,
        isolated_home: Home,
        git_repo: Path,
        custom: Path,
        version: str,
        in_custom: bool,
    ) -> None:
        """`memd log` and `memd.append_log` follow the pin like `memd paths` does."""
        pin(isolated_home, version)
        done = memd(isolated_home, "log", "--project", str(git_repo), "x", cwd=git_repo)
        paths = memd(isolated_home, "paths", "--project", str(git_repo), cwd=git_repo)

        assert 0 == done.returncode, done.stderr
        assert in_custom == any((custom / "logs").rglob("*.md"))
        assert in_custom == (f"memory dir:  {custom}{os.sep}" in paths.stdout)

    @pytest.mark.parametrize(
        ("version", "in_custom"), [("2.1.112", True), ("2.1.332", False)]
    )
    def test_lint_of_a_project_lints_the_pinned_releases_dir(
        self,
        isolated_home: Home,
        git_repo: Path,
        custom: Path,
        version: str,
        in_custom: bool,
    ) -> None:
        """`memd lint <project>` finds the memory dir the release in force uses."""
        (custom / "MEMORY.md").write_text("- [Gone](gone.md) — a file that is not\n")
        default = (
            isolated_home.claude / "projects" / sanitize_path(str(git_repo)) / "memory"
        )
        default.mkdir(parents=True)
        (default / "MEMORY.md").write_text("")
        pin(isolated_home, version)

        done = memd(isolated_home, "lint", str(git_repo), cwd=git_repo)

        assert 0 == done.returncode, done.stderr  # a dangling link is a warning
        assert in_custom == ("gone.md" in done.stdout), done.stdout


def _fake_claude(tmp_path: Path, version: str) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "claude"
    script.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    script.chmod(0o755)
    return f"{bin_dir}:{os.environ['PATH']}"


class TestUnknownRelease:
    def test_status_paths_and_doctor_warn_for_a_release_past_every_profile(
        self, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        path = _fake_claude(tmp_path, "2.1.400")

        status = memd(isolated_home, "status", cwd=git_repo, PATH=path)
        paths = memd(isolated_home, "paths", cwd=git_repo, PATH=path)
        doctor = memd(
            isolated_home, "doctor", "--format", "json", cwd=git_repo, PATH=path
        )

        assert "  warning: Claude Code 2.1.400 is newer than every release" in (
            status.stdout
        )
        assert "memd: warning: Claude Code 2.1.400 is newer" in paths.stderr
        agent = next(
            c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "agent"
        )
        assert "warn" == agent["verdict"]
        assert "2.1.400 is newer than every release" in agent["message"]

    def test_doctor_says_a_known_release_is_ok(
        self, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        path = _fake_claude(tmp_path, "2.1.332")

        doctor = memd(
            isolated_home, "doctor", "--format", "json", cwd=git_repo, PATH=path
        )

        agent = next(
            c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "agent"
        )
        assert ("ok", "Claude Code 2.1.332, profile 2.1.332") == (
            agent["verdict"],
            agent["message"],
        )

    def test_doctor_warns_when_a_pin_differs_from_the_release(
        self, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        path = _fake_claude(tmp_path, "2.1.332")
        pin(isolated_home, "2.1.112")

        doctor = memd(
            isolated_home, "doctor", "--format", "json", cwd=git_repo, PATH=path
        )

        agent = next(
            c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "agent"
        )
        assert "warn" == agent["verdict"]
        assert "but memd uses profile 2.1.112 (pinned" in agent["message"]
