"""`memd mcp`: serve memory over MCP (stdio), or add the server to an agent's config.

`memd mcp` serves the project of the working directory (as Claude Code starts
it), or `--project DIR`. `memd mcp install --claude-code` merges the server
into Claude Code's user-scope configuration (`~/.claude.json`), keeping every
other key and server and leaving a `.memd-backup`; `--print` prints the
snippets for other clients. The `mcp` SDK is imported only when serving.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

BACKUP_SUFFIX = ".memd-backup"


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


def run(args: argparse.Namespace) -> int:
    if args.mcp_command == "install":
        return _install(args)
    from memd.mcp_server.server import serve_stdio
    from memd.mcp_server.tools import ToolFailedError, open_project

    try:
        project = open_project(args.project, os.environ)
    except ToolFailedError as error:
        from memd.errors import UsageError

        raise UsageError(str(error)) from None
    serve_stdio(project)
    return 0


def _install(args: argparse.Namespace) -> int:
    from memd.cli.commands.hook import memd_executable
    from memd.mcp_server.install import claude_json_path, client_snippets

    executable = memd_executable()
    if args.print:
        sys.stdout.write(client_snippets(executable))
        return 0
    return _merge_into(claude_json_path(os.environ), executable, dry_run=args.dry_run)


def _merge_into(path: str, executable: str, *, dry_run: bool) -> int:
    """Add the server to the JSON config at `path`: diff it, or back it up and write it.

    A file that is not a JSON object, or whose `mcpServers` is not one, is
    left untouched (`UsageError`), as `memd hook install` does for settings.
    """
    import difflib
    import json

    from memd.atomic import write_atomic
    from memd.errors import UsageError
    from memd.fsread import read_bytes
    from memd.mcp_server.install import with_memd_server

    try:
        old_text: str | None = read_bytes(path, follow=True).decode("utf-8")
    except FileNotFoundError:
        old_text = None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read ({error}); left untouched") from None
    try:
        config = json.loads(old_text) if old_text and old_text.strip() else {}
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
        new = with_memd_server(config, executable)
    except ValueError as error:
        raise UsageError(f"{path}: {error}; left untouched") from None
    if new == config:
        print(f"memd MCP server already installed in {path}")
        return 0
    new_text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        sys.stdout.writelines(
            difflib.unified_diff(
                (old_text or "").splitlines(keepends=True),
                new_text.splitlines(keepends=True),
                fromfile=f"{path} (now)",
                tofile=f"{path} (with the memd MCP server)",
            )
        )
        return 0
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    backup = ""
    if old_text is not None:
        write_atomic(path + BACKUP_SUFFIX, old_text.encode("utf-8"))
        backup = f" (backup: {path}{BACKUP_SUFFIX})"
    write_atomic(path, new_text.encode("utf-8"))
    print(f"memd MCP server installed in {path}{backup}")
    return 0
