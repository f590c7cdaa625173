"""`memd service`: install, uninstall and status against a recording service manager.

systemctl, launchctl and loginctl are replaced by tests/service_stub/record on
PATH; the files memd writes are real, in the test's temp HOME.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli import main as cli
from memd.service import install as service
from tests.conftest import recorded


def unit_path() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "systemd" / "user" / "memd.service"


def plist_path() -> Path:
    return (
        Path(os.environ["HOME"]) / "Library" / "LaunchAgents" / "dev.memd.agent.plist"
    )


def fail_on(
    monkeypatch: pytest.MonkeyPatch, pattern: str, stderr: str, code: int = 1
) -> None:
    monkeypatch.setenv("SERVICE_STUB_FAIL", pattern)
    monkeypatch.setenv("SERVICE_STUB_STDERR", stderr)
    monkeypatch.setenv("SERVICE_STUB_EXIT", str(code))


class TestInstallSystemd:
    def test_dry_run_prints_and_does_nothing(
        self, stub: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run shows the unit and the commands, and writes and runs nothing."""
        code = cli.main(["service", "install", "--dry-run", "--systemd"])

        out = capsys.readouterr().out
        assert 0 == code
        assert f"ExecStart={service.resolve_memd_path()} run" in out
        assert f"# write {unit_path()}:" in out
        assert (
            "systemctl --user daemon-reload\n"
            "systemctl --user enable --now memd.service\n" in out
        )
        assert not unit_path().exists()
        assert [] == recorded(stub)

    def test_writes_the_unit_then_reloads_and_enables(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The unit lands in $XDG_CONFIG_HOME, then daemon-reload, then enable --now."""
        monkeypatch.setenv(
            "CLAUDE_CONFIG_DIR", str(Path(os.environ["HOME"]) / "alt-claude")
        )

        code = cli.main(["service", "install", "--systemd"])

        text = unit_path().read_text()
        assert 0 == code
        assert [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ] == recorded(stub)
        assert f"ExecStart={service.resolve_memd_path()} run\n" in text
        assert (
            f"Environment=CLAUDE_CONFIG_DIR={os.environ['CLAUDE_CONFIG_DIR']}\n" in text
        )
        assert (Path(os.environ["HOME"]) / "alt-claude").is_dir()

    def test_configured_directories_are_created(
        self, stub: Path, tmp_path: Path
    ) -> None:
        """watch.dirs and paths.cache_dir from config.toml exist after install."""
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            f'[watch]\ndirs = ["{tmp_path}/team memory"]\n'
            f'[paths]\ncache_dir = "{tmp_path}/cache"\n'
        )

        cli.main(["service", "install", "--systemd"])

        assert (True, True) == (
            (tmp_path / "team memory").is_dir(),
            (tmp_path / "cache").is_dir(),
        )

    def test_installed_unit_passes_systemd_analyze_verify(self, stub: Path) -> None:
        """The unit install wrote for this machine is valid to systemd itself."""
        cli.main(["service", "install", "--systemd"])
        analyze = shutil.which("systemd-analyze")
        if analyze is None:
            pytest.skip("systemd-analyze is not installed (apt-get install -y systemd)")

        result = subprocess.run(
            [analyze, "verify", "--user", "--man=no", str(unit_path())],
            capture_output=True,
            text=True,
            check=False,
        )

        assert (0, "") == (result.returncode, result.stderr)

    def test_reinstall_with_a_changed_unit_restarts(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An unchanged reinstall only re-enables; a changed one also try-restarts."""
        cli.main(["service", "install", "--systemd"])
        cli.main(["service", "install", "--systemd"])
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/somewhere/else")
        cli.main(["service", "install", "--systemd"])

        assert [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ] * 3 + ["systemctl --user try-restart memd.service"] == recorded(stub)

    def test_unreachable_user_manager_prints_the_manual_commands(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """No user bus: exit 2, the unit stays written and the way on is printed."""
        fail_on(
            monkeypatch, "systemctl --user", "Failed to connect to bus: No medium found"
        )

        code = cli.main(["service", "install", "--systemd"])

        err = capsys.readouterr().err
        assert 2 == code
        assert unit_path().is_file()
        assert ["systemctl --user daemon-reload"] == recorded(stub)
        assert (
            "memd: systemctl --user cannot reach a user service manager"
            " (Failed to connect to bus: No medium found)"
        ) == err.splitlines()[0]
        assert "  loginctl enable-linger " in err
        assert (
            "  systemctl --user daemon-reload\n"
            "  systemctl --user enable --now memd.service\n" in err
        )

    def test_refused_enable_is_one_line_and_exit_2(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """A manager that refuses gives one stderr line naming the command."""
        fail_on(
            monkeypatch,
            "enable",
            "Failed to enable unit: Unit file memd.service is masked.",
        )

        code = cli.main(["service", "install", "--systemd"])

        assert 2 == code
        assert [
            "memd: `systemctl --user enable --now memd.service` failed with exit 1:"
            " Failed to enable unit: Unit file memd.service is masked."
        ] == capsys.readouterr().err.splitlines()

    def test_failed_start_names_the_result_and_keeps_the_unit(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """A start job that failed: systemd's result, status lines, a hint, exit 2.

        The issue's case: systemctl's first stderr line is the symlink it made.
        """
        fail_on(
            monkeypatch,
            "enable",
            "Created symlink /x/default.target.wants/memd.service.\n"
            "Job for memd.service failed because the control process exited"
            " with error code.",
        )
        monkeypatch.setenv(
            "SERVICE_STUB_STDOUT",
            "   Main PID: 7 (code=exited, status=218/CAPABILITIES)",
        )

        code = cli.main(["service", "install", "--systemd"])

        err = capsys.readouterr().err.splitlines()
        assert 2 == code
        assert [
            "memd: `systemctl --user enable --now memd.service` failed: memd.service"
            " did not start (status=218/CAPABILITIES)",
            "     Main PID: 7 (code=exited, status=218/CAPABILITIES)",
        ] == err[:2]
        assert err[2].startswith(f"hint: the unit stays at {unit_path()};")
        assert 3 == len(err)
        assert True is unit_path().is_file()
        assert [
            "systemctl --user show memd.service"
            " --property=Result,ExecMainCode,ExecMainStatus",
            "systemctl --user status --no-pager --full memd.service",
        ] == recorded(stub)[-2:]


class TestInstallLaunchd:
    def test_writes_the_plist_and_bootstraps(self, stub: Path) -> None:
        """Real plist and log dir; launchctl runs bootout, enable, bootstrap."""
        uid = os.getuid()

        code = cli.main(["service", "install", "--launchd"])

        assert 0 == code
        assert (Path(os.environ["HOME"]) / "Library" / "Logs" / "memd").is_dir()
        assert plist_path().read_bytes() == service.render_launchd_plist(
            service.resolve_memd_path(), os.environ, os.environ["HOME"]
        )
        assert [
            f"launchctl bootout gui/{uid}/dev.memd.agent",
            f"launchctl enable gui/{uid}/dev.memd.agent",
            f"launchctl bootstrap gui/{uid} {plist_path()}",
        ] == recorded(stub)

    def test_bootout_of_an_unloaded_agent_is_not_an_error(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A first install's bootout fails (nothing loaded) and the install goes on."""
        fail_on(monkeypatch, "bootout", "Boot-out failed: 3: No such process", code=3)

        code = cli.main(["service", "install", "--launchd"])

        assert 0 == code
        assert 3 == len(recorded(stub))


class TestUninstall:
    def test_systemd_disables_removes_and_reloads(self, stub: Path) -> None:
        """disable --now, the unit file goes, daemon-reload, then reset-failed."""
        cli.main(["service", "install", "--systemd"])
        stub.write_text("")

        code = cli.main(["service", "uninstall", "--systemd"])

        assert 0 == code
        assert not unit_path().exists()
        assert [
            "systemctl --user disable --now memd.service",
            "systemctl --user daemon-reload",
            "systemctl --user reset-failed memd.service",
        ] == recorded(stub)

    def test_dry_run_keeps_everything(
        self, stub: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run names the file it would remove and leaves it in place."""
        cli.main(["service", "install", "--systemd"])
        stub.write_text("")
        capsys.readouterr()

        code = cli.main(["service", "uninstall", "--dry-run", "--systemd"])

        assert 0 == code
        assert f"rm -f {unit_path()}" in capsys.readouterr().out
        assert unit_path().is_file()
        assert [] == recorded(stub)

    def test_launchd_boots_out_and_removes(self, stub: Path) -> None:
        """bootout, then the plist is removed."""
        cli.main(["service", "install", "--launchd"])
        stub.write_text("")

        code = cli.main(["service", "uninstall", "--launchd"])

        assert 0 == code
        assert not plist_path().exists()
        assert [f"launchctl bootout gui/{os.getuid()}/dev.memd.agent"] == recorded(stub)


class TestStatus:
    def test_shows_the_managers_view_and_memd_status(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """systemctl status output, then memd's own status; exit 0 when active."""
        monkeypatch.setenv("SERVICE_STUB_STDOUT", "Active: active (running)")

        code = cli.main(["service", "status", "--systemd"])

        out = capsys.readouterr().out
        assert 0 == code
        assert out.startswith(
            "# systemctl --user status --no-pager --full memd.service\n"
            "Active: active (running)\n"
        )
        assert "\n# memd status\n" in out
        assert (
            "systemctl --user status --no-pager --full memd.service"
            == recorded(stub)[0]
        )

    def test_inactive_service_exits_1(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """systemctl's "not running" (exit 3) is a finding: exit 1."""
        fail_on(monkeypatch, "status", "", code=3)

        assert 1 == cli.main(["service", "status", "--systemd"])

    def test_says_when_lingering_is_off(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Without lingering memd stops at logout; status says how to change it."""
        monkeypatch.setenv("SERVICE_STUB_STDOUT", "no")

        cli.main(["service", "status", "--systemd"])

        assert "lingering is off" in capsys.readouterr().out
        assert recorded(stub)[1].startswith("loginctl show-user ")

    def test_unreachable_manager_exits_2(
        self,
        stub: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """No user bus: one line saying so, exit 2."""
        fail_on(monkeypatch, "systemctl", "Failed to connect to bus: No medium found")

        code = cli.main(["service", "status", "--systemd"])

        assert 2 == code
        assert "cannot reach a user service manager" in capsys.readouterr().err

    def test_launchd_prints_the_agent(self, stub: Path) -> None:
        """launchctl print gui/<uid>/<label> is the manager's view on macOS."""
        code = cli.main(["service", "status", "--launchd"])

        assert 0 == code
        assert [f"launchctl print gui/{os.getuid()}/dev.memd.agent"] == recorded(stub)


class TestCommandLine:
    def test_both_managers_is_a_usage_error(self) -> None:
        """--systemd and --launchd together: exit 2."""
        assert 2 == cli.main(["service", "install", "--systemd", "--launchd"])

    def test_installed_script_reports_an_unreachable_manager(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Through the real `memd` script: exit 2, the manual commands, no traceback."""
        fail_on(
            monkeypatch, "systemctl --user", "Failed to connect to bus: No medium found"
        )
        memd = os.path.join(os.path.dirname(sys.executable), "memd")

        result = subprocess.run(
            [memd, "service", "install", "--systemd"],
            capture_output=True,
            text=True,
            check=False,
        )

        assert 2 == result.returncode
        assert "Traceback" not in result.stderr
        assert (
            "  systemctl --user enable --now memd.service" in result.stderr.splitlines()
        )
