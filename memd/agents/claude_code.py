"""Claude Code: its user settings (memd's hooks) and `~/.claude.json` (memd's server).

Where Claude Code keeps its memory and how it loads it is `memd.claude_code` (its
rules); this module is only how memd is wired into it. Claude Code's memory
is the memory memd keeps, so it lists no store of its own here.
"""

from __future__ import annotations

import os

from memd.agents import budgets
from memd.agents.base import FAIL, OK, Agent, ConfigEdit, Release, Verdict, same_memd

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

NAME = "claude-code"
MAX_CLAUDE_JSON_BYTES = 64 * 1024 * 1024  # ~/.claude.json holds the agent's history
CONTEXT_LIMIT_BYTES = budgets.CONTEXT_LIMIT_BYTES[NAME]


def settings_path(env: Mapping[str, str]) -> str:
    from memd.claude_code.settings import claude_config_home

    return os.path.join(claude_config_home(env), "settings.json")


def claude_json_path(env: Mapping[str, str]) -> str:
    from memd.mcp_server.install import claude_json_path as path

    return path(env)


def edit_hooks(path: str, *, install: bool, dry_run: bool, memd_executable: str) -> str:
    """Install or remove memd's hooks in the settings file `path`; what it did."""
    from memd.hooks.settings import plan_edit
    from memd.hooks.settings_file import apply_json_edit

    return apply_json_edit(
        path,
        lambda current, backup: plan_edit(
            current, backup, install=install, memd_executable=memd_executable
        ),
        what="memd hooks",
        install=install,
        dry_run=dry_run,
    )


def edit_server(
    path: str, *, install: bool, dry_run: bool, memd_executable: str
) -> str:
    """Add or remove memd's server in Claude Code's user config `path`; what it did."""
    from memd.hooks.settings import plan_json_edit
    from memd.hooks.settings_file import apply_json_edit
    from memd.mcp_server.install import with_memd_server, without_memd_server

    return apply_json_edit(
        path,
        lambda current, backup: plan_json_edit(
            current,
            backup,
            install=install,
            add=lambda config: with_memd_server(config, memd_executable),
            remove=without_memd_server,
        ),
        what="memd MCP server",
        install=install,
        dry_run=dry_run,
        max_bytes=MAX_CLAUDE_JSON_BYTES,
    )


def config_edits(
    env: Mapping[str, str], memd_executable: str
) -> tuple[ConfigEdit, ...]:
    def hooks(path: str, *, install: bool, dry_run: bool) -> str:
        return edit_hooks(
            path, install=install, dry_run=dry_run, memd_executable=memd_executable
        )

    def server(path: str, *, install: bool, dry_run: bool) -> str:
        return edit_server(
            path, install=install, dry_run=dry_run, memd_executable=memd_executable
        )

    return (
        ConfigEdit("hooks", settings_path(env), hooks),
        ConfigEdit("MCP server", claude_json_path(env), server),
    )


def checks(env: Mapping[str, str], memd_executable: str) -> Iterator[Verdict]:
    """memd's hooks in the user settings, its server in ~/.claude.json: this memd."""
    from memd.hooks.settings import MEMD_HOOKS
    from memd.mcp_server.install import SERVER_NAME, is_memd_server

    path = settings_path(env)
    settings, problem = _json_object(path)
    hooks = settings.get("hooks")
    missing = [
        event
        for event, (_, subcommand, _) in MEMD_HOOKS.items()
        if not any(
            _runs(command, memd_executable, subcommand)
            for command in _commands(hooks, event)
        )
    ]
    if problem:
        yield Verdict(
            "hooks", FAIL, f"{path}: {problem}", f"repair {path}, then `memd setup`"
        )
    elif missing:
        other = _memd_commands(hooks)
        why = (
            f"they run another memd ({other[0]}), not {memd_executable}"
            if other
            else f"{', '.join(missing)} missing"
        )
        yield Verdict(
            "hooks", FAIL, f"{path}: {why}", "`memd setup` (or `memd hook install`)"
        )
    else:
        yield Verdict(
            "hooks", OK, f"{', '.join(MEMD_HOOKS)} in {path} run {memd_executable}"
        )
    claude_json = claude_json_path(env)
    config, problem = _json_object(claude_json)
    servers = config.get("mcpServers")
    entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    if problem:
        yield Verdict("mcp", FAIL, f"{claude_json}: {problem}", f"repair {claude_json}")
    elif not is_memd_server(entry):
        yield Verdict(
            "mcp",
            FAIL,
            f"no memd server in {claude_json}",
            "`memd setup` (or `memd mcp install`)",
        )
    elif isinstance(entry, dict) and not same_memd(
        entry.get("command"), memd_executable
    ):
        yield Verdict(
            "mcp",
            FAIL,
            f"the memd server in {claude_json} runs {entry.get('command')},"
            f" not {memd_executable}",
            "`memd mcp install` (it points the entry at this memd)",
        )
    else:
        yield Verdict("mcp", OK, f"memd server in {claude_json} runs {memd_executable}")


def _json_object(path: str) -> tuple[dict[str, object], str]:
    """The JSON object at `path` ({} when missing) and a problem, or ""."""
    from memd import jsonedit
    from memd.fsread import read_bytes, refusal_reason

    try:  # read as `memd setup` edits it: what one accepts, so does the other
        raw = read_bytes(path, MAX_CLAUDE_JSON_BYTES, follow=True)
        data = jsonedit.load(raw.decode("utf-8")) if raw.strip() else {}
    except FileNotFoundError:
        return {}, ""
    except OSError as error:
        return {}, refusal_reason(error)
    except ValueError as error:  # JsonEditError, UnicodeDecodeError
        return {}, f"not valid JSON ({error})"
    if not isinstance(data, dict):
        return {}, "not a JSON object"
    return data, ""


def _runs(command: str, executable: str, subcommand: str) -> bool:
    """Whether a hook's `command` runs `memd hook <subcommand>` with this memd."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return words[1:] == ["hook", subcommand] and same_memd(words[0], executable)


def _commands(hooks: object, event: str) -> list[str]:
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    found: list[str] = []
    for group in groups if isinstance(groups, list) else ():
        inner = group.get("hooks") if isinstance(group, dict) else None
        for entry in inner if isinstance(inner, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                found.append(entry["command"])
    return found


def _memd_commands(hooks: object) -> list[str]:
    from memd.hooks.settings import MEMD_HOOKS, is_memd_hook

    return [
        command
        for event in MEMD_HOOKS
        for command in _commands(hooks, event)
        if is_memd_hook({"type": "command", "command": command})
    ]


def stores(env: Mapping[str, str]) -> tuple[()]:
    del env
    return ()


AGENT = Agent(
    name=NAME,
    title="Claude Code",
    launcher="claude",
    release=Release(
        package="@anthropic-ai/claude-code",
        version="2.1.332",
        entry="claude",
        binary_package="@anthropic-ai/claude-code-linux-x64@2.1.332",
    ),
    context_limit_bytes=CONTEXT_LIMIT_BYTES,
    config_edits=config_edits,
    checks=checks,
    stores=stores,
)
