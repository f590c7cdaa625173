"""Merging memd's hooks into a Claude Code settings file, and taking them out again.

Claude Code reads hooks from the `hooks` key of its settings files::

    {"hooks": {"PostToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "..."}]}
    ]}}

memd adds one matcher group per event and recognises its own groups by their
command (it starts with the memd executable and `hook`), so `uninstall`
removes exactly what `install` added and leaves every other hook and key alone.
Both functions are pure: settings in, settings out. `plan_json_edit` turns
either into an edit of the file's text; `memd mcp install`/`uninstall` edit
`~/.claude.json` with it too.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

# The tools that can write files in current Claude Code (MultiEdit is gone).
# memd sees what any of them changed by stat, so adding a tool is one word.
WRITING_TOOLS = ("Write", "Edit", "NotebookEdit", "Bash", "PowerShell")
# event -> (matcher, memd subcommand, timeout seconds); a None matcher is left
# out, which Claude Code treats as "every source" (startup, resume, clear,
# compact, and fork since 2.1.332).
MEMD_HOOKS = {
    "SessionStart": (None, "session-start", 10),
    "PostToolUse": ("|".join(WRITING_TOOLS), "post-tool-use", 15),
}


def hook_command(memd_executable: str, subcommand: str) -> str:
    """Return the shell command Claude Code runs for one memd hook."""
    quoted = (
        memd_executable
        if _is_shell_safe(memd_executable)
        else _shell_quote(memd_executable)
    )
    return f"{quoted} hook {subcommand}"


def is_memd_hook(entry: object) -> bool:
    """Whether a hook entry was added by `memd hook install`."""
    if not isinstance(entry, dict) or entry.get("type") != "command":
        return False
    command = entry.get("command")
    if not isinstance(command, str):
        return False
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (
        len(words) >= 3 and os.path.basename(words[0]) == "memd" and words[1] == "hook"
    )


def with_memd_hooks(
    settings: Mapping[str, object], memd_executable: str
) -> dict[str, object]:
    """Return `settings` with memd's hooks present exactly once (idempotent).

    Raises `ValueError` when `hooks` exists but is not shaped as Claude Code
    expects, rather than guessing and damaging the user's file.
    """
    result = without_memd_hooks(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError("'hooks' is not an object")
    for event, (matcher, subcommand, timeout) in MEMD_HOOKS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ValueError(f"'hooks.{event}' is not a list")
        group: dict[str, object] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [
            {
                "type": "command",
                "command": hook_command(memd_executable, subcommand),
                "timeout": timeout,
            }
        ]
        groups.append(group)
    return result


def without_memd_hooks(settings: Mapping[str, object]) -> dict[str, object]:
    """Return `settings` without the hooks memd added, and nothing else changed."""
    result = copy.deepcopy(dict(settings))
    hooks = result.get("hooks")
    if hooks is None:
        return result
    if not isinstance(hooks, dict):
        raise ValueError("'hooks' is not an object")
    removed_any = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        edited = [_without_memd_entries(group) for group in groups]
        if all(new is old for new, old in zip(edited, groups, strict=True)):
            continue
        removed_any = True
        kept_groups = [group for group in edited if group is not None]
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed_any and not hooks:
        del result["hooks"]
    return result


def _without_memd_entries(group: object) -> object | None:
    """Return the group without memd's entries, or None when only memd's were in it."""
    inner = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(group, dict) or not isinstance(inner, list):
        return group
    kept = [entry for entry in inner if not is_memd_hook(entry)]
    if len(kept) == len(inner):
        return group
    return {**group, "hooks": kept} if kept else None


def _is_shell_safe(text: str) -> bool:
    return all(ch.isalnum() or ch in "/._-+:@%" for ch in text)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# -- the settings file's text ----------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SettingsEdit:
    """What `memd hook install`/`uninstall` does to a settings file and its backup.

    `text` None with `is_change` means "remove the file": memd created it and
    its hooks were all it held.
    """

    is_change: bool
    text: str | None = None
    backup: str | None = None  # write this as the backup (there was none)
    remove_backup: bool = False  # the backup was restored, so it is spent


def plan_edit(
    current: str | None, backup: str | None, *, install: bool, memd_executable: str
) -> SettingsEdit:
    """Return the edit that installs or removes memd's hooks, touching nothing else.

    See `plan_json_edit`. Raises `ValueError` (with the reason) for text that
    is not a JSON object.
    """
    return plan_json_edit(
        current,
        backup,
        install=install,
        add=lambda settings: with_memd_hooks(settings, memd_executable),
        remove=without_memd_hooks,
    )


def plan_json_edit(
    current: str | None,
    backup: str | None,
    *,
    install: bool,
    add: Callable[[dict[str, object]], dict[str, object]],
    remove: Callable[[dict[str, object]], dict[str, object]],
    comments: bool = False,
) -> SettingsEdit:
    """Return the edit that applies `add` (install) or `remove` to a JSON file's text.

    `memd hook` and `memd mcp` share it. The file keeps its own indentation
    and key order; the first install's backup is never overwritten; uninstall
    gives back the backup's exact bytes when nothing but memd's part changed
    since, and removes a file memd created once memd's part was its only
    content. The text is edited, not re-written (`memd.jsonedit`): a key
    memd did not touch keeps its bytes (`1e400` stays `1e400`).

    `comments` reads and keeps `//` and `/* */` comments (JSONC settings).

    Raises `ValueError` (with the reason) for text that is not a JSON object.
    """
    settings = _parse(current, comments=comments)
    if install:
        new = add(settings)
        if new == settings:
            return SettingsEdit(is_change=False)
        keep_original = current is not None and backup is None
        return SettingsEdit(
            is_change=True,
            text=render_like(new, current, comments=comments),
            backup=current if keep_original else None,
        )
    new = remove(settings)
    if new == settings:
        return SettingsEdit(is_change=False)
    if backup is not None and _parse_or_none(backup, comments=comments) == new:
        return SettingsEdit(is_change=True, text=backup, remove_backup=True)
    if backup is None and not new:
        return SettingsEdit(is_change=True, text=None)
    return SettingsEdit(
        is_change=True, text=render_like(new, current, comments=comments)
    )


def render_like(
    settings: Mapping[str, object], like: str | None, *, comments: bool = False
) -> str:
    """Return `like` (the file's text) changed to hold `settings`, and nothing else.

    Through `memd.jsonedit`: the keys memd did not touch keep their bytes.
    """
    from memd import jsonedit

    return jsonedit.rewrite(like, dict(settings), comments=comments)


def _parse(text: str | None, *, comments: bool = False) -> dict[str, object]:
    from memd import jsonedit

    if text is None or not text.strip():
        return {}
    try:
        settings = jsonedit.load(text, comments=comments)
    except jsonedit.JsonEditError as error:
        raise ValueError(f"not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise ValueError("not a JSON object")
    return settings


def _parse_or_none(text: str, *, comments: bool = False) -> dict[str, object] | None:
    try:
        return _parse(text, comments=comments)
    except ValueError:
        return None
