"""The viewer keeps its connections for its owner (#41 class 8), on real sockets.

A real `memd run` serves the viewer. Another local user (`setpriv` to
nobody, as root) opens 100 half-open connections: each is closed at accept,
and the owner is still served, never a 503. A half-open connection of the
owner's own is closed once its headers are late.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from typing import Any

import pytest

from memd.ui.server import HEADER_SECONDS, MAX_CONNECTIONS
from tests.conftest import Home
from tests.daemon.conftest import backdate
from tests.ui.conftest import make_project

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

HALF_OPEN = 100
AS_NOBODY = ("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups")

# Runs as another user: opens HALF_OPEN connections, sends half a request on
# each, says "ready", then waits for the owner's request to be done
# (a line on stdin) and reports how many the server had closed by then.
FLOOD = """
import socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(b"GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
    except OSError:
        pass
    held.append(s)
print("ready", flush=True)
sys.stdin.readline()
closed = 0
for s in held:
    s.settimeout(0.2)
    try:
        closed += s.recv(1) == b""
    except TimeoutError:
        pass
    except OSError:
        closed += 1
print("closed", closed, flush=True)
"""


@pytest.fixture(name="served")
def _served(isolated_home: Home, start_viewer: Any) -> tuple[Any, str]:
    memory = make_project(isolated_home.home, "guarded")
    backdate(memory)
    viewer = start_viewer()
    return viewer, viewer.cookie()


def test_another_users_half_open_connections_never_cost_the_owner(
    served: Any,
) -> None:
    """100 half-open connections as nobody: closed at accept; the owner gets 200."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to connect as another user")
    assert HALF_OPEN > MAX_CONNECTIONS
    viewer, cookie = served
    with subprocess.Popen(
        [
            *AS_NOBODY,
            sys.executable,
            "-I",
            "-c",
            FLOOD,
            str(viewer.port),
            str(HALF_OPEN),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    ) as flood:
        assert flood.stdout is not None
        assert "ready" == flood.stdout.readline().strip()

        statuses = [
            viewer.request("GET", "/", headers={"Cookie": cookie})[0] for _ in range(5)
        ]

        out, _ = flood.communicate("done\n", timeout=60)
    report = out.split()
    assert [200] * 5 == statuses
    assert ["closed", str(HALF_OPEN)] == report


def test_the_owners_own_half_open_connection_is_closed_when_its_headers_are_late(
    served: Any,
) -> None:
    """No header timeout meant a stalled client held its slot for ever."""
    viewer, cookie = served
    stalled = socket.create_connection(("127.0.0.1", viewer.port), timeout=30)
    try:
        stalled.sendall(b"GET / HTTP/1.1\r\nHost: " + viewer.host.encode() + b"\r\n")
        start = time.monotonic()
        stalled.settimeout(HEADER_SECONDS + 10)
        try:
            answer = stalled.recv(1)
        except ConnectionResetError:
            answer = b""
        waited = time.monotonic() - start
    finally:
        stalled.close()

    assert b"" == answer
    assert HEADER_SECONDS - 1 <= waited < HEADER_SECONDS + 10
    assert 200 == viewer.request("GET", "/", headers={"Cookie": cookie})[0]


def test_the_owners_slow_but_steady_keep_alive_requests_are_served(
    served: Any,
) -> None:
    """A kept-alive connection's second request, headers in time, is answered."""
    viewer, cookie = served
    with socket.create_connection(("127.0.0.1", viewer.port), timeout=30) as conn:
        request = (
            f"GET / HTTP/1.1\r\nHost: {viewer.host}\r\nCookie: {cookie}\r\n\r\n"
        ).encode()
        for _ in range(2):
            conn.sendall(request)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                assert chunk, head
                head += chunk
            assert head.startswith(b"HTTP/1.1 200"), head[:100]
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            body = head.split(b"\r\n\r\n", 1)[1]
            while len(body) < length:
                body += conn.recv(65536)
            time.sleep(1)


def test_the_kernel_names_a_real_sockets_owner() -> None:
    """The sock_diag lookup on a real loopback connection: our uid, none for none."""
    from memd.ui.app import _diag_peer_uid

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as _client:
            conn, address = server.accept()
            with conn:
                found = _diag_peer_uid(address[:2], conn.getsockname()[:2])
                gone = _diag_peer_uid(("127.0.0.1", 1), ("127.0.0.1", 2))

    assert os.getuid() == found
    assert gone is None
