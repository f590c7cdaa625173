"""The memd-lint pre-commit hook, run by the real `pre-commit` on real commits.

The hook's `files`/`exclude`/`types` come from `.pre-commit-hooks.yaml`; only
its language is `system` here (the installed `memd`), so pre-commit does not
build an environment from the network.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import git

HOOKS = Path(__file__).parents[2] / ".pre-commit-hooks.yaml"
BIN = Path(sys.executable).parent
GOOD = (
    "---\nname: Reviewer role\ndescription: The user reviews backend pull requests"
    "\ntype: user\n---\nThe user reviews backend pull requests.\n"
)
# Claude Code's own files: not memory, and often without frontmatter.
NOT_MEMORY = (
    ".claude/commands/x.md",
    ".claude/agents/x.md",
    ".claude/CLAUDE.md",
    "CLAUDE.md",
    ".claude/skills/deploy/SKILL.md",
    "skills/memory/SKILL.md",
)


def _install(repo: Path) -> None:
    [hook] = yaml.safe_load(HOOKS.read_text())
    local = {**hook, "language": "system", "entry": f"{BIN / 'memd'} lint"}
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git("add", ".pre-commit-config.yaml", cwd=repo)
    git("commit", "-q", "-m", "pre-commit", cwd=repo)
    subprocess.run(
        [str(BIN / "pre-commit"), "install"], cwd=repo, check=True, capture_output=True
    )


def _commit(repo: Path, relpath: str, text: str) -> tuple[int, str]:
    """Commit `relpath` with `text`; return git's exit code and what it printed."""
    path = repo / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git("add", relpath, cwd=repo)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["git", "commit", "-m", f"add {relpath}"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout


@pytest.fixture(name="hooked_repo")
def _hooked_repo(git_repo: Path) -> Path:
    _install(git_repo)
    return git_repo


class TestPreCommitHook:
    @pytest.mark.parametrize("relpath", NOT_MEMORY)
    def test_claude_code_files_pass(self, hooked_repo: Path, relpath: str) -> None:
        """A command, agent, CLAUDE.md or skill without frontmatter commits."""
        code, output = _commit(hooked_repo, relpath, "# Deploy\n\nRun the script.\n")

        assert (0, True) == (code, "memd lint" in output and "Skipped" in output)

    def test_good_memory_passes(self, hooked_repo: Path) -> None:
        """A valid topic file under memory/ is linted and commits."""
        (hooked_repo / "memory").mkdir()
        (hooked_repo / "memory" / "MEMORY.md").write_text(
            "- [Reviewer role](user_role.md) — reviews backend PRs\n"
        )
        git("add", "memory/MEMORY.md", cwd=hooked_repo)
        code, output = _commit(hooked_repo, "memory/user_role.md", GOOD)

        assert (0, True) == (code, "memd lint" in output and "Passed" in output)

    def test_broken_memory_is_blocked(self, hooked_repo: Path) -> None:
        """A team memory without frontmatter fails the commit with M001."""
        code, output = _commit(hooked_repo, "team/feedback_review.md", "Review.\n")

        assert (1, True) == (code, "M001 file has no YAML frontmatter" in output)
