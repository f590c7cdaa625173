"""`memd mcp`'s first answers: the handshake and the listings, before the SDK loads.

Importing the `mcp` SDK (pydantic models of every protocol revision) costs
about 1.6 s of CPU, 4 s and more of wall time on a loaded machine, and Claude
Code 2.1.112 in print mode gives its MCP servers 5 s to answer `initialize`
and `tools/list` before it goes on without their tools (docs/e2e.md). So the
lobby answers, from the standard library and `memd.mcp_server.catalog`,
exactly what the SDK would: `initialize`, the `initialized` notification,
`ping` and the listings. The first line that is anything else (a tool call,
a resource read, a second `initialize`, a line it cannot parse) hands the
wire to the SDK, with the bytes it must read first: the client's
`initialize` again under `LOBBY_INITIALIZE_ID` (the SDK's answer to it is
dropped), the `initialized` notification if it came, and every byte not yet
handled. The SDK then answers everything from that line on, errors included.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from memd import fastjson
from memd.mcp_server.catalog import LISTINGS, initialize_result

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# A memory_write carries at most a topic file (256 KiB by default), escaped.
MAX_LINE_BYTES = 8 * 1024 * 1024
# The lobby's lines are a few hundred bytes; a longer one goes to the SDK.
MAX_LOBBY_LINE_BYTES = 64 * 1024
MAX_LOBBY_DEPTH = 16
READ_BYTES = 65536
LOBBY_INITIALIZE_ID = "memd-lobby-initialize"
INITIALIZED = "notifications/initialized"


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Yield private copies of fds 0 and 1 for the protocol.

    While serving, fd 0 reads the null device and fd 1 writes to stderr, so a
    stray print or child process never lands on the wire (what the SDK does
    for its own streams). The copies stay open: a worker thread may still be
    blocked reading one when serving ends.
    """
    try:
        wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:  # no descriptors to spare: serve the wire in place
        yield 0, 1
        return
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


class Lobby:
    """The handshake's state: what the client said, to replay it to the SDK."""

    def __init__(self) -> None:
        self.initialize: dict[str, object] | None = None
        self.initialized = False

    def answer(self, line: bytes) -> bytes | None:
        """Return the reply to one line (b"" for none), or None: the SDK's turn."""
        if not line.strip():
            return b""  # framing slack, as the SDK skips it
        try:
            message = fastjson.loads(line, max_depth=MAX_LOBBY_DEPTH, strict_text=True)
        except (ValueError, RecursionError):
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, request_id = message.get("method"), message.get("id")
        if method == INITIALIZED and self.initialize is not None:
            if "id" in message or self.initialized:
                return None
            self.initialized = True
            return b""
        if not _is_id(request_id):
            return None
        if self.initialize is None:
            result = _initialize(message)
            if result is None:
                return None
            self.initialize = message
        elif method in LISTINGS and message.get("params", {}) == {}:
            result = LISTINGS[str(method)]
        else:
            return None
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        return (fastjson.dumps(reply) + "\n").encode("utf-8")

    def replay(self) -> bytes:
        """The handshake again, for the SDK, under the lobby's own request id."""
        if self.initialize is None:
            return b""
        again = {**self.initialize, "id": LOBBY_INITIALIZE_ID}
        lines = [fastjson.dumps(again)]
        if self.initialized:
            lines.append(fastjson.dumps({"jsonrpc": "2.0", "method": INITIALIZED}))
        return "".join(line + "\n" for line in lines).encode("utf-8")


def greet(wire_in: int, wire_out: int) -> bytes | None:
    """Answer the lobby's lines; return what the SDK must read first, or None.

    None: the client closed the wire with nothing left for the SDK.
    """
    lobby = Lobby()
    buffer = bytearray()
    while True:
        chunk = os.read(wire_in, READ_BYTES)
        if not chunk:
            return lobby.replay() + bytes(buffer) if buffer.strip() else None
        buffer += chunk
        while (newline := buffer.find(b"\n")) >= 0:
            reply = lobby.answer(bytes(buffer[:newline]))
            if reply is None:
                return lobby.replay() + bytes(buffer)
            del buffer[: newline + 1]
            _write_all(wire_out, reply)
        if len(buffer) > MAX_LOBBY_LINE_BYTES:
            return lobby.replay() + bytes(buffer)


def _initialize(message: dict[str, object]) -> dict[str, object] | None:
    """The answer to a well-formed `initialize` request, else None."""
    params = message.get("params")
    if message.get("method") != "initialize" or not isinstance(params, dict):
        return None
    version, client = params.get("protocolVersion"), params.get("clientInfo")
    if not isinstance(version, str) or not isinstance(params.get("capabilities"), dict):
        return None
    if not isinstance(client, dict) or not all(
        isinstance(client.get(key), str) for key in ("name", "version")
    ):
        return None
    return initialize_result(version)


def _is_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
