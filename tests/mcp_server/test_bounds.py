"""Every request to `memd mcp` gets a bounded answer, and the session goes on.

The mcp SDK's own client drives a real `memd mcp` subprocess: a request over
the line bound is answered with an error under its id (the client's call
raises instead of waiting forever), an argument over its bound is a tool
error before any work, and each time the next request is served.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from memd.mcp_server.wire import MAX_LINE_BYTES
from tests.mcp_server.test_server import MEMD, TOOLS, memory_of, text_of


def _session(
    project: Path, name: str, arguments: dict[str, object]
) -> tuple[str, list[str]]:
    """Call one tool, then list the tools; return the call's outcome and the list."""

    async def run() -> tuple[str, list[str]]:
        params = StdioServerParameters(
            command=MEMD, args=["mcp"], cwd=str(project), env=dict(os.environ)
        )
        with open(os.devnull, "w") as quiet, anyio.fail_after(120):
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                try:
                    result = await client.call_tool(name, arguments)
                    outcome = ("tool error: " if result.is_error else "ok: ") + text_of(
                        result
                    )
                except MCPError as error:
                    outcome = f"protocol error: {error}"
                listed = await client.list_tools()
                return outcome, sorted(t.name for t in listed.tools)

    return anyio.run(run)  # fail_after: a hang fails instead of holding the suite


WRITE = {
    "name": "big",
    "description": "A memory far larger than any topic file",
    "type": "user",
}


@pytest.mark.parametrize(
    ("name", "arguments", "said"),
    [
        # Over the line bound: the reader refuses it under the call's id.
        (
            "memory_write",
            {**WRITE, "body": "x" * (MAX_LINE_BYTES + 1024)},
            "protocol error: Invalid request: request over 8 MiB",
        ),
        # Within the line bound, over the topic-file cap: refused before lint.
        ("memory_write", {**WRITE, "body": "word " * 1_000_000}, "tool error: "),
        ("memory_recall", {"query": "word " * 1_000_000}, "tool error: "),
        ("memory_read", {"name_or_relpath": "a/" * 1_000_000}, "tool error: "),
        ("memory_log", {"text": "note\n" * 1_000_000}, "tool error: "),
    ],
)
def test_an_oversized_request_is_refused_and_the_session_goes_on(
    git_repo: Path, name: str, arguments: dict[str, object], said: str
) -> None:
    memory = memory_of(git_repo)

    outcome, listed = _session(git_repo, name, arguments)

    assert outcome.startswith(said), outcome
    assert len(outcome) < 400  # the refusal says why without echoing the request
    assert TOOLS == listed
    assert [] == sorted(p.name for p in memory.iterdir() if p.name != "logs")
