"""The stdio MCP server on the official `mcp` SDK: memd's tools and the prompt resource.

The only module that imports `mcp` (and, through it, pydantic and starlette):
`memd mcp` imports it inside its `run`, so no other command pays for them.
The tools are thin: each calls `memd.mcp_server.tools` with the project fixed
at start-up, and any failure reaches the client as a tool error whose text
says what to do. Nothing but the protocol is written to stdout.
"""

from __future__ import annotations

import contextlib

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from memd._version import __version__
from memd.errors import MemdError
from memd.mcp_server import tools

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memd.mcp_server.tools import Project

PROMPT_URI = "memory://prompt"
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
            return tools.recall_memories(project, query, limit, type)

    @server.tool()
    def memory_read(name_or_relpath: str) -> str:
        """Return one memory's whole file, found by its name or its relpath.

        `MEMORY.md` returns the index. Paths never leave the memory directory.
        """
        with _as_tool_error():
            return tools.read_memory(project, name_or_relpath)

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
            return tools.write_memory(project, name, description, type, body)

    @server.tool()
    def memory_log(text: str) -> str:
        """Append a short timestamped note to today's daily log; returns its path."""
        with _as_tool_error():
            return tools.log_memory(project, text)

    @server.tool()
    def memory_lint() -> list[dict[str, object]]:
        """Return every problem memd finds in this project's memory, with fixes."""
        with _as_tool_error():
            return tools.lint_memories(project)

    @server.resource(
        PROMPT_URI,
        name="memory-prompt",
        description="The project's rendered memory prompt, as Claude Code loads it",
        mime_type="text/markdown",
    )
    def memory_prompt() -> str:
        with _as_tool_error():
            return tools.memory_prompt(project)

    return server


@contextlib.contextmanager
def _as_tool_error() -> Iterator[None]:
    """Turn memd's expected failures into tool errors the model reads."""
    try:
        yield
    except (MemdError, OSError) as error:
        raise ToolError(str(error)) from None


def serve_stdio(project: Project) -> None:
    """Serve `project` over stdin/stdout until the client closes the stream."""
    build_server(project).run("stdio")
