"""The real Codex CLI and Gemini CLI releases, and a scripted model for each.

Each release is the one its module in `memd.agents` names (`AGENT.release`),
or `MEMD_E2E_AGENT_RELEASE`; `install_agent_release` fetches it with
`npm pack` into the same cache as Claude Code's releases
(`tests/e2e/releases.py`), records the entry point's SHA-256 and checks it
on every use. Codex CLI's npm package is a launcher: the binary is in the
platform package (`@openai/codex@<version>-linux-x64`, an optional
dependency aliased as `@openai/codex-linux-x64`), which is what is fetched.
Gemini CLI's package is its bundle, run on node.

`ResponsesModel` speaks the OpenAI Responses API (`POST /v1/responses`, SSE),
the only wire Codex has for a custom `model_provider` with a `base_url`.
`GeminiModel` speaks the Gemini API as `GOOGLE_GEMINI_BASE_URL` points the
release at it: a non-streamed `generateContent` (the release's classifier,
answered with its JSON) and `streamGenerateContent?alt=sse` for the turns.
Both play one script turn per conversation request that offers memd's
tools: a request without them (memd's server not started yet) gets the
same turn again once they are there, so the script waits for the server.
Every request is recorded.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from memd.agents import get_agent
from tests.e2e.releases import (
    ReleaseUnavailable,
    _sha256,
    cache_dir,
    install_from_npm,
)
from tests.machine_lock import held


@dataclass(frozen=True, slots=True)
class AgentRelease:
    """One installed release of another agent."""

    agent: str  # "codex" | "gemini"
    version: str
    root: Path  # the unpacked package directory
    entry: Path

    def argv(self) -> list[str]:
        if self.entry.suffix == ".js":
            node = shutil.which("node")
            if node is None:
                raise ReleaseUnavailable(f"node is needed to run {self.version}")
            return [node, str(self.entry)]
        return [str(self.entry)]


def release_version(agent: str) -> str:
    """The release under test: `MEMD_E2E_AGENT_RELEASE`, else the agent module's."""
    chosen = os.environ.get("MEMD_E2E_AGENT_RELEASE", "")
    return chosen or get_agent(agent).release.version


def package_spec(agent: str, version: str) -> tuple[str, str]:
    """(npm spec fetched, entry inside its package) for `agent` at `version`."""
    release = get_agent(agent).release
    if release.binary_package:  # a native binary in the platform package
        return f"{release.package}@{version}-linux-x64", release.entry
    return f"{release.package}@{version}", release.entry


def install_agent_release(agent: str, version: str) -> AgentRelease:
    """`agent`'s release `version`, from the cache or fetched with `npm pack`."""
    spec, entry = package_spec(agent, version)
    cache = cache_dir()
    found = _cached(agent, version, spec, entry, cache)
    if found is not None:
        return found
    cache.mkdir(parents=True, exist_ok=True)
    with held(cache / ".install.lock"):
        found = _cached(agent, version, spec, entry, cache)
        return found or _install(agent, version, spec, entry, cache)


def _key(spec: str) -> str:
    return spec.replace("/", "+")


def _cached(
    agent: str, version: str, spec: str, entry: str, cache: Path
) -> AgentRelease | None:
    for record in sorted(cache.glob(f"{_key(spec)}-*/release.json")):
        root = record.parent / "package"
        try:
            facts = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        path = root / entry
        if path.is_file() and _sha256(path) == facts.get("sha256"):
            return AgentRelease(agent, version, root, path)
    return None


def _install(
    agent: str, version: str, spec: str, entry: str, cache: Path
) -> AgentRelease:
    install_from_npm(spec, entry, _key(spec), cache, {"spec": spec})
    found = _cached(agent, version, spec, entry, cache)
    if found is None:
        raise ReleaseUnavailable(f"{spec} did not verify after install")
    return found


# -- the scripted models -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """A scripted turn: call memd's tool `tool` with `args`, or (tool "") say `text`."""

    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    text: str = "done"


