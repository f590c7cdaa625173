"""Adding memd's MCP server to an agent's configuration, and the snippets for others.

Claude Code keeps user-scope MCP servers in the top-level `mcpServers` of
`~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set) and
starts them in the session's working directory, which is the project memd
serves. `with_memd_server` adds or refreshes the one `memd` entry and leaves
every other key and server alone, as `memd.hooks.settings` does for hooks;
`without_memd_server` takes out only that entry.
Clients that start servers elsewhere (Claude Desktop, Cursor, Codex CLI,
Gemini CLI) get `--project` in their snippet. Pure: data in, data out.
"""

from __future__ import annotations

import copy
import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

SERVER_NAME = "memd"


def claude_json_path(env: Mapping[str, str]) -> str:
    """Where Claude Code keeps its user-scope MCP servers."""
    config_dir = env.get("CLAUDE_CONFIG_DIR", "")
    if config_dir:
        return os.path.join(config_dir, ".claude.json")
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude.json")


def server_entry(memd_executable: str, project: str | None = None) -> dict[str, object]:
    """The stdio server entry: `memd mcp`, with `--project` for clients elsewhere."""
    args = ["mcp"] if project is None else ["mcp", "--project", project]
    return {"type": "stdio", "command": memd_executable, "args": args, "env": {}}


def with_memd_server(
    config: Mapping[str, object], memd_executable: str
) -> dict[str, object]:
    """Return `config` with the `memd` server in `mcpServers` (idempotent).

    Raises `ValueError` when `mcpServers` exists but is not an object.
    """
    result = copy.deepcopy(dict(config))
    servers = result.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ValueError("'mcpServers' is not an object")
    servers[SERVER_NAME] = server_entry(memd_executable)
    return result


def is_memd_server(entry: object) -> bool:
    """Whether an `mcpServers` entry runs `memd mcp`, as `with_memd_server` writes."""
    if not isinstance(entry, dict):
        return False
    command, args = entry.get("command"), entry.get("args")
    return (
        isinstance(command, str)
        and os.path.basename(command) == "memd"
        and isinstance(args, list)
        and args[:1] == ["mcp"]
    )


def without_memd_server(config: Mapping[str, object]) -> dict[str, object]:
    """Return `config` without the server memd added, and nothing else changed.

    A `memd` entry that does not run `memd mcp` is the user's own and stays;
    an `mcpServers` that held only memd's goes, as install found it absent.
    """
    result = copy.deepcopy(dict(config))
    servers = result.get("mcpServers")
    if isinstance(servers, dict) and is_memd_server(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        if not servers:
            del result["mcpServers"]
    return result


def client_snippets(memd_executable: str) -> str:
    """The configuration snippets for other MCP clients, as text to paste."""
    project = "/path/to/your/project"
    json_entry = {"mcpServers": {SERVER_NAME: server_entry(memd_executable, project)}}
    plain = {
        "mcpServers": {
            SERVER_NAME: {
                "command": memd_executable,
                "args": ["mcp", "--project", project],
            }
        }
    }
    args_toml = json.dumps(["mcp", "--project", project])
    return "\n".join(
        (
            "# Claude Code (user scope; memd mcp install --claude-code writes it)",
            f"#   {claude_json_path({'HOME': '~'})}",
            json.dumps(
                {"mcpServers": {SERVER_NAME: server_entry(memd_executable)}}, indent=2
            ),
            "",
            "# Claude Desktop: claude_desktop_config.json",
            "# Cursor: ~/.cursor/mcp.json (or .cursor/mcp.json in the project)",
            json.dumps(json_entry, indent=2),
            "",
            "# Gemini CLI: ~/.gemini/settings.json",
            json.dumps(plain, indent=2),
            "",
            "# Codex CLI: ~/.codex/config.toml",
            f"[mcp_servers.{SERVER_NAME}]",
            f"command = {json.dumps(memd_executable)}",
            f"args = {args_toml}",
            "",
        )
    )
