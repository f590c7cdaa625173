"""Gemini CLI: `~/.gemini/settings.json` (comments kept), its hooks, its memory.

What the release (0.61.0, docs/agents.md) reads:

- `$GEMINI_CLI_HOME` stands for the home directory when set.
- MCP servers are `mcpServers.NAME`. With the default approval mode a
  non-interactive `gemini -p` offers a server's tools only when the server
  is trusted or in `mcp.allowed`: setup adds `memd` there, and lists memd's
  write tools in `tools.confirmationRequired`, which outranks it, so they
  stay behind Gemini's own approval.
- A SessionStart hook is a group in `hooks.SessionStart`; its JSON output's
  `hookSpecificOutput.additionalContext` reaches the model (in
  `<hook_context>`, `<` and `>` written as `&lt;` and `&gt;`). Hook timeouts
  are in milliseconds.
- The settings file may hold comments; Gemini strips them before
  `JSON.parse`. memd edits it surgically (`memd.agents.jsonc`).
- Its memory: `~/.gemini/GEMINI.md` (global) and, per project,
  `~/.gemini/tmp/<id>/memory/` (`MEMORY.md` the index, loaded every
  session). `<id>` comes from `~/.gemini/projects.json` (the folder name,
  lowercased, other characters `-`, `-1`, `-2` on a clash), and
  `~/.gemini/tmp/<id>/.project_root` names the project's folder.
"""

from __future__ import annotations

import os

