"""Machines for personal sync: each its own HOME, clone path and `memd` process.

One user, three machines: a Linux workstation (``home/ana``), a Mac-like
laptop (``Users/ana-mac``) and a container (``workspace``). Each clones the
same repository at its own absolute path, so the agent's munged memory dir
differs on each; only the bare remote is shared.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.team.conftest import Member

# The project every personal-sync test syncs, and its folder in the repository.
IDENTITY = "github.com/ana/app"
FOLDER = f"projects/{IDENTITY}/"

TOPIC = (
    "---\nname: {name}\ndescription: What I know about {name}\ntype: user\n---\n"
    "{body}\n"
)


def topic_text(name: str, body: str = "A fact worth keeping.") -> str:
    return TOPIC.format(name=name, body=body)


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout


@dataclass(frozen=True)
class Machine(Member):
    """A team member's machine set-up, used by one person: the same isolation."""

    def env(self, **extra: str) -> dict[str, str]:
        env = super().env()
        env.update(
            XDG_RUNTIME_DIR=str(self.root / "runtime"),
            GIT_AUTHOR_EMAIL=f"{self.name}@machines.invalid",
            GIT_COMMITTER_EMAIL=f"{self.name}@machines.invalid",
            MEMD_WATCH_PROJECTS=str(self.project),
        )
        env.update(extra)
        return env

    def memd(  # type: ignore[override]
        self, *args: str, cwd: Path | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """Run `memd` as this machine, in `cwd` (default: its root, no project)."""
        return subprocess.run(
            [str(Path(sys.executable).with_name("memd")), *args],
            env=self.env(**extra),
            cwd=cwd or self.root,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def popen(  # type: ignore[override]
        self, *args: str, **extra: str
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(Path(sys.executable).with_name("memd")), *args],
            env=self.env(**extra),
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def expected_memory_dir(self) -> Path:
        """The dir the agent reads: the munged path of this machine's clone."""
        munged = "".join(c if c.isalnum() else "-" for c in str(self.project))
        return self.root / "home" / ".claude" / "projects" / munged / "memory"

    def write(self, relpath: str, text: str) -> Path:  # into memory, not team/
        path = self.expected_memory_dir() / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        return path

    def read(self, relpath: str) -> str:  # from memory, not team/
        return (self.expected_memory_dir() / relpath).read_text("utf-8")

    def files(self) -> dict[str, str]:
        base = self.expected_memory_dir()
        return {
            p.relative_to(base).as_posix(): p.read_text("utf-8")
            for p in sorted(base.rglob("*.md"))
            if not any(part.startswith(".") for part in p.relative_to(base).parts)
        }


@dataclass(frozen=True)
class Machines:
    remote: Path
    all: tuple[Machine, ...]

    @property
    def url(self) -> str:
        return str(self.remote)

    def remote_files(self) -> dict[str, str]:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "main"],
            cwd=self.remote,
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            return {}
        names = git("ls-tree", "-r", "--name-only", "main", cwd=self.remote).split()
        return {n: git("show", f"main:{n}", cwd=self.remote) for n in names}


def make_machines(tmp_path: Path) -> Machines:
    remote = tmp_path / "personal.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    source = tmp_path / "source"
    source.mkdir()
    git("init", "-q", cwd=source)
    (source / "README.md").write_text("app\n")
    git("add", "README.md", cwd=source)
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "-m",
        "root",
        cwd=source,
    )
    layout = {
        "linux": ("linux", "home/ana/src/app"),
        "mac": ("mac", "Users/ana-mac/Code/app"),
        "container": ("container", "workspace/app"),
    }
    machines = []
    for name, (folder, clone_at) in layout.items():
        root = tmp_path / folder
        project = root / clone_at
        project.parent.mkdir(parents=True)
        (root / "home").mkdir(exist_ok=True)
        (root / "runtime").mkdir(mode=0o700)
        git("clone", "-q", str(source), str(project), cwd=tmp_path)
        git("remote", "set-url", "origin", "git@github.com:ana/app.git", cwd=project)
        machines.append(Machine(name=name, root=root, project=project))
    return Machines(remote=remote, all=tuple(machines))


@pytest.fixture(name="machines")
def _machines(tmp_path: Path) -> Machines:
    return make_machines(tmp_path)


def session_start(machine: Machine, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run the real SessionStart hook as `machine`, for a session in its project."""
    import json

    payload = json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "SessionStart",
            "cwd": str(machine.project),
        }
    )
    return subprocess.run(
        [str(Path(sys.executable).with_name("memd")), "hook", "session-start"],
        input=payload,
        env=machine.env(**extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def synced(machine: Machine) -> subprocess.CompletedProcess[str]:
    done = machine.memd("sync")
    assert 0 == done.returncode, done.stdout + done.stderr
    return done
