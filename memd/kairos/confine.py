"""Run a dream agent that reaches only its copy and its model, and outlives nothing.

memd starts the agent through this file, run as a script with the standard
library only (`python -I confine.py [--policy JSON] SCRATCH -- ARGV...`), in
a session and process group of its own:

1. **Confinement** (`--policy`, built by `policy` on memd's side). The forked
   child restricts itself before it execs the agent, and everything the
   agent starts inherits it for good:
   - **Landlock** (landlock(7), ABI `NEEDED_ABI`+, unprivileged). Files: the
     agent may read and change only SCRATCH; it may read (never change) the
     system folders, `/proc` but other processes' `/proc/PID` (memd's
     environment), its own install and the files the policy names; it may
     read and write `/dev/null`, `/dev/zero`, `/dev/full` and read
     `/dev/random`, `/dev/urandom`: no other device, not `/dev/shm`. Nothing
     of memd's (state, cache, config, runtime dir with the viewer's
     `ui.json` and `hooks.sock`) nor the live memory is in the policy, and
     `policy` refuses a folder that holds one. TCP: no bind, connect only to
     the policy's ports (the model's), never the viewer's. With ABI 6+ it
     cannot signal a process outside its domain (this supervisor, memd) nor
     reach an abstract unix socket; at any ABI it cannot ptrace one.
   - **seccomp**: `socket(AF_UNIX, ...)` fails with EACCES (Landlock does not
     cover connecting to a named unix socket: memd's `hooks.sock`, the
     session bus, systemd), and so does io_uring (it makes sockets without
     `socket`); a foreign-architecture system call kills the process.
   When any of it fails, the agent is not run (exit 126): memd never
   believes the agent is confined when it is not.
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
from typing import TypedDict

SCRATCH_ENV = "MEMD_DREAM_SCRATCH"  # every agent process starts with this set
CONFINE_FAILED = 126
NOT_FOUND = 127
NEEDED_ABI = 4  # Landlock's TCP rules (Linux 6.7): below, the agent is refused

# What every agent may read: the system it runs on (never /home, /run, /tmp).
SYSTEM_READ = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/etc", "/opt", "/nix/store", "/gnu/store", "/sys",
)  # fmt: skip
DEVICES_READ_WRITE = ("/dev/null", "/dev/zero", "/dev/full")
DEVICES_READ = ("/dev/random", "/dev/urandom")
# /etc files often links into /run (systemd-resolved): the target file alone.
SYSTEM_LINKS = ("/etc/resolv.conf", "/etc/hosts", "/etc/localtime")

# landlock(7): the syscall numbers are the same on every architecture.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_CHILD_SUBREAPER, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP = 36, 38, 22
_WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 1, 1 << 2, 1 << 3
_READ = _READ_FILE | _READ_DIR
_CHANGES = (  # remove/make every kind of entry, and write
    _WRITE_FILE | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8)
)
_CHANGES |= (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_REFER = 1 << 13  # ABI 2: rename or link across directories
_TRUNCATE = 1 << 14  # ABI 3
_BIND_TCP, _CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
_KILL_ROUNDS_SECONDS = 5.0

# seccomp: (AUDIT_ARCH_*, socket, io_uring_setup) per machine memd confines on.
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
_X32 = 0x40000000  # x86_64's x32 system calls: the same numbers, this bit set
_AF_UNIX = 1


class Policy(TypedDict):
    """What `policy` lets the agent reach; `--policy` carries it as JSON."""

    scratch: str
    read: list[str]  # folders (or files) it may read
    read_files: list[str]  # files it may read
    ports: list[int]  # TCP ports it may connect to


class Unconfinable(Exception):
    """The agent cannot be confined as asked; the message says why, in one line."""


def _syscall(*args: object) -> int:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    result = int(libc.syscall(*args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _probe_landlock() -> tuple[int, int]:
    """Return (the kernel's Landlock ABI, 0) or (0, the errno that denied it)."""
    import ctypes

    if not sys.platform.startswith("linux"):  # 444 is another call elsewhere
        return 0, errno.ENOSYS
    try:
        abi = _syscall(
            ctypes.c_long(_CREATE_RULESET),
            None,
            ctypes.c_size_t(0),
            ctypes.c_uint32(_CREATE_RULESET_VERSION),
        )
    except OSError as error:
        return 0, error.errno or errno.ENOSYS
    except (AttributeError, ImportError):  # no ctypes: no Landlock either
        return 0, errno.ENOSYS
    return abi, 0


def landlock_abi() -> int:
    """Return the kernel's Landlock ABI version, 0 when it has none (or denies it)."""
    return _probe_landlock()[0]


def unsupported() -> str:
    """Return why the agent cannot be confined here, or "" when it can."""
    abi, denied = _probe_landlock()
    if denied == errno.EPERM:
        return (
            "a seccomp filter denies Landlock (a service's SystemCallFilter; "
            "for memd's own unit, run `memd service install` again)"
        )
    if denied == errno.EOPNOTSUPP:
        return "Landlock is turned off in this kernel (its lsm= boot parameter)"
    if abi < NEEDED_ABI:
        found = f"Landlock ABI {abi}" if abi else "no Landlock"
        return (
            f"this kernel has {found}; confining the dream agent's network "
            f"needs ABI {NEEDED_ABI} (Linux 6.7+)"
        )
    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        return f"memd has no seccomp filter for {machine}"
    return ""


def _prctl(option: int, value: int, pointer: object = 0) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, ctypes.c_ulong(value), pointer, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


# Memd's side: what the agent may reach --------------------------------------


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _clear_of(candidate: str, protected: tuple[str, ...]) -> bool:
    """Whether reading `candidate` reaches none of `protected` (nor lies in one)."""
    return not any(_inside(p, candidate) or _inside(candidate, p) for p in protected)


def _interpreter(path: str, search: str) -> str | None:
    """Return the program a `#!` script at `path` runs (`env X`: X on `search`)."""
    import shutil

    from memd.fsread import read_prefix  # memd's side only: never in the child

    try:  # the configured program, through its link: bounded, never a FIFO
        head = read_prefix(path, 256, follow=True)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return shutil.which(names[0], path=search) if names else None
    return words[0]


def _install(path: str, protected: tuple[str, ...]) -> list[str]:
    """Return what to let the agent read of the program at `path`.

    For the path as named and as resolved: its install prefix
    (`<prefix>/bin/x`: a node, a Python or a venv beside its libraries), else
    its folder (an npm package's `cli.js`), else the file alone; never a
    folder holding memd's files or the live memory. [] when even the file is.
    """
    found = []
    for named in (os.path.abspath(path), os.path.realpath(path)):
        folder = os.path.dirname(named)
        for candidate in (os.path.dirname(folder), folder, named):
            if candidate not in ("", os.sep) and _clear_of(candidate, protected):
                found.append(candidate)
                break
    return found if len(found) == 2 else []  # both forms, or nothing


def policy(
    scratch: str,
    argv: list[str],
    search: str,
    *,
    protected: tuple[str, ...],
    readable: tuple[str, ...] = (),
    ports: tuple[int, ...] = (),
) -> Policy:
    """Return what the agent of `argv` may reach, as `--policy` takes it.

    `protected`: the paths it must never read or change (memd's dirs, the
    live memory, the agent's real config). `readable`: files it may read
    besides (the logs named to it). `ports`: the TCP ports it may connect
    to. Raises `Unconfinable` when what the agent needs would expose one.
    """
    protected = tuple(os.path.realpath(p) for p in protected)
    scratch = os.path.realpath(scratch)
    read = [p for p in SYSTEM_READ if os.path.isdir(p) and _clear_of(p, protected)]
    files = [os.path.realpath(p) for p in SYSTEM_LINKS if os.path.exists(p)]
    programs = [argv[0]]
    script = _interpreter(argv[0], search)
    if script is not None:
        programs.append(script)
    for argument in argv[1:]:  # `python /x/tool.py`, `node /x/cli.js`
        if os.path.isabs(argument) and os.path.isfile(argument):
            programs.append(argument)
    for program in programs:
        where = _install(program, protected)
        if not where:
            raise Unconfinable(
                f"the dream agent {program} lives among memd's own files or the "
                "memory; install it elsewhere"
            )
        read += where
    for path in read + files:
        if not _clear_of(path, protected):
            raise Unconfinable(f"the dream agent would read {path}")
    # Named by memd, not derived: a link among them would lead elsewhere.
    files += [p for p in readable if os.path.isfile(p) and not os.path.islink(p)]
    return {
        "scratch": scratch,
        "read": sorted(set(read)),
        "read_files": sorted({f for f in files if os.path.isfile(f)}),
        "ports": sorted(set(ports)),
    }


# The child's side: apply the policy -----------------------------------------


def _add_path(ruleset: int, path: str, allowed: int) -> None:
    import ctypes

    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # nothing there to reach
    try:
        rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd), 12)
        _syscall(ctypes.c_long(_ADD_RULE), ruleset, _RULE_PATH_BENEATH, rule, 0)
    finally:
        os.close(fd)


