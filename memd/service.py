"""Render, install and remove memd's user service: a systemd unit or a launchd agent.

Rendering is pure (`render_systemd_unit`, `render_launchd_plist`). Installing
and removing are *plans*: ordered steps (make a directory, write a file, run a
command) built as data, printed by `--dry-run` and carried out by
`execute_plan`, the one place that touches the disk or a service manager.

Outside behaviour relied on:

- systemd.unit(5)/systemd.service(5): `%` starts a specifier everywhere and `$`
  a variable in `Exec*=` lines, so both are doubled; double-quoted words take
  C escapes. `ReadWritePaths=` entries prefixed with `-` are skipped when
  missing instead of failing the start (exit 226/NAMESPACE).
- `systemctl --user` talks to the user manager over `$XDG_RUNTIME_DIR/bus`;
  without a login session (containers, SSH without lingering) it fails with
  "Failed to connect to bus". That is not memd's error to fix, so the manual
  commands are printed instead.
- launchd.plist(5): launchd expands neither `~` nor variables, so every path
  in the plist is absolute. `launchctl bootstrap` refuses an agent that is
  already loaded, hence the `bootout` (allowed to fail) before it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass

from memd.atomic import write_atomic
from memd.errors import ServiceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Mapping

LABEL = "dev.memd.agent"
UNIT_NAME = "memd.service"
SYSTEMD = "systemd"
LAUNCHD = "launchd"
# Where the shipped unit expects memd (`pipx install` / `pip install --user`).
SHIPPED_SYSTEMD_MEMD = "%h/.local/bin/memd"
SHIPPED_LAUNCHD_HOME = "/Users/USERNAME"
# The variables that change where memd reads and writes; copied into the unit.
PASSED_ENV = (
    *("CLAUDE_CONFIG_DIR", "MEMD_CONFIG"),
    *("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"),
)
LAUNCHD_DEFAULT_PATH = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
# What systemctl prints when no user manager answers on the bus.
UNREACHABLE_MARKERS = ("Failed to connect to", "No medium found", "not been booted")

# memd sends READY=1 after its first full scan and pings WATCHDOG=1 from its main
# loop every WatchdogSec/2.
UNIT_TEMPLATE = """\
# memd user service. `memd service install` renders it for this machine;
# change it with a drop-in (`systemctl --user edit memd`), not by hand.
[Unit]
Description=memd: keeps the coding agent's auto memory healthy

[Service]
Type=notify
NotifyAccess=main
ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5s
WatchdogSec=60s
{environment}\
# The single-instance lock lives in $XDG_RUNTIME_DIR/memd.
RuntimeDirectory=memd
RuntimeDirectoryMode=0700
RuntimeDirectoryPreserve=yes
UMask=0077

# Sandboxing. The file-system options need unprivileged user namespaces
# (systemd >= 253 turns on PrivateUsers= for them in user units).
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths={read_write_paths}
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM
# AF_INET/AF_INET6 are for a configured dream command (an agent CLI); memd
# needs only AF_UNIX. MemoryDenyWriteExecute= is off: such a CLI may JIT (Node).
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6

