"""Codex CLI: `$CODEX_HOME/config.toml` (`~/.codex`), its hooks and its memories.

What the release (0.171.0, docs/agents.md) reads:

- MCP servers are `[mcp_servers.NAME]` tables; memd's runs `memd mcp` in the
  session's directory. memd's read tools carry `readOnlyHint`, which is what
  `codex exec` needs to call them unasked; the write tools stay behind its
  approval.
- A SessionStart hook is a `[[hooks.SessionStart]]` group. Codex skips a
  user's hook until it is trusted: `[hooks.state."<key>"] trusted_hash`, the
  key `<config path>:session_start:<group>:<handler>` and the hash
  `sha256:` + SHA-256 of the hook's normalized identity as sorted, compact
  JSON (`hook_trust_hash`). Running `memd setup` is the user asking for the
  hook, so setup records that trust as Codex's own `/hooks` dialog would.
- A config that is not valid TOML stops every codex command: memd never
  writes one, and leaves one it cannot parse alone.
- Its own memories are `$CODEX_HOME/memories/` (`memory_summary.md` is what
  it injects); memd keeps them in its history and never writes them.
"""

from __future__ import annotations

import hashlib
import json
import os

from memd.agents import budgets
from memd.agents.base import (
    FAIL,
    OK,
    Agent,
    ConfigEdit,
    Release,
    Store,
    Verdict,
    is_memd_session_start,
    release_verdict,
    same_memd,
    session_start_command,
)
from memd.agents.homes import codex_home, codex_memories
from memd.agents.toml_text import basic_string, cut_tables, quote_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

NAME = "codex"
SERVER = "memd"
HOOK_TIMEOUT_SECONDS = 10
MAX_CONFIG_BYTES = 4 * 1024 * 1024
CONTEXT_LIMIT_BYTES = budgets.CONTEXT_LIMIT_BYTES[NAME]
BEGIN = (
    "# memd setup: memd's MCP server and SessionStart hook"
    " (`memd setup --undo` takes them out)"
)
END = "# memd setup: end"


def config_path(env: Mapping[str, str]) -> str:
    return os.path.join(codex_home(env), "config.toml")


def memories_dir(env: Mapping[str, str]) -> str:
    return codex_memories(env)


def hook_trust_hash(command: str, timeout: int = HOOK_TIMEOUT_SECONDS) -> str:
    """The hash Codex records as a SessionStart command hook's `trusted_hash`.

    Codex hashes the hook's normalized identity: the event's key label, the
    group with its one handler, defaults filled (`async` false), unset fields
    left out, as JSON with sorted keys and no spaces (`version_for_toml`).
    """
    identity = {
        "event_name": "session_start",
        "hooks": [
            {"async": False, "command": command, "timeout": timeout, "type": "command"}
        ],
    }
    text = json.dumps(
        identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_key(path: str, group: int, handler: int = 0) -> str:
    """Codex's key for a SessionStart hook in the config file at `path`."""
    return f"{path}:session_start:{group}:{handler}"


def plan_config(
    text: str | None, *, path: str, memd_executable: str, install: bool
) -> str | None:
    """`config.toml`'s new text with memd's block (install) or without it.

    Every byte outside memd's own tables stays. Returns None when nothing
    changes. Raises `ValueError` with the reason for a file that is not valid
    TOML, or whose shape leaves no room for memd's tables.
    """
    import tomllib

    current = text or ""
    try:
        before = tomllib.loads(current)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"not valid TOML ({error})") from None
    stripped = _without_memd(current)
    if not install:
        return None if stripped == current else stripped
    command = session_start_command(memd_executable, NAME)
    body = stripped
    if body and not body.endswith("\n"):
        body += "\n"
    if body.strip():
        body += "\n"
    draft = body + _block(memd_executable, command, path, group=0)
    group = _memd_group(_parse(draft), command)  # where Codex will count it
    new = body + _block(memd_executable, command, path, group=group)
    after = _parse(new)
    if _others(after) != _others(before):
        raise ValueError("memd's tables would change other settings")
    return None if new == current else new


