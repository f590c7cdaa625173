"""A scripted Anthropic Messages API on loopback, for running the real agent.

`ScriptedModel` serves `POST /v1/messages` (streaming SSE, or one JSON body
when the request asks for no stream) from 127.0.0.1 in a thread. Each request
that carries the conversation gets the next turn of the script; once the
script is spent, every answer is a short text with `end_turn`, so the agent
always finishes. Every request is recorded; any other path gets a harmless
empty JSON answer and is logged in `unknown`.

Usage (see tests/e2e/releases.py for `run_claude`):

    with ScriptedModel([tool_use("Write", {"file_path": p, "content": c}),
                        text("done")]) as model:
        result = run_claude(release, "save it", env=model.env(home=home), cwd=repo)
    first = model.requests[0]
    first.user_text()          # every text block the agent sent as the user
    model.tool_results()       # the tool_result blocks, in order

The events are the real API's: `message_start`, `content_block_start`,
`content_block_delta` (`text_delta` or `input_json_delta`),
`content_block_stop`, `message_delta` (with the stop reason), `message_stop`.
Every message id is distinct: 2.1.332 merges assistant turns that share one
(REFERENCE.md "Running the real releases").
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted assistant answer: text blocks and at most one tool call."""

    text: str = ""
    tool_name: str | None = None
    tool_input: Mapping[str, Any] = field(default_factory=dict)

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_name else "end_turn"


def text(words: str) -> Turn:
    """Return a turn that answers with `words` and ends the agent's turn."""
    return Turn(text=words)


def tool_use(name: str, tool_input: Mapping[str, Any]) -> Turn:
    """Return a turn that calls tool `name` (Write, Edit, Bash, mcp__…) with input."""
    return Turn(tool_name=name, tool_input=dict(tool_input))


