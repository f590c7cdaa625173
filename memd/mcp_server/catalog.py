"""What `memd mcp` answers before the SDK is loaded: the handshake and the listings.

`memd.mcp_server.lobby` serves these; `memd.mcp_server.server` registers the
tools with the same descriptions, and the SDK derives the same schemas from
the tools' signatures (tests/mcp_server/test_lobby.py compares every answer
here with the SDK's, for every handshake version). Changing a tool's
signature means changing its schema here.
"""

from __future__ import annotations

from memd._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SERVER_NAME = "memd"
INSTRUCTIONS = (
    "Persistent file-based memory for this project, shared with Claude Code's "
    "auto memory. Call memory_recall before answering questions about the "
    "user, their preferences, past decisions or project context; save durable, "
    "non-obvious facts with memory_write; append short notes with memory_log."
)
# The SDK's `mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS`; the last is its
# answer to a version it does not know.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# `mcp_types.version.MODERN_PROTOCOL_VERSIONS`: no handshake; every request
# carries its version and the client's capabilities in `params._meta`
# (Claude Code 2.1.332 opens with `server/discover`).
MODERN_VERSIONS = ("2026-07-28",)
ENVELOPE = "io.modelcontextprotocol/"
# The list-changed flags `subscriptions/listen` may ask for; the SDK honours each.
LISTEN_FLAGS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
PROMPT_URI = "memory://prompt"
PROMPT_RESOURCE = {
    "name": "memory-prompt",
    "description": "The project's rendered memory prompt, as Claude Code loads it",
    "mimeType": "text/markdown",
    "uri": PROMPT_URI,
}
DESCRIPTIONS = {
    "memory_recall": (
        "Find the memories that answer a question, best first (offline BM25).\n\n"
        "Each result has name, type, description, relpath and a snippet with the "
        "matched words in [brackets]. `type` keeps only user, feedback, project "
        "or reference memories."
    ),
    "memory_read": (
        "Return one memory's whole file, found by its name or its relpath.\n\n"
        "`MEMORY.md` returns the index. Paths never leave the memory directory."
    ),
    "memory_write": (
        "Save a memory as a topic file plus a one-line MEMORY.md entry.\n\n"
        "`type` is user, feedback, project or reference; `description` is one "
        "specific line used to judge relevance later; feedback and project "
        "bodies give the rule or fact, then a **Why:** line and a "
        "**How to apply:** line. A memory with the same name is replaced. The "
        "write is refused, and nothing written, if it would not lint clean or "
        "the index has no room."
    ),
    "memory_log": (
        "Append a short timestamped note to today's daily log; returns its path."
    ),
    "memory_lint": (
        "Return every problem memd finds in this project's memory, with fixes."
    ),
}

# Tools that only read: marked so an agent may call them without asking
# (Codex CLI's `codex exec` approves an MCP call only for a read-only tool).
# The write tools carry no hint and stay behind the agent's own approval.
READ_ONLY_TOOLS = ("memory_recall", "memory_read", "memory_lint")
READ_ONLY = {"readOnlyHint": True}

_OBJECT = {"additionalProperties": True, "type": "object"}
_OBJECTS = {"items": _OBJECT, "type": "array"}
_STRING = {"type": "string"}


def _tool(
    name: str,
    properties: Mapping[str, Mapping[str, object]],
    required: tuple[str, ...],
    result: Mapping[str, object] | None,
) -> dict[str, object]:
    """One tool as the SDK lists it; `result` None: the tool returns a dict."""
    arguments: dict[str, object] = {
        "properties": {
            key: {"title": key.replace("_", " ").title(), **schema}
            for key, schema in properties.items()
        },
        "type": "object",
        "title": f"{name}Arguments",
    }
    if required:
        arguments["required"] = list(required)
    output: dict[str, object] = (
        {**_OBJECT, "title": f"{name}DictOutput"}
        if result is None
        else {
            "properties": {"result": {"title": "Result", **result}},
            "required": ["result"],
            "type": "object",
            "title": f"{name}Output",
        }
    )
    tool: dict[str, object] = {
        "name": name,
        "description": DESCRIPTIONS[name],
        "inputSchema": arguments,
        "outputSchema": output,
    }
    if name in READ_ONLY_TOOLS:
        tool["annotations"] = dict(READ_ONLY)
    return tool


TOOLS = [
    _tool(
        "memory_recall",
        {
            "query": _STRING,
            "limit": {"default": 5, "type": "integer"},
            "type": {"anyOf": [_STRING, {"type": "null"}], "default": None},
        },
        ("query",),
        _OBJECTS,
    ),
    _tool("memory_read", {"name_or_relpath": _STRING}, ("name_or_relpath",), _STRING),
    _tool(
        "memory_write",
        {"name": _STRING, "description": _STRING, "type": _STRING, "body": _STRING},
        ("name", "description", "type", "body"),
        None,
    ),
    _tool("memory_log", {"text": _STRING}, ("text",), _STRING),
    _tool("memory_lint", {}, (), _OBJECTS),
]
# method -> result, for a request without params (a cursor, `_meta`: the SDK).
LISTINGS: dict[str, dict[str, object]] = {
    "tools/list": {"tools": TOOLS},
    "resources/list": {"resources": [PROMPT_RESOURCE]},
    "resources/templates/list": {"resourceTemplates": []},
    "prompts/list": {"prompts": []},
    "ping": {},
}


def initialize_result(requested: str) -> dict[str, object]:
    """The SDK's answer to `initialize` with protocol version `requested`."""
    version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "capabilities": {
            "prompts": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": False},
            "tools": {"listChanged": False},
        },
        "instructions": INSTRUCTIONS,
        "protocolVersion": version,
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def _modern(result: Mapping[str, object]) -> dict[str, object]:
    """A result as the SDK stamps it for a modern (2026-07-28) request."""
    return {
        **result,
        "cacheScope": "private",
        "resultType": "complete",
        "ttlMs": 0,
        "_meta": {
            f"{ENVELOPE}serverInfo": {"name": SERVER_NAME, "version": __version__}
        },
    }


# The SDK serves `subscriptions/listen`, so a modern client is told that the
# lists may change (memd's never do) and resources may be subscribed to.
DISCOVER_RESULT = _modern(
    {
        "capabilities": {
            "prompts": {"listChanged": True},
            "resources": {"listChanged": True, "subscribe": True},
            "tools": {"listChanged": True},
        },
        "instructions": INSTRUCTIONS,
        "supportedVersions": list(MODERN_VERSIONS),
    }
)
# method -> result, for a modern request whose params are only the envelope.
MODERN_LISTINGS: dict[str, dict[str, object]] = {
    method: _modern(result) for method, result in LISTINGS.items() if method != "ping"
}
MODERN_LISTINGS["server/discover"] = DISCOVER_RESULT
