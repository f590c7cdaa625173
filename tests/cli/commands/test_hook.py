"""`memd hook`: real Claude Code payloads piped through the hook subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.agent.paths import resolve_memory_location
from tests.conftest import Home

MEMD = (sys.executable, "-m", "memd")

GOOD_TOPIC = """---
name: Integration tests hit a real database
description: Tests that touch the database must use a real one, never a mock
type: feedback
---
Use the real database in integration tests.

**Why:** a mocked database hid a broken migration last quarter.
**How to apply:** any test under tests/integration.
"""

BAD_TOPIC = """---
name: Integration tests hit a real database
type: feedbak
---
Use the real database.
"""


def run_hook(
    args: list[str], payload: object, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Pipe `payload` (JSON, or raw text) into `memd hook …` and return the result."""
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [*MEMD, "hook", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def post_tool_use_payload(
    project: Path, tool: str, tool_input: dict[str, object]
) -> dict[str, object]:
    """A PostToolUse payload shaped as Claude Code documents it."""
    return {
        "session_id": "abc123",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": {"filePath": tool_input.get("file_path"), "success": True},
        "tool_use_id": "toolu_01",
    }


def session_start_payload(project: Path) -> dict[str, object]:
    """A SessionStart payload shaped as Claude Code documents it."""
    return {
        "session_id": "abc123",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


@pytest.fixture(name="memory_dir")
def _memory_dir(git_repo: Path) -> Path:
    """The real memory directory of `git_repo`, with one good topic file indexed."""
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    (path / "feedback_db.md").write_text(GOOD_TOPIC)
    (path / "MEMORY.md").write_text(
        "- [Real database](feedback_db.md) — integration tests use it\n"
    )
    return path


class TestPostToolUse:
    def test_round_trip_blocks_then_goes_quiet(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A bad memory write is blocked with its reasons; once fixed, silence."""
        target = memory_dir / "feedback_db.md"
        target.write_text(BAD_TOPIC)
        payload = post_tool_use_payload(
            git_repo, "Write", {"file_path": str(target), "content": BAD_TOPIC}
        )

        blocked = run_hook(["post-tool-use"], payload, isolated_home.env())
        target.write_text(GOOD_TOPIC)
        quiet = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert 0 == blocked.returncode
        output = json.loads(blocked.stdout)
        assert "block" == output["decision"]
        assert "feedback_db.md" in output["reason"]
        assert "description" in output["reason"]
        assert "feedbak" in output["reason"]
        assert (0, "") == (quiet.returncode, quiet.stdout)

    def test_edit_with_relative_path_is_checked(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """An Edit whose file_path is relative to cwd is resolved against cwd."""
        (memory_dir / "feedback_db.md").write_text("no frontmatter at all\n")
        relative = os.path.relpath(memory_dir / "feedback_db.md", git_repo)
        payload = post_tool_use_payload(
            git_repo,
            "Edit",
            {"file_path": relative, "old_string": "a", "new_string": "b"},
        )

        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert "block" == json.loads(result.stdout)["decision"]

    def test_file_outside_memory_is_ignored(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A write to an ordinary project file produces no output."""
        (memory_dir / "feedback_db.md").write_text(BAD_TOPIC)
        payload = post_tool_use_payload(
            git_repo,
            "Write",
            {"file_path": str(git_repo / "README.md"), "content": "x"},
        )

        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert (0, "") == (result.returncode, result.stdout)

    def test_bash_touching_memory_dir_is_checked(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A Bash command naming the memory directory re-checks its index."""
        (memory_dir / "MEMORY.md").write_text(
            "\n".join(f"- [e{i}](feedback_db.md) — x" for i in range(250)) + "\n"
        )
        payload = post_tool_use_payload(
            git_repo,
            "Bash",
            {"command": f"echo '- [x](y.md)' >> {memory_dir}/MEMORY.md"},
        )

        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        output = json.loads(result.stdout)
        assert "I002" in output["reason"]

    def test_unrelated_bash_is_ignored(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A Bash command that never names a memory directory produces no output."""
        (memory_dir / "feedback_db.md").write_text(BAD_TOPIC)
        payload = post_tool_use_payload(git_repo, "Bash", {"command": "pytest -q"})

        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert (0, "") == (result.returncode, result.stdout)

    @pytest.mark.parametrize(
        "payload",
        [
            "",
            "not json",
            "[1, 2]",
            '{"tool_name": 5}',
            '{"cwd": 12, "tool_name": "Write", "tool_input": "x"}',
        ],
    )
    def test_malformed_payload_is_silent(
        self, payload: str, isolated_home: Home
    ) -> None:
        """A malformed payload prints nothing and exits 0."""
        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert (0, "") == (result.returncode, result.stdout)


class TestSessionStart:
    def test_clean_memory_says_nothing(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Healthy memory adds no context."""
        result = run_hook(
            ["session-start"], session_start_payload(git_repo), isolated_home.env()
        )

        assert (0, "") == (result.returncode, result.stdout)

    def test_over_budget_index_names_entries_not_loaded(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """An index over 200 lines is reported, naming the lines that are cut."""
        lines = [f"- [Entry {i}](feedback_db.md) — note {i}" for i in range(230)]
        (memory_dir / "MEMORY.md").write_text("\n".join(lines) + "\n")

        result = run_hook(
            ["session-start"], session_start_payload(git_repo), isolated_home.env()
        )

        output = json.loads(result.stdout)["hookSpecificOutput"]
        assert "SessionStart" == output["hookEventName"]
        assert "I002" in output["additionalContext"]
        assert "201-230" in output["additionalContext"]

    def test_inject_prompt_carries_the_rendered_prompt(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """With --inject-prompt the memory prompt, index included, is the context."""
        result = run_hook(
            ["session-start", "--inject-prompt"],
            session_start_payload(git_repo),
            isolated_home.env(),
        )

        context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "## MEMORY.md" in context
        assert "feedback_db.md" in context

    def test_disabled_memory_says_nothing(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """When auto memory is off, the hook is silent even with --inject-prompt."""
        env = isolated_home.env(CLAUDE_CODE_DISABLE_AUTO_MEMORY="1")

        result = run_hook(
            ["session-start", "--inject-prompt"], session_start_payload(git_repo), env
        )

        assert (0, "") == (result.returncode, result.stdout)

    def test_internal_error_is_logged_not_raised(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """A broken memd config: silent, exit 0, a log line on stderr."""
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("this is = = not toml\n")

        result = run_hook(
            ["session-start"], session_start_payload(git_repo), isolated_home.env()
        )

        assert (0, "") == (result.returncode, result.stdout)
        assert "hook_failed" in result.stderr


class TestInstall:
    def run_install(
        self, args: list[str], env: dict[str, str]
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*MEMD, "hook", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    def test_user_install_merges_backs_up_and_uninstalls(
        self, isolated_home: Home
    ) -> None:
        """Install merges, backs up, is idempotent; uninstall restores."""
        settings = isolated_home.claude / "settings.json"
        settings.parent.mkdir(parents=True)
        original = {
            "model": "opus",
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say hi"}]}]},
        }
        settings.write_text(json.dumps(original))

        first = self.run_install(["install", "--user"], isolated_home.env())
        installed = json.loads(settings.read_text())
        backup = json.loads(
            (isolated_home.claude / "settings.json.memd-backup").read_text()
        )
        second = self.run_install(["install"], isolated_home.env())
        removed = self.run_install(["uninstall", "--user"], isolated_home.env())

        assert 0 == first.returncode, first.stderr
        assert original == backup
        assert "opus" == installed["model"]
        assert {"Stop", "SessionStart", "PostToolUse"} == set(installed["hooks"])
        assert "already installed" in second.stdout
        assert 0 == removed.returncode
        assert original == json.loads(settings.read_text())

    def test_project_dry_run_writes_nothing(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """--dry-run prints the diff and leaves no file behind."""
        result = self.run_install(
            ["install", "--project", str(git_repo), "--dry-run"], isolated_home.env()
        )

        assert 0 == result.returncode
        assert "hook post-tool-use" in result.stdout
        assert not (git_repo / ".claude" / "settings.local.json").exists()

    def test_invalid_settings_are_left_untouched(self, isolated_home: Home) -> None:
        """Settings that are not JSON: exit 2, one line, file not rewritten."""
        settings = isolated_home.claude / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text("{not json")

        result = self.run_install(["install"], isolated_home.env())

        assert 2 == result.returncode
        assert 1 == len(result.stderr.strip().splitlines())
        assert "{not json" == settings.read_text()
