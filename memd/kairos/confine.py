"""Run a dream agent that can write only in its scratch folder, and outlives nothing.

memd starts the agent through this file, run as a script with the standard
library only (`python -I confine.py [--landlock] SCRATCH -- ARGV...`), in a
session and process group of its own:

1. **Landlock** (Linux 5.13+, unprivileged; landlock(7)). With `--landlock`
   the forked child restricts itself before it execs the agent: every way of
   changing the filesystem (write, truncate, create, remove, rename, link) is
   refused outside SCRATCH, except writing to devices under `/dev`
   (`/dev/null`, a tty). Reads are not restricted. The restriction is
   inherited by everything the agent starts and cannot be lifted, so no
   process of the agent can change the live memory directory: a change there
   while the agent runs was made by someone else. With ABI 6+ the agent also
   cannot signal a process outside its domain (this supervisor, memd).
   When Landlock is available and the restriction fails, the agent is not run
   (exit 126): memd never believes it is confined when it is not.
2. **A subreaper.** This process is `PR_SET_CHILD_SUBREAPER`, so an agent's
   child that detaches (`setsid`, a double fork) is re-parented here, never
   to init. When the agent exits, or memd sends SIGTERM at the deadline,
   every descendant is killed and reaped before this process exits with the
   agent's status (128 + the signal for a signal).

`sweep` is memd's side: after this process is gone, anything left in the
agent's process group or session, or with its cwd in SCRATCH or SCRATCH's
marker in its environment, is killed and waited for, within a bound.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import struct
import sys
import time

SCRATCH_ENV = "MEMD_DREAM_SCRATCH"  # every agent process starts with this set
CONFINE_FAILED = 126
NOT_FOUND = 127

# landlock(7): the syscall numbers are the same on every architecture.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS = 36, 38
_WRITE_FILE = 1 << 1
_CHANGES = (  # remove/make every kind of entry, and write
    _WRITE_FILE | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8)
)
_CHANGES |= (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_REFER = 1 << 13  # ABI 2: rename or link across directories
_TRUNCATE = 1 << 14  # ABI 3
_SCOPE_SIGNAL = 1 << 1  # ABI 6
_KILL_ROUNDS_SECONDS = 5.0


def _syscall(*args: object) -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = int(libc.syscall(*args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def landlock_abi() -> int:
    """Return the kernel's Landlock ABI version, 0 when it has none (or denies it)."""
    import ctypes

    try:
        return _syscall(
            ctypes.c_long(_CREATE_RULESET),
            None,
            ctypes.c_size_t(0),
            ctypes.c_uint32(_CREATE_RULESET_VERSION),
        )
    except (OSError, AttributeError, ImportError):  # no ctypes: no Landlock either
        return 0


def _prctl(option: int, value: int) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


def restrict_writes(scratch: str, abi: int) -> None:
    """Refuse this process and its future children any change outside `scratch`."""
    import ctypes

    changes = _CHANGES | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    if abi >= 6:
        attr = struct.pack("=QQQ", changes, 0, _SCOPE_SIGNAL)
    else:
        attr = struct.pack("=Q", changes)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(
        ctypes.c_long(_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)), 0
    )
    try:
        devices = _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
        for path, allowed in ((scratch, changes), ("/dev", devices)):
            fd = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd), 12)
                _syscall(ctypes.c_long(_ADD_RULE), ruleset, _RULE_PATH_BENEATH, rule, 0)
            finally:
                os.close(fd)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _syscall(ctypes.c_long(_RESTRICT_SELF), ruleset, 0)
    finally:
        os.close(ruleset)


class _Process:
    __slots__ = ("group", "pid", "ppid", "session", "state")

    def __init__(self, pid: int, fields: list[str]) -> None:
        self.pid = pid
        self.state = fields[0]
        self.ppid, self.group, self.session = (int(f) for f in fields[1:4])