from memd.agents import jsonc
from memd.agents.base import (
    FAIL,
    OK,
    Agent,
    ConfigEdit,
    Release,
    Store,
    Verdict,
    home_of,
    is_memd_session_start,
    session_start_command,
    tilde,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

NAME = "gemini"
SERVER = "memd"
HOOK_TIMEOUT_MS = 10_000
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
MAX_MARKER_BYTES = 4096
# Gemini passes the hook's text on whole; memd keeps to Claude Code's hook
# budget so one memory costs every agent the same.
CONTEXT_LIMIT_BYTES = 10_000
# memd's tools that write: Gemini asks before each call (headless: never runs them).
WRITE_TOOLS = ("mcp_memd_memory_write", "mcp_memd_memory_log")
GLOBAL_MEMORY = "GEMINI.md"


def gemini_dir(env: Mapping[str, str]) -> str:
    """`~/.gemini`, the home being `$GEMINI_CLI_HOME` when set."""
    return os.path.join(env.get("GEMINI_CLI_HOME") or home_of(env), ".gemini")


def settings_path(env: Mapping[str, str]) -> str:
    return os.path.join(gemini_dir(env), "settings.json")


def hook_group(command: str) -> dict[str, object]:
    return {
        "hooks": [
            {
                "type": "command",
                "name": "memd",
                "command": command,
                "timeout": HOOK_TIMEOUT_MS,
            }
        ]
    }


def server_entry(memd_executable: str) -> dict[str, object]:
    return {"command": memd_executable, "args": ["mcp"]}


def plan_settings(
    text: str | None, *, memd_executable: str, install: bool
) -> str | None:
    """settings.json's new text with memd's entries (install) or without them.

    Every other byte stays, comments included. None: nothing changes.
    Raises `ValueError` with the reason for a file Gemini cannot read either,
    or whose shape leaves no room for memd's entries.
    """
    current = text if text is not None and text.strip() else None
    before = _load(current) if current is not None else {}
    stripped = _without_memd(current) if current is not None else None
    if not install:
        return None if stripped == current else stripped
    new = stripped if stripped is not None else "{}\n"
    new = jsonc.set_member(new, ("mcpServers", SERVER), server_entry(memd_executable))
    if SERVER not in _strings(jsonc.loads(new), ("mcp", "allowed")):
        new = jsonc.append_element(new, ("mcp", "allowed"), SERVER)
    have = _strings(jsonc.loads(new), ("tools", "confirmationRequired"))
    for tool in WRITE_TOOLS:
        if tool not in have:
            new = jsonc.append_element(new, ("tools", "confirmationRequired"), tool)
    command = session_start_command(memd_executable, NAME)
    new = jsonc.append_element(new, ("hooks", "SessionStart"), hook_group(command))
    if _others(_load(new)) != _others(before):
        raise ValueError("memd's entries would change other settings")
    return None if new == current else new


def _load(text: str) -> dict[str, object]:
    try:
        data = jsonc.loads(text)
    except ValueError as error:
        raise ValueError(f"not valid JSON with comments ({error})") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _strings(data: object, path: tuple[str, ...]) -> list[str]:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return (
        [item for item in data if isinstance(item, str)]
        if isinstance(data, list)
        else []
    )


def _without_memd(text: str) -> str:
    """`text` without memd's server, hook groups, allowance and write-tool entries."""
    _load(text)
    changed = True
    while changed:  # one removal at a time: each shifts the offsets after it
        changed = False
        for path, matches in (
            (
                ("mcpServers",),
                lambda key, value: key == SERVER and _is_memd_server(value),
            ),
            (("mcp", "allowed"), lambda _, value: value == SERVER),
            (("tools", "confirmationRequired"), lambda _, value: value in WRITE_TOOLS),
            (("hooks", "SessionStart"), lambda _, value: _is_memd_group(value)),
        ):
            node = jsonc.find(text, path)
            index = _first(text, node, matches) if node is not None else None
            if node is not None and index is not None:
                text = _remove_emptying(text, path, node, index)
                changed = True
                break
    return text


def _remove_emptying(
    text: str, path: tuple[str, ...], node: jsonc.Node, index: int
) -> str:
    """Remove one entry; a container it leaves empty goes too (memd made it)."""
    while len(node.members) + len(node.items) == 1 and path:
        path = path[:-1]
        parent = jsonc.find(text, path)
        if parent is None:
            break
        index = next(
            i
            for i, (_, _, value) in enumerate(parent.members)
            if value is node or value.start == node.start
        )
        node = parent
    return jsonc.remove(text, node, index)


def _first(text: str, node: jsonc.Node, matches: object) -> int | None:
    import json

    entries = (
        [(key, value) for key, _, value in node.members]
        if node.kind == "object"
        else [(None, item) for item in node.items]
    )
    clean = jsonc.blank_comments(text)
    for index, (key, value) in enumerate(entries):
        if matches(key, json.loads(clean[value.start : value.end])):  # type: ignore[operator]
            return index
    return None


def _is_memd_server(entry: object) -> bool:
    from memd.mcp_server.install import is_memd_server

    return is_memd_server(entry)


def _is_memd_group(group: object) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and any(
        isinstance(h, dict) and is_memd_session_start(h.get("command"), NAME)
        for h in handlers
    )


def _others(settings: Mapping[str, object]) -> dict[str, object]:
    """`settings` without what memd owns: what memd must leave as it was."""
    import copy

    rest = copy.deepcopy(dict(settings))
    for path, drop in (
        (("mcpServers",), lambda k, v: k == SERVER),
        (("mcp", "allowed"), lambda _, v: v == SERVER),
        (("tools", "confirmationRequired"), lambda _, v: v in WRITE_TOOLS),
        (("hooks", "SessionStart"), lambda _, v: _is_memd_group(v)),
    ):
        parent: object = rest
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or path[-1] not in parent:
            continue
        value = parent[path[-1]]
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if not drop(k, v)}
        elif isinstance(value, list):
            value = [v for v in value if not drop(None, v)]
        if value:
            parent[path[-1]] = value
        else:
            del parent[path[-1]]
    for key in ("mcp", "tools", "hooks"):
        if rest.get(key) == {}:
            del rest[key]
    return rest


def edit_settings(
    path: str, *, install: bool, dry_run: bool, memd_executable: str
) -> str:
    """Add (or take out) memd's entries in settings.json; say what was done."""
    from memd.agents.files import apply_text_edit

    return apply_text_edit(
        path,
        lambda text: plan_settings(
            text, memd_executable=memd_executable, install=install
        ),
        what="memd MCP server and SessionStart hook",
        install=install,
        dry_run=dry_run,
        max_bytes=MAX_SETTINGS_BYTES,
    )


