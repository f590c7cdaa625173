"""Members of a team: each its own HOME, XDG dirs, git identity and `memd` process.

The remote is a real bare repository; each member runs the installed `memd`
console script as a subprocess, so nothing is shared between them but git.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TOPIC = (
    "---\nname: {name}\ndescription: {description}\ntype: project\n---\n"
    "{body}\n\n**Why:** the team agreed on it.\n**How to apply:** in every change.\n"
)


def topic_text(name: str, body: str = "A fact the whole team relies on.") -> str:
    """Return a topic file that lints without errors."""
    return TOPIC.format(
        name=name, description=f"What the team knows about {name}", body=body
    )


def memd_script() -> str:
    script = Path(sys.executable).with_name("memd")
    if not script.exists():
        pytest.fail(f"no memd console script next to {sys.executable}")
    return str(script)


def git(*args: str, cwd: Path) -> str:
    """Run the real git in `cwd` and return its stdout."""
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@dataclass(frozen=True)
class Member:
    """One person's machine: a HOME, a project, and the `memd` they run."""

    name: str
    root: Path
    project: Path

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GIT_", "MEMD_", "XDG_", "CLAUDE_"))
        }
        env.update(
            HOME=str(self.root / "home"),
            XDG_CONFIG_HOME=str(self.root / "config"),
            XDG_CACHE_HOME=str(self.root / "cache"),
            XDG_STATE_HOME=str(self.root / "state"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=str(self.root / "gitconfig"),
            GIT_AUTHOR_NAME=self.name,
            GIT_COMMITTER_NAME=self.name,
            GIT_AUTHOR_EMAIL=f"{self.name}@team.invalid",
            GIT_COMMITTER_EMAIL=f"{self.name}@team.invalid",
            MEMD_LOG_FORMAT="json",
            MEMD_MANAGED_SETTINGS_PATH=str(self.root / "managed-settings.json"),
        )
        return env

    def memd(
        self, *args: str, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run `memd ARGS` as this member and return the finished process."""
        return subprocess.run(
            [memd_script(), *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [memd_script(), *args],
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def git(self, *args: str) -> str:
        """Run plain git in this member's team dir, as this member."""
        return subprocess.run(
            ["git", *args],
            cwd=self.team,
            env=self.env(),
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def init(self, remote: str) -> subprocess.CompletedProcess[str]:
        return self.memd(
            "team", "init", "--remote", remote, "--project", str(self.project)
        )

    def sync(self) -> subprocess.CompletedProcess[str]:
        return self.memd("team", "sync", "--project", str(self.project))

    @property
    def memory_dir(self) -> Path:
        projects = self.root / "home" / ".claude" / "projects"
        found = list(projects.glob("*/memory"))
        assert len(found) == 1, found
        return found[0]

    @property
    def team(self) -> Path:
        return self.memory_dir / "team"

    def write(self, relpath: str, text: str) -> Path:
        path = self.team / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        return path

    def read(self, relpath: str) -> str:
        return (self.team / relpath).read_text("utf-8")


@dataclass(frozen=True)
class Team:
    remote: Path
    members: tuple[Member, ...]

    @property
    def url(self) -> str:
        return str(self.remote)

    def remote_files(self, branch: str = "main") -> dict[str, str]:
        """Return relpath -> text of every file on the remote branch ({} if none)."""
        has_branch = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", branch],
            cwd=self.remote,
            capture_output=True,
            check=False,
        )
        if has_branch.returncode != 0:
            return {}
        listed = subprocess.run(  # -z: a name git would quote arrives as it is
            ["git", "ls-tree", "-r", "-z", "--name-only", branch],
            cwd=self.remote,
            capture_output=True,
            check=True,
        ).stdout
        names = [n.decode("utf-8", "surrogateescape") for n in listed.split(b"\0")]
        return {
            name: git("show", f"{branch}:{name}", cwd=self.remote)
            for name in names
            if name
        }


def make_team(tmp_path: Path, count: int = 3) -> Team:
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--initial-branch=main", str(remote)],
        check=True,
    )
    members = []
    for name in ("ana", "bob", "cy")[:count]:
        root = tmp_path / name
        project = root / "project"
        project.mkdir(parents=True)
        (root / "home").mkdir()
        members.append(Member(name=name, root=root, project=project))
    return Team(remote=remote, members=tuple(members))


@pytest.fixture(name="team")
def _team(tmp_path: Path) -> Team:
    """A bare remote and three members who have all run `memd team init`."""
    team = make_team(tmp_path)
    for member in team.members:
        done = member.init(team.url)
        assert done.returncode == 0, done.stderr
    return team