def _proc_entries() -> list[str]:
    """/proc without the other processes: its system files and this process's own.

    `/proc/self` is opened here, in the child that becomes the agent, so the
    agent reads its own /proc/PID (not memd's environment, nor any other's).
    """
    own = [f"/proc/{os.getpid()}"]
    return own + [
        f"/proc/{name}"
        for name in os.listdir("/proc")
        if not name.isdigit() and name not in ("self", "thread-self")
    ]


def _file_rights(path: str, rights: int) -> int:
    """A rule on a file (not a folder) may carry only the file rights."""
    import stat

    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return rights
    except OSError:
        return rights
    return rights & (_READ_FILE | _WRITE_FILE | _TRUNCATE)


def _strings(rules: dict[str, object], key: str) -> list[str]:
    """Return `rules[key]` as strings; a policy of another shape is refused."""
    value = rules.get(key)
    if not isinstance(value, list) or not all(
        isinstance(item, (str, int)) and not isinstance(item, bool) for item in value
    ):
        raise OSError(errno.EINVAL, f"a bad policy: {key}")
    return [str(item) for item in value]


def restrict(rules: dict[str, object], abi: int) -> None:
    """Confine this process and its future children to `rules` (from `policy`)."""
    import ctypes

    if abi < NEEDED_ABI:
        raise OSError(errno.ENOSYS, unsupported() or "no Landlock")
    truncate = _TRUNCATE if abi >= 3 else 0
    everything = _CHANGES | _READ | _REFER | truncate
    net = _BIND_TCP | _CONNECT_TCP
    if abi >= 6:
        scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
        attr = struct.pack("=QQQ", everything, net, scoped)
    else:
        attr = struct.pack("=QQ", everything, net)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _syscall(
        ctypes.c_long(_CREATE_RULESET), buffer, ctypes.c_size_t(len(attr)), 0
    )
    try:
        scratch = rules.get("scratch")
        if not isinstance(scratch, str):
            raise OSError(errno.EINVAL, "a bad policy: scratch")
        _add_path(ruleset, scratch, everything)
        for path in _strings(rules, "read"):
            _add_path(ruleset, path, _file_rights(path, _READ))
        for path in _strings(rules, "read_files"):
            _add_path(ruleset, path, _READ_FILE)
        for path in _proc_entries():
            _add_path(ruleset, path, _file_rights(path, _READ))
        for path in DEVICES_READ_WRITE:
            _add_path(ruleset, path, _READ_FILE | _WRITE_FILE | truncate)
        for path in DEVICES_READ:
            _add_path(ruleset, path, _READ_FILE)
        for port in _strings(rules, "ports"):
            rule = ctypes.create_string_buffer(
                struct.pack("=QQ", _CONNECT_TCP, int(port)), 16
            )
            _syscall(ctypes.c_long(_ADD_RULE), ruleset, _RULE_NET_PORT, rule, 0)
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        _syscall(ctypes.c_long(_RESTRICT_SELF), ruleset, 0)
    finally:
        os.close(ruleset)
    _deny_unix_sockets()