@dataclass(frozen=True, slots=True)
class Seen:
    """One request the agent sent."""

    path: str
    body: Any


class _ScriptedServer:
    """The loopback HTTP server both models share; subclasses answer requests."""

    def __init__(self, turns: Sequence[Call]) -> None:
        self._turns = list(turns)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.requests: list[Seen] = []
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> _ScriptedServer:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                seen = Seen(self.path, body)
                with model._lock:
                    model.requests.append(seen)
                status, kind, payload = model.answer(seen)
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_POST = do_GET = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "use the model in a with block"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def next_turn(self, offers_memd: bool) -> Call:
        """The script's next turn once memd's tools are offered; else wait (text)."""
        with self._lock:
            if offers_memd and self._turns:
                return self._turns.pop(0)
        return Call(text="done")

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        raise NotImplementedError


WAIT_TOOL = "list_mcp_resources"  # Codex's own read-only tool: a turn that waits
SEARCH_TOOL = "tool_search"  # current models find MCP tools through it
WAITS = 40  # 10 s at most


class ResponsesModel(_ScriptedServer):
    """The OpenAI Responses API, as Codex CLI's custom provider speaks it."""

    waits = 0
    searches_empty = 0  # tool_search answers without memd's tools (made again)
    searching = False
    last_search = Call(SEARCH_TOOL, {"query": "memd"})

    def __enter__(self) -> ResponsesModel:
        super().__enter__()
        return self

    def codex_config(self, model: str = "e2e-model") -> str:
        """The user's own part of config.toml: this model as a custom provider."""
        return (
            "# the e2e model, on loopback\n"
            f'model = "{model}"\n'
            'model_provider = "e2e"\n\n'
            "[model_providers.e2e]\n"
            'name = "e2e"\n'
            f'base_url = "{self.url}/v1"\n'
            'wire_api = "responses"\n'
        )

    @property
    def conversation(self) -> list[Seen]:
        with self._lock:
            return [
                r
                for r in self.requests
                if r.path.startswith("/v1/responses") and isinstance(r.body, dict)
            ]

    @staticmethod
    def memd_tools(seen: Seen) -> list[str]:
        """memd's tools a request offers, as `namespace.name`."""
        found = []
        for tool in seen.body.get("tools") or []:
            if tool.get("type") == "namespace" and tool.get("name") == "mcp__memd":
                found += [f"mcp__memd.{t.get('name')}" for t in tool.get("tools", [])]
            elif str(tool.get("name", "")).startswith("mcp__memd"):
                found.append(str(tool["name"]))
        return found

    def turn_for(self, seen: Seen) -> Call:
        """The script's next turn, once Codex can call memd's tools.

        Codex may send its first request before memd's server is up (its MCP
        start-up runs beside the session's). With the tools offered directly,
        until they are: call Codex's own `list_mcp_resources`, which keeps the
        turn going. Behind `tool_search` (current models), a search that came
        back without memd's tools is made again: Codex adds memd's namespace
        to what it searches once the server is up (and says so in a developer
        message, "Added deferred tool namespaces").
        """
        import time

        inputs = seen.body.get("input") or []
        searched = any(
            isinstance(item, dict)
            and item.get("type") == "tool_search_output"
            and "mcp__memd" in json.dumps(item.get("tools"))
            for item in inputs
        )
        with self._lock:
            upcoming = self._turns[0] if self._turns else None
        if upcoming is not None and upcoming.tool == SEARCH_TOOL:
            self.searching = True
            return self.next_turn(True)
        if self.searching and not searched and self.waits < WAITS:
            self.waits += 1
            self.searches_empty += 1
            time.sleep(0.25)
            return self.last_search
        found = bool(self.memd_tools(seen)) or searched
        if not found and upcoming is not None and self.waits < WAITS:
            self.waits += 1
            time.sleep(0.25)
            return Call(WAIT_TOOL)
        return self.next_turn(True)

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        if not seen.path.startswith("/v1/responses") or not isinstance(seen.body, dict):
            return 200, "application/json", b'{"data": [], "models": []}'
        turn = self.turn_for(seen)
        number = next(self._ids)
        if turn.tool == SEARCH_TOOL:
            self.last_search = turn
            item: dict[str, Any] = {
                "type": "tool_search_call",
                "id": f"ts_e2e_{number}",
                "call_id": f"call_e2e_{number}",
                "status": "completed",
                "execution": "client",
                "arguments": dict(turn.args),
            }
        elif turn.tool:
            item = {
                "type": "function_call",
                "id": f"fc_e2e_{number}",
                "call_id": f"call_e2e_{number}",
                "name": turn.tool,
                "arguments": json.dumps(dict(turn.args)),
                "status": "completed",
            }
            if turn.tool != WAIT_TOOL:
                item["namespace"] = "mcp__memd"
        else:
            item = {
                "type": "message",
                "id": f"msg_e2e_{number}",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": turn.text, "annotations": []}
                ],
            }
        response = {
            "id": f"resp_e2e_{number}",
            "object": "response",
            "status": "completed",
            "output": [item],
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "total_tokens": 15,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        events = (
            (
                "response.created",
                {"response": {**response, "status": "in_progress", "output": []}},
            ),
            ("response.output_item.added", {"output_index": 0, "item": item}),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            ("response.completed", {"response": response}),
        )
        payload = "".join(
            f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"
            for name, data in events
        )
        return 200, "text/event-stream", payload.encode()

    def outputs(self) -> list[str]:
        """Every function_call_output the agent sent back, in order."""
        conversation = self.conversation
        if not conversation:
            return []
        return [
            str(item.get("output"))
            for item in conversation[-1].body.get("input", [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]


class GeminiModel(_ScriptedServer):
    """The Gemini API, as `GOOGLE_GEMINI_BASE_URL` points Gemini CLI at it."""

    def __enter__(self) -> GeminiModel:
        super().__enter__()
        return self

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        return {
            **base,
            "GOOGLE_GEMINI_BASE_URL": self.url,
            "GEMINI_API_KEY": "e2e-scripted",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
            "NO_COLOR": "1",
        }

    @property
    def conversation(self) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if "streamGenerateContent" in r.path]

    @staticmethod
    def memd_tools(seen: Seen) -> list[str]:
        body = seen.body if isinstance(seen.body, dict) else {}
        return [
            str(f.get("name"))
            for t in body.get("tools") or []
            for f in t.get("functionDeclarations") or []
            if str(f.get("name", "")).startswith("mcp_memd_")
        ]

    def answer(self, seen: Seen) -> tuple[int, str, bytes]:
        if ":generateContent" in seen.path:  # the classifier picks a model
            choice = {"reasoning": "scripted", "model_choice": "flash"}
            return (
                200,
                "application/json",
                json.dumps(_candidate([{"text": json.dumps(choice)}])).encode(),
            )
        if "streamGenerateContent" not in seen.path:
            return 200, "application/json", b"{}"
        turn = self.next_turn(bool(self.memd_tools(seen)))
        parts = (
            [{"functionCall": {"name": turn.tool, "args": dict(turn.args)}}]
            if turn.tool
            else [{"text": turn.text}]
        )
        return (
            200,
            "text/event-stream",
            f"data: {json.dumps(_candidate(parts))}\n\n".encode(),
        )

    def function_responses(self) -> list[str]:
        """Every functionResponse the agent sent back, in order, as JSON text."""
        conversation = self.conversation
        if not conversation:
            return []
        return [
            json.dumps(part["functionResponse"])
            for message in conversation[-1].body.get("contents", [])
            for part in message.get("parts", [])
            if "functionResponse" in part
        ]


def _candidate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "totalTokenCount": 15,
        },
    }


def run_agent(
    release: AgentRelease,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run the release with `args` in `cwd`; stdin is closed."""
    return subprocess.run(
        [*release.argv(), *args],
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