def _block(memd_executable: str, command: str, path: str, *, group: int) -> str:
    key = hook_key(path, group)
    return "\n".join(
        (
            BEGIN,
            f"[mcp_servers.{SERVER}]",
            f"command = {basic_string(memd_executable)}",
            'args = ["mcp"]',
            "",
            "[[hooks.SessionStart]]",
            "[[hooks.SessionStart.hooks]]",
            'type = "command"',
            f"command = {basic_string(command)}",
            f"timeout = {HOOK_TIMEOUT_SECONDS}",
            "",
            f"[hooks.state.{quote_key(key)}]",
            f"trusted_hash = {basic_string(hook_trust_hash(command))}",
            END,
            "",
        )
    )


def _without_memd(text: str) -> str:
    """`text` without memd's block and without any `[mcp_servers.memd]` table."""
    start = _line_at(text, BEGIN)
    if start >= 0:
        end = _line_at(text, END, start)
        stop = len(text) if end < 0 else text.find("\n", end) + 1 or len(text)
        before = text[:start]
        if before.endswith("\n\n"):  # the blank line install put before it
            before = before[:-1]
        text = before + text[stop:]
    return cut_tables(text, lambda table, _: table.key[:2] == ("mcp_servers", SERVER))


def _line_at(text: str, line: str, start: int = 0) -> int:
    """Offset of `line` standing alone on a line of `text`, or -1."""
    position = start
    while True:
        found = text.find(line, position)
        if found < 0:
            return -1
        at_start = found == 0 or text[found - 1] == "\n"
        after = found + len(line)
        at_end = after == len(text) or text[after] in "\r\n"
        if at_start and at_end:
            return found
        position = found + 1


def _parse(text: str) -> dict[str, object]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(
            f"memd's tables do not fit this file's layout ({error}); "
            "add them by hand (`memd setup --dry-run` shows them)"
        ) from None


def _memd_group(config: Mapping[str, object], command: str) -> int:
    groups = _session_start_groups(config)
    for index in range(len(groups) - 1, -1, -1):
        if command in _group_commands(groups[index]):
            return index
    raise ValueError("memd's hook did not land in hooks.SessionStart")


def _session_start_groups(config: Mapping[str, object]) -> list[object]:
    hooks = config.get("hooks")
    groups = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    return groups if isinstance(groups, list) else []


def _group_commands(group: object) -> list[str]:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return [
        handler["command"]
        for handler in (handlers if isinstance(handlers, list) else ())
        if isinstance(handler, dict) and isinstance(handler.get("command"), str)
    ]


def _others(config: Mapping[str, object]) -> dict[str, object]:
    """`config` without what memd owns: the settings memd must leave as they were."""
    import copy

    rest = copy.deepcopy(dict(config))
    servers = rest.get("mcp_servers")
    if isinstance(servers, dict):
        servers.pop(SERVER, None)
        if not servers:
            rest.pop("mcp_servers")
    hooks = rest.get("hooks")
    if isinstance(hooks, dict):
        groups = hooks.get("SessionStart")
        if isinstance(groups, list):
            kept = [
                g
                for g in groups
                if not any(is_memd_session_start(c, NAME) for c in _group_commands(g))
            ]
            if kept:
                hooks["SessionStart"] = kept
            else:
                hooks.pop("SessionStart")
        state = hooks.get("state")
        if isinstance(state, dict):
            for key in [k for k in state if ":session_start:" in k]:
                entry = state[key]
                if isinstance(entry, dict) and set(entry) == {"trusted_hash"}:
                    state.pop(key)
            if not state:
                hooks.pop("state")
        if not hooks:
            rest.pop("hooks")
    return rest


def edit_config(
    path: str, *, install: bool, dry_run: bool, memd_executable: str
) -> str:
    """Add (or take out) memd's tables in `config.toml`; say what was done.

    The file side is the one Claude Code's settings use (bounded reads, a
    linked file edited through its link, one line when it cannot be read).
    """
    from memd.hooks.settings import SettingsEdit
    from memd.hooks.settings_file import apply_json_edit

    def plan(current: str | None, backup: str | None) -> SettingsEdit:
        del backup  # setup keeps the bytes it found; the text edit is exact
        new = plan_config(
            current, path=path, memd_executable=memd_executable, install=install
        )
        if new is None:
            return SettingsEdit(is_change=False)
        return SettingsEdit(is_change=True, text=new or None)  # None: memd made it

    return apply_json_edit(
        path,
        plan,
        what="memd MCP server and SessionStart hook",
        install=install,
        dry_run=dry_run,
        max_bytes=MAX_CONFIG_BYTES,
    )


