"""memd.service and memd.service.units: unit and plist, plans and their runner."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

from memd.errors import ServiceError
from memd.service import install as service
from memd.service import units
from tests.conftest import recorded

REPO = Path(__file__).resolve().parents[2]

# launchd.plist(5): the keys memd may use and the types launchd accepts for them.
LAUNCHD_SCHEMA: dict[str, type | tuple[type, ...]] = {
    "Label": str,
    "ProgramArguments": list,
    "RunAtLoad": bool,
    "KeepAlive": (bool, dict),
    "ProcessType": str,
    "ThrottleInterval": int,
    "StandardOutPath": str,
    "StandardErrorPath": str,
    "EnvironmentVariables": dict,
    "WorkingDirectory": str,
}
KEEPALIVE_KEYS = {
    "SuccessfulExit",
    "Crashed",
    "NetworkState",
    "PathState",
    "OtherJobEnabled",
}
PROCESS_TYPES = {"Background", "Standard", "Adaptive", "Interactive"}


def check_launchd_schema(agent: dict[str, object]) -> list[str]:
    """Return what is wrong with `agent` as a LaunchAgent; empty when valid."""
    problems = [f"unknown key {key}" for key in agent if key not in LAUNCHD_SCHEMA]
    problems += [
        f"{key} is {type(value).__name__}"
        for key, value in agent.items()
        if key in LAUNCHD_SCHEMA and not isinstance(value, LAUNCHD_SCHEMA[key])
    ]
    for required in ("Label", "ProgramArguments"):
        if required not in agent:
            problems.append(f"missing {required}")
    arguments = agent.get("ProgramArguments")
    if isinstance(arguments, list) and not (
        arguments
        and all(isinstance(a, str) for a in arguments)
        and os.path.isabs(arguments[0])
    ):
        problems.append(
            "ProgramArguments must be strings starting with an absolute path"
        )
    keepalive = agent.get("KeepAlive")
    if isinstance(keepalive, dict):
        problems += [
            f"unknown KeepAlive key {k}" for k in keepalive if k not in KEEPALIVE_KEYS
        ]
        if not isinstance(keepalive.get("SuccessfulExit", False), bool):
            problems.append("KeepAlive.SuccessfulExit must be a bool")
    if agent.get("ProcessType", "Standard") not in PROCESS_TYPES:
        problems.append("bad ProcessType")
    environment = agent.get("EnvironmentVariables", {})
    if isinstance(environment, dict) and not all(
        isinstance(k, str) and isinstance(v, str) for k, v in environment.items()
    ):
        problems.append("EnvironmentVariables must map strings to strings")
    for key in ("StandardOutPath", "StandardErrorPath", "WorkingDirectory"):
        value = agent.get(key)
        if isinstance(value, str) and not os.path.isabs(value):
            problems.append(f"{key} must be absolute (launchd expands no ~)")
    return problems


def unit_settings(text: str) -> dict[str, list[str]]:
    """Return each `Key=value` of a unit file, in order, ignoring comments."""
    settings: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def systemd_verify(unit: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the real `systemd-analyze verify --user` on `unit` (named memd.service)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install -y systemd)")
    return subprocess.run(
        [analyze, "verify", "--user", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HOME": str(home)},
    )


def write_unit(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "memd.service"
    path.write_text(text)
    return path


class TestRenderSystemdUnit:
    def test_notify_type_and_main_access(self) -> None:
        """The unit waits for READY=1 and takes notifications from memd only."""
        settings = unit_settings(units.render_systemd_unit("/opt/memd/bin/memd", {}))

        assert ["notify"] == settings["Type"]
        assert ["main"] == settings["NotifyAccess"]
        assert ["/opt/memd/bin/memd run"] == settings["ExecStart"]

    def test_restarts_on_failure(self) -> None:
        """A crash restarts memd after a pause; a clean exit does not."""
        settings = unit_settings(units.render_systemd_unit("/usr/bin/memd", {}))

        assert (["on-failure"], ["5s"]) == (settings["Restart"], settings["RestartSec"])

    def test_watchdog_is_on(self) -> None:
        """WatchdogSec= is set, because the daemon pings WATCHDOG=1 at half of it."""
        settings = unit_settings(units.render_systemd_unit("/usr/bin/memd", {}))

        assert ["60s"] == settings["WatchdogSec"]

    def test_passes_only_the_variables_that_matter(self) -> None:
        """CLAUDE_CONFIG_DIR, XDG_* and PATH go in; relative or unrelated ones don't."""
        env = {
            "CLAUDE_CONFIG_DIR": "/data/claude",
            "XDG_CACHE_HOME": "/data/cache",
            "XDG_STATE_HOME": "relative/state",
            "PATH": "/usr/bin:/bin",
            "AWS_SECRET_ACCESS_KEY": "hunter2",
        }

        environment = unit_settings(units.render_systemd_unit("/usr/bin/memd", env))

        assert [
            "CLAUDE_CONFIG_DIR=/data/claude",
            "PATH=/usr/bin:/bin",
            "XDG_CACHE_HOME=/data/cache",
        ] == environment["Environment"]

    def test_no_option_a_user_manager_cannot_apply(self) -> None:
        """Options that need capabilities or a mount namespace are left out.

        Under systemd 252's user manager the capability ones fail the start with
        218/CAPABILITIES and the mount ones are skipped or fail with 226/NAMESPACE.
        """
        settings = unit_settings(units.render_systemd_unit("/usr/bin/memd", {}))
        refused = {
            *("ProtectKernelModules", "ProtectKernelLogs", "PrivateDevices"),
            *("ProtectClock", "CapabilityBoundingSet", "ProtectSystem"),
            *("ReadWritePaths", "PrivateTmp", "ProtectKernelTunables"),
            *("ProtectControlGroups", "ProtectHome", "PrivateUsers"),
        }

        kept = {
            "NoNewPrivileges": ["yes"],
            "RestrictRealtime": ["yes"],
            "RestrictSUIDSGID": ["yes"],
            "RestrictNamespaces": ["yes"],
            "LockPersonality": ["yes"],
            "SystemCallArchitectures": ["native"],
            "SystemCallFilter": [
                "@system-service",
                "landlock_create_ruleset landlock_add_rule landlock_restrict_self",
            ],
            "RestrictAddressFamilies": ["AF_UNIX AF_INET AF_INET6"],
        }

        assert set() == refused & set(settings)
        assert kept == {key: settings.get(key) for key in kept}

    def test_logs_to_the_journal_by_default(self) -> None:
        """Without a log file the unit leaves stdout and stderr to the journal."""
        settings = unit_settings(units.render_systemd_unit("/usr/bin/memd", {}))

        assert set() == {"StandardOutput", "StandardError"} & set(settings)

    def test_log_file_when_there_is_no_journal(self) -> None:
        """With a log file, stdout is appended to it and stderr goes the same way."""
        text = units.render_systemd_unit(
            "/usr/bin/memd", {}, log_file="/home/ada/.local/state/50%/memd.log"
        )

        assert (["append:/home/ada/.local/state/50%%/memd.log"], ["inherit"]) == (
            unit_settings(text)["StandardOutput"],
            unit_settings(text)["StandardError"],
        )

    @pytest.mark.parametrize("bad", ["state/memd.log", "/home/ada/my state/memd.log"])
    def test_log_file_must_be_absolute_without_spaces(self, bad: str) -> None:
        """systemd takes `append:` up to the end of the line, unquoted."""
        with pytest.raises(ServiceError, match="cannot log to"):
            units.render_systemd_unit("/usr/bin/memd", {}, log_file=bad)

    def test_escapes_specifiers_and_variables(self) -> None:
        """A `%` or `$` in the path reaches systemd literally, not as a specifier."""
        text = units.render_systemd_unit("/opt/50% off/$HOME/memd", {})

        assert ['"/opt/50%% off/$$HOME/memd" run'] == unit_settings(text)["ExecStart"]

    def test_control_characters_are_refused(self) -> None:
        """A newline in a value would inject unit settings, so rendering refuses it."""
        with pytest.raises(ServiceError, match="control character"):
            units.render_systemd_unit(
                "/usr/bin/memd", {"XDG_CACHE_HOME": "/x\nUser=root"}
            )

    def test_shipped_unit_is_the_rendered_default(self) -> None:
        """systemd/memd.service is what the renderer makes for ~/.local/bin/memd."""
        shipped = (REPO / "systemd" / "memd.service").read_text()

        assert units.shipped_systemd_unit() == shipped