[Install]
WantedBy=default.target
"""


class UserManagerUnreachable(ServiceError):
    """`systemctl --user` found no user service manager; `manual` says what to run."""

    def __init__(self, message: str, *, manual: tuple[str, ...]):
        super().__init__(message)
        self.manual = manual


@dataclass(frozen=True, slots=True)
class MakeDir:
    path: str


@dataclass(frozen=True, slots=True)
class WriteFile:
    path: str
    content: bytes


@dataclass(frozen=True, slots=True)
class RemoveFile:
    path: str


@dataclass(frozen=True, slots=True)
class RunCommand:
    argv: tuple[str, ...]
    may_fail: bool = False  # e.g. stopping a service that is not loaded


Step = MakeDir | WriteFile | RemoveFile | RunCommand


@dataclass(frozen=True, slots=True)
class Plan:
    """What one `memd service` action does, in order; `manual` is the fallback."""

    manager: str
    action: str
    steps: tuple[Step, ...]
    manual: tuple[str, ...] = ()


def detect_manager(platform: str | None = None) -> str:
    """Return "systemd" on Linux and "launchd" on macOS."""
    platform = sys.platform if platform is None else platform
    if platform == "darwin":
        return LAUNCHD
    if platform.startswith("linux"):
        return SYSTEMD
    raise ServiceError(
        f"no supported service manager on {platform}; run `memd run` yourself"
    )


def resolve_memd_path(env: Mapping[str, str] | None = None) -> str:
    """Return the absolute path of the `memd` executable to put in the unit.

    The running script wins (so a venv's memd installs itself), then the
    script beside this interpreter, then `memd` on PATH. Symlinks are kept:
    pipx upgrades replace the target, not the link.
    """
    import shutil

    env = os.environ if env is None else env
    candidates = []
    if os.path.basename(sys.argv[0]) == "memd":
        candidates.append(os.path.abspath(sys.argv[0]))
    candidates.append(os.path.join(os.path.dirname(sys.executable), "memd"))
    found = shutil.which("memd", path=env.get("PATH", os.defpath))
    if found:
        candidates.append(os.path.abspath(found))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise ServiceError(
        "cannot find the memd executable; install memd so `memd` is on PATH"
    )


def service_environment(env: Mapping[str, str]) -> dict[str, str]:
    """Return the variables the service gets: PATH and those in PASSED_ENV that are set.

    PATH is copied so a dream command finds what it finds in the user's shell.
    Relative values are dropped, as the XDG spec says to ignore them.
    """
    chosen = {
        name: env[name] for name in PASSED_ENV if os.path.isabs(env.get(name, ""))
    }
    if env.get("PATH"):
        chosen["PATH"] = env["PATH"]
    return chosen


def _writable_dirs(
    env: Mapping[str, str], home: str, extra: Iterable[str] = ()
) -> tuple[str, ...]:
    """Return the directories memd writes: memory base, its config, cache and state."""

    def xdg(name: str, fallback: str) -> str:
        value = env.get(name, "")
        return value if os.path.isabs(value) else f"{home}/{fallback}"

    claude = env.get("CLAUDE_CONFIG_DIR", "")
    dirs = [
        claude if os.path.isabs(claude) else f"{home}/.claude",
        os.path.join(xdg("XDG_CONFIG_HOME", ".config"), "memd"),
        os.path.join(xdg("XDG_CACHE_HOME", ".cache"), "memd"),
        os.path.join(xdg("XDG_STATE_HOME", ".local/state"), "memd"),
        *(path for path in extra if os.path.isabs(path)),
    ]
    return tuple(dict.fromkeys(os.path.normpath(path) for path in dirs))


def _read_write_word(path: str, home: str) -> str:
    """Return one `ReadWritePaths=` entry; paths under `home` become `%h/...`."""
    if home.startswith("/") and home != "/" and path.startswith(home + "/"):
        path = "%h" + path[len(home) :]
    if path.startswith("%h/"):
        # `%h` stays a specifier; the rest is escaped. `-`: a missing dir is skipped.
        return _quote(path[2:], raw_prefix="-%h")
    return _quote(f"-{path}")


def _check_plain(value: str) -> str:
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise ServiceError(
            f"cannot put {value!r} in a unit file: it contains a control character"
        )
    return value


def _quote(value: str, *, exec_line: bool = False, raw_prefix: str = "") -> str:
    """Quote one word for a unit file; escape specifiers (and `$` on Exec lines).

    `raw_prefix` (such as `-%h`) is put in front unescaped, inside the quotes.
    """
    text = _check_plain(value).replace("%", "%%")
    if exec_line:
        text = text.replace("$", "$$")
    text = raw_prefix + text
    if text and not any(char in text for char in " \"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_systemd_unit(
    memd_path: str, env: Mapping[str, str], *, writable: Iterable[str] = ()
) -> str:
    """Return the user unit that runs `memd_path run` with `env`'s variables."""
    return _render_unit(_quote(memd_path, exec_line=True), env, writable)


def shipped_systemd_unit() -> str:
    """Return `systemd/memd.service` as shipped: memd in ~/.local/bin, no env."""
    return _render_unit(SHIPPED_SYSTEMD_MEMD, {}, ())


def _render_unit(
    exec_word: str, env: Mapping[str, str], writable: Iterable[str]
) -> str:
    home = env.get("HOME", "")
    home = home.rstrip("/") if os.path.isabs(home) else "%h"
    environment = "".join(
        f"Environment={_quote(f'{name}={value}')}\n"
        for name, value in sorted(service_environment(env).items())
    )
    return UNIT_TEMPLATE.format(
        exec_start=f"{exec_word} run",
        environment=environment,
        read_write_paths=" ".join(
            _read_write_word(path, home) for path in _writable_dirs(env, home, writable)
        ),
    )


def render_launchd_plist(memd_path: str, env: Mapping[str, str], home: str) -> bytes:
    """Return the LaunchAgent plist (XML) running `memd_path run` for `home`'s user."""
    import plistlib

    environment = service_environment(env)
    environment.setdefault("PATH", LAUNCHD_DEFAULT_PATH)
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):  # memd's lock lives there; CLI and agent must agree
        environment["XDG_RUNTIME_DIR"] = runtime
    logs = launchd_log_dir(home)
    agent: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": [memd_path, "run"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restart only after a failure
        "ProcessType": "Background",
        "ThrottleInterval": 5,
        "StandardOutPath": f"{logs}/memd.log",
        "StandardErrorPath": f"{logs}/memd.err.log",
        "EnvironmentVariables": dict(sorted(environment.items())),
    }
    return plistlib.dumps(agent, sort_keys=False)


