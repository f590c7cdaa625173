"""The `memd` command line: a table of subcommands; the one place errors become exits.

Only `sys` and `os` are imported at the top: the warm `memd prompt` path is
measured against a bare `python -c`, so everything else loads inside the
command that needs it (pip's `create_command` idea).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

# name -> (module, one-line summary); `--help` imports none of the modules.
COMMANDS = {
    "setup": (
        "memd.cli.commands.setup",
        "wire memd into every agent on PATH (Claude Code, Codex CLI, Gemini CLI):"
        " hooks, MCP server, user service (--undo)",
    ),
    "doctor": (
        "memd.cli.commands.doctor",
        "check every part memd needs, one verdict each, with the fix",
    ),
    "run": (
        "memd.cli.commands.run",
        "run the daemon: watch, lint on save, keep prompts warm, dream nightly",
    ),
    "status": (
        "memd.cli.commands.status",
        "show the daemon, each watched project, losses and the next dream",
    ),
    "paths": ("memd.cli.commands.paths", "show where a project's memory lives and why"),
    "lint": ("memd.cli.commands.lint", "check memory files and indexes"),
    "fix": (
        "memd.cli.commands.fix",
        "apply the safe fixes lint knows, compacting a long index "
        "(show the diff with --dry-run, take it back with --undo)",
    ),
    "prompt": (
        "memd.cli.commands.prompt",
        "print a project's memory prompt, as the agent loads it",
    ),
    "log": (
        "memd.cli.commands.log",
        "append an entry to today's daily log (the nightly dream files it)",
    ),
    "dream": (
        "memd.cli.commands.dream",
        "consolidate daily logs into topic files (nightly; --now runs it now), "
        "or undo the last dream",
    ),
    "history": (
        "memd.cli.commands.history",
        "list every recorded change of memory, show one as a diff, or purge a file",
    ),
    "restore": (
        "memd.cli.commands.restore",
        "bring back a memory file or a whole memory directory as it was",
    ),
    "stats": (
        "memd.cli.commands.stats",
        "how big each project's memory prompt is against the agent's limit, "
        "and how often sessions loaded it",
    ),
    "config": (
        "memd.cli.commands.config",
        "print the effective configuration and where each value came from",
    ),
    "service": (
        "memd.cli.commands.service",
        "install, remove or inspect the systemd/launchd user service",
    ),
    "team": (
        "memd.cli.commands.team",
        "share team memory through a git remote: init, status, sync",
    ),
    "sync": (
        "memd.cli.commands.sync",
        "sync your own memory for every project through your git remote",
    ),
    "hook": (
        "memd.cli.commands.hook",
        "agent hooks: session-start and post-tool-use feedback, and their install",
    ),
    "recall": (
        "memd.cli.commands.recall",
        "find the memories that answer a question (offline, on this machine)",
    ),
    "mcp": (
        "memd.cli.commands.mcp",
        "serve memory to any agent over MCP (stdio), or (un)install the server",
    ),
    "ui": (
        "memd.cli.commands.ui",
        "open the running daemon's local web viewer of every project's memory",
    ),
}

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run memd with `argv` (default `sys.argv[1:]`) and return the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["prompt"]:
        # The warm path: served from a fresh snapshot, no argparse, no heavy imports.
        from memd.cli.commands.prompt import serve_warm

        code = serve_warm(args[1:])
        if code is not None:
            return code
    elif args[:1] == ["hook"]:
        # Claude Code runs this after every tool call: no argparse, no config
        # unless the session's memory changed (memd.hooks.fastpath).
        from memd.cli.commands.hook import serve_fast

        # `leave`: memd runs as the hook's process, so it exits once it answered.
        code = serve_fast(args[1:], leave=argv is None)
        if code is not None:
            return code
    elif args[:1] in (["history"], ["restore"]):
        # 10,000 versions listed in well under 200 ms: only this command's parser.
        return _run_full(args, only=args[0])
    elif args[:1] == ["recall"]:
        # Timed against a bare `python -c`: the plain shapes skip argparse, and
        # anything else builds only the recall command's parser.
        from memd.cli.commands.recall import parse_simple

        code = _run_full(args, only="recall", parsed=parse_simple(args[1:]))
        if argv is None:
            # As the process itself, skip the interpreter's teardown (1.5 ms,
            # a sixth of a bare start-up): the index is closed, output flushed.
            from memd.cli.commands.hook import exit_now

            exit_now(code)
        return code
    return _run_full(args)


def _build_parser(only: str | None = None) -> argparse.ArgumentParser:
    import argparse
    import importlib

    from memd._version import __version__
    from memd.cli.suggest import SuggestingParser

    parser = SuggestingParser(
        prog="memd",
        description="Keep an AI coding agent's auto memory healthy.",
    )
    parser.add_argument("--version", action="version", version=f"memd {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for internal errors"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,  # the commands that log take it too
        help="show log records on stderr (on a terminal they go to memd's log file)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, summary) in COMMANDS.items():
        if only is not None and name != only:
            continue
        command = sub.add_parser(name, help=summary, description=summary)
        # The subcommand's own parser reports its unknown options (with its usage).
        command.set_defaults(_module=module_name, _parser=command)
        importlib.import_module(module_name).add_arguments(command)
    return parser


def _run_full(
    args: list[str], only: str | None = None, parsed: object | None = None
) -> int:
    """Parse `args` (unless `parsed` is the namespace already) and run the command."""
    from memd.errors import MemdError

    debug = "--debug" in args or bool(os.environ.get("MEMD_DEBUG"))
    try:
        namespace: Any = parsed
        if namespace is None:
            parser = _build_parser(only)
            try:
                namespace, extras = parser.parse_known_args(args)
                if extras:
                    chosen = getattr(namespace, "_parser", parser)
                    chosen.error(f"unrecognized arguments: {' '.join(extras)}")
            except SystemExit as exit_:  # argparse already printed its one line
                return EXIT_OK if exit_.code in (0, None) else EXIT_USAGE
            if namespace.command is None:
                parser.print_help()
                return EXIT_USAGE
        # `__import__`, not importlib: importing that package costs the timed
        # `memd recall` a tenth of its budget.
        __import__(namespace._module)
        code: int = sys.modules[namespace._module].run(namespace)
        return code
    except MemdError as error:
        if debug:
            raise
        print(f"memd: {error}", file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:
        # The reader went away (`memd lint | head`); not an error worth a traceback.
        import contextlib  # here, not above: `memd recall` is timed without it

        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 -- silence the flush at exit
        return EXIT_OK
    except (
        OSError
    ) as error:  # an I/O failure the command did not expect: exit 2, one line
        if debug:
            raise
        print(
            f"memd: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
