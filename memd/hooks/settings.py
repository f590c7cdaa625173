"""Merging memd's hooks into a Claude Code settings file, and taking them out again.

Claude Code reads hooks from the `hooks` key of its settings files::

    {"hooks": {"PostToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "..."}]}
    ]}}

memd adds one matcher group per event and recognises its own groups by their
command (it starts with the memd executable and `hook`), so `uninstall`
removes exactly what `install` added and leaves every other hook and key alone.
Both functions are pure: settings in, settings out.
"""

from __future__ import annotations

import copy
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# event -> (matcher, memd subcommand, timeout seconds)
MEMD_HOOKS = {
    "SessionStart": ("startup|resume|clear|compact", "session-start", 10),
    "PostToolUse": ("Write|Edit|MultiEdit|Bash", "post-tool-use", 15),
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
        groups.append(
            {
                "matcher": matcher,
                "hooks": [
                    {
                        "type": "command",
                        "command": hook_command(memd_executable, subcommand),
                        "timeout": timeout,
                    }
                ],
            }
        )
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