def shipped_launchd_plist() -> bytes:
    """Return `launchd/dev.memd.agent.plist` as shipped, for a user called USERNAME."""
    return render_launchd_plist(
        f"{SHIPPED_LAUNCHD_HOME}/.local/bin/memd", {}, SHIPPED_LAUNCHD_HOME
    )


def systemd_unit_path(env: Mapping[str, str], home: str) -> str:
    """Return `$XDG_CONFIG_HOME/systemd/user/memd.service` (default under ~/.config)."""
    config = env.get("XDG_CONFIG_HOME", "")
    base = config if os.path.isabs(config) else os.path.join(home, ".config")
    return os.path.join(base, "systemd", "user", UNIT_NAME)


def launchd_plist_path(home: str) -> str:
    """Return `~/Library/LaunchAgents/<label>.plist`."""
    return os.path.join(home, "Library", "LaunchAgents", f"{LABEL}.plist")


def launchd_log_dir(home: str) -> str:
    """Return `~/Library/Logs/memd`, where the agent's stdout and stderr go."""
    return os.path.join(home, "Library", "Logs", "memd")


def _systemctl(*args: str) -> tuple[str, ...]:
    return ("systemctl", "--user", *args)


def manual_systemd_commands(action: str, user: str) -> tuple[str, ...]:
    """Return what to run by hand when `systemctl --user` cannot reach a manager."""
    if action == "install":
        return (
            f"loginctl enable-linger {user}",
            "export XDG_RUNTIME_DIR=/run/user/$(id -u)",
            shlex.join(_systemctl("daemon-reload")),
            shlex.join(_systemctl("enable", "--now", UNIT_NAME)),
        )
    return (
        "export XDG_RUNTIME_DIR=/run/user/$(id -u)",
        shlex.join(_systemctl("disable", "--now", UNIT_NAME)),
        shlex.join(_systemctl("daemon-reload")),
    )


def install_plan(
    manager: str,
    *,
    memd_path: str,
    env: Mapping[str, str],
    home: str,
    uid: int,
    user: str,
    writable: Iterable[str] = (),
) -> Plan:
    """Return the steps that write the unit for this machine and start it."""
    if manager == LAUNCHD:
        plist, agent = launchd_plist_path(home), f"gui/{uid}/{LABEL}"
        steps: list[Step] = [
            MakeDir(launchd_log_dir(home)),
            MakeDir(os.path.dirname(plist)),
            WriteFile(plist, render_launchd_plist(memd_path, env, home)),
            RunCommand(("launchctl", "bootout", agent), may_fail=True),
            RunCommand(("launchctl", "enable", agent)),
            RunCommand(("launchctl", "bootstrap", f"gui/{uid}", plist)),
        ]
        return Plan(LAUNCHD, "install", tuple(steps))
    writable = tuple(writable)
    unit_path = systemd_unit_path(env, home)
    content = render_systemd_unit(memd_path, env, writable=writable).encode()
    steps = [MakeDir(path) for path in _writable_dirs(env, home, writable)]
    steps += [
        MakeDir(os.path.dirname(unit_path)),
        WriteFile(unit_path, content),
        RunCommand(_systemctl("daemon-reload")),
        RunCommand(_systemctl("enable", "--now", UNIT_NAME)),
    ]
    if _differs(unit_path, content):
        # `enable --now` leaves a running daemon on the old unit; restart it if it runs.
        steps.append(RunCommand(_systemctl("try-restart", UNIT_NAME)))
    return Plan(
        SYSTEMD, "install", tuple(steps), manual_systemd_commands("install", user)
    )


