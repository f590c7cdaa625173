"""Two real project roots sharing one memory dir; memory a release left behind."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memd.claude_code.paths import auto_mem_path
from memd.cli.main import main
from memd.state import remember_project
from memd.truth.sharing import survey


def memory_in(root: Path, env: dict[str, str] | None = None) -> Path:
    """Create the memory dir the agent gives `root`, with one memory and its index."""
    memory = Path(auto_mem_path(str(root), env))
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "user_role.md").write_text(
        "---\nname: role\ndescription: who the user is and what they work on\n"
        "type: user\n---\nBackend developer.\n"
    )
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    return memory


def state_dir() -> str:
    return os.path.join(os.environ["XDG_STATE_HOME"], "memd")


def doctor(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, str]]]:
    status = main(["doctor", "--format", "json"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    return status, [c for c in checks if "memory dir" in c["name"]]


@pytest.mark.parametrize(
    ("first", "second"),
    [("work/a-b/c", "work/a/b-c"), ("work/café", "work/cafè")],
    ids=["dash-or-slash", "non-ascii-same-length"],
)
class TestShared:
    def test_doctor_fails_with_both_roots_and_the_fix(
        self,
        first: str,
        second: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Two folders the agent names alike: doctor FAILs naming both, with a fix."""
        one, two = tmp_path / first, tmp_path / second
        one.mkdir(parents=True)
        two.mkdir(parents=True)
        assert auto_mem_path(str(one)) == auto_mem_path(str(two))
        memory_in(one)
        remember_project(state_dir(), str(one))
        remember_project(state_dir(), str(two))

        status, checks = doctor(capsys)

        assert 1 == status
        assert ["fail"] == [c["verdict"] for c in checks]
        assert str(one) in checks[0]["message"] or first in checks[0]["message"]
        assert second in checks[0]["message"]
        assert "autoMemoryDirectory" in checks[0]["fix"]

    def test_lint_reports_it_for_each_project(
        self,
        first: str,
        second: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """`memd lint --project` in either project gives D005 naming both roots."""
        one, two = tmp_path / first, tmp_path / second
        one.mkdir(parents=True)
        two.mkdir(parents=True)
        memory_in(one)
        main(["lint", "--project", str(one), "--format", "json"])
        capsys.readouterr()

        main(["lint", "--project", str(two), "--format", "json"])
        found = json.loads(capsys.readouterr().out)["diagnostics"]

        assert ["D005"] == [d["code"] for d in found]
        assert first in found[0]["message"]
        assert second in found[0]["message"]


class TestNotShared:
    def test_worktrees_of_one_repository_share_by_design(
        self, git_repo: Path, worktree: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A repository and its worktree are one project: no FAIL."""
        memory_in(git_repo)
        remember_project(state_dir(), str(git_repo))
        remember_project(state_dir(), str(worktree))

        status, checks = doctor(capsys)

        assert ["ok"] == [c["verdict"] for c in checks]
        assert 0 == status or "fail" not in {c["verdict"] for c in checks}

    def test_a_directory_chosen_in_settings_is_the_persons_choice(
        self, tmp_path: Path
    ) -> None:
        """A user autoMemoryDirectory puts every project in one dir on purpose."""
        one, two = tmp_path / "p" / "one", tmp_path / "p" / "two"
        one.mkdir(parents=True)
        two.mkdir(parents=True)
        settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "mem")}))
        (tmp_path / "mem").mkdir()
        remember_project(state_dir(), str(one))
        remember_project(state_dir(), str(two))

        found = survey(state_dir=state_dir(), memory_dirs=[str(tmp_path / "mem")])

        assert () == found.shared


class TestTranscripts:
    def test_a_root_known_only_from_the_agents_transcripts(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The second root comes from a session transcript's cwd: still a FAIL."""
        one, two = tmp_path / "work" / "a-b" / "c", tmp_path / "work" / "a" / "b-c"
        one.mkdir(parents=True)
        two.mkdir(parents=True)
        memory = memory_in(one)
        remember_project(state_dir(), str(one))
        line = {"type": "user", "cwd": str(two), "sessionId": "s1", "message": {}}
        (memory.parent / "s1.jsonl").write_text(json.dumps(line) + "\n")

        status, checks = doctor(capsys)

        assert 1 == status
        assert "a/b-c" in checks[0]["message"]


class TestMoved:
    def test_memory_left_in_the_old_releases_dir(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """2.1.332 honours CLAUDE_CODE_PROJECT_DIR_NAME; 2.1.112's dir holds memory."""
        root = tmp_path / "code" / "shop"
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        config_home = tmp_path / "claude-config"
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_home))
        old = Path(auto_mem_path(str(root), profile="2.1.112"))
        memory_in(root)  # the new release's dir, before the name is set
        monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "shop")
        new = Path(auto_mem_path(str(root), profile="2.1.332"))
        assert old != new
        new.mkdir(parents=True)
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('[agent]\nversion = "2.1.332"\n')
        remember_project(state_dir(), str(root))

        status, checks = doctor(capsys)

        assert 1 == status
        assert ["moved memory dir"] == [
            c["name"] for c in checks if c["verdict"] == "fail"
        ]
        assert "2.1.112" in checks[0]["message"]
