"""No silent clean: unreadable memory is reported with the real errno text.

Permissions do not stop root, so as root the `memd` subprocess runs as
`nobody` (via util-linux `setpriv`) over a tree that user can reach; as any
other user it runs as that user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memd import sanitize_path

MEMD = str(Path(sys.executable).parent / "memd")
NOBODY = 65534
IS_ROOT = os.geteuid() == 0
needs_drop = pytest.mark.skipif(
    IS_ROOT and shutil.which("setpriv") is None, reason="root without setpriv"
)
GOOD = (
    "---\nname: user-role\ndescription: Staff SRE who owns the paging rota\n"
    "type: user\n---\nThe user is a staff SRE.\n"
)


@pytest.fixture(name="world")
def _world() -> Iterator[Path]:
    """A temp tree the unprivileged user owns (pytest's tmp_path is root-only)."""
    root = Path(tempfile.mkdtemp(prefix="memd-unreadable-"))
    root.chmod(0o755)
    yield root
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    shutil.rmtree(root)


def _memd(world: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = world / "home"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(world / "config"),
        "XDG_CACHE_HOME": str(world / "cache"),
        "XDG_STATE_HOME": str(world / "state"),
        "MEMD_MANAGED_SETTINGS_PATH": str(world / "managed.json"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    command = [MEMD, *args]
    if IS_ROOT:
        for path in [world, *world.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                   "--clear-groups", *command]  # fmt: skip
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _memory_dir(world: Path) -> Path:
    memory = world / "home" / ".claude" / "projects" / "-srv-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — staff SRE\n")
    (memory / "user_role.md").write_text(GOOD)
    return memory


@needs_drop
class TestUnreadableBase:
    @pytest.mark.parametrize("locked", [".claude", ".claude/projects"])
    def test_lint_reports_f005(self, world: Path, locked: str) -> None:
        """An unreadable base or projects dir is an F005 error, exit 1, errno text."""
        _memory_dir(world)
        (world / "home" / locked).chmod(0o000)

        done = _memd(world, "lint", "--all", "--format", "json")
        found = json.loads(done.stdout)["diagnostics"]

        assert (1, ["F005"], True) == (
            done.returncode,
            [d["code"] for d in found],
            "Permission denied" in found[0]["message"],
        )

    def test_fix_says_so_and_exits_2(self, world: Path) -> None:
        """`memd fix` over an unreadable projects dir: one stderr line, exit 2."""
        _memory_dir(world)
        (world / "home" / ".claude" / "projects").chmod(0o000)

        done = _memd(world, "fix", "--all")

        assert (2, 1, True) == (
            done.returncode,
            len(done.stderr.splitlines()),
            "Permission denied" in done.stderr,
        )

    def test_path_says_permission_denied(self, world: Path) -> None:
        """`memd lint DIR` under a locked parent says permission denied."""
        memory = _memory_dir(world)
        memory.parent.chmod(0o000)

        done = _memd(world, "lint", str(memory))

        assert (1, True, False) == (
            done.returncode,
            "Permission denied" in done.stdout,
            "no such file" in (done.stdout + done.stderr).lower(),
        )

    def test_prompt_warns_once_on_unreadable_index(self, world: Path) -> None:
        """`memd prompt` on an unreadable MEMORY.md warns in one stderr line,
        also when a snapshot is already warm."""
        project = world / "srv-app"
        project.mkdir()
        projects = world / "home" / ".claude" / "projects"
        memory = projects / sanitize_path(str(project)) / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Role](user_role.md) — staff SRE\n")
        (memory / "user_role.md").write_text(GOOD)
        (memory / "MEMORY.md").chmod(0o000)
        # Older than the racy window (as on a loaded machine, where the first
        # call starts seconds after the files were made): the snapshot the
        # first call saves is then fresh, and the second call is served warm.
        aged = time.time() - 60
        for path in [world, *world.rglob("*")]:
            os.utime(path, (aged, aged), follow_symlinks=False)

        _memd(world, "prompt", "--project", str(project))  # renders, saves
        done = _memd(world, "prompt", "--project", str(project))  # a warm snapshot

        assert (0, 1, True, True) == (
            done.returncode,
            len(done.stderr.splitlines()),
            "Permission denied" in done.stderr and "MEMORY.md" in done.stderr,
            "## MEMORY.md" in done.stdout,
        )


class TestNotADirectory:
    def test_projects_is_a_file(self, world: Path) -> None:
        """A projects path that is a file is F005 with ENOTDIR's text, exit 1."""
        claude = world / "home" / ".claude"
        claude.mkdir(parents=True)
        (claude / "projects").write_text("not a directory\n")

        done = _memd(world, "lint", "--all", "--format", "json")
        found = json.loads(done.stdout)["diagnostics"]

        assert (1, ["F005"], True) == (
            done.returncode,
            [d["code"] for d in found],
            "Not a directory" in found[0]["message"],
        )
