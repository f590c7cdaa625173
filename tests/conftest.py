"""Shared fixtures: every test gets its own HOME, XDG dirs and git identity."""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.ci_skips import pytest_runtest_makereport  # noqa: F401  (the hook)

# CI is deterministic: the same examples every run and no example database, so
# a landing never fails on a counterexample found by chance. Local runs (and
# bench/) stay randomised and look further; a counterexample they find becomes
# an `@example` on its test. MEMD_HYPOTHESIS_PROFILE picks one by name.
_SHARED = {
    "deadline": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow],
}
settings.register_profile(
    "ci", max_examples=200, derandomize=True, database=None, **_SHARED
)
settings.register_profile("dev", max_examples=400, **_SHARED)
# bench/mutation.py: mutmut runs the same tests many times in one process (so
# the executor check does not apply), and each mutant must be judged alike.
settings.register_profile(
    "mutation",
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "long", max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(
    os.environ.get(
        "MEMD_HYPOTHESIS_PROFILE",
        "ci" if os.environ.get("CI", "").lower() == "true" else "dev",
    )
)


# The suite starts thousands of `memd` processes. Where PYTHONDONTWRITEBYTECODE
# is set (it is where this suite runs), none leaves bytecode behind and each
# compiles memd's ~90 modules again: a third of a short command's CPU.
# Compiled once here, they are read by every process (the variable only
# stops writing).
def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # xdist's workers share the checkout's
        compileall.compile_dir(Path(__file__).parent.parent / "memd", quiet=1)


@dataclass(frozen=True)
class Home:
    """The isolated environment a test runs in."""

    root: Path
    home: Path
    claude: Path  # ~/.claude, the default memory base
    config: Path  # XDG_CONFIG_HOME
    cache: Path  # XDG_CACHE_HOME
    state: Path  # XDG_STATE_HOME
    runtime: Path  # XDG_RUNTIME_DIR

    def env(self, **extra: str) -> dict[str, str]:
        """Return os.environ as the test set it, plus `extra`, for subprocesses."""
        return {**os.environ, **extra}


def make_home(root: Path) -> Home:
    """Create the directories of an isolated environment under `root`."""
    paths = Home(
        root=root,
        home=root / "home",
        claude=root / "home" / ".claude",
        config=root / "xdg-config",
        cache=root / "xdg-cache",
        state=root / "xdg-state",
        runtime=root / "xdg-runtime",
    )
    for path in (paths.home, paths.config, paths.cache, paths.state, paths.runtime):
        path.mkdir(parents=True)
    paths.runtime.chmod(0o700)
    return paths


def isolated_environ(paths: Home, base: dict[str, str]) -> dict[str, str]:
    """`base` without the machine's agent, memd, XDG and git settings, in `paths`."""
    env = {
        name: value
        for name, value in base.items()
        if not name.startswith(
            ("CLAUDE_", "MEMD_", "XDG_", "GIT_", "NOTIFY_SOCKET", "CODEX_", "GEMINI_")
        )
    }
    env.update(
        HOME=str(paths.home),
        XDG_CONFIG_HOME=str(paths.config),
        XDG_CACHE_HOME=str(paths.cache),
        XDG_STATE_HOME=str(paths.state),
        XDG_RUNTIME_DIR=str(paths.runtime),
        # Never read the machine's real managed policy file in tests.
        MEMD_MANAGED_SETTINGS_PATH=str(paths.root / "managed-settings.json"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(paths.root / "gitconfig"),
        MEMD_HYPOTHESIS_PROFILE="ci",  # what subprocesses of tests run
    )
    for kind in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{kind}_NAME"] = "memd tests"
        env[f"GIT_{kind}_EMAIL"] = "tests@memd.invalid"
    return env


@pytest.fixture(name="isolated_home", autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Home:
    paths = make_home(tmp_path_factory.mktemp("home"))
    env = isolated_environ(paths, dict(os.environ))
    for name in set(os.environ) - set(env):
        monkeypatch.delenv(name)
    for name, value in env.items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    return paths


def make_git_repo(repo: Path, env: dict[str, str] | None = None) -> Path:
    """Make `repo` a real git repository with one commit."""
    repo.mkdir()
    git("init", "-q", cwd=repo, env=env)
    (repo / "README.md").write_text("hello\n")
    git("add", "README.md", cwd=repo, env=env)
    git("commit", "-q", "-m", "init", cwd=repo, env=env)
    return repo


def git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run the real git and return its stdout."""
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout


@pytest.fixture(name="git_repo")
def _git_repo(tmp_path: Path) -> Path:
    """A real git repository with one commit."""
    return make_git_repo(tmp_path / "repo")


@pytest.fixture(name="worktree")
def _worktree(git_repo: Path, tmp_path: Path) -> Path:
    """A `git worktree add` of `git_repo`, outside it."""
    path = tmp_path / "wt"
    git("worktree", "add", "-q", str(path), cwd=git_repo)
    return path


@dataclass(frozen=True)
class MemDirMaker:
    """Writes real memory files as bytes, so CRLF, BOM and bad UTF-8 are possible."""

    root: Path

    def write(self, relpath: str, content: str | bytes) -> Path:
        path = self.root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
        return path

    def topic(
        self,
        relpath: str,
        *,
        name: str,
        description: str,
        type: str,
        body: str = "Fact.\n",
    ) -> Path:
        text = (
            f"---\nname: {name}\ndescription: {description}\ntype: {type}\n---\n{body}"
        )
        return self.write(relpath, text)


@pytest.fixture(name="make_memdir")
def _make_memdir(tmp_path: Path) -> MemDirMaker:
    root = tmp_path / "memory"
    root.mkdir()
    return MemDirMaker(root)


SERVICE_STUB_DIR = Path(__file__).resolve().parent / "service_stub"


@pytest.fixture(name="stub")
def _stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the recording systemctl/launchctl/loginctl first on PATH; return its log."""
    log = tmp_path / "stub.log"
    log.touch()
    monkeypatch.setenv("PATH", f"{SERVICE_STUB_DIR}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SERVICE_STUB_LOG", str(log))
    return log


def recorded(log: Path) -> list[str]:
    """The command lines the service stubs recorded, in order."""
    return [line.replace("\t", " ") for line in log.read_text().splitlines()]


NOBODY = 65534  # the throwaway user root drops to where permission bits must apply


def as_nobody(*argv: str) -> list[str]:
    """Prefix `argv` with setpriv so it runs as nobody (for root, which reads anything).

    A missing setpriv is a skip, which CI turns into a failure.
    """
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is not installed")
    return [
        setpriv,
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        *argv,
    ]


SOURCE_ROOT = str(Path(__file__).resolve().parents[1])


def run_without_site(probe: str) -> subprocess.CompletedProcess[str]:
    """Run `python -S -c probe` on the source tree, checked; output as text.

    No site hooks: an editable install's finder imports `functools` and
    `collections` itself, which would hide whether memd's own code loads them.
    """
    return subprocess.run(
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
    )


def sanitized_by_hand(path: str) -> str:
    """REFERENCE.md §2's sanitizePath for a short ASCII path, the oracle for tests.

    Every character that is not ASCII `[A-Za-z0-9]` becomes `-`; nothing else
    happens below 200 units, the only case this oracle accepts.
    """
    assert path.isascii(), path
    assert len(path) <= 200, path
    return "".join(c if c.isalnum() else "-" for c in path)
