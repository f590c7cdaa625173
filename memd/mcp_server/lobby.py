"""`memd mcp`'s first answers: the handshake and the listings, before the SDK loads.

Importing the `mcp` SDK (pydantic models of every protocol revision) costs
about 1.6 s of CPU, 4 s and more of wall time on a loaded machine, and Claude
Code 2.1.112 in print mode gives its MCP servers 5 s to answer `initialize`
and `tools/list` before it goes on without their tools (docs/e2e.md). So the
lobby answers, from the standard library and `memd.mcp_server.catalog`,
exactly what the SDK would, in either protocol era:

- the handshake era: `initialize`, the `initialized` notification, `ping`
  and the listings;
- the modern era (2026-07-28, Claude Code 2.1.332): no handshake, each
  request carries the envelope in `params._meta`; `server/discover`, one
  `subscriptions/listen` (acknowledged) and the listings.

Every line is framed and checked by `memd.mcp_server.wire` first, and a line
that fails is answered here, under its id when it has one, with no SDK. The
first valid line that is anything else (a tool call, a resource read, a
second `initialize`) hands the wire to the SDK, with the bytes it must read
first: the era's opening request again under `LOBBY_INITIALIZE_ID` (the
SDK's answer to it is dropped), the `initialized` notification or the
`subscriptions/listen` request if they came (the SDK's acknowledgement of
the listen is dropped: the client has the lobby's), and every byte not yet
handled. The SDK then answers everything from that line on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from memd import fastjson
from memd.mcp_server.catalog import (
    ENVELOPE,
    LISTEN_FLAGS,
    LISTINGS,
    MODERN_LISTINGS,
    MODERN_VERSIONS,
    initialize_result,
)
from memd.mcp_server.wire import READ_BYTES, LineFramer, Refusal, check_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

LOBBY_INITIALIZE_ID = "memd-lobby-initialize"
INITIALIZED = "notifications/initialized"
LISTEN = "subscriptions/listen"
LISTEN_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID = f"{ENVELOPE}subscriptionId"


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


class HandOver:
    """What the SDK must read first, and which of its replies the client already has."""

    __slots__ = ("data", "listen_id")

    def __init__(self, data: bytes, listen_id: str | int | None) -> None:
        self.data = data
        self.listen_id = listen_id  # the listen the lobby acknowledged


class Lobby:
    """The handshake's state: what the client said, to replay it to the SDK."""

    def __init__(self) -> None:
        self.opening: dict[str, object] | None = None  # initialize, or a modern request
        self.is_modern = False
        self.initialized = False
        self.listen: dict[str, object] | None = None

    def answer(self, message: object) -> bytes | None:
        """The reply to one checked message (b"" for none), or None: the SDK's turn."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, request_id = message.get("method"), message.get("id")
        if method == INITIALIZED and self.opening is not None and not self.is_modern:
            if "id" in message or self.initialized:
                return None
            self.initialized = True
            return b""
        if not _is_id(request_id):
            return None
        if self.opening is None and method == "initialize":
            result = _initialize(message)
            if result is None:
                return None
            self.opening = message
        elif self.opening is None or self.is_modern:
            return self._modern(message)
        elif method in LISTINGS and message.get("params", {}) == {}:
            result = LISTINGS[str(method)]
        else:
            return None
        return _line({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _modern(self, message: dict[str, object]) -> bytes | None:
        """A modern request's reply: the discovery, a listing, or the listen's ack."""
        params = message.get("params")
        if not isinstance(params, dict) or not _is_envelope(params.get("_meta")):
            return None
        method = message.get("method")
        if method in MODERN_LISTINGS and params.keys() == {"_meta"}:
            reply = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": MODERN_LISTINGS[str(method)],
            }
        elif method == LISTEN and self.listen is None:
            honored = _honored(params)
            if honored is None:
                return None
            self.listen = message
            reply = {
                "jsonrpc": "2.0",
                "method": LISTEN_ACKNOWLEDGED,
                "params": {
                    "_meta": {SUBSCRIPTION_ID: message["id"]},
                    "notifications": honored,
                },
            }
        else:
            return None
        if self.opening is None:
            self.opening, self.is_modern = message, True
        return _line(reply)

    def hand_over(self, rest: bytes) -> HandOver:
        """The era's opening again, for the SDK, then `rest`."""
        if self.opening is None:
            return HandOver(rest, None)
        lines = [{**self.opening, "id": LOBBY_INITIALIZE_ID}]
        if self.initialized:
            lines.append({"jsonrpc": "2.0", "method": INITIALIZED})
        if self.listen is not None:
            lines.append(self.listen)
        replay = b"".join(_line(line) for line in lines)
        listen_id = None if self.listen is None else self.listen.get("id")
        return HandOver(replay + rest, listen_id)  # type: ignore[arg-type]


def greet(wire_in: int, wire_out: int) -> HandOver | None:
    """Answer the lobby's lines; return what the SDK must read first, or None.

    None: the client closed the wire with nothing left for the SDK.
    """
    lobby = Lobby()
    framer = LineFramer()
    while True:
        chunk = os.read(wire_in, READ_BYTES)
        if chunk:
            framer.feed(chunk)
        while (item := framer.next_item() if chunk else framer.end()) is not None:
            if isinstance(item, Refusal):
                _write_all(wire_out, item.reply())
                continue
            if not item.strip():
                continue  # framing slack, as the SDK skips it
            message = check_line(item)
            if isinstance(message, Refusal):
                _write_all(wire_out, message.reply())
                continue
            reply = lobby.answer(message)
            if reply is None:
                rest = item + (b"\n" if chunk else b"") + framer.pending()
                return lobby.hand_over(rest)
            _write_all(wire_out, reply)
        if not chunk:
            return None


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


def _is_envelope(meta: object) -> bool:
    """Whether `_meta` is a modern envelope the SDK accepts as it stands."""
    if not isinstance(meta, dict):
        return False
    client = meta.get(f"{ENVELOPE}clientInfo")
    return (
        meta.get(f"{ENVELOPE}protocolVersion") in MODERN_VERSIONS
        and isinstance(meta.get(f"{ENVELOPE}clientCapabilities"), dict)
        and isinstance(client, dict)
        and all(isinstance(client.get(key), str) for key in ("name", "version"))
    )


def _honored(params: dict[str, object]) -> dict[str, bool] | None:
    """The list-changed flags a listen asks for, as the SDK acknowledges them."""
    wanted = params.get("notifications")
    if params.keys() != {"_meta", "notifications"} or not isinstance(wanted, dict):
        return None
    if not all(k in LISTEN_FLAGS and isinstance(v, bool) for k, v in wanted.items()):
        return None  # resource subscriptions and the rest: the SDK's
    return {key: True for key in LISTEN_FLAGS if wanted.get(key)}


def _line(message: dict[str, object]) -> bytes:
    return (fastjson.dumps(message) + "\n").encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
