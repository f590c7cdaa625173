"""The stdio MCP server on the official `mcp` SDK: memd's tools and the prompt resource.

The only module that imports `mcp` (and, through it, pydantic and starlette):
`memd mcp` imports it inside its `run`, so no other command pays for them.
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
import fcntl
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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from memd.mcp_server.tools import Project

PROMPT_URI = "memory://prompt"
# A memory_write carries at most a topic file (256 KiB by default), escaped.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_MESSAGE_DEPTH = 64  # JSON-RPC nests a few levels; the parsers recurse
READ_BYTES = 65536
INSTRUCTIONS = (
    "Persistent file-based memory for this project, shared with Claude Code's "
    "auto memory. Call memory_recall before answering questions about the "
    "user, their preferences, past decisions or project context; save durable, "
    "non-obvious facts with memory_write; append short notes with memory_log."
)


def build_server(project: Project) -> MCPServer:
    """Return the server with memd's five tools and the prompt resource registered."""
    server: MCPServer = MCPServer(
        "memd", version=__version__, instructions=INSTRUCTIONS
    )

    # `type` below is the tools' argument on the wire, the frontmatter key the
    # model knows; the SDK builds the schema from these names. Past here it is
    # `memory_type`, which shadows no builtin.
    @server.tool()
    def memory_recall(
        query: str, limit: int = 5, type: str | None = None
    ) -> list[dict[str, object]]:
        """Find the memories that answer a question, best first (offline BM25).

        Each result has name, type, description, relpath and a snippet with
        the matched words in [brackets]. `type` keeps only user, feedback,
        project or reference memories.
        """
        with _as_tool_error():
            return _sendable(tools.recall_memories(project, query, limit, type))

    @server.tool()
    def memory_read(name_or_relpath: str) -> str:
        """Return one memory's whole file, found by its name or its relpath.

        `MEMORY.md` returns the index. Paths never leave the memory directory.
        """
        with _as_tool_error():
            return _sendable(tools.read_memory(project, name_or_relpath))

    @server.tool()
    def memory_write(
        name: str, description: str, type: str, body: str
    ) -> dict[str, object]:
        """Save a memory as a topic file plus a one-line MEMORY.md entry.

        `type` is user, feedback, project or reference; `description` is one
        specific line used to judge relevance later; feedback and project
        bodies give the rule or fact, then a **Why:** line and a
        **How to apply:** line. A memory with the same name is replaced. The
        write is refused, and nothing written, if it would not lint clean or
        the index has no room.
        """
        with _as_tool_error():
            return _sendable(tools.write_memory(project, name, description, type, body))

    @server.tool()
    def memory_log(text: str) -> str:
        """Append a short timestamped note to today's daily log; returns its path."""
        with _as_tool_error():
            return _sendable(tools.log_memory(project, text))

    @server.tool()
    def memory_lint() -> list[dict[str, object]]:
        """Return every problem memd finds in this project's memory, with fixes."""
        with _as_tool_error():
            return _sendable(tools.lint_memories(project))

    @server.resource(
        PROMPT_URI,
        name="memory-prompt",
        description="The project's rendered memory prompt, as Claude Code loads it",
        mime_type="text/markdown",
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


def serve_stdio(project: Project) -> None:
    """Serve `project` over stdin/stdout until the client closes the stream."""
    anyio.run(_serve, build_server(project))


async def _serve(server: MCPServer) -> None:
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async serves
    with _claimed_stdio() as (wire_in, wire_out):
        wire = _Wire(wire_out)
        lines = _CheckedLines(wire_in, wire)
        async with stdio_server(stdin=lines, stdout=wire) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, lowlevel.create_initialization_options())


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
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


class _Wire:
    """stdout for the SDK and `_CheckedLines`' answers: whole lines, one at a time."""

    def __init__(self, fd: int):
        self._fd = fd
        self._lock = threading.Lock()

    async def write(self, text: str) -> None:
        # A surrogate in a reply must not kill the writer: it becomes U+FFFD.
        data = text.encode("utf-8", "replace")
        await anyio.to_thread.run_sync(self._send, data)

    async def flush(self) -> None:
        """Each `write` is sent whole at once; nothing is buffered."""

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

    def __init__(self, fd: int, wire: _Wire):
        self._fd = fd
        self._wire = wire

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
        while True:
            chunk = await anyio.to_thread.run_sync(
                os.read, self._fd, READ_BYTES, abandon_on_cancel=True
            )
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
