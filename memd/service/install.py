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
- A user manager connects a unit's stdout to journald through the stream
  socket `/run/systemd/journal/stdout`; without it the output is lost, so
  install then renders a log file instead.
- `systemctl status` names a failed process's exit as `status=218/CAPABILITIES`
  (systemd.exec(5), "Process exit codes"); `systemctl show` has the numbers.
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

# journald's stream socket: where a user manager connects a service's stdout.
JOURNAL_STDOUT_SOCKET = "/run/systemd/journal/stdout"
# systemctl's words when the start job it waited for failed (the unit's result).
JOB_FAILED = "Job for "
# How much of `systemctl --user status` an install failure quotes.
STATUS_TAIL_LINES = 12

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable, Mapping

SYSTEMD = "systemd"
LAUNCHD = "launchd"
# What systemctl prints when no user manager answers on the bus.
UNREACHABLE_MARKERS = ("Failed to connect to", "No medium found", "not been booted")


class ServiceStartFailed(ServiceError):
    """The unit is written but did not start; `details` are systemd's own lines."""

    def __init__(self, message: str, *, details: tuple[str, ...], hint: str):
        super().__init__(message)
        self.details = details
        self.hint = hint


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
    log_file: str | None = None,
) -> Plan:
    """Return the steps that write the unit for this machine and start it.

    `log_file`: where the unit sends stdout and stderr (None: the journal).
    """
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
    content = render_systemd_unit(memd_path, env, log_file=log_file).encode()
    dirs = (*writable_dirs(env, home, writable), *_parent(log_file))
    steps = [MakeDir(path) for path in dict.fromkeys(dirs)]
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


def _parent(path: str | None) -> tuple[str, ...]:
    return () if path is None else (os.path.dirname(path),)


def journal_running(socket_path: str = JOURNAL_STDOUT_SOCKET) -> bool:
    """Return True when journald listens, so a unit's output reaches the journal."""
    import stat

    try:
        return stat.S_ISSOCK(os.stat(socket_path).st_mode)
    except OSError:
        return False


def dropin_dir(env: Mapping[str, str], home: str) -> str:
    """Return the unit's drop-in directory, `memd.service.d` beside it."""
    return systemd_unit_path(env, home) + ".d"


def _differs(path: str, content: bytes) -> bool:
    """Return True when `path` exists with other bytes (a changing reinstall)."""
    from memd.fsread import read_bytes

    try:
        return read_bytes(path, follow=True) != content
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
        # A unit that failed stays listed as failed until this, even when gone.
        RunCommand(_systemctl("reset-failed", UNIT_NAME), may_fail=True),
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
                if _starts_unit(step.argv) and JOB_FAILED in result.stderr:
                    raise start_failure(step.argv, plan)
                detail = _telling_line(result.stderr) or _first_line(result.stdout)
                raise ServiceError(
                    f"`{shlex.join(step.argv)}` failed"
                    f" with exit {result.returncode}: {detail}"
                )
        if echo is not None:
            echo(_describe_step(step))


def read_log_tail(path: str, lines: int, max_bytes: int = 64 * 1024) -> list[str]:
    """Return the last `lines` lines of the log file at `path`, reading at most its end.

    Opened without following a link or blocking on a FIFO; only a regular file
    is read, and only its last `max_bytes`.

    Raises:
        OSError: the file is missing, a link, not a regular file or unreadable.
    """
    from memd.fsread import open_regular

    fd = open_regular(path)
    try:
        info = os.fstat(fd)
        start = max(0, info.st_size - max_bytes)
        data = os.pread(fd, max_bytes, start)
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace").splitlines()
    if start > 0 and text:
        text = text[1:]  # the first line was cut by the read window
    return text[-lines:]


def _starts_unit(argv: tuple[str, ...]) -> bool:
    """Return True for the commands that start memd: `enable --now`, try-restart."""
    return argv[:2] == ("systemctl", "--user") and (
        "--now" in argv or "try-restart" in argv
    )


def start_failure(argv: tuple[str, ...], plan: Plan) -> ServiceStartFailed:
    """Ask systemd why memd did not start and return the error that says so."""
    show = run_command(
        _systemctl("show", UNIT_NAME, "--property=Result,ExecMainCode,ExecMainStatus")
    )
    status = run_command(_systemctl("status", "--no-pager", "--full", UNIT_NAME))
    unit = next((s.path for s in plan.steps if isinstance(s, WriteFile)), UNIT_NAME)
    return ServiceStartFailed(
        f"`{shlex.join(argv)}` failed: {UNIT_NAME} did not start"
        f" ({describe_result(show.stdout, status.stdout)})",
        details=tuple(status_tail(status.stdout)),
        hint=f"the unit stays at {unit}; change it with a drop-in in {unit}.d/"
        " (systemctl --user edit memd), then see `memd service status`",
    )


def describe_result(show: str, status: str) -> str:
    """Return "result exit-code, status=218/CAPABILITIES" from systemd's output.

    `show` is `systemctl show -p Result,ExecMainCode,ExecMainStatus`; `status`
    is `systemctl status`, whose "status=218/CAPABILITIES" names the code.
    """
    props = dict(line.partition("=")[::2] for line in show.splitlines() if "=" in line)
    parts = [f"result {props['Result']}"] if props.get("Result") else []
    named = _exit_status_name(status)
    if named:
        parts.append(f"status={named}")
    elif props.get("ExecMainStatus", "0") != "0":
        parts.append(f"status={props['ExecMainStatus']}")
    return ", ".join(parts) or "systemd gave no reason"


def _exit_status_name(status: str) -> str:
    """Return the last "NNN/NAME" after "status=" in `status`, or ""."""
    found = ""
    for line in status.splitlines():
        start = line.rfind("status=")
        if start < 0:
            continue
        word = line[start + len("status=") :].split(")")[0].split(",")[0].strip()
        code, _, name = word.partition("/")
        if code.isdigit() and name:
            found = word
    return found


def status_tail(status: str, lines: int = STATUS_TAIL_LINES) -> list[str]:
    """Return the last `lines` non-empty lines of `systemctl status` output."""
    kept = [line.rstrip() for line in status.splitlines() if line.strip()]
    return kept[-lines:]


def _telling_line(stderr: str) -> str:
    """Return systemctl's first stderr line that is not news of a link it made."""
    noise = ("Created symlink", "Removed ")
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return next((line for line in lines if not line.startswith(noise)), "")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