def _differs(path: str, content: bytes) -> bool:
    """Return True when `path` exists with other bytes (a changing reinstall)."""
    try:
        with open(path, "rb") as existing:
            return existing.read() != content
    except FileNotFoundError:
        return False


def uninstall_plan(
    manager: str, *, env: Mapping[str, str], home: str, uid: int, user: str
) -> Plan:
    """Return the steps that stop the service and remove its file."""
    if manager == LAUNCHD:
        bootout = RunCommand(
            ("launchctl", "bootout", f"gui/{uid}/{LABEL}"), may_fail=True
        )
        return Plan(
            LAUNCHD, "uninstall", (bootout, RemoveFile(launchd_plist_path(home)))
        )
    steps = (
        RunCommand(_systemctl("disable", "--now", UNIT_NAME), may_fail=True),
        RemoveFile(systemd_unit_path(env, home)),
        RunCommand(_systemctl("daemon-reload")),
    )
    return Plan(SYSTEMD, "uninstall", steps, manual_systemd_commands("uninstall", user))


def status_command(manager: str, uid: int) -> tuple[str, ...]:
    """Return the command that shows the service manager's view of memd."""
    if manager == LAUNCHD:
        return ("launchctl", "print", f"gui/{uid}/{LABEL}")
    return _systemctl("status", "--no-pager", "--full", UNIT_NAME)


def describe_plan(plan: Plan) -> str:
    """Return the plan as text: each file in full, each command as a shell line."""
    return "".join(_describe_step(step, full=True) + "\n" for step in plan.steps)


def _describe_step(step: Step, *, full: bool = False) -> str:
    if isinstance(step, MakeDir):
        return f"mkdir -p {shlex.quote(step.path)}"
    if isinstance(step, RemoveFile):
        return f"rm -f {shlex.quote(step.path)}"
    if isinstance(step, WriteFile):
        if not full:
            return f"wrote {step.path}"
        body = step.content.decode().rstrip("\n")
        return f"# write {step.path}:\n{body}\n# end of {step.path}"
    return shlex.join(step.argv) + ("  # may fail" if step.may_fail else "")


def run_command(argv: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """Run a service-manager command, capturing its output.

    Raises:
        ServiceError: the command does not exist on this machine.
    """
    import subprocess

    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ServiceError(
            f"{argv[0]} not found; is this the right service manager?"
            " (try --systemd or --launchd)"
        ) from None


def is_unreachable(
    result: subprocess.CompletedProcess[str], env: Mapping[str, str]
) -> bool:
    """Return True when a failed `systemctl --user` found no user manager to talk to."""
    if result.returncode == 0 or tuple(result.args[:2]) != ("systemctl", "--user"):
        return False
    return not env.get("XDG_RUNTIME_DIR") or any(
        m in result.stderr for m in UNREACHABLE_MARKERS
    )


def describe_unreachable(result: subprocess.CompletedProcess[str]) -> str:
    """Return the one line that says no user manager answered, and why."""
    reason = _first_line(result.stderr) or "XDG_RUNTIME_DIR is not set"
    return f"systemctl --user cannot reach a user service manager ({reason})"


def execute_plan(
    plan: Plan,
    *,
    env: Mapping[str, str] | None = None,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Carry out `plan` step by step; stop at the first failure.

    Raises:
        UserManagerUnreachable: systemctl found no user manager (files already
            written stay; `manual` finishes the job).
        ServiceError: a command failed.
    """
    env = os.environ if env is None else env
    for step in plan.steps:
        if isinstance(step, MakeDir):
            os.makedirs(step.path, exist_ok=True)
        elif isinstance(step, WriteFile):
            write_atomic(step.path, step.content, mode=0o644)
        elif isinstance(step, RemoveFile):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(step.path)
        else:
            result = run_command(step.argv)
            if is_unreachable(result, env):
                raise UserManagerUnreachable(
                    describe_unreachable(result), manual=plan.manual
                )
            if result.returncode != 0 and not step.may_fail:
                detail = _first_line(result.stderr) or _first_line(result.stdout)
                raise ServiceError(
                    f"`{shlex.join(step.argv)}` failed"
                    f" with exit {result.returncode}: {detail}"
                )
        if echo is not None:
            echo(_describe_step(step))


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
