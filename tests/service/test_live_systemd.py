"""`memd service install` under a real systemd user manager, for a throwaway user.

The wheel `python -m build` made is installed into a venv of that user, and
the real `memd service install` writes and starts the unit. The tests run in
file order against one manager: a failed start first, then a good install,
status text, reload, a SIGKILL and the uninstall.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memd.service.install import journal_running
from tests.service.conftest import one_at_a_time, wheel_in
from tests.service.usermanager import UserManager, why_unavailable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.slow

UNAVAILABLE = why_unavailable()
if UNAVAILABLE is not None:
    pytest.skip(f"no live systemd user manager: {UNAVAILABLE}", allow_module_level=True)

UNIT = "memd.service"


def _user_python(manager: UserManager) -> str:
    """Return a Python >= 3.11 the throwaway user can run (root's may be in /root)."""
    candidates = [os.path.realpath(sys.executable), "/usr/bin/python3"]
    for python in dict.fromkeys(candidates):
        check = "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))"
        if manager.run(python, "-c", check).returncode == 0:
            return python
    pytest.skip(f"the test user can run none of {candidates} (Python >= 3.11)")


@pytest.fixture(name="live_lock", scope="module")
def _live_lock() -> Iterator[None]:
    with one_at_a_time("systemd-user-manager"):
        yield


@pytest.fixture(name="live", scope="module")
def _live(dist_dir: Path, live_lock: None) -> Iterator[UserManager]:
    manager = UserManager(name=f"memdt{os.getpid() % 100000}")
    try:
        manager.start()
        wheel = manager.home / wheel_in(dist_dir).name
        shutil.copy(wheel_in(dist_dir), wheel)
        os.chown(wheel, manager.uid, -1)
        venv = manager.home / "venv"
        made = manager.run(_user_python(manager), "-m", "venv", str(venv))
        assert 0 == made.returncode, made.stderr
        pip_env = [f"{k}={v}" for k, v in os.environ.items() if k.startswith("PIP_")]
        pip = manager.run(
            "env", *pip_env, str(venv / "bin/pip"), "install", "-q", str(wheel),
            timeout=300,
        )  # fmt: skip
        assert 0 == pip.returncode, pip.stderr[-2000:]
        manager.extra_path = str(venv / "bin")
        yield manager
    finally:
        manager.stop()


def _wait_for(
    what: str,
    check: Callable[[], dict[str, str]],
    want: Callable[[dict[str, str]], bool],
) -> dict[str, str]:
    deadline = time.monotonic() + 20
    seen = check()
    while not want(seen):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {seen}")
        time.sleep(0.2)
        seen = check()
    return seen


def _unit_file(live: UserManager) -> Path:
    return live.home / ".config/systemd/user" / UNIT


class TestLiveUserManager:
    """In file order, against one manager: each test starts where the last ended."""

    def test_failed_start_names_the_cause_and_keeps_the_unit(
        self, live: UserManager
    ) -> None:
        """A unit that cannot start: exit 2, systemd's result, status lines, a hint."""
        dropin = live.home / ".config/systemd/user/memd.service.d"
        live.write(
            dropin / "broken.conf",
            "[Service]\nWorkingDirectory=/nonexistent-memd-test\n",
        )

        result = live.run("memd", "service", "install")

        shutil.rmtree(dropin)
        lines = result.stderr.splitlines()
        assert 2 == result.returncode, result.stdout + result.stderr
        assert "status=200/CHDIR" in lines[0]
        assert any("memd.service" in line for line in lines[1:-1])
        assert lines[-1].startswith("hint: the unit stays at ")
        assert True is _unit_file(live).is_file()

    def test_install_starts_it_and_ready_sets_the_status(
        self, live: UserManager
    ) -> None:
        """After install the unit is active; StatusText is the daemon's READY line."""
        result = live.run("memd", "service", "install")

        assert 0 == result.returncode, result.stdout + result.stderr
        shown = live.show(UNIT, "ActiveState", "SubState", "StatusText", "Type")
        assert {
            "ActiveState": "active",
            "SubState": "running",
            "StatusText": "watching 0 memory dirs, 0 lint errors",
            "Type": "notify",
        } == shown

    def test_logs_reach_the_journal_or_the_log_file(self, live: UserManager) -> None:
        """`memd service status` shows the daemon's log lines from where they went."""
        result = live.run("memd", "service", "status")

        log_file = live.home / ".local/state/memd/memd.log"
        if not journal_running():
            assert f"# last log lines: {log_file}" in result.stdout
            assert '"event": "daemon_ready"' in log_file.read_text()
        assert '"event": "daemon_ready"' in result.stdout

    def test_a_bad_memory_file_shows_in_status_text(self, live: UserManager) -> None:
        """A topic file without frontmatter turns up as a lint error in StatusText."""
        memory = live.home / ".claude/projects/-srv-app/memory"
        live.write(memory / "broken.md", "just a body, no frontmatter\n")
        live.write(memory / "MEMORY.md", "- [Broken](broken.md) — no frontmatter\n")

        shown = _wait_for(
            "StatusText",
            lambda: live.show(UNIT, "StatusText"),
            lambda s: s["StatusText"] == "watching 1 memory dirs, 1 lint errors",
        )

        assert "watching 1 memory dirs, 1 lint errors" == shown["StatusText"]

    def test_it_lints_for_the_users_hooks(self, live: UserManager) -> None:
        """A hook in the user's session reaches the unit's daemon: its socket is in
        the unit's RuntimeDirectory, where the session's XDG_RUNTIME_DIR points."""
        memory = live.home / ".claude/projects/-srv-app/memory"
        script = (
            "import os, sys\n"
            "from memd.hook_lint import lint_by_daemon\n"
            "found = lint_by_daemon(sys.argv[1], None, os.environ)\n"
            "print(None if found is None else sorted({f['path'] for f in found}))\n"
        )

        result = live.run(
            str(Path(live.extra_path) / "python"), "-c", script, str(memory)
        )

        assert "['broken.md']" == result.stdout.strip(), result.stderr

    def test_reload_sends_sighup_and_memd_reloads(self, live: UserManager) -> None:
        """`systemctl --user reload` keeps the same process, which re-reads its config.

        SIGHUP's default action would end the process; memd catches it instead.
        """
        before = live.show(UNIT, "MainPID", "NRestarts")
        config = live.home / ".config/memd/config.toml"
        live.write(config, "[watch]\nsettle_seconds = 0.3\n")

        result = live.run("systemctl", "--user", "reload", UNIT)

        assert 0 == result.returncode, result.stderr
        _wait_for(
            "config_reloaded in the logs",
            lambda: {"status": live.run("memd", "service", "status").stdout},
            lambda s: '"event": "config_reloaded"' in s["status"],
        )
        assert {**before, "ActiveState": "active"} == live.show(
            UNIT, "MainPID", "NRestarts", "ActiveState"
        )

    def test_sigkill_brings_it_back(self, live: UserManager) -> None:
        """A killed daemon is restarted (Restart=on-failure) and NRestarts goes up."""
        before = live.show(UNIT, "MainPID", "NRestarts")

        os.kill(int(before["MainPID"]), signal.SIGKILL)

        after = _wait_for(
            "restart after SIGKILL",
            lambda: live.show(UNIT, "MainPID", "NRestarts", "ActiveState"),
            lambda s: (
                s["ActiveState"] == "active"
                and s["MainPID"] not in ("0", before["MainPID"])
            ),
        )
        assert int(before["NRestarts"]) + 1 == int(after["NRestarts"])

    def test_uninstall_removes_everything(self, live: UserManager) -> None:
        """Uninstall stops memd: no unit, no enablement link, nothing loaded."""
        pid = int(live.show(UNIT, "MainPID")["MainPID"])

        result = live.run("memd", "service", "uninstall")

        assert 0 == result.returncode, result.stdout + result.stderr
        wants = live.home / ".config/systemd/user/default.target.wants" / UNIT
        assert (False, False) == (_unit_file(live).exists(), wants.is_symlink())
        assert {"LoadState": "not-found", "ActiveState": "inactive"} == live.show(
            UNIT, "LoadState", "ActiveState"
        )
        assert False is Path(f"/proc/{pid}").exists()

    def test_setup_then_doctor_is_all_green(self, live: UserManager) -> None:
        """A HOME with no memd in it: `memd setup` installs the hooks, the MCP
        server and the service under this live manager, and `memd doctor` then
        passes every check against the daemon the unit started."""
        claude = Path(live.extra_path) / "claude"
        live.write(claude, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n")
        claude.chmod(0o755)
        settings = live.home / ".claude/settings.json"
        live.write(settings, '{\n  "model": "opus"\n}\n')
        before = settings.read_bytes()

        setup = live.run("memd", "setup")
        doctor = live.run("memd", "doctor")

        assert 0 == setup.returncode, setup.stdout + setup.stderr
        assert {"ActiveState": "active", "SubState": "running"} == live.show(
            UNIT, "ActiveState", "SubState"
        )
        verdicts = {line.split()[0] for line in doctor.stdout.splitlines()}
        assert 0 == doctor.returncode, doctor.stdout
        assert {"OK"} == verdicts - {"fix:"}, doctor.stdout
        assert '"PostToolUse"' in settings.read_text()

        undo = live.run("memd", "setup", "--undo")

        assert 0 == undo.returncode, undo.stdout + undo.stderr
        assert before == settings.read_bytes()
        assert False is _unit_file(live).exists()
        assert {"LoadState": "not-found"} == live.show(UNIT, "LoadState")