def config_edits(
    env: Mapping[str, str], memd_executable: str
) -> tuple[ConfigEdit, ...]:
    path = config_path(env)

    def edit(target: str, *, install: bool, dry_run: bool) -> str:
        return edit_config(
            target, install=install, dry_run=dry_run, memd_executable=memd_executable
        )

    return (ConfigEdit("MCP server, trusted SessionStart hook", path, edit),)


def checks(env: Mapping[str, str], memd_executable: str) -> Iterator[Verdict]:
    """memd's server, its hook and the hook's trust in `config.toml`, this memd."""
    import tomllib

    from memd.fsread import read_bytes, refusal_reason

    path = config_path(env)
    try:
        text = read_bytes(path, MAX_CONFIG_BYTES, follow=True).decode("utf-8")
        config = tomllib.loads(text)
    except FileNotFoundError:
        config = {}
    except OSError as error:
        yield Verdict(
            "codex", FAIL, f"{path}: {refusal_reason(error)}", f"repair {path}"
        )
        return
    except ValueError as error:  # Codex itself will not start on it
        yield Verdict(
            "codex", FAIL, f"{path}: not valid TOML ({error})", f"repair {path}"
        )
        return
    server = (
        config.get("mcp_servers", {}).get(SERVER)
        if isinstance(config.get("mcp_servers"), dict)
        else None
    )
    command = session_start_command(memd_executable, NAME)
    problems = []
    if not isinstance(server, dict) or not same_memd(
        server.get("command"), memd_executable
    ):
        problems.append("no memd MCP server running this memd")
    groups = _session_start_groups(config)
    index = next(
        (i for i, g in enumerate(groups) if command in _group_commands(g)), None
    )
    if index is None:
        problems.append("no memd SessionStart hook running this memd")
    else:
        hooks = config.get("hooks")
        state = hooks.get("state") if isinstance(hooks, dict) else None
        entry = state.get(hook_key(path, index)) if isinstance(state, dict) else None
        trusted = entry.get("trusted_hash") if isinstance(entry, dict) else None
        if trusted != hook_trust_hash(command):
            problems.append("memd's SessionStart hook is not trusted (Codex skips it)")
    if problems:
        yield Verdict(
            "codex",
            FAIL,
            f"{path}: {'; '.join(problems)}",
            "`memd setup --agent codex`",
        )
        return
    yield Verdict(
        "codex",
        OK,
        f"memd MCP server and trusted SessionStart hook in {path}"
        f" run {memd_executable}",
    )
    yield release_verdict(AGENT, env)
    if not os.path.isdir(memories_dir(env)):
        yield Verdict(
            "codex memories",
            OK,
            f"no {memories_dir(env)} yet (Codex keeps memories with"
            " `[features] memories = true`)",
        )


def stores(env: Mapping[str, str]) -> tuple[Store, ...]:
    """Codex's memories directory, one store for every project."""
    directory = memories_dir(env)
    if not os.path.isdir(directory):
        return ()
    return (Store(NAME, "Codex CLI memories", directory),)


def awaited_stores(env: Mapping[str, str]) -> tuple[str, ...]:
    return (memories_dir(env),)


AGENT = Agent(
    name=NAME,
    title="Codex CLI",
    launcher="codex",
    release=Release(
        package="@openai/codex",
        version="0.171.0",
        entry="vendor/x86_64-unknown-linux-musl/bin/codex",
        binary_package="@openai/codex@0.171.0-linux-x64",
    ),
    context_limit_bytes=CONTEXT_LIMIT_BYTES,
    config_edits=config_edits,
    checks=checks,
    stores=stores,
    awaited_stores=awaited_stores,
)
