"""Install and remove memd's user service: a systemd unit or a launchd agent.

The files themselves are rendered in `memd.service.units` (pure). Installing
and removing are *plans*: ordered steps (make a directory, write a file, run a
command) built as data, printed by `--dry-run` and carried out by
`execute_plan`, the one place that touches the disk or a service manager.

Outside behaviour relied on:

- `systemctl --user` talks to the user manager over `$XDG_RUNTIME_DIR/bus`;
  without a login session (containers, SSH without lingering) it fails with
  "Failed to connect to bus". That is not memd's error to fix, so the manual
  commands are printed instead.
- `launchctl bootstrap` refuses an agent that is already loaded, hence the
  `bootout` (allowed to fail) before it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass

from memd.atomic import write_atomic
from memd.errors import ServiceError
from memd.service.units import (
    LABEL,
    UNIT_NAME,
    launchd_log_dir,
    launchd_plist_path,
    render_launchd_plist,
    render_systemd_unit,
    systemd_unit_path,
    writable_dirs,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Mapping

SYSTEMD = "systemd"
LAUNCHD = "launchd"
# What systemctl prints when no user manager answers on the bus.
UNREACHABLE_MARKERS = ("Failed to connect to", "No medium found", "not been booted")


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
    steps = [MakeDir(path) for path in writable_dirs(env, home, writable)]
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
