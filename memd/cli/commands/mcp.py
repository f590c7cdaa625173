"""`memd mcp`: serve memory over MCP (stdio), or add the server to an agent's config.

`memd mcp` serves the project of the working directory (as Claude Code starts
it), or `--project DIR`. `memd mcp install --claude-code` merges the server
into Claude Code's user-scope configuration (`~/.claude.json`), keeping every
other key and server and leaving a `.memd-backup`; `--print` prints the
snippets for other clients. `memd mcp uninstall` takes out exactly what
install added, as `memd hook uninstall` does (the same edit, in
`memd.hooks.settings.plan_json_edit`). The `mcp` SDK is imported only when
serving, and only after the handshake and the listings (`memd.mcp_server.lobby`).
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser, "whose memory to serve")
    sub = parser.add_subparsers(dest="mcp_command", metavar="ACTION")
    install = sub.add_parser(
        "install",
        help="add memd's MCP server to Claude Code (user scope), or print snippets",
        description="Add memd's MCP server to Claude Code's user configuration, "
        "or print the snippets for other clients.",
    )
    what = install.add_mutually_exclusive_group()
    what.add_argument(
        "--claude-code",
        action="store_true",
        help="merge into ~/.claude.json (the default)",
    )
    what.add_argument(
        "--print",
        action="store_true",
        help="print JSON/TOML snippets for Claude Code, Claude Desktop, Cursor, "
        "Gemini CLI and Codex CLI",
    )
    install.add_argument(
        "--dry-run", action="store_true", help="print the change, write nothing"
    )
    uninstall = sub.add_parser(
        "uninstall",
        help="remove memd's MCP server from Claude Code (user scope)",
        description="Remove what `memd mcp install` added to Claude Code's user "
        "configuration, and nothing else.",
    )
    uninstall.add_argument(
        "--dry-run", action="store_true", help="print the change, write nothing"
    )


def run(args: argparse.Namespace) -> int:
    if args.mcp_command in ("install", "uninstall"):
        return _edit_claude_json(args, install=args.mcp_command == "install")
    from memd.mcp_server.lobby import claimed_stdio, greet
    from memd.mcp_server.tools import ToolFailedError, open_project, project_start

    try:
        start = project_start(args.project)
    except ToolFailedError as error:
        from memd.errors import UsageError

        raise UsageError(str(error)) from None
    if os.isatty(0):
        # An MCP client talks on stdin; a person who ran this sees why it waits.
        print(
            f"memd mcp: serving the memory of {start} over MCP on stdin/stdout;"
            " waiting for a client's JSON-RPC (Ctrl-C stops it)",
            file=sys.stderr,
        )
    with claimed_stdio() as (wire_in, wire_out):
        hand_over = greet(wire_in, wire_out)
        if hand_over is not None:  # a tool call: now the project and the SDK
            from memd.mcp_server.server import serve_wire

            serve_wire(open_project(start, os.environ), wire_in, wire_out, hand_over)
    return 0


def _edit_claude_json(args: argparse.Namespace, *, install: bool) -> int:
    """Add (install) or remove memd's server in Claude Code's user config."""
    from memd.cli.commands.hook import memd_executable
    from memd.mcp_server.install import claude_json_path, client_snippets

    if install and args.print:
        sys.stdout.write(client_snippets(memd_executable()))
        return 0
    sys.stdout.write(
        edit_server(claude_json_path(os.environ), install=install, dry_run=args.dry_run)
    )
    return 0


def edit_server(path: str, *, install: bool, dry_run: bool) -> str:
    """Add or remove memd's server in Claude Code's user config `path`; what it did.

    `memd mcp install|uninstall` and `memd setup` both make this edit.
    """
    from memd.agents.claude_code import edit_server as edit
    from memd.cli.commands.hook import memd_executable

    return edit(
        path, install=install, dry_run=dry_run, memd_executable=memd_executable()
    )
