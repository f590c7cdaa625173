"""The stdio MCP server on the official `mcp` SDK: memd's tools and the prompt resource.

The only module that imports `mcp` (and, through it, pydantic and starlette):
`memd mcp` imports it only when `memd.mcp_server.lobby`, which answers the
handshake and the listings, hands it the wire (`serve_wire`), so no other
command pays for it and a client's start-up wait does not.
The tools are thin: each calls `memd.mcp_server.tools` with the project fixed
at start-up, and any failure reaches the client as a tool error whose text
says what to do. Nothing but the protocol is written to stdout.

memd owns its stdin: the SDK's reader drops a line it cannot validate without
a word (a lone surrogate such as `"\\ud83d"` anywhere, even in a ping's
`_meta`, left the client waiting forever). So `_CheckedLines` stands in front
of it: lines are framed and checked by `memd.mcp_server.wire`, as the lobby's
are, then validated as JSON-RPC. A line that fails is answered here, with a
parse error (-32700) or an invalid request (-32600) under its id when it has
one, and the next line is read; only valid messages reach the SDK.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TypeVar

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from memd import fastjson
from memd._version import __version__
from memd.diagnostics import escape_surrogates
from memd.errors import MemdError
from memd.mcp_server import tools
from memd.mcp_server.catalog import (
    DESCRIPTIONS,
    INSTRUCTIONS,
    PROMPT_RESOURCE,
    PROMPT_URI,
    READ_ONLY,
    SERVER_NAME,
)
from memd.mcp_server.lobby import LISTEN_ACKNOWLEDGED, LOBBY_INITIALIZE_ID, HandOver
from memd.mcp_server.wire import (
    READ_BYTES,
    LineFramer,
    Refusal,
    check_line,
    usable_id,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from memd.mcp_server.tools import Project


def build_server(project: Project) -> MCPServer:
    """Return the server with memd's five tools and the prompt resource registered."""
    server: MCPServer = MCPServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS
    )

    read_only = ToolAnnotations.model_validate(READ_ONLY)

    # `type` below is the tools' argument on the wire, the frontmatter key the
    # model knows; the SDK builds the schema from these names. Past here it is
    # `memory_type`, which shadows no builtin.
    @server.tool(description=DESCRIPTIONS["memory_recall"], annotations=read_only)
    def memory_recall(
        query: str, limit: int = 5, type: str | None = None
    ) -> list[dict[str, object]]:
        with _as_tool_error():
            return _sendable(tools.recall_memories(project, query, limit, type))

    @server.tool(description=DESCRIPTIONS["memory_read"], annotations=read_only)
    def memory_read(name_or_relpath: str) -> str:
        with _as_tool_error():
            return _sendable(tools.read_memory(project, name_or_relpath))

    @server.tool(description=DESCRIPTIONS["memory_write"])
    def memory_write(
        name: str, description: str, type: str, body: str
    ) -> dict[str, object]:
        with _as_tool_error():
            return _sendable(tools.write_memory(project, name, description, type, body))

    @server.tool(description=DESCRIPTIONS["memory_log"])
    def memory_log(text: str) -> str:
        with _as_tool_error():
            return _sendable(tools.log_memory(project, text))

    @server.tool(description=DESCRIPTIONS["memory_lint"], annotations=read_only)
    def memory_lint() -> list[dict[str, object]]:
        with _as_tool_error():
            return _sendable(tools.lint_memories(project))

    @server.resource(
        PROMPT_URI,
        name=str(PROMPT_RESOURCE["name"]),
        description=str(PROMPT_RESOURCE["description"]),
        mime_type=str(PROMPT_RESOURCE["mimeType"]),
    )
    def memory_prompt() -> str:
        with _as_tool_error():
            return _sendable(tools.memory_prompt(project))

    return server


_T = TypeVar("_T")


