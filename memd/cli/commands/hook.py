"""`memd hook …`: Claude Code hooks that feed memory findings back to the agent.

`session-start` and `post-tool-use` read the hook payload on stdin and print
the hook's JSON output, or nothing. They must never break the agent's session:
any internal failure is logged to stderr and the command exits 0 silently.
`install` / `uninstall` merge memd's hooks into a Claude Code settings file.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import NoReturn


MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # a PostToolUse payload carries the file written
OTHER_AGENTS = ("codex", "gemini")  # memd.agents' others, without importing it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="hook_command", metavar="HOOK", required=True)
    start = sub.add_parser(
        "session-start",
        help="SessionStart hook: report memory problems to the model",
        description="Read a SessionStart payload on stdin; print additionalContext.",
    )
    start.add_argument(
        "--agent",
        choices=OTHER_AGENTS,
        help="the hook runs in this agent: give it Claude Code's memory index, "
        "read-only, within the agent's limit (memd setup installs it so)",
    )
    start.add_argument(
        "--inject-prompt",
        action="store_true",
        help="also inject the rendered memory prompt (agents without a memory system)",
    )
    sub.add_parser(
        "post-tool-use",
        help="PostToolUse hook: block a memory write that left errors",
        description="Read a PostToolUse payload on stdin; print a block decision "
        "when a memory file the tool wrote has errors.",
    )
    for name, verb in (
        ("install", "add memd's hooks to"),
        ("uninstall", "remove memd's hooks from"),
    ):
        command = sub.add_parser(name, help=f"{verb} a Claude Code settings file")
        where = command.add_mutually_exclusive_group()
        where.add_argument(
            "--user",
            action="store_true",
            help="the user settings, ~/.claude/settings.json (the default)",
        )
        where.add_argument(
            "--project",
            metavar="DIR",
            help="the project's personal settings, DIR/.claude/settings.local.json",
        )
        command.add_argument(
            "--dry-run", action="store_true", help="print the change, write nothing"
        )


def run(args: argparse.Namespace) -> int:
    if args.hook_command == "session-start":
        return run_hook(
            "session-start", inject_prompt=args.inject_prompt, agent=args.agent
        )
    if args.hook_command == "post-tool-use":
        return run_hook("post-tool-use")
    return _edit_settings(args, install=args.hook_command == "install")


def serve_fast(argv: list[str], *, leave: bool = False) -> int | None:
    """Run a hook given Claude Code's exact argv, before argparse; else None.

    With `leave` (memd runs as the hook's process), exit once it has answered.
    """
    if argv == ["post-tool-use"]:
        code = run_hook("post-tool-use")
    elif argv[:1] == ["session-start"] and argv[1:] in ([], ["--inject-prompt"]):
        code = run_hook("session-start", inject_prompt=len(argv) == 2)
    elif argv[:2] == ["session-start", "--agent"] and argv[2:] in (
        [name] for name in OTHER_AGENTS
    ):
        code = run_hook("session-start", agent=argv[2])
    else:
        return None
    if leave:
        exit_now(code)
    return code


def exit_now(code: int) -> NoReturn:
    """End the process without the interpreter's teardown, which costs the fast
    paths about 1.4 ms of CPU (a third of their budget) and does nothing for a
    hook: what it wrote is closed already (write_atomic closes its descriptor),
    and only stdout and stderr, flushed here, hold buffered output.
    """
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 -- contextlib is an import the fast path does without
            stream.flush()
        except (OSError, ValueError):  # the agent closed the pipe: nothing to keep
            pass
    os._exit(code)


def run_hook(
    name: str, *, inject_prompt: bool = False, agent: str | None = None
) -> int:
    """Read the payload, answer fast when the session record allows, else the long way.

    On any failure print nothing, log why on stderr, and exit 0: a hook must
    never break the agent's session.
    """
    from memd import fastjson  # `json` imports `re` and `enum`: 7 ms, on every call

    env = os.environ
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        if len(raw) > MAX_PAYLOAD_BYTES:
            raise ValueError("hook payload larger than 4 MiB")
        payload = fastjson.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("hook payload is not a JSON object")
        if agent is not None:
            output = _answer_other(agent, payload, env)
        else:
            output = _answer(name, payload, env, inject_prompt=inject_prompt)
    except Exception as error:  # noqa: BLE001 -- a hook must never fail the agent's session
        _log_failure(error)
        return 0
    if output is not None:
        sys.stdout.write(fastjson.dumps(output) + "\n")
    return 0


def _answer(
    name: str,
    payload: dict[str, object],
    env: Mapping[str, str],
    *,
    inject_prompt: bool,
) -> dict[str, object] | None:
    if name == "post-tool-use":
        from memd.hooks.session_state import untouched

        if untouched(payload, env):
            return None
        from memd.hooks.feedback import post_tool_use

        return post_tool_use(payload, env)
    from memd.sync.pull import pull_before_session, with_note

    # Personal sync on, not run for a while, and no daemon: fetch first (2 s at
    # most), so the memory the agent reads includes the other machines' edits.
    note = pull_before_session(payload.get("cwd"), env)
    if not inject_prompt:
        from memd.hooks.fastpath import session_start_warm

        warm = session_start_warm(payload, env)
        if warm is not None:
            return with_note(warm[0], note)
    from memd.config import load_config
    from memd.hooks import feedback

    return with_note(
        feedback.session_start(
            payload, load_config(env), env, inject_prompt=inject_prompt
        ),
        note,
    )


def _answer_other(
    agent: str, payload: dict[str, object], env: Mapping[str, str]
) -> dict[str, object] | None:
    """SessionStart in another agent: Claude Code's index, within that agent's limit."""
    from memd.agents.budgets import CONTEXT_LIMIT_BYTES
    from memd.agents.context import session_start_output

    return session_start_output(
        payload, env, limit_bytes=CONTEXT_LIMIT_BYTES[agent], agent=agent
    )


def _log_failure(error: Exception) -> None:
    try:
        from memd.logconfig import configure_logging, get_logger

        configure_logging("json", "info", stream=sys.stderr)
        get_logger(component="hook").error(
            "hook_failed", error=str(error), error_type=type(error).__name__
        )
    except Exception:  # noqa: BLE001, S110 -- logging the failure must not fail either
        pass


# -- install / uninstall -------------------------------------------------------


def settings_file(args: argparse.Namespace) -> str:
    """Return the settings file `install`/`uninstall` edits."""
    from memd.claude_code.settings import claude_config_home
    from memd.errors import UsageError

    if args.project is not None:
        if not os.path.isdir(args.project):
            raise UsageError(f"--project {args.project}: not a directory")
        return os.path.join(
            os.path.abspath(args.project), ".claude", "settings.local.json"
        )
    return os.path.join(claude_config_home(), "settings.json")


def memd_executable() -> str:
    """The absolute path of the memd the hooks should run."""
    import shutil

    found = shutil.which("memd")
    if found:
        return os.path.abspath(found)
    beside = os.path.join(os.path.dirname(sys.executable), "memd")  # a venv's bin/
    if os.access(beside, os.X_OK):
        return beside
    return os.path.abspath(sys.argv[0]) if sys.argv[0].endswith("memd") else "memd"


def _edit_settings(args: argparse.Namespace, *, install: bool) -> int:
    sys.stdout.write(
        edit_hooks(settings_file(args), install=install, dry_run=args.dry_run)
    )
    return 0


def edit_hooks(path: str, *, install: bool, dry_run: bool) -> str:
    """Install or remove memd's hooks in the settings file `path`; what it did.

    `memd hook install|uninstall` and `memd setup` both make this edit.
    """
    from memd.agents.claude_code import edit_hooks as edit

    return edit(
        path, install=install, dry_run=dry_run, memd_executable=memd_executable()
    )