class TestSystemdAnalyzeVerify:
    def test_rendered_unit_verifies(
        self, tmp_path: Path, isolated_home: object
    ) -> None:
        """The unit rendered for this machine's memd passes systemd-analyze verify."""
        env = {
            **os.environ,
            "CLAUDE_CONFIG_DIR": str(tmp_path / "claude dir"),
        }
        text = units.render_systemd_unit(service.resolve_memd_path(), env)
        unit = write_unit(tmp_path / "units", text)

        result = systemd_verify(unit, Path(os.environ["HOME"]))

        assert (0, "") == (result.returncode, result.stderr)

    def test_path_with_space_and_percent_verifies(self, tmp_path: Path) -> None:
        """An ExecStart path with a space and a `%` resolves to the real file."""
        odd = tmp_path / "my tools 100%"
        odd.mkdir()
        (odd / "memd").symlink_to(service.resolve_memd_path())
        unit = write_unit(
            tmp_path / "units", units.render_systemd_unit(str(odd / "memd"), {})
        )

        result = systemd_verify(unit, tmp_path)

        assert (0, "") == (result.returncode, result.stderr)

    def test_shipped_unit_verifies(self, tmp_path: Path) -> None:
        """The shipped unit passes when memd is in ~/.local/bin, where it points."""
        home = tmp_path / "home"
        (home / ".local" / "bin").mkdir(parents=True)
        (home / ".local" / "bin" / "memd").symlink_to(service.resolve_memd_path())
        unit = write_unit(
            tmp_path / "units", (REPO / "systemd" / "memd.service").read_text()
        )

        result = systemd_verify(unit, home)

        assert (0, "") == (result.returncode, result.stderr)

    def test_unit_with_a_log_file_verifies(self, tmp_path: Path) -> None:
        """The no-journal variant (StandardOutput=append:) passes verify too."""
        text = units.render_systemd_unit(
            service.resolve_memd_path(), {}, log_file=str(tmp_path / "memd.log")
        )
        unit = write_unit(tmp_path / "units", text)

        result = systemd_verify(unit, tmp_path)

        assert (0, "") == (result.returncode, result.stderr)

    def test_missing_executable_fails(self, tmp_path: Path) -> None:
        """verify really checks ExecStart: a memd that does not exist fails it."""
        text = units.render_systemd_unit(str(tmp_path / "nowhere" / "memd"), {})
        unit = write_unit(tmp_path / "units", text)

        result = systemd_verify(unit, tmp_path)

        assert 0 != result.returncode
        assert "not executable" in result.stderr