def _sendable(value: _T) -> _T:
    """`value` with every lone surrogate in its strings written as an escape.

    A file name that is not UTF-8 reaches a result as lone surrogates
    (`surrogateescape`), and the SDK cannot serialise those: its writer would
    fail and the server stop.
    """
    if isinstance(value, str):
        return escape_surrogates(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {_sendable(k): _sendable(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list | tuple):
        return type(value)(_sendable(v) for v in value)
    return value


@contextlib.contextmanager
def _as_tool_error() -> Iterator[None]:
    """Turn memd's expected failures into tool errors the model reads."""
    try:
        yield
    except (MemdError, OSError) as error:
        raise ToolError(str(error)) from None


def serve_wire(
    project: Project, wire_in: int, wire_out: int, hand_over: HandOver
) -> None:
    """Serve `project` on the claimed wire until the client closes it.

    `hand_over`: what `memd.mcp_server.lobby` read and the SDK must read
    first (its answers to the replayed opening and listen go into the void).
    """
    anyio.run(_serve, build_server(project), wire_in, wire_out, hand_over)


async def _serve(
    server: MCPServer, wire_in: int, wire_out: int, hand_over: HandOver
) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    wire = _Wire(wire_out, drop_id=LOBBY_INITIALIZE_ID, drop_ack=hand_over.listen_id)
    lines = _CheckedLines(wire_in, wire, hand_over.data)
    async with stdio_server(stdin=lines, stdout=wire) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class _Wire:
    """stdout for the SDK and `_CheckedLines`' answers: whole lines, one at a time."""

    def __init__(
        self,
        fd: int,
        *,
        drop_id: str | None = None,
        drop_ack: str | int | None = None,
    ):
        self._fd = fd
        self._lock = threading.Lock()
        self._drop_id = drop_id  # the one reply the client never asked for
        self._drop_ack = drop_ack  # the listen whose ack the lobby sent

    async def write(self, text: str) -> None:
        if (
            self._drop_id is not None
            and self._drop_id in text
            and self._is_reply_to(text, self._drop_id)
        ):
            self._drop_id = None
            return
        if (
            self._drop_ack is not None
            and LISTEN_ACKNOWLEDGED in text
            and self._is_ack_of(text, self._drop_ack)
        ):
            self._drop_ack = None
            return
        # A surrogate in a reply must not kill the writer: it becomes U+FFFD.
        data = text.encode("utf-8", "replace")
        await anyio.to_thread.run_sync(self._send, data)

    async def flush(self) -> None:
        """Each `write` is sent whole at once; nothing is buffered."""

    @staticmethod
    def _parsed(text: str) -> dict[str, object]:
        try:
            reply = fastjson.loads(text.encode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return {}
        return reply if isinstance(reply, dict) else {}

    def _is_reply_to(self, text: str, request_id: object) -> bool:
        reply = self._parsed(text)
        return "method" not in reply and reply.get("id") == request_id

    def _is_ack_of(self, text: str, listen_id: object) -> bool:
        reply = self._parsed(text)
        params = reply.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        return (
            reply.get("method") == LISTEN_ACKNOWLEDGED
            and isinstance(meta, dict)
            and meta.get("io.modelcontextprotocol/subscriptionId") == listen_id
        )

    def _send(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    async def send_refusal(self, refusal: Refusal) -> None:
        await anyio.to_thread.run_sync(self._send, refusal.reply())


class _CheckedLines:
    """stdin for the SDK: the valid JSON-RPC lines; the rest answered on `wire`."""

    def __init__(self, fd: int, wire: _Wire, first: bytes = b""):
        self._fd = fd
        self._wire = wire
        self._first = first  # read before the fd: the lobby's hand-over

    def __aiter__(self) -> AsyncIterator[str]:
        return self._valid_lines()

    async def _valid_lines(self) -> AsyncIterator[str]:
        framer = LineFramer()
        framer.feed(self._first)
        self._first = b""
        at_end = False
        while True:
            item = framer.end() if at_end else framer.next_item()
            if item is None:
                if at_end:
                    return
                chunk = await anyio.to_thread.run_sync(
                    os.read, self._fd, READ_BYTES, abandon_on_cancel=True
                )
                if chunk:
                    framer.feed(chunk)
                else:
                    at_end = True
                continue
            if isinstance(item, Refusal):
                await self._wire.send_refusal(item)
                continue
            if not item.strip():
                continue  # framing slack, not a message
            text = await self._checked(item)
            if text is not None:
                yield text

    async def _checked(self, line: bytes) -> str | None:
        """Return the line as text if it is a JSON-RPC message, else answer it."""
        value = check_line(line)
        if isinstance(value, Refusal):
            await self._wire.send_refusal(value)
            return None
        text = line.decode("utf-8")
        try:
            mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValidationError:
            await self._wire.send_refusal(
                Refusal(
                    mcp_types.INVALID_REQUEST,
                    "Invalid request: not a JSON-RPC 2.0 message",
                    usable_id(value),
                )
            )
            return None
        return text