@dataclass(frozen=True, slots=True)
class Request:
    """One request the agent sent, as received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any  # the parsed JSON body, or None

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict):
            return list(self.body.get("messages") or [])
        return []

    def blocks(self, role: str) -> Iterator[dict[str, Any]]:
        """Yield every content block of the messages with `role`, strings as text."""
        for message in self.messages:
            if message.get("role") != role:
                continue
            content = message.get("content")
            if isinstance(content, str):
                yield {"type": "text", "text": content}
            elif isinstance(content, list):
                yield from (b for b in content if isinstance(b, dict))

    def user_text(self) -> str:
        """Return every user text block, joined with newlines."""
        return "\n".join(
            b.get("text", "") for b in self.blocks("user") if b.get("type") == "text"
        )

    def system_text(self) -> str:
        """Return the `system` field's text and every role-`system` message's."""
        parts: list[str] = []
        system = self.body.get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            parts.append(system)
        elif isinstance(system, list):
            parts.extend(b.get("text", "") for b in system if isinstance(b, dict))
        parts.extend(
            b.get("text", "") for b in self.blocks("system") if b.get("type") == "text"
        )
        return "\n".join(parts)

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]


class ScriptedModel:
    """A loopback Messages API that plays `turns`, one per conversation request.

    A request counts as a conversation turn when it carries tools (the agent's
    main loop always offers them); side requests without tools (titles,
    summaries) get a plain text answer and do not advance the script.
    """

    def __init__(self, turns: Sequence[Turn] = (), *, final_text: str = "done"):
        self._turns = list(turns)
        self._final = final_text
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[Request] = []
        self.unknown: list[Request] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # The server ------------------------------------------------------------

    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # the record is `model.requests`, not stderr

            def _receive(self) -> Request:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                return Request(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )

            def do_POST(self) -> None:
                request = self._receive()
                if self.path.split("?")[0].rstrip("/") == "/v1/messages":
                    model._answer_messages(self, request)
                else:
                    model._answer_unknown(self, request)

            def do_GET(self) -> None:
                model._answer_unknown(self, self._receive())

            def do_HEAD(self) -> None:
                request = self._receive()
                with model._lock:
                    model.unknown.append(request)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="scripted-model", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    @property
    def url(self) -> str:
        assert self._server is not None, "use ScriptedModel in a with block"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def env(
        self, base: Mapping[str, str] | None = None, **extra: str
    ) -> dict[str, str]:
        """Return `base` (default os.environ) and the variables that aim the agent here.

        Nothing leaves the machine: no telemetry, no updater, no error reports.
        `IS_SANDBOX=1` lets root use `--dangerously-skip-permissions`, and
        `ENABLE_TOOL_SEARCH=false` makes 2.1.332 offer MCP tools directly.
        """
        import os

        env = dict(os.environ if base is None else base)
        env.update(
            ANTHROPIC_BASE_URL=self.url,
            ANTHROPIC_API_KEY="sk-ant-e2e-scripted",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_ERROR_REPORTING="1",
            IS_SANDBOX="1",
            ENABLE_TOOL_SEARCH="false",
        )
        env.pop("ANTHROPIC_AUTH_TOKEN", None)
        env.update(extra)
        return env

    # What the agent sent ----------------------------------------------------

    @property
    def conversation(self) -> list[Request]:
        """The requests that carried the main conversation (they offer tools)."""
        with self._lock:
            return [r for r in self.requests if r.tool_names()]

    def first_user_text(self) -> str:
        """Return the user text of the first conversation request."""
        conversation = self.conversation
        assert conversation, f"the agent sent no conversation; got {self.requests}"
        return conversation[0].user_text()

    def tool_results(self) -> list[dict[str, Any]]:
        """Return the tool_result blocks of the last request, in order."""
        conversation = self.conversation
        if not conversation:
            return []
        return [
            b for b in conversation[-1].blocks("user") if b.get("type") == "tool_result"
        ]

    # Answers -------------------------------------------------------------------

    def _next_turn(self, request: Request) -> Turn:
        with self._lock:
            self.requests.append(request)
            if request.tool_names() and self._turns:
                return self._turns.pop(0)
        return text(self._final)

    def _answer_unknown(
        self, handler: BaseHTTPRequestHandler, request: Request
    ) -> None:
        with self._lock:
            self.unknown.append(request)
        _send(handler, 200, "application/json", b"{}")

    def _answer_messages(
        self, handler: BaseHTTPRequestHandler, request: Request
    ) -> None:
        turn = self._next_turn(request)
        number = next(self._ids)
        message_id = f"msg_e2e_{number:04d}"
        blocks: list[dict[str, Any]] = []
        if turn.text or not turn.tool_name:
            blocks.append({"type": "text", "text": turn.text or self._final})
        if turn.tool_name:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_e2e_{number:04d}",
                    "name": turn.tool_name,
                    "input": dict(turn.tool_input),
                }
            )
        body = request.body if isinstance(request.body, dict) else {}
        model_name = str(body.get("model") or MODEL)
        usage = {"input_tokens": 10, "output_tokens": 5}
        if not body.get("stream"):
            message = {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model_name,
                "content": blocks,
                "stop_reason": turn.stop_reason,
                "stop_sequence": None,
                "usage": usage,
            }
            _send(handler, 200, "application/json", json.dumps(message).encode())
            return
        events = list(_stream_events(message_id, model_name, blocks, turn.stop_reason))
        payload = "".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events
        ).encode()
        _send(handler, 200, "text/event-stream", payload)


def _stream_events(
    message_id: str, model_name: str, blocks: list[dict[str, Any]], stop_reason: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model_name,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps(block["input"]),
            }
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": delta},
        )
        yield ("content_block_stop", {"type": "content_block_stop", "index": index})
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield ("message_stop", {"type": "message_stop"})


def _send(
    handler: BaseHTTPRequestHandler, status: int, content_type: str, payload: bytes
) -> None:
    handler.send_response(status)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(payload)))
    handler.send_header("request-id", "req_e2e")
    handler.end_headers()
    handler.wfile.write(payload)