class TestRenderLaunchdPlist:
    def test_round_trips_and_fits_the_schema(self) -> None:
        """The plist parses back with plistlib and uses only launchd keys and types."""
        data = units.render_launchd_plist("/usr/local/bin/memd", {}, "/Users/ada")

        agent = plistlib.loads(data)

        assert [] == check_launchd_schema(agent)
        assert data == plistlib.dumps(agent, sort_keys=False)

    def test_runs_memd_in_the_background_and_restarts_on_failure(self) -> None:
        """RunAtLoad starts it at login; KeepAlive restarts only after a failed exit."""
        agent = plistlib.loads(
            units.render_launchd_plist("/usr/local/bin/memd", {}, "/Users/ada")
        )

        assert {
            "Label": "dev.memd.agent",
            "ProgramArguments": ["/usr/local/bin/memd", "run"],
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "ProcessType": "Background",
            "StandardOutPath": "/Users/ada/Library/Logs/memd/memd.log",
            "StandardErrorPath": "/Users/ada/Library/Logs/memd/memd.err.log",
        } == {
            key: agent[key]
            for key in agent
            if key not in {"EnvironmentVariables", "ThrottleInterval"}
        }

    def test_environment_has_path_and_the_variables_that_matter(self) -> None:
        """PATH always (launchd's is bare), plus CLAUDE_CONFIG_DIR and XDG_* if set."""
        env = {
            "PATH": "/Users/ada/.local/bin:/usr/bin",
            "CLAUDE_CONFIG_DIR": "/Users/ada/claude",
            "XDG_RUNTIME_DIR": "/tmp/ada-runtime",
            "EDITOR": "vi",
        }

        agent = plistlib.loads(units.render_launchd_plist("/m/memd", env, "/Users/ada"))

        assert {
            "CLAUDE_CONFIG_DIR": "/Users/ada/claude",
            "PATH": "/Users/ada/.local/bin:/usr/bin",
            "XDG_RUNTIME_DIR": "/tmp/ada-runtime",
        } == agent["EnvironmentVariables"]

    def test_default_path_when_none_is_set(self) -> None:
        """Without a PATH, the agent still finds Homebrew and system tools."""
        agent = plistlib.loads(units.render_launchd_plist("/m/memd", {}, "/Users/ada"))

        assert {"PATH": units.LAUNCHD_DEFAULT_PATH} == agent["EnvironmentVariables"]

    def test_schema_check_catches_a_bad_plist(self) -> None:
        """The schema check is no rubber stamp: wrong types and relative paths fail."""
        agent = {
            "Label": "x",
            "ProgramArguments": ["memd", "run"],
            "KeepAlive": {"SuccessfulExit": "no"},
            "RunAtLoad": "yes",
            "Nonsense": 1,
        }

        assert [
            "unknown key Nonsense",
            "RunAtLoad is str",
            "ProgramArguments must be strings starting with an absolute path",
            "KeepAlive.SuccessfulExit must be a bool",
        ] == check_launchd_schema(agent)

    def test_shipped_plist_is_the_rendered_default(self) -> None:
        """The shipped plist is what the renderer makes, and fits the schema."""
        shipped = (REPO / "launchd" / "dev.memd.agent.plist").read_bytes()

        assert units.shipped_launchd_plist() == shipped
        assert [] == check_launchd_schema(plistlib.loads(shipped))


