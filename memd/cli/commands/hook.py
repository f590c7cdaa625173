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
    from collections.abc import Callable

    from memd.config import Config

BACKUP_SUFFIX = ".memd-backup"
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024  # a PostToolUse payload carries the file written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="hook_command", metavar="HOOK", required=True)
    start = sub.add_parser(
        "session-start",
        help="SessionStart hook: report memory problems to the model",
        description="Read a SessionStart payload on stdin; print additionalContext.",
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
        return _never_fail(
            lambda config, payload: _session_start(config, payload, args.inject_prompt)
        )
    if args.hook_command == "post-tool-use":
        return _never_fail(_post_tool_use)
    return _edit_settings(args, install=args.hook_command == "install")


def _session_start(
    config: Config, payload: dict[str, object], inject_prompt: bool
) -> dict[str, object] | None:
    from memd.hooks.feedback import session_start

    return session_start(payload, config, inject_prompt=inject_prompt)


def _post_tool_use(
    config: Config, payload: dict[str, object]
) -> dict[str, object] | None:
    from memd.hooks.feedback import post_tool_use

    return post_tool_use(payload, config)


def _never_fail(
    handler: Callable[[Config, dict[str, object]], dict[str, object] | None],
) -> int:
    """Run a hook handler; on any failure print nothing, log why, and exit 0."""
    import json

    try:
        from memd.config import load_config

        raw = sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1)
        if len(raw) > MAX_PAYLOAD_BYTES:
            raise ValueError("hook payload larger than 4 MiB")
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("hook payload is not a JSON object")
        output = handler(load_config(), payload)
    except Exception as error:  # noqa: BLE001 -- a hook must never fail the agent's session
        _log_failure(error)
        return 0
    if output is not None:
        sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    return 0


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
    from memd.agent.settings import claude_config_home
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
    return os.path.abspath(sys.argv[0]) if sys.argv[0].endswith("memd") else "memd"


def _edit_settings(args: argparse.Namespace, *, install: bool) -> int:
    import difflib
    import json

    from memd.atomic import write_atomic
    from memd.errors import UsageError
    from memd.hooks.settings import with_memd_hooks, without_memd_hooks

    path = settings_file(args)
    try:
        with open(path, encoding="utf-8") as f:
            old_text: str | None = f.read()
    except FileNotFoundError:
        old_text = None
    try:
        settings = json.loads(old_text) if old_text and old_text.strip() else {}
    except ValueError as error:
        raise UsageError(f"{path}: not valid JSON ({error}); left untouched") from None
    if not isinstance(settings, dict):
        raise UsageError(f"{path}: not a JSON object; left untouched")
    try:
        new = (
            with_memd_hooks(settings, memd_executable())
            if install
            else without_memd_hooks(settings)
        )
    except ValueError as error:
        raise UsageError(f"{path}: {error}; left untouched") from None
    if new == settings:
        verb = "already installed in" if install else "not installed in"
        print(f"memd hooks {verb} {path}")
        return 0
    new_text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    if args.dry_run:
        diff = difflib.unified_diff(
            (old_text or "").splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"{path} (now)",
            tofile=f"{path} ({'with' if install else 'without'} memd hooks)",
        )
        sys.stdout.writelines(diff)
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if old_text is not None:
        write_atomic(path + BACKUP_SUFFIX, old_text.encode("utf-8"))
    write_atomic(path, new_text.encode("utf-8"))
    done = "installed in" if install else "removed from"
    backup = f" (backup: {path}{BACKUP_SUFFIX})" if old_text is not None else ""
    print(f"memd hooks {done} {path}{backup}")
    return 0
