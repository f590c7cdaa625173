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
of it: lines are framed with a length bound, decoded as strict UTF-8, parsed
with a depth bound and no lone surrogates (`memd.fastjson`), and validated as
JSON-RPC. A line that fails is answered here, with a parse error (-32700) or
an invalid request (-32600), and the next line is read; only valid messages
reach the SDK.
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
    SERVER_NAME,
)
from memd.mcp_server.lobby import LOBBY_INITIALIZE_ID, MAX_LINE_BYTES, READ_BYTES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from memd.mcp_server.tools import Project

MAX_MESSAGE_DEPTH = 64  # JSON-RPC nests a few levels; the parsers recurse


def build_server(project: Project) -> MCPServer:
    """Return the server with memd's five tools and the prompt resource registered."""
    server: MCPServer = MCPServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS
    )

    # `type` below is the tools' argument on the wire, the frontmatter key the
    # model knows; the SDK builds the schema from these names. Past here it is
    # `memory_type`, which shadows no builtin.
    @server.tool(description=DESCRIPTIONS["memory_recall"])
    def memory_recall(
        query: str, limit: int = 5, type: str | None = None
    ) -> list[dict[str, object]]:
        with _as_tool_error():
            return _sendable(tools.recall_memories(project, query, limit, type))

    @server.tool(description=DESCRIPTIONS["memory_read"])
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

    @server.tool(description=DESCRIPTIONS["memory_lint"])
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


def serve_wire(project: Project, wire_in: int, wire_out: int, first: bytes) -> None:
    """Serve `project` on the claimed wire until the client closes it.

    `first`: the bytes to read before `wire_in`, as `memd.mcp_server.lobby`
    hands them over (its replayed `initialize` is answered into the void).
    """
    anyio.run(_serve, build_server(project), wire_in, wire_out, first)


async def _serve(server: MCPServer, wire_in: int, wire_out: int, first: bytes) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    wire = _Wire(wire_out, drop_id=LOBBY_INITIALIZE_ID)
    lines = _CheckedLines(wire_in, wire, first)
    async with stdio_server(stdin=lines, stdout=wire) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


class _Wire:
    """stdout for the SDK and `_CheckedLines`' answers: whole lines, one at a time."""

    def __init__(self, fd: int, *, drop_id: str | None = None):
        self._fd = fd
        self._lock = threading.Lock()
        self._drop_id = drop_id  # the one reply the client never asked for

    async def write(self, text: str) -> None:
        if self._drop_id is not None and self._is_dropped(text):
            self._drop_id = None
            return
        # A surrogate in a reply must not kill the writer: it becomes U+FFFD.
        data = text.encode("utf-8", "replace")
        await anyio.to_thread.run_sync(self._send, data)

    async def flush(self) -> None:
        """Each `write` is sent whole at once; nothing is buffered."""

    def _is_dropped(self, text: str) -> bool:
        try:
            reply = fastjson.loads(text.encode("utf-8", "replace"))
        except (ValueError, RecursionError):
            return False
        return isinstance(reply, dict) and reply.get("id") == self._drop_id

    def _send(self, data: bytes) -> None:
        with self._lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    async def answer(self, code: int, message: str, id: object = None) -> None:
        reply = {
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message},
        }
        await self.write(fastjson.dumps(reply) + "\n")


class _CheckedLines:
    """stdin for the SDK: the valid JSON-RPC lines; the rest answered on `wire`."""

    def __init__(self, fd: int, wire: _Wire, first: bytes = b""):
        self._fd = fd
        self._wire = wire
        self._first = first  # read before the fd: the lobby's hand-over

    def __aiter__(self) -> AsyncIterator[str]:
        return self._valid_lines()

    async def _valid_lines(self) -> AsyncIterator[str]:
        async for line in self._framed_lines():
            if line is None:
                await self._wire.answer(
                    mcp_types.PARSE_ERROR,
                    f"Parse error: line over {MAX_LINE_BYTES} bytes",
                )
                continue
            if not line.strip():
                continue  # framing slack, not a message
            text = await self._checked(line)
            if text is not None:
                yield text

    async def _checked(self, line: bytes) -> str | None:
        """Return the line as text if it is a JSON-RPC message, else answer it."""
        try:
            value = fastjson.loads(line, max_depth=MAX_MESSAGE_DEPTH, strict_text=True)
        except (ValueError, RecursionError) as error:
            await self._wire.answer(mcp_types.PARSE_ERROR, f"Parse error: {error}")
            return None
        text = line.decode("utf-8")
        try:
            mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValidationError:
            request_id = value.get("id") if isinstance(value, dict) else None
            is_id = isinstance(request_id, str | int) and not isinstance(
                request_id, bool
            )
            await self._wire.answer(
                mcp_types.INVALID_REQUEST,
                "Invalid request: not a JSON-RPC 2.0 message",
                request_id if is_id else None,
            )
            return None
        return text

    async def _framed_lines(self) -> AsyncIterator[bytes | None]:
        """Yield each line without its newline; None for one over the bound.

        Memory stays within the bound: a line past it is dropped as it comes.
        """
        buffer = bytearray()
        searched = 0  # bytes of `buffer` known to hold no newline
        is_skipping = False  # inside a line already reported as too long
        first, self._first = self._first, b""
        while True:
            chunk = first or await anyio.to_thread.run_sync(
                os.read, self._fd, READ_BYTES, abandon_on_cancel=True
            )
            first = b""
            if not chunk:
                break
            buffer += chunk
            start = 0
            while (newline := buffer.find(b"\n", max(start, searched))) >= 0:
                line, start = bytes(buffer[start:newline]), newline + 1
                if is_skipping:
                    is_skipping = False
                elif len(line) > MAX_LINE_BYTES:
                    yield None
                else:
                    yield line
            del buffer[:start]
            searched = len(buffer)
            if len(buffer) > MAX_LINE_BYTES:
                if not is_skipping:
                    yield None
                is_skipping = True
                buffer.clear()
                searched = 0
        if buffer and not is_skipping:
            yield bytes(buffer)
