"""Real projects with real git history and their memory dirs, for memd.truth's tests."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Project:
    """A real git repository the tests commit to, and the agent's memory dir for it."""

    root: Path
    memory: Path

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *args],
            cwd=self.root,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout

    def write(self, relpath: str, text: str) -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def commit(self, message: str, *, date: str | None = None) -> str:
        """Commit everything (removals too) and return the short sha."""
        self.git("add", "-A")
        env = {}
        if date is not None:
            env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        subprocess.run(
            ["git", "commit", "-q", "-m", message],
            cwd=self.root,
            check=True,
            capture_output=True,
            env={**os.environ, **env},
        )
        return self.git("rev-parse", "--short", "HEAD").strip()

    def memory_file(self, relpath: str, body: str, *, kind: str = "reference") -> Path:
        text = (
            f"---\nname: {relpath}\ndescription: what {relpath} remembers about the "
            f"code\ntype: {kind}\n---\n{body}"
        )
        path = self.memory / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        index = self.memory / "MEMORY.md"
        entries = index.read_text() if index.exists() else ""
        index.write_text(entries + f"- [{relpath}]({relpath}) — notes\n")
        return path


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Project:
    """An empty git repository at tmp/code/webshop, and its memory dir."""
    from memd.claude_code.paths import auto_mem_path

    root = tmp_path / "code" / "webshop"
    root.mkdir(parents=True)
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q"], cwd=root, check=True
    )
    memory = Path(auto_mem_path(str(root)))
    memory.mkdir(parents=True)
    return Project(root=root, memory=memory)