def _deny_unix_sockets() -> None:
    """seccomp: `socket(AF_UNIX)` and io_uring fail; a foreign arch's call kills."""
    import ctypes

    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}")
    arch, socket_nr, uring_nr = _SECCOMP_ARCH[machine]
    load, jump_eq, ret = 0x20, 0x15, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, RET|K
    allow, kill = 0x7FFF0000, 0x80000000  # SECCOMP_RET_ALLOW, KILL_PROCESS
    eacces, enosys = 0x00050000 | errno.EACCES, 0x00050000 | errno.ENOSYS
    socket_nrs = [socket_nr] + ([socket_nr | _X32] if machine == "x86_64" else [])
    uring_nrs = [uring_nr] + ([uring_nr | _X32] if machine == "x86_64" else [])
    program: list[tuple[int, int, int, int]] = [
        (load, 0, 0, 4),  # seccomp_data.arch
        (jump_eq, 1, 0, arch),
        (ret, 0, 0, kill),
        (load, 0, 0, 0),  # seccomp_data.nr
    ]
    checks = len(socket_nrs) + len(uring_nrs)
    # After the checks: [ALLOW], [ENOSYS], [load args[0], jeq AF_UNIX, ALLOW, EACCES].
    for index, number in enumerate(socket_nrs):
        to_args = checks - index - 1 + 2
        program.append((jump_eq, to_args, 0, number))
    for index, number in enumerate(uring_nrs):
        to_enosys = len(uring_nrs) - index - 1 + 1
        program.append((jump_eq, to_enosys, 0, number))
    program += [
        (ret, 0, 0, allow),
        (ret, 0, 0, enosys),
        (load, 0, 0, 16),  # low 32 bits of args[0]: the domain
        (jump_eq, 1, 0, _AF_UNIX),
        (ret, 0, 0, allow),
        (ret, 0, 0, eacces),
    ]
    raw = b"".join(struct.pack("=HBBI", *step) for step in program)
    filters = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("@HP", len(program), ctypes.addressof(filters))
    fprog_buffer = ctypes.create_string_buffer(fprog, len(fprog))
    _prctl(_PR_SET_SECCOMP, 2, ctypes.c_void_p(ctypes.addressof(fprog_buffer)))


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
    """`[--policy JSON] SCRATCH -- ARGV...`: run ARGV confined; return its status."""
    import json

    rules: dict[str, object] | None = None
    if argv[:1] == ["--policy"]:
        parsed, argv = json.loads(argv[1]), argv[2:]
        rules = parsed if isinstance(parsed, dict) else {}
    command = argv[2:]
    signal.signal(signal.SIGTERM, _stop)
    with contextlib.suppress(OSError, ImportError):  # else memd's sweep still runs
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            if rules is not None:
                restrict(rules, landlock_abi())
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