def _processes() -> list[_Process]:
    """Every process /proc shows (comm may hold spaces and parentheses)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        raw = _read_proc(name, "stat", 4096)
        if raw is None:
            continue
        line = raw.decode("ascii", "replace")
        fields = line[line.rfind(")") + 2 :].split()
        with contextlib.suppress(ValueError, IndexError):
            found.append(_Process(int(name), fields))
    return found


def _descendants(root: int, processes: list[_Process]) -> list[_Process]:
    children: dict[int, list[_Process]] = {}
    for process in processes:
        children.setdefault(process.ppid, []).append(process)
    found, pending = [], [root]
    while pending:
        for child in children.get(pending.pop(), ()):
            found.append(child)
            pending.append(child.pid)
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_descendants() -> None:
    """SIGKILL and reap every descendant of this process, round after round."""
    deadline = time.monotonic() + _KILL_ROUNDS_SECONDS
    while time.monotonic() < deadline:
        alive = [p for p in _descendants(os.getpid(), _processes()) if p.state != "Z"]
        _reap()
        if not alive and not any(_descendants(os.getpid(), _processes())):
            return
        for process in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)
        time.sleep(0.01)
        _reap()


def _belongs(process: _Process, group: int, scratch: str) -> bool:
    if process.group == group or process.session == group:
        return True
    try:
        cwd = os.readlink(f"/proc/{process.pid}/cwd")
    except OSError:
        cwd = ""
    if cwd == scratch or cwd.startswith(scratch + os.sep):
        return True
    marker = f"{SCRATCH_ENV}={scratch}".encode()
    environ = _read_proc(str(process.pid), "environ", 1 << 20)
    return environ is not None and marker in environ.split(b"\0")


def _read_proc(pid: str, name: str, limit: int) -> bytes | None:
    """Return up to `limit` bytes of /proc/PID/NAME, None when it cannot be read.

    Kernel files, not a user's: memd.fsread's caps and checks are for those,
    and this file runs with the standard library only.
    """
    try:
        fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def sweep(group: int, scratch: str) -> int:
    """Kill what the agent left (its group, its session, cwd or marker in `scratch`).

    Returns how many processes were killed. Waits, within a bound, until each
    is gone or a zombie, so none still writes into `scratch` afterwards.
    """
    me, uid = os.getpid(), os.getuid()
    killed: set[int] = set()
    deadline = time.monotonic() + _KILL_ROUNDS_SECONDS
    while time.monotonic() < deadline:
        left = []
        for process in _processes():
            if process.pid == me or process.state in ("Z", "X"):
                continue
            try:
                if os.stat(f"/proc/{process.pid}").st_uid != uid:
                    continue
            except OSError:
                continue
            if _belongs(process, group, scratch):
                left.append(process.pid)
        if not left:
            break
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.01)
    return len(killed)


def _stop(signum: int, frame: object) -> None:
    # SIGTERM from memd: leave the wait; what is left is reaped below.
    raise SystemExit(128 + signum)


def _supervise(pid: int) -> int:
    status: int | None = None
    try:
        while status is None:
            try:
                found, raw = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if found == pid:
                status = os.waitstatus_to_exitcode(raw)
    except SystemExit:
        status = 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        kill_descendants()
    if status is None:
        return 1
    return 128 - status if status < 0 else status


def main(argv: list[str]) -> int:
    """`[--landlock] SCRATCH -- ARGV...`: run ARGV confined; return its status."""
    landlock = argv[:1] == ["--landlock"]
    argv = argv[1:] if landlock else argv
    scratch, command = argv[0], argv[2:]
    signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(OSError, ImportError):  # else memd's sweep still runs
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            if landlock:
                restrict_writes(scratch, landlock_abi())
        except (OSError, ImportError) as error:
            os.write(2, f"memd could not confine the dream agent: {error}\n".encode())
            os._exit(CONFINE_FAILED)
        try:
            os.execv(command[0], command)  # noqa: S606 -- the configured argv, no shell
        except OSError as error:
            os.write(2, f"dream agent could not start: {error}\n".encode())
            os._exit(NOT_FOUND if error.errno == errno.ENOENT else CONFINE_FAILED)
    return _supervise(pid)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
