"""Gemini CLI's settings.json (JSON with comments), edited by `memd.agents.gemini`."""

from __future__ import annotations

import pytest

from memd import jsonedit
from memd.agents.gemini import WRITE_TOOLS, plan_settings

MEMD = "/usr/bin/memd"
USER = """{
  // theme first
  "theme": "Dracula", /* block comment */
  "mcpServers": {
    "other": {"command": "x"} // theirs
  },
  "mcp": {"allowed": ["other"]},
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "echo mine"}]}
    ]
  },
  "url": "http://example.com/*not a comment*/"
}
"""


def install(text: str | None) -> str:
    new = plan_settings(text, memd_executable=MEMD, install=True)
    assert new is not None
    return new


def test_install_keeps_comments_and_every_other_setting() -> None:
    new = install(USER)

    for kept in ("// theme first", "/* block comment */", "// theirs"):
        assert kept in new
    settings = jsonedit.load(new, comments=True)
    assert isinstance(settings, dict)
    assert settings["url"] == "http://example.com/*not a comment*/"
    assert settings["mcpServers"]["memd"] == {"command": MEMD, "args": ["mcp"]}
    assert settings["mcpServers"]["other"] == {"command": "x"}
    assert settings["mcp"]["allowed"] == ["other", "memd"]
    assert settings["tools"]["confirmationRequired"] == list(WRITE_TOOLS)
    mine, memd = settings["hooks"]["SessionStart"]
    assert mine["hooks"][0]["command"] == "echo mine"
    hook = memd["hooks"][0]
    assert hook["command"] == f"{MEMD} hook session-start --agent gemini"
    assert hook["timeout"] == 10_000  # milliseconds


def test_install_twice_changes_nothing_and_undo_gives_the_bytes_back() -> None:
    new = install(USER)

    assert plan_settings(new, memd_executable=MEMD, install=True) is None
    assert plan_settings(new, memd_executable=MEMD, install=False) == USER


def test_a_missing_file_is_made_and_undone_to_nothing_of_memds() -> None:
    new = install(None)
    settings = jsonedit.load(new, comments=True)

    assert isinstance(settings, dict)
    assert set(settings) == {"mcpServers", "mcp", "tools", "hooks"}
    # memd made the file and it held only memd's part: it goes ("")
    assert plan_settings(new, memd_executable=MEMD, install=False) == ""


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": 1,}', "not valid JSON"),  # Gemini's JSON.parse refuses it too
        ("[1, 2]", "not a JSON object"),
        ('{"mcpServers": 3}', "not an object"),
        ('{"hooks": {"SessionStart": {}}}', "not an array"),
        ('{"a": 1} // unclosed /*', None),
    ],
)
def test_a_file_memd_cannot_extend_is_refused(text: str, why: str | None) -> None:
    if why is None:  # a trailing line comment is fine
        assert "memd" in install(text)
        return
    with pytest.raises(ValueError, match=why):
        plan_settings(text, memd_executable=MEMD, install=True)


def test_deep_nesting_is_refused_not_recursed() -> None:
    text = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"

    with pytest.raises(ValueError, match=r"deeper than|not valid JSON"):
        plan_settings(text, memd_executable=MEMD, install=True)
