"""`memd mcp` answers the handshake and the listings before it loads the SDK.

Claude Code 2.1.112 gives an MCP server 5 s, in print mode, to answer
`initialize` and `tools/list`; importing the `mcp` SDK alone took longer on
a loaded machine. The lobby (`memd.mcp_server.lobby`) answers them from
`memd.mcp_server.catalog`, and these tests hold it to the SDK's own answers
and to never importing the SDK for them. Every test runs the real `memd mcp`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd.mcp_server.catalog import HANDSHAKE_VERSIONS
from memd.mcp_server.lobby import LOBBY_INITIALIZE_ID
from tests.mcp_server.test_server import memory_of, raw_replies

LISTED = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
# A line the lobby leaves to the SDK and the SDK answers with nothing.
HAND_OVER = (
    b'{"jsonrpc": "2.0", "method": "notifications/cancelled",'
    b' "params": {"requestId": "none"}}'
)


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _handshake(version: str) -> list[bytes]:
    """initialize (id 1), initialized, then each listing and a ping (ids 2...)."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "lobby-test", "version": "1"},
        },
    }
    lines = [
        _line(initialize),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    for number, method in enumerate((*LISTED, "ping"), start=2):
        lines.append(_line({"jsonrpc": "2.0", "id": number, "method": method}))
    return lines


@pytest.mark.parametrize("version", [*HANDSHAKE_VERSIONS, "2099-01-01"])
def test_the_lobby_answers_what_the_sdk_answers(git_repo: Path, version: str) -> None:
    """Reply for reply, the lobby's handshake and listings equal the SDK's.

    The SDK's come from the same `memd mcp` with a first line only the SDK
    takes (a notification it ignores), so the whole session is the SDK's.
    """
    memory_of(git_repo)
    lines = _handshake(version)
    count = len(lines) - 1  # the notification gets no reply

    by_lobby = raw_replies(git_repo, b"".join(lines), count)
    by_sdk = raw_replies(git_repo, HAND_OVER + b"\n" + b"".join(lines), count)

    assert by_sdk == by_lobby
    assert [1, 2, 3, 4, 5, 6] == [reply["id"] for reply in by_lobby]


def test_the_handshake_and_listings_never_import_the_sdk(git_repo: Path) -> None:
    """A session of only the handshake and listings ends without loading `mcp`.

    `-X importtime` logs each import as it happens, so the log of the whole
    session holds every module it ever loaded.
    """
    memory_of(git_repo)
    code = "import sys; from memd.cli.main import main; sys.exit(main(['mcp']))"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        input=b"".join(_handshake("2025-06-18")),
        cwd=git_repo,
        capture_output=True,
        timeout=120,
        check=True,
    )

    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [1, 2, 3, 4, 5, 6] == [reply["id"] for reply in replies]
    loaded = {
        line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()
    }
    assert not {"mcp", "mcp_types", "pydantic", "anyio"} & loaded


def test_a_tool_call_after_the_lobby_is_the_sdks(git_repo: Path) -> None:
    """After the lobby's handshake the SDK serves a tool call and a bad line,
    and its answer to the replayed initialize never reaches the client."""
    memory_of(git_repo)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory_lint", "arguments": {}},
    }
    data = b"".join([*_handshake("2025-06-18"), _line(call), b"not json\n"])
    data += _line({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})

    replies = raw_replies(git_repo, data, 9)

    # The lobby's replies come in order; the SDK runs requests concurrently.
    assert [1, 2, 3, 4, 5, 6] == [reply["id"] for reply in replies[:6]]
    by_id = {reply["id"]: reply for reply in replies[6:]}
    assert {7, None, 8} == set(by_id)
    assert LOBBY_INITIALIZE_ID not in json.dumps(replies)
    assert "result" in by_id[7]
    assert -32700 == by_id[None]["error"]["code"]  # type: ignore[index]
    assert replies[1]["result"] == by_id[8]["result"]  # the lobby's list is the SDK's


ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": True}},
}


def _modern_opening() -> list[bytes]:
    """What Claude Code 2.1.332 sends first: discover, listen, discover, listings."""
    listen = {
        "jsonrpc": "2.0",
        "id": "listen:0",
        "method": "subscriptions/listen",
        "params": {
            "_meta": ENVELOPE,
            "notifications": {"toolsListChanged": True, "promptsListChanged": True},
        },
    }
    lines = [
        _line(
            {
                "jsonrpc": "2.0",
                "id": "probe",
                "method": "server/discover",
                "params": {"_meta": ENVELOPE},
            }
        ),
        _line(listen),
    ]
    methods = ("server/discover", *LISTED)
    for number, method in enumerate(methods, start=1):
        lines.append(
            _line(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": method,
                    "params": {"_meta": ENVELOPE},
                }
            )
        )
    return lines


def test_the_lobby_answers_the_modern_era_as_the_sdk_does(git_repo: Path) -> None:
    """A 2026-07-28 client (no handshake, an envelope on every request) gets
    the SDK's own answers from the lobby, then a tool call from the SDK, and
    no answer twice (the SDK's to the replayed discovery and listen are dropped)."""
    memory_of(git_repo)
    lines = _modern_opening()
    count = len(lines)  # the listen gets an acknowledgement, each request a reply
    call = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "memory_lint", "arguments": {}, "_meta": ENVELOPE},
    }

    by_lobby = raw_replies(git_repo, b"".join([*lines, _line(call)]), count + 1)
    by_sdk = raw_replies(git_repo, HAND_OVER + b"\n" + b"".join(lines), count)

    assert by_sdk == by_lobby[:count]
    assert "result" in by_lobby[count]
    assert 9 == by_lobby[count]["id"]
    assert LOBBY_INITIALIZE_ID not in json.dumps(by_lobby)


def test_the_modern_opening_never_imports_the_sdk(git_repo: Path) -> None:
    """Claude Code 2.1.332's start-up (discover, listen, listings) is answered
    without loading `mcp`: it is what the agent waits on to list memd's tools."""
    memory_of(git_repo)
    code = "import sys; from memd.cli.main import main; sys.exit(main(['mcp']))"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        input=b"".join(_modern_opening()),
        cwd=git_repo,
        capture_output=True,
        timeout=120,
        check=True,
    )

    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert ["probe", None, 1, 2, 3, 4, 5] == [reply.get("id") for reply in replies]
    loaded = {
        line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines()
    }
    assert not {"mcp", "mcp_types", "pydantic", "anyio"} & loaded