def config_edits(
    env: Mapping[str, str], memd_executable: str
) -> tuple[ConfigEdit, ...]:
    def edit(target: str, *, install: bool, dry_run: bool) -> str:
        return edit_settings(
            target, install=install, dry_run=dry_run, memd_executable=memd_executable
        )

    return (
        ConfigEdit("MCP server (allowed), SessionStart hook", settings_path(env), edit),
    )


def checks(env: Mapping[str, str], memd_executable: str) -> Iterator[Verdict]:
    """memd's server, its allowance and its hook in settings.json, this memd."""
    from memd.agents.files import read_text

    path = settings_path(env)
    try:
        text = read_text(path, MAX_SETTINGS_BYTES)
        settings = _load(text) if text is not None and text.strip() else {}
    except ValueError as error:
        yield Verdict("gemini", FAIL, f"{path}: {error}", f"repair {path}")
        return
    servers = settings.get("mcpServers")
    server = servers.get(SERVER) if isinstance(servers, dict) else None
    problems = []
    if not isinstance(server, dict) or server.get("command") != memd_executable:
        problems.append("no memd MCP server running this memd")
    elif SERVER not in _strings(settings, ("mcp", "allowed")) and not server.get(
        "trust"
    ):
        problems.append(
            "memd's server is neither allowed nor trusted (gemini -p hides it)"
        )
    command = session_start_command(memd_executable, NAME)
    hooks = settings.get("hooks")
    groups = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    if not any(
        isinstance(h, dict) and h.get("command") == command
        for g in (groups if isinstance(groups, list) else ())
        for h in (g.get("hooks") or () if isinstance(g, dict) else ())
    ):
        problems.append("no memd SessionStart hook running this memd")
    if problems:
        yield Verdict(
            "gemini",
            FAIL,
            f"{path}: {'; '.join(problems)}",
            "`memd setup --agent gemini`",
        )
        return
    yield Verdict(
        "gemini",
        OK,
        f"memd MCP server (allowed) and SessionStart hook in {path}"
        f" run {memd_executable}",
    )


def stores(env: Mapping[str, str]) -> tuple[Store, ...]:
    """`~/.gemini/GEMINI.md` and each project's `~/.gemini/tmp/<id>/memory/`."""
    from memd.fsread import list_names

    base = gemini_dir(env)
    found: list[Store] = []
    global_memory = os.path.join(base, GLOBAL_MEMORY)
    if os.path.isfile(global_memory) or os.path.isdir(base):
        found.append(
            Store(NAME, "Gemini CLI global memory", global_memory, single_file=True)
        )
    tmp = os.path.join(base, "tmp")
    try:
        ids = sorted(list_names(tmp))
    except OSError:
        ids = []
    home = home_of(env)
    for project_id in ids[:1000]:
        memory = os.path.join(tmp, project_id, "memory")
        if not os.path.isdir(memory) or os.path.islink(memory):
            continue
        root = _project_root(os.path.join(tmp, project_id))
        shown = tilde(root, home) if root else project_id
        found.append(Store(NAME, f"Gemini CLI memory of {shown}", memory, project=root))
    return tuple(found)


def _project_root(project_dir: str) -> str | None:
    """The folder `<id>/.project_root` names, or None."""
    from memd.fsread import read_prefix

    try:
        data = read_prefix(os.path.join(project_dir, ".project_root"), MAX_MARKER_BYTES)
        root = data.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return root if os.path.isabs(root) and "\n" not in root else None


def awaited_stores(env: Mapping[str, str]) -> tuple[str, ...]:
    """`~/.gemini` itself, and each registered project's `memory/` to come."""
    from memd.fsread import list_names

    base = gemini_dir(env)
    tmp = os.path.join(base, "tmp")
    try:
        ids = sorted(list_names(tmp))[:1000]
    except OSError:
        ids = []
    return (base, *(os.path.join(tmp, i, "memory") for i in ids))


AGENT = Agent(
    name=NAME,
    title="Gemini CLI",
    launcher="gemini",
    release=Release(
        package="@google/gemini-cli", version="0.61.0", entry="bundle/gemini.js"
    ),
    context_limit_bytes=CONTEXT_LIMIT_BYTES,
    config_edits=config_edits,
    checks=checks,
    stores=stores,
    awaited_stores=awaited_stores,
)
