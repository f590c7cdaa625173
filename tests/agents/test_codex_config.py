"""Codex CLI's config.toml, edited by `memd.agents.codex`: every other byte kept.

The trust hash is checked against the value Codex CLI 0.171.0 itself
reported (`codex app-server`'s `hooks/list`, `currentHash`) for this command;
tests/e2e/test_codex.py checks it against the running release.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memd.agents.codex import hook_key, hook_trust_hash, plan_config
from memd.agents.toml_text import cut_tables, tables

MEMD = "/usr/bin/memd"
PATH = "/home/u/.codex/config.toml"
USER = """# my codex config
model = "o3"  # the model I like

[mcp_servers.other]
command = "other"
args = ["--flag"]

[[hooks.SessionStart]]
matcher = "startup"
[[hooks.SessionStart.hooks]]
type = "command"
command = "echo mine"

[tui]
notifications = true
"""


def install(text: str | None, path: str = PATH) -> str:
    new = plan_config(text, path=path, memd_executable=MEMD, install=True)
    assert new is not None
    return new


def test_the_hash_is_the_one_the_release_computes() -> None:
    """0.171.0's `hooks/list` gave this hash for this hook (timeout 10)."""
    assert hook_trust_hash(f"{MEMD} hook session-start --agent codex") == (
        "sha256:a3a682482af5ec438eabccb1a533282455efcbc480bf644b7f3de75dfb690a0a"
    )


def test_install_keeps_every_byte_and_comment() -> None:
    new = install(USER)

    assert new.startswith(USER)
    config = tomllib.loads(new)
    assert config["mcp_servers"]["memd"] == {"command": MEMD, "args": ["mcp"]}
    assert config["mcp_servers"]["other"]["args"] == ["--flag"]
    groups = config["hooks"]["SessionStart"]
    assert groups[0]["hooks"][0]["command"] == "echo mine"
    command = groups[1]["hooks"][0]["command"]
    assert command == f"{MEMD} hook session-start --agent codex"
    # The user's group is 0, memd's 1: Codex's key counts groups in the file.
    state = config["hooks"]["state"][hook_key(PATH, 1)]
    assert state == {"trusted_hash": hook_trust_hash(command)}


def test_install_twice_changes_nothing_and_undo_gives_the_bytes_back() -> None:
    new = install(USER)

    assert plan_config(new, path=PATH, memd_executable=MEMD, install=True) is None
    assert plan_config(new, path=PATH, memd_executable=MEMD, install=False) == USER


def test_a_new_memd_path_replaces_the_old_entry() -> None:
    new = install(USER)
    moved = plan_config(new, path=PATH, memd_executable="/opt/memd", install=True)

    assert moved is not None
    assert moved.count("[mcp_servers.memd]") == 1
    assert tomllib.loads(moved)["mcp_servers"]["memd"]["command"] == "/opt/memd"


def test_a_users_own_memd_table_is_replaced_not_duplicated() -> None:
    text = '[mcp_servers.memd]\ncommand = "old"\n[mcp_servers.memd.env]\nA = "1"\n'

    new = install(text)

    assert tomllib.loads(new)["mcp_servers"]["memd"] == {
        "command": MEMD,
        "args": ["mcp"],
    }


def test_an_empty_or_missing_file() -> None:
    for text in (None, ""):
        new = install(text)
        assert new.startswith("# memd setup:")
        assert "mcp_servers" in tomllib.loads(new)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("model = \n", "not valid TOML"),
        ("[hooks]\nSessionStart = []\n", "do not fit"),  # an inline array
        ('mcp_servers = { other = { command = "x" } }\n', "do not fit"),
    ],
)
def test_a_file_memd_cannot_extend_is_refused(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        plan_config(text, path=PATH, memd_executable=MEMD, install=True)


def test_headers_inside_strings_and_arrays_are_not_tables() -> None:
    text = (
        's = """\n[mcp_servers.memd]\n"""\n'
        "t = '''\n[x]\n'''\n"
        'a = [\n  ["mcp_servers.memd"],\n  { k = "]" },\n]\n'
        '[real."dotted key".x]  # a comment\nv = 1\n'
    )

    assert [t.key for t in tables(text)] == [("real", "dotted key", "x")]
    assert cut_tables(text, lambda t, _: True).endswith("]\n")
    new = install(text)
    assert tomllib.loads(new)["s"] == "[mcp_servers.memd]\n"


def test_the_key_names_config_toml_as_codex_resolves_codex_home(
    tmp_path: Path,
) -> None:
    """0.171.0 resolves a linked `$CODEX_HOME`, not a linked default `~/.codex`
    (checked with `codex app-server`'s `hooks/list`)."""
    from memd.agents.codex import config_path

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (tmp_path / ".codex").symlink_to(real)

    assert config_path({"CODEX_HOME": str(tmp_path / "link")}) == str(
        real / "config.toml"
    )
    assert config_path({"HOME": str(tmp_path)}) == str(
        tmp_path / ".codex" / "config.toml"
    )
