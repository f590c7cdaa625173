"""Merging memd's hooks into Claude Code settings, and taking them out again."""

from __future__ import annotations

import re

import pytest

from memd.hooks.settings import (
    hook_command,
    is_memd_hook,
    plan_edit,
    render_like,
    with_memd_hooks,
    without_memd_hooks,
)

MEMD = "/home/u/.local/bin/memd"
# Claude Code's built-in tools, and the ones that can change a memory file.
BUILT_IN_TOOLS = (
    "Agent", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep",
    "KillShell", "NotebookEdit", "PowerShell", "Read", "Task", "TodoWrite",
    "WebFetch", "WebSearch", "Write", "mcp__fs__Write", "mcp__fs__edit_file",
)  # fmt: skip
FILE_CHANGING_TOOLS = {"Bash", "Edit", "NotebookEdit", "PowerShell", "Write"}


def covered_tools(matcher: str) -> set[str]:
    """The built-in tools a PostToolUse matcher fires for, as Claude Code matches.

    Empty or `*` matches all; letters, digits, `_`, `-`, spaces, `,` and `|`
    only are a list of exact names; anything else is an unanchored regex.
    """
    if matcher in ("", "*"):
        return set(BUILT_IN_TOOLS)
    if re.fullmatch(r"[A-Za-z0-9_ ,|-]+", matcher):
        names = {name.strip() for name in re.split(r"[|,]", matcher)}
        return {tool for tool in BUILT_IN_TOOLS if tool in names}
    return {tool for tool in BUILT_IN_TOOLS if re.search(matcher, tool)}


USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write",
                "hooks": [{"type": "command", "command": "prettier --write"}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


class TestWithMemdHooks:
    def test_adds_both_events_and_keeps_everything_else(self) -> None:
        """Install adds both events' groups and keeps other keys and hooks."""
        merged = with_memd_hooks(USER_SETTINGS, MEMD)

        assert "opus" == merged["model"]
        assert USER_SETTINGS["permissions"] == merged["permissions"]
        post = merged["hooks"]["PostToolUse"]
        assert "prettier --write" == post[0]["hooks"][0]["command"]
        assert f"{MEMD} hook post-tool-use" == post[1]["hooks"][0]["command"]
        assert FILE_CHANGING_TOOLS == covered_tools(post[1]["matcher"])
        start = merged["hooks"]["SessionStart"]
        assert "matcher" not in start[0]  # every source, fork included
        assert [f"{MEMD} hook session-start"] == [
            h["command"] for h in start[0]["hooks"]
        ]
        assert USER_SETTINGS["hooks"]["Stop"] == merged["hooks"]["Stop"]

    def test_is_idempotent(self) -> None:
        """Installing twice gives the same settings as installing once."""
        once = with_memd_hooks(USER_SETTINGS, MEMD)

        assert once == with_memd_hooks(once, MEMD)

    def test_does_not_mutate_its_input(self) -> None:
        """The caller's mapping is left as it was."""
        before = repr(USER_SETTINGS)
        with_memd_hooks(USER_SETTINGS, MEMD)

        assert before == repr(USER_SETTINGS)

    def test_rejects_hooks_of_the_wrong_shape(self) -> None:
        """A `hooks` that is not an object is an error, never overwritten."""
        with pytest.raises(ValueError, match="not an object"):
            with_memd_hooks({"hooks": ["x"]}, MEMD)

    def test_quotes_a_path_with_spaces(self) -> None:
        """An executable path with a space is shell-quoted and still recognised."""
        command = hook_command("/Users/A B/bin/memd", "session-start")

        assert "'/Users/A B/bin/memd' hook session-start" == command
        assert is_memd_hook({"type": "command", "command": command})


class TestWithoutMemdHooks:
    def test_round_trip_restores_the_original(self) -> None:
        """Uninstall after install gives back exactly the original settings."""
        assert USER_SETTINGS == without_memd_hooks(with_memd_hooks(USER_SETTINGS, MEMD))

    def test_removes_only_memd_entries_from_a_shared_group(self) -> None:
        """A group holding a user hook and a memd hook keeps the user hook."""
        settings = {
            "hooks": {
                "PostToolUse": [
                    {
                        "matcher": "Write",
                        "hooks": [
                            {"type": "command", "command": "black ."},
                            {
                                "type": "command",
                                "command": f"{MEMD} hook post-tool-use",
                            },
                        ],
                    }
                ]
            }
        }

        result = without_memd_hooks(settings)

        assert [{"type": "command", "command": "black ."}] == result["hooks"][
            "PostToolUse"
        ][0]["hooks"]

    def test_settings_without_hooks_are_unchanged(self) -> None:
        """Nothing to remove leaves the settings equal."""
        assert {"model": "x"} == without_memd_hooks({"model": "x"})

    def test_keeps_an_empty_hooks_object_the_user_wrote(self) -> None:
        """An empty `hooks` that memd did not empty stays."""
        assert {"hooks": {}} == without_memd_hooks({"hooks": {}})


class TestIsMemdHook:
    @pytest.mark.parametrize(
        ("entry", "expected"),
        [
            ({"type": "command", "command": "/x/memd hook session-start"}, True),
            ({"type": "command", "command": "memd hook post-tool-use"}, True),
            ({"type": "command", "command": "'/a b/memd' hook session-start"}, True),
            ({"type": "command", "command": "memd lint"}, False),
            ({"type": "command", "command": "notmemd-tool hook x"}, False),
            ({"type": "prompt", "prompt": "memd hook x"}, False),
            ("memd hook x", False),
        ],
    )
    def test_recognises_only_memd_hook_commands(
        self, entry: object, expected: bool
    ) -> None:
        """Only command hooks running `memd hook …` count as memd's."""
        assert expected == is_memd_hook(entry)


class TestPlanEdit:
    def test_install_keeps_four_space_indent_and_order(self) -> None:
        """The file's own indent, key order and untouched text survive an install."""
        current = '{\n    "b": 1,\n    "a": [1]\n}\n'

        edit = plan_edit(current, None, install=True, memd_executable=MEMD)

        assert edit.text is not None
        assert edit.text.startswith('{\n    "b": 1,\n    "a": [1],\n    "hooks": {\n')
        assert edit.text.endswith("}\n")
        assert current == edit.backup

    def test_install_never_replaces_an_existing_backup(self) -> None:
        """With a backup on disk, install writes none."""
        edit = plan_edit('{"a": 1}', '{"a": 0}', install=True, memd_executable=MEMD)

        assert edit.is_change
        assert edit.backup is None

    def test_uninstall_restores_the_backup_bytes(self) -> None:
        """When only memd's hooks changed, uninstall gives back the exact bytes."""
        original = '{ "a" : 1 }\r\n'
        installed = plan_edit(original, None, install=True, memd_executable=MEMD)
        assert installed.text is not None

        edit = plan_edit(installed.text, original, install=False, memd_executable=MEMD)

        assert (original, True) == (edit.text, edit.remove_backup)

    def test_uninstall_after_other_edits_keeps_them_and_the_backup(self) -> None:
        """A user's later change is kept; the backup stays for them."""
        installed = plan_edit('{"a": 1}\n', None, install=True, memd_executable=MEMD)
        assert installed.text is not None
        edited = installed.text.replace('"a": 1', '"a": 2')

        edit = plan_edit(edited, '{"a": 1}\n', install=False, memd_executable=MEMD)

        assert '{"a": 2}\n' == edit.text
        assert not edit.remove_backup

    def test_uninstall_removes_a_file_memd_created(self) -> None:
        """A file that held only memd's hooks and had no original is removed."""
        created = plan_edit(None, None, install=True, memd_executable=MEMD)
        assert created.text is not None
        assert created.backup is None

        edit = plan_edit(created.text, None, install=False, memd_executable=MEMD)

        assert (True, None) == (edit.is_change, edit.text)

    def test_not_an_object_is_refused(self) -> None:
        """A JSON list is not settings: refused, never overwritten."""
        with pytest.raises(ValueError, match="not a JSON object"):
            plan_edit("[]", None, install=True, memd_executable=MEMD)

    def test_compact_file_stays_on_one_line(self) -> None:
        """A one-line file is written back on one line."""
        assert '{"a":{"b": 1}}' == render_like({"a": {"b": 1}}, '{"a":{}}')


def test_a_jsonc_file_keeps_its_comments_through_install_and_uninstall() -> None:
    """`comments=True` (Gemini's settings): memd's part comes and goes, not comments."""
    from memd.hooks.settings import plan_json_edit

    original = '{\n  // my model\n  "model": "x" /* pinned */\n}\n'

    def add(settings: dict[str, object]) -> dict[str, object]:
        return {**settings, "mcpServers": {"memd": {"command": "memd"}}}

    def remove(settings: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in settings.items() if k != "mcpServers"}

    installed = plan_json_edit(
        original, None, install=True, add=add, remove=remove, comments=True
    )
    assert installed.text is not None
    assert installed.text.startswith('{\n  // my model\n  "model": "x", /* pinned */\n')
    edited = installed.text.replace('"x"', '"y"')
    removed = plan_json_edit(
        edited, original, install=False, add=add, remove=remove, comments=True
    )
    assert original.replace('"x"', '"y"') == removed.text
