"""Lint by the running daemon, for the hooks: the socket, the request, the client.

After a tool call changes memory, PostToolUse must lint the directory. A fresh
process pays for the lint engine, the frontmatter reader and the config
(`dataclasses`, `tomllib`, `re`: about 30 ms) on every write; the daemon has
them loaded and lints a directory of 30 files in about 2 ms. So the hook asks
the daemon first and lints by itself only when no daemon answers.

One request per connection, one JSON line each way, over a Unix stream socket
in memd's runtime dir (`hooks.sock`, mode 0600 in a 0700 directory; each side
checks the other's uid by `SO_PEERCRED` where the platform has it):

    -> {"lint": MEMORY_DIR, "profile": RELEASE or null, "settings": SETTINGS}
    <- {"findings": [DIAGNOSTIC, ...]}  or  {"refused": REASON}
    -> {"ping": true}
    <- {"pong": PID, "heartbeat_age": SECONDS since the settle thread's last round}

The ping is how `memd status` and `memd doctor` know the daemon answers, not
only that its pid lives: a stopped (SIGSTOP) or wedged daemon holds its lock
but answers nothing within the deadline.

SETTINGS is what lint depends on besides the files and the release: memd's
version, the config file's path and stat, and the lint keys' MEMD_*
variables. The daemon answers only when they equal what its loaded config was
read under, and only for a memory directory it watches; anything else is
refused and the hook lints by itself, so the answer never differs from the
hook's own.

Standard library only, through `_socket`: the `socket` module imports `enum`,
a cost the hooks' budget has no room for.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

from memd import fastjson
from memd._version import __version__
from memd.dirs import config_path, runtime_dir
from memd.statkey import key_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SOCKET_NAME = "hooks.sock"
# The environment variables of the config keys lint reads (memd.config_keys).
LINT_ENV = (
    "MEMD_LINT_SEVERITIES",
    "MEMD_MAX_TOPIC_FILE_BYTES",
    "MEMD_WHY_LABELS",
    "MEMD_HOW_LABELS",
)
MAX_REQUEST_BYTES = 64 * 1024
MAX_REQUEST_DEPTH = 8  # a request nests 3 deep; the C parser recurses per level
MAX_ANSWER_BYTES = 8 * 1024 * 1024
MAX_ANSWER_DEPTH = 16  # findings nest 3 deep
TIMEOUT_SECONDS = 2.0  # a busy daemon; past this the hook lints by itself

Finding = dict[str, object]


def socket_path(env: Mapping[str, str], *, state_dir: str | None = None) -> str:
    """Return where the daemon listens (`state_dir`: the daemon's, when known)."""
    return os.path.join(runtime_dir(env, state_dir=state_dir), SOCKET_NAME)


def lint_settings(env: Mapping[str, str]) -> list[object]:
    """What lint depends on besides the files and the release.

    memd's version (a daemon left running over an upgrade lints by the old
    rules), the config file's path and stat, and lint's variables.
    """
    path = config_path(env)
    try:
        st = os.stat(path)
        stat: list[int] | None = list(key_of(st))
    except OSError:
        stat = None
    return [__version__, path, stat, *(env.get(name, "") for name in LINT_ENV)]


def same_user(sock: _socket.socket) -> bool:
    """Whether the peer of a connected Unix socket runs as this process's user."""
    peercred = getattr(_socket, "SO_PEERCRED", None)
    if peercred is None:  # macOS: the 0700 directory is the guard
        return True
    cred = sock.getsockopt(_socket.SOL_SOCKET, peercred, 12)  # pid, uid, gid: ints
    return int.from_bytes(cred[4:8], sys.byteorder) == os.getuid()


def read_line(
    sock: _socket.socket, limit: int, *, seconds: float = TIMEOUT_SECONDS
) -> bytes | None:
    """Read up to the first newline; None past `limit` bytes or `seconds` in all.

    The socket's own timeout bounds each `recv`; `seconds` bounds the whole
    line, so a peer that drips a byte at a time cannot hold the reader.
    """
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            break
        if size > limit or time.monotonic() > deadline:
            return None
    data = b"".join(chunks)
    line, newline, _ = data.partition(b"\n")
    return line if newline and len(line) <= limit else None


def lint_by_daemon(
    memory_dir: str, profile: str | None, env: Mapping[str, str]
) -> list[Finding] | None:
    """The running daemon's findings for `memory_dir`, or None when it cannot say."""
    request = {
        "lint": memory_dir.rstrip(os.sep) or os.sep,
        "profile": profile,
        "settings": lint_settings(env),
    }
    answer = ask_daemon(request, socket_path(env), TIMEOUT_SECONDS)
    findings = answer.get("findings") if isinstance(answer, dict) else None
    if not isinstance(findings, list) or not all(isinstance(f, dict) for f in findings):
        return None
    return findings


def ping_daemon(path: str, seconds: float) -> dict[str, object] | None:
    """The daemon's pong on the socket at `path` within `seconds`, or None."""
    answer = ask_daemon({"ping": True}, path, seconds)
    if not isinstance(answer, dict) or not isinstance(answer.get("pong"), int):
        return None
    return answer


def ask_daemon(request: object, path: str, seconds: float) -> object | None:
    """Send one request line to the socket at `path`; its decoded answer, or None.

    None when nothing answers a whole line within `seconds`, or the answer is
    not JSON.
    """
    try:
        sock = _socket.socket(
            _socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC
        )
    except OSError:
        return None
    try:
        sock.settimeout(seconds)
        sock.connect(path)
        if not same_user(sock):
            return None
        sock.sendall(fastjson.dumps(request).encode() + b"\n")
        line = read_line(sock, MAX_ANSWER_BYTES, seconds=seconds)
    except OSError:  # no daemon, a stale socket, a timeout, a path too long
        return None
    finally:
        sock.close()
    if line is None:
        return None
    try:
        return fastjson.loads(line, max_depth=MAX_ANSWER_DEPTH)
    except ValueError:
        return None
