"""What the e2e tests share: a project for the agent, memd's own view, and the
text the agent sent.

`Project` is a real git repository under the test's HOME (tests/conftest.py
isolates HOME and XDG), with memd's idea of its memory dir. `agent_index`
reads the MEMORY.md the agent loaded out of its first user message
(REFERENCE.md "Running the real releases": "Contents of <dir>/MEMORY.md
(user's auto-memory, persists across conversations):"); `memd_index` reads
the same from `memd prompt`, the command that serves memd's snapshot.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from memd.claude_code.profile import AgentProfile, parse_version, profile_for_version
from tests.conftest import isolated_environ, make_git_repo, make_home
from tests.e2e.model_server import ScriptedModel, Turn
from tests.e2e.releases import ClaudeRun, Release, run_claude

_T = TypeVar("_T")

MEMD = [str(Path(sys.executable).with_name("memd"))]  # the installed script
_CONTENTS = "(user's auto-memory, persists across conversations):\n\n"
# What follows the index in the first user message, per release.
_AFTER_INDEX = ("\n# currentDate\n", "\n</system-reminder>")


def memd_profile(release: Release) -> AgentProfile:
    """Return the profile memd uses for `release` (the newest not newer than it)."""
    return profile_for_version(parse_version(release.version))


@dataclass(frozen=True, slots=True)
class Project:
    """A git repository the agent runs in, and memd's answer for its memory."""

    root: Path
    release: Release
    base_env: Mapping[str, str] | None = None  # None: os.environ, as the test set it

    @property
    def env(self) -> dict[str, str]:
        """The isolated environment, with memd pinned to the release."""
        return {
            **(os.environ if self.base_env is None else self.base_env),
            "MEMD_AGENT_VERSION": memd_profile(self.release).version,
        }

    def memd(
        self, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run the real memd CLI with `args` (checked), in the project.

        Output is decoded by hand: text mode would turn the CRLF memd prints
        into LF and hide a difference.
        """
        done = subprocess.run(
            [*MEMD, *args],
            cwd=cwd or self.root,
            env=dict(env or self.env),
            capture_output=True,
            check=True,
            timeout=120,
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )

    def memory_dir(
        self, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> Path:
        """Return the memory dir `memd paths --format json` names from `cwd`."""
        import json

        out = self.memd("paths", "--format", "json", env=env, cwd=cwd).stdout
        return Path(json.loads(out)["memory_dir"])

    def write_index(self, content: bytes) -> Path:
        memory = self.memory_dir()
        memory.mkdir(parents=True, exist_ok=True)
        index = memory / "MEMORY.md"
        index.write_bytes(content)
        return index

    def run_agent(
        self,
        turns: Sequence[Turn],
        *,
        prompt: str = "go on",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> tuple[ScriptedModel, ClaudeRun]:
        """Run the release once against a model that plays `turns`."""
        with ScriptedModel(turns) as model:
            run = run_claude(
                self.release,
                prompt,
                env=model.env(dict(env or self.env)),
                cwd=cwd or self.root,
                args=args,
            )
        assert run.returncode == 0, f"claude exited {run.returncode}: {run.stderr}"
        assert model.unknown == [] or all(
            r.method == "HEAD" and r.path == "/" for r in model.unknown
        ), f"unexpected traffic: {[(r.method, r.path) for r in model.unknown]}"
        return model, run


def two_at_a_time(
    release: Release,
    factory: pytest.TempPathFactory,
    cases: Sequence[str],
    run: Callable[[Project, str], _T],
) -> dict[str, Future[_T]]:
    """Run `run(project, case)` for each case, two at a time (CI's time: a run is
    mostly process start-up), each in a fresh repository under its own HOME
    (`project.root.parent` is that case's own folder). A case's failure is
    raised by its future alone.
    """

    def one(case: str) -> _T:
        root = factory.mktemp(f"case-{case}")
        env = isolated_environ(make_home(root), dict(os.environ))
        repo = make_git_repo(root / "repo", env)
        return run(Project(root=repo, release=release, base_env=env), case)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {case: pool.submit(one, case) for case in cases}


def agent_index(model: ScriptedModel) -> tuple[str, str] | None:
    """Return (memory dir, index text) the agent loaded, or None without one."""
    user = model.first_user_text()
    start = user.find(_CONTENTS)
    if start < 0:
        return None
    header = user[: start - 1].rsplit("Contents of ", 1)[1]
    directory = header.removesuffix("/MEMORY.md")
    body = user[start + len(_CONTENTS) :]
    ends = [body.find(marker) for marker in _AFTER_INDEX if marker in body]
    assert ends, f"no end of the index in {body[-400:]!r}"
    return directory, body[: min(ends)]


def memd_index(project: Project, env: Mapping[str, str] | None = None) -> str | None:
    """Return the index `memd prompt` shows, or None when it says the index is empty."""
    from memd.claude_code.wording import INDEX_EMPTY

    prompt = project.memd("prompt", env=env).stdout
    shown = prompt.rsplit("## MEMORY.md\n\n", 1)[1].removesuffix("\n")
    return None if shown == INDEX_EMPTY else shown
