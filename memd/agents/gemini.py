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
  `JSON.parse`. memd edits it by splices (`memd.jsonedit`, comments kept).
- Its memory: `~/.gemini/GEMINI.md` (global) and, per project,
  `~/.gemini/tmp/<id>/memory/` (`MEMORY.md` the index, loaded every
  session). `<id>` comes from `~/.gemini/projects.json` (the folder name,
  lowercased, other characters `-`, `-1`, `-2` on a clash), and
  `~/.gemini/tmp/<id>/.project_root` names the project's folder.
"""

from __future__ import annotations

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
from memd.agents.context import tilde
from memd.agents.homes import gemini_dir, home_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from memd.hooks.settings import SettingsEdit

NAME = "gemini"
SERVER = "memd"
HOOK_TIMEOUT_MS = 10_000
MAX_SETTINGS_BYTES = 4 * 1024 * 1024
MAX_MARKER_BYTES = 4096
CONTEXT_LIMIT_BYTES = budgets.CONTEXT_LIMIT_BYTES[NAME]
# memd's tools that write: Gemini asks before each call (headless: never runs them).
WRITE_TOOLS = ("mcp_memd_memory_write", "mcp_memd_memory_log")
GLOBAL_MEMORY = "GEMINI.md"


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


def with_memd(
    settings: Mapping[str, object], memd_executable: str
) -> dict[str, object]:
    """`settings` with memd's server, its allowance, the write tools' confirmation
    and memd's SessionStart hook, each once (idempotent).

    Raises `ValueError` when a key memd extends is not shaped as Gemini reads it.
    """
    result = without_memd(settings)
    servers = _object(result, "mcpServers")
    servers[SERVER] = server_entry(memd_executable)
    allowed = _array(_object(result, "mcp"), "allowed")
    if SERVER not in allowed:
        allowed.append(SERVER)
    confirm = _array(_object(result, "tools"), "confirmationRequired")
    confirm.extend(t for t in WRITE_TOOLS if t not in confirm)
    command = session_start_command(memd_executable, NAME)
    _array(_object(result, "hooks"), "SessionStart").append(hook_group(command))
    return result


def without_memd(settings: Mapping[str, object]) -> dict[str, object]:
    """`settings` without what memd added; a container left empty goes too."""
    import copy

    result = copy.deepcopy(dict(settings))
    for path, drop in (
        (("mcpServers",), lambda k, v: k == SERVER and _is_memd_server(v)),
        (("mcp", "allowed"), lambda _, v: v == SERVER),
        (("tools", "confirmationRequired"), lambda _, v: v in WRITE_TOOLS),
        (("hooks", "SessionStart"), lambda _, v: _is_memd_group(v)),
    ):
        parents: list[dict[str, object]] = [result]
        for key in path[:-1]:
            child = parents[-1].get(key)
            if not isinstance(child, dict):
                break
            parents.append(child)
        else:
            _drop_from(parents, path, drop)
    return result


def _drop_from(
    parents: list[dict[str, object]], path: tuple[str, ...], drop: object
) -> None:
    container = parents[-1].get(path[-1])
    if isinstance(container, dict):
        kept: object = {k: v for k, v in container.items() if not drop(k, v)}  # type: ignore[operator]
    elif isinstance(container, list):
        kept = [v for v in container if not drop(None, v)]  # type: ignore[operator]
    else:
        return
    if kept == container:
        return
    if kept:
        parents[-1][path[-1]] = kept
        return
    del parents[-1][path[-1]]  # memd's entries were all it held
    for depth in range(len(parents) - 1, 0, -1):
        if parents[depth]:
            break
        del parents[depth - 1][path[depth - 1]]


def _object(parent: dict[str, object], key: str) -> dict[str, object]:
    value = parent.setdefault(key, {})
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' is not an object")
    return value


def _array(parent: dict[str, object], key: str) -> list[object]:
    value = parent.setdefault(key, [])
    if not isinstance(value, list):
        raise ValueError(f"'{key}' is not an array")
    return value


def plan_settings(
    text: str | None, *, memd_executable: str, install: bool
) -> str | None:
    """settings.json's new text with memd's entries (install) or without them.

    Every other byte stays, comments included (`memd.jsonedit`). None:
    nothing changes ("" for a file memd created and now empties). Raises
    `ValueError` with the reason for a file Gemini cannot read either, or
    whose shape leaves no room for memd's entries.
    """
    edit = _plan(text, None, memd_executable=memd_executable, install=install)
    if not edit.is_change:
        return None
    return edit.text or ""


def _plan(
    current: str | None, backup: str | None, *, memd_executable: str, install: bool
) -> SettingsEdit:
    from memd.hooks.settings import plan_json_edit

    return plan_json_edit(
        current,
        backup,
        install=install,
        add=lambda settings: with_memd(settings, memd_executable),
        remove=without_memd,
        comments=True,
    )


def _strings(data: object, path: tuple[str, ...]) -> list[str]:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, list):
        return []
    return [item for item in data if isinstance(item, str)]


def _is_memd_server(entry: object) -> bool:
    from memd.mcp_server.install import is_memd_server

    return is_memd_server(entry)


def _is_memd_group(group: object) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and any(
        isinstance(h, dict) and is_memd_session_start(h.get("command"), NAME)
        for h in handlers
    )


def edit_settings(
    path: str, *, install: bool, dry_run: bool, memd_executable: str
) -> str:
    """Add (or take out) memd's entries in settings.json; say what was done."""
    from memd.hooks.settings_file import apply_json_edit

    return apply_json_edit(
        path,
        lambda current, backup: _plan(
            current, backup, memd_executable=memd_executable, install=install
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
    from memd import jsonedit
    from memd.fsread import read_bytes, refusal_reason

    path = settings_path(env)
    try:
        text = read_bytes(path, MAX_SETTINGS_BYTES, follow=True).decode("utf-8")
        settings = jsonedit.load(text, comments=True) if text.strip() else {}
    except FileNotFoundError:
        settings = {}
    except OSError as error:
        yield Verdict(
            "gemini", FAIL, f"{path}: {refusal_reason(error)}", f"repair {path}"
        )
        return
    except ValueError as error:
        yield Verdict(
            "gemini", FAIL, f"{path}: not valid JSON ({error})", f"repair {path}"
        )
        return
    if not isinstance(settings, dict):
        yield Verdict("gemini", FAIL, f"{path}: not a JSON object", f"repair {path}")
        return
    servers = settings.get("mcpServers")
    server = servers.get(SERVER) if isinstance(servers, dict) else None
    problems = []
    if not isinstance(server, dict) or not same_memd(
        server.get("command"), memd_executable
    ):
        problems.append("no memd MCP server running this memd")
    elif SERVER not in _strings(settings, ("mcp", "allowed")) and not server.get(
        "trust"
    ):
        problems.append(
            "memd's server is neither allowed nor trusted (gemini -p hides it)"
        )
    hooks = settings.get("hooks")
    groups = hooks.get("SessionStart") if isinstance(hooks, dict) else None
    if not any(
        isinstance(h, dict)
        and is_memd_session_start(h.get("command"), NAME)
        and same_memd(_first_word(h.get("command")), memd_executable)
        for g in (groups if isinstance(groups, list) else ())
        for h in (g.get("hooks") or () if isinstance(g, dict) else ())
    ):
        problems.append("no memd SessionStart hook running this memd")
    switch = settings.get("hooksConfig")
    if isinstance(switch, dict) and switch.get("enabled") is False:
        problems.append("hooksConfig.enabled is false: Gemini runs no hook")
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
    yield release_verdict(AGENT, env)


def _first_word(command: object) -> str:
    import shlex

    return shlex.split(command)[0] if isinstance(command, str) else ""


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