class TestDetectManager:
    @pytest.mark.parametrize(
        ("platform", "expected"), [("linux", "systemd"), ("darwin", "launchd")]
    )
    def test_known_platforms(self, platform: str, expected: str) -> None:
        """Linux uses systemd and macOS launchd."""
        assert expected == service.detect_manager(platform)

    def test_other_platforms_are_refused(self) -> None:
        """Windows gets one clear line, not a half-installed service."""
        with pytest.raises(ServiceError, match="no supported service manager on win32"):
            service.detect_manager("win32")


def make_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


class TestResolveMemdPath:
    def test_the_running_script_wins(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`memd service install` run from a venv's memd installs that memd."""
        script = make_executable(tmp_path / "venv" / "bin" / "memd")
        monkeypatch.setattr("sys.argv", [str(script), "service", "install"])

        assert str(script) == service.resolve_memd_path()

    def test_falls_back_to_path(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Run as `python -m memd` from elsewhere, the memd on PATH is used."""
        on_path = make_executable(tmp_path / "bin" / "memd")
        monkeypatch.setattr("sys.argv", ["/x/memd/__main__.py"])
        monkeypatch.setattr("sys.executable", str(tmp_path / "python" / "python3"))

        assert str(on_path) == service.resolve_memd_path({"PATH": str(on_path.parent)})

    def test_no_memd_anywhere_is_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without an installed memd there is nothing to put in ExecStart."""
        monkeypatch.setattr("sys.argv", ["pytest"])
        monkeypatch.setattr("sys.executable", str(tmp_path / "python3"))

        with pytest.raises(ServiceError, match="cannot find the memd executable"):
            service.resolve_memd_path({"PATH": str(tmp_path)})


class TestPlans:
    def test_systemd_install_order(self, tmp_path: Path) -> None:
        """Directories, then the unit, then daemon-reload, then enable --now."""
        env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}

        plan = service.install_plan(
            "systemd",
            memd_path="/usr/bin/memd",
            env=env,
            home=str(tmp_path),
            uid=1000,
            user="ada",
        )

        assert [
            f"mkdir -p {tmp_path}/.claude",
            f"mkdir -p {tmp_path}/cfg/memd",
            f"mkdir -p {tmp_path}/.cache/memd",
            f"mkdir -p {tmp_path}/.local/state/memd",
            f"mkdir -p {tmp_path}/cfg/systemd/user",
            f"# write {tmp_path}/cfg/systemd/user/memd.service:",
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ] == [
            line
            for line in service.describe_plan(plan).splitlines()
            if line.startswith(("mkdir", "# write", "systemctl"))
        ]

    def test_changed_unit_restarts_a_running_service(self, tmp_path: Path) -> None:
        """Reinstalling over a different unit adds try-restart, so it takes effect."""
        env = {"HOME": str(tmp_path)}
        unit = Path(units.systemd_unit_path(env, str(tmp_path)))
        unit.parent.mkdir(parents=True)
        unit.write_text("[Service]\nExecStart=/old/memd run\n")

        plan = service.install_plan(
            "systemd",
            memd_path="/usr/bin/memd",
            env=env,
            home=str(tmp_path),
            uid=1,
            user="a",
        )

        assert (
            service.RunCommand(("systemctl", "--user", "try-restart", "memd.service"))
            == (plan.steps[-1])
        )

    def test_launchd_install_order(self) -> None:
        """Logs dir, plist, then bootout (may fail), enable and bootstrap gui/<uid>."""
        plan = service.install_plan(
            "launchd",
            memd_path="/m/memd",
            env={},
            home="/Users/ada",
            uid=501,
            user="ada",
        )

        assert [
            "mkdir -p /Users/ada/Library/Logs/memd",
            "mkdir -p /Users/ada/Library/LaunchAgents",
            "# write /Users/ada/Library/LaunchAgents/dev.memd.agent.plist:",
            "launchctl bootout gui/501/dev.memd.agent  # may fail",
            "launchctl enable gui/501/dev.memd.agent",
            "launchctl bootstrap gui/501"
            " /Users/ada/Library/LaunchAgents/dev.memd.agent.plist",
        ] == [
            line
            for line in service.describe_plan(plan).splitlines()
            if line.startswith(("mkdir", "# write", "launchctl"))
        ]

    def test_manual_commands_for_an_unreachable_manager(self) -> None:
        """The fallback advice names lingering and the exact systemctl commands."""
        plan = service.install_plan(
            "systemd",
            memd_path="/m/memd",
            env={},
            home="/home/ada",
            uid=1000,
            user="ada",
        )

        assert (
            "loginctl enable-linger ada",
            "export XDG_RUNTIME_DIR=/run/user/$(id -u)",
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ) == plan.manual


class TestExecutePlan:
    def test_runs_commands_in_order_and_writes_files(
        self, tmp_path: Path, stub: Path
    ) -> None:
        """Every step happens, in order, with the real file written atomically."""
        target = tmp_path / "out" / "memd.service"
        plan = service.Plan(
            "systemd",
            "install",
            (
                service.MakeDir(str(target.parent)),
                service.WriteFile(str(target), b"[Unit]\n"),
                service.RunCommand(("systemctl", "--user", "daemon-reload")),
                service.RunCommand(
                    ("systemctl", "--user", "enable", "--now", "memd.service")
                ),
            ),
        )

        service.execute_plan(plan)

        assert b"[Unit]\n" == target.read_bytes()
        assert 0o644 == target.stat().st_mode & 0o777
        assert [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ] == recorded(stub)

    def test_unreachable_manager_stops_with_the_manual_commands(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A bus failure becomes UserManagerUnreachable, carrying the advice."""
        monkeypatch.setenv("SERVICE_STUB_FAIL", "daemon-reload")
        monkeypatch.setenv(
            "SERVICE_STUB_STDERR", "Failed to connect to bus: No medium found"
        )
        plan = service.Plan(
            "systemd",
            "install",
            (
                service.RunCommand(("systemctl", "--user", "daemon-reload")),
                service.RunCommand(
                    ("systemctl", "--user", "enable", "--now", "memd.service")
                ),
            ),
            manual=("loginctl enable-linger ada",),
        )

        with pytest.raises(service.UserManagerUnreachable) as caught:
            service.execute_plan(plan)

        assert ("loginctl enable-linger ada",) == caught.value.manual
        assert "(Failed to connect to bus: No medium found)" in str(caught.value)
        assert ["systemctl --user daemon-reload"] == recorded(stub)

    def test_no_runtime_dir_means_unreachable(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without XDG_RUNTIME_DIR (su, sudo -u), a systemctl --user failure is that."""
        monkeypatch.delenv("XDG_RUNTIME_DIR")
        monkeypatch.setenv("SERVICE_STUB_FAIL", "daemon-reload")
        monkeypatch.setenv("SERVICE_STUB_STDERR", "Failed to get D-Bus connection")
        plan = service.Plan(
            "systemd",
            "install",
            (service.RunCommand(("systemctl", "--user", "daemon-reload")),),
        )

        with pytest.raises(service.UserManagerUnreachable):
            service.execute_plan(plan)

    def test_other_failures_name_the_command(
        self, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A refused command is a ServiceError naming it, its exit and its message."""
        monkeypatch.setenv("SERVICE_STUB_FAIL", "bootstrap")
        monkeypatch.setenv("SERVICE_STUB_EXIT", "5")
        monkeypatch.setenv(
            "SERVICE_STUB_STDERR", "Bootstrap failed: 5: Input/output error"
        )
        plan = service.Plan(
            "launchd",
            "install",
            (service.RunCommand(("launchctl", "bootstrap", "gui/501", "/p.plist")),),
        )

        with pytest.raises(ServiceError) as caught:
            service.execute_plan(plan)

        assert (
            "`launchctl bootstrap gui/501 /p.plist` failed with exit 5:"
            " Bootstrap failed: 5: Input/output error"
        ) == str(caught.value)

    def test_may_fail_steps_do_not_stop_the_plan(
        self, tmp_path: Path, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Stopping a service that is not loaded is fine; the file is still removed."""
        monkeypatch.setenv("SERVICE_STUB_FAIL", "bootout")
        doomed = tmp_path / "agent.plist"
        doomed.write_text("x")
        plan = service.Plan(
            "launchd",
            "uninstall",
            (
                service.RunCommand(
                    ("launchctl", "bootout", "gui/1/dev.memd.agent"),
                    may_fail=True,
                ),
                service.RemoveFile(str(doomed)),
                service.RemoveFile(str(tmp_path / "never-existed")),
            ),
        )

        service.execute_plan(plan)

        assert not doomed.exists()

    def test_missing_service_manager_is_one_line(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No launchctl on this machine: a ServiceError, not a FileNotFoundError."""
        monkeypatch.setenv("PATH", "/nonexistent")
        plan = service.Plan(
            "launchd", "install", (service.RunCommand(("launchctl", "list")),)
        )

        with pytest.raises(ServiceError, match="launchctl not found"):
            service.execute_plan(plan)


# `systemctl --user status memd` after the 218 failure of issue 15 (systemd 252).
STATUS_218 = "".join(
    line + "\n"
    for line in (
        "\u00d7 memd.service - memd: keeps the coding agent's auto memory healthy",
        "     Loaded: loaded (/home/ada/.config/systemd/user/memd.service; enabled)",
        "     Active: activating (auto-restart) (Result: exit-code) since Tue; 3s ago",
        "    Process: 25561 ExecStart=/home/ada/venv/bin/memd run"
        " (code=exited, status=218/CAPABILITIES)",
        "   Main PID: 25561 (code=exited, status=218/CAPABILITIES)",
    )
)


class TestStartFailure:
    def test_result_names_systemds_exit_status(self) -> None:
        """The summary is the job's Result and systemd's named exit status."""
        show = "Result=exit-code\nExecMainCode=1\nExecMainStatus=218\n"

        assert "result exit-code, status=218/CAPABILITIES" == service.describe_result(
            show, STATUS_218
        )

    def test_number_when_status_names_nothing(self) -> None:
        """Without a named status in the text, the numeric ExecMainStatus is shown."""
        show = "Result=exit-code\nExecMainCode=1\nExecMainStatus=1\n"

        assert "result exit-code, status=1" == service.describe_result(show, "")

    def test_nothing_to_say(self) -> None:
        """No properties and no status text still give a sentence, not a blank."""
        assert "systemd gave no reason" == service.describe_result("", "")

    def test_status_tail_keeps_the_last_lines(self) -> None:
        """The last non-empty lines of the status output, in order."""
        assert [
            "    Process: 25561 ExecStart=/home/ada/venv/bin/memd run"
            " (code=exited, status=218/CAPABILITIES)",
            "   Main PID: 25561 (code=exited, status=218/CAPABILITIES)",
        ] == service.status_tail(STATUS_218 + "\n\n", lines=2)


class TestLogs:
    def test_journal_running_needs_a_socket(self, tmp_path: Path) -> None:
        """Only a listening socket counts; a file or nothing at that path does not."""
        import socket

        listening = tmp_path / "stdout"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(str(listening))
            (tmp_path / "file").write_text("")

            assert (True, False, False) == (
                service.journal_running(str(listening)),
                service.journal_running(str(tmp_path / "file")),
                service.journal_running(str(tmp_path / "missing")),
            )

    def test_log_tail_reads_the_last_lines(self, tmp_path: Path) -> None:
        """The last lines come back; a line cut by the read window is dropped."""
        log = tmp_path / "memd.log"
        log.write_text("".join(f"line {n:04}\n" for n in range(1000)))

        assert ["line 0998", "line 0999"] == service.read_log_tail(str(log), 2)
        assert ["line 0999"] == service.read_log_tail(str(log), 5, max_bytes=12)

    @pytest.mark.parametrize(
        ("name", "error"),
        [
            ("link.log", "Too many levels of symbolic links"),
            ("fifo.log", "not a regular file"),
            ("missing.log", "No such file"),
        ],
    )
    def test_log_tail_refuses_links_and_fifos_without_hanging(
        self, tmp_path: Path, name: str, error: str
    ) -> None:
        """A symlink or a FIFO in place of the log is an OSError, never a read."""
        (tmp_path / "real.log").write_text("secret\n")
        (tmp_path / "link.log").symlink_to(tmp_path / "real.log")
        os.mkfifo(tmp_path / "fifo.log")

        with pytest.raises(OSError, match=error):
            service.read_log_tail(str(tmp_path / name), 5)

    def test_install_plan_makes_the_log_dir(self, tmp_path: Path) -> None:
        """With a log file the plan creates its directory before writing the unit."""
        plan = service.install_plan(
            "systemd",
            memd_path="/usr/bin/memd",
            env={"HOME": str(tmp_path)},
            home=str(tmp_path),
            uid=1000,
            user="ada",
            log_file=str(tmp_path / "logs" / "memd.log"),
        )

        assert service.MakeDir(str(tmp_path / "logs")) in plan.steps
