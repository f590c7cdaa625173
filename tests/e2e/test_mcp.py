"""After `memd mcp install`, the real agent offers memd's tools and runs them.

One session per release: `memory_write` saves a memory, `memory_recall`
finds it, and both answers come back to the model as tool results. MCP tools
need `--allowedTools mcp__memd__…`; 2.1.332 offers them directly only with
`ENABLE_TOOL_SEARCH=false` (ScriptedModel.env sets it).

Both releases connect MCP servers while the session starts: 2.1.112 waits at
most 5 s in print mode for their `initialize` and `tools/list` (its `ze8`
deadline, a constant: `MCP_TIMEOUT` is the connect timeout, 30 s, and
`MCP_CONNECTION_NONBLOCKING` only removes the wait) and then goes on without
their tools; 2.1.332 goes on at once and offers `WaitForMcpServers`, which
the script calls first. `memd mcp` answers the handshake and the listings
before it loads the SDK (`memd.mcp_server.lobby`: 0.2 s instead of 3 s and
more), so one run is enough and is asserted.
"""

from __future__ import annotations

import json

from tests.e2e.harness import Project
from tests.e2e.model_server import ScriptedModel, Turn, text, tool_use

WRITE, RECALL = "mcp__memd__memory_write", "mcp__memd__memory_recall"
BODY = (
    "Integration tests hit a real database.\n\n**Why:** mocks hid a bug.\n\n"
    "**How to apply:** never mock the database."
)


def _script(waits: bool) -> list[Turn]:
    turns = [tool_use("WaitForMcpServers", {"servers": ["memd"]})] if waits else []
    return [
        *turns,
        tool_use(
            WRITE,
            {
                "name": "real-database-tests",
                "description": "integration tests use a real database, never mocks",
                "type": "feedback",
                "body": BODY,
            },
        ),
        tool_use(RECALL, {"query": "database mocks"}),
        text("done"),
    ]


def _results(model: ScriptedModel, step: int) -> str:
    """The tool results the agent sent in reply to the script's turn `step`."""
    request = model.conversation[step + 1]
    return json.dumps(
        [b for b in request.blocks("user") if b.get("type") == "tool_result"][-1:]
    )


def test_mcp_round_trip(project: Project) -> None:
    """The tools are offered; a write and then a recall answer through the agent."""
    memory = project.memory_dir()
    memory.mkdir(parents=True, exist_ok=True)
    project.memd("mcp", "install")
    waits = project.release.version != "2.1.112"
    first = 1 if waits else 0
    model, _ = project.run_agent(
        _script(waits), args=["--allowedTools", f"{WRITE},{RECALL}"]
    )
    assert {WRITE, RECALL} <= set(model.conversation[first].tool_names())
    written, recalled = _results(model, first), _results(model, first + 1)
    assert "real-database-tests" in written
    assert '"is_error": true' not in written
    assert "real-database-tests" in recalled
    assert '"is_error": true' not in recalled
    index = (memory / "MEMORY.md").read_text().splitlines()
    assert 1 == sum("real-database-tests" in line for line in index)
