"""`memd mcp install`: merged into Claude Code's user config like the hooks; --print."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.cli.main import main
from memd.mcp_server.install import with_memd_server, without_memd_server
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")


class TestMerge:
    def test_keeps_other_keys_and_servers(self) -> None:
        """Only mcpServers.memd is added; everything else is left as it was."""
        config = {"numStartups": 3, "mcpServers": {"gh": {"command": "gh-mcp"}}}

        merged = with_memd_server(config, "/bin/memd")

        assert {
            "numStartups": 3,
            "mcpServers": {
                "gh": {"command": "gh-mcp"},
                "memd": {
                    "type": "stdio",
                    "command": "/bin/memd",
                    "args": ["mcp"],
                    "env": {},
                },
            },
        } == merged
        assert config == without_memd_server(merged)

    def test_idempotent(self) -> None:
        """Installing twice gives the same file as once."""
        once = with_memd_server({}, "/bin/memd")

        assert once == with_memd_server(once, "/bin/memd")

    def test_refuses_a_malformed_servers_key(self) -> None:
        """An mcpServers that is not an object is not guessed at."""
        with pytest.raises(ValueError, match="mcpServers"):
            with_memd_server({"mcpServers": []}, "/bin/memd")


class TestCommand:
    def test_install_writes_user_config_with_backup(
        self, isolated_home: Home, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The user's ~/.claude.json gains the server, and keeps a backup."""
        path = isolated_home.home / ".claude.json"
        path.write_text(json.dumps({"projects": {"/x": {}}}))

        code = main(["mcp", "install", "--claude-code"])
        written = json.loads(path.read_text())

        assert 0 == code
        assert {"/x": {}} == written["projects"]
        assert ["mcp"] == written["mcpServers"]["memd"]["args"]
        assert os.path.isabs(written["mcpServers"]["memd"]["command"])
        assert Path(str(path) + ".memd-backup").exists()
        assert "installed in" in capsys.readouterr().out

    def test_claude_config_dir(self, isolated_home: Home, tmp_path: Path) -> None:
        """Under CLAUDE_CONFIG_DIR the config is $CLAUDE_CONFIG_DIR/.claude.json."""
        config_dir = tmp_path / "claude-config"
        env = isolated_home.env(CLAUDE_CONFIG_DIR=str(config_dir))

        subprocess.run(
            [MEMD, "mcp", "install"], env=env, check=True, capture_output=True
        )

        assert (
            "memd"
            in json.loads((config_dir / ".claude.json").read_text())["mcpServers"]
        )

    def test_invalid_json_is_left_alone(self, isolated_home: Home) -> None:
        """A broken ~/.claude.json: one line on stderr, exit 2, file untouched."""
        path = isolated_home.home / ".claude.json"
        path.write_text("{not json")

        result = subprocess.run(
            [MEMD, "mcp", "install"], capture_output=True, text=True, check=False
        )

        assert (2, 1) == (result.returncode, len(result.stderr.splitlines()))
        assert "{not json" == path.read_text()

    def test_print_shows_every_client(
        self, isolated_home: Home, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--print gives JSON for JSON clients and TOML for Codex; writes nothing."""
        code = main(["mcp", "install", "--print"])
        out = capsys.readouterr().out

        assert 0 == code
        for client in (
            "Claude Code",
            "Claude Desktop",
            "Cursor",
            "Gemini CLI",
            "Codex",
        ):
            assert client in out
        assert "[mcp_servers.memd]" in out
        assert not (isolated_home.home / ".claude.json").exists()


def _memd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, "mcp", *args], capture_output=True, text=True, check=False
    )


class TestUninstall:
    """`memd mcp uninstall` takes out what install added, as `memd hook uninstall`."""

    def test_restores_the_original_bytes(self, isolated_home: Home) -> None:
        """Nothing else changed: the file is its old self, byte for byte, no backup."""
        path = isolated_home.home / ".claude.json"
        original = (
            '{\n    "numStartups": 3,\n    "mcpServers": {\n'
            '        "gh": {"command": "gh-mcp"}\n    }\n}'
        )
        path.write_text(original)

        installed = _memd("install")
        uninstalled = _memd("uninstall")

        assert (0, 0) == (installed.returncode, uninstalled.returncode)
        assert original == path.read_text()
        assert not Path(str(path) + ".memd-backup").exists()
        assert "restored" in uninstalled.stdout

    def test_deletes_the_file_memd_created(self, isolated_home: Home) -> None:
        """With no ~/.claude.json before install, uninstall leaves none."""
        path = isolated_home.home / ".claude.json"

        _memd("install")
        created = path.exists()
        uninstalled = _memd("uninstall")

        assert created
        assert not path.exists()
        assert not Path(str(path) + ".memd-backup").exists()
        assert "deleted" in uninstalled.stdout

    def test_later_changes_are_kept(self, isolated_home: Home) -> None:
        """Claude Code rewrote the file since: only memd's entry goes, layout kept."""
        path = isolated_home.home / ".claude.json"
        path.write_text('{\n    "mcpServers": {"gh": {"command": "gh-mcp"}}\n}\n')
        _memd("install")
        config = json.loads(path.read_text())
        config["numStartups"] = 9
        config["mcpServers"]["db"] = {"command": "db-mcp"}
        path.write_text(json.dumps(config, indent=4) + "\n")

        result = _memd("uninstall")
        text = path.read_text()

        assert 0 == result.returncode
        assert {
            "mcpServers": {"gh": {"command": "gh-mcp"}, "db": {"command": "db-mcp"}},
            "numStartups": 9,
        } == json.loads(text)
        assert text.startswith('{\n    "mcpServers"')
        assert text.endswith("}\n")

    def test_a_memd_server_of_the_users_own_stays(self, isolated_home: Home) -> None:
        """An entry named memd that does not run `memd mcp` is not memd's to remove."""
        path = isolated_home.home / ".claude.json"
        original = '{"mcpServers": {"memd": {"command": "/opt/notes/server"}}}'
        path.write_text(original)

        result = _memd("uninstall")

        assert (0, original) == (result.returncode, path.read_text())
        assert "not installed in" in result.stdout

    def test_not_installed_touches_nothing(self, isolated_home: Home) -> None:
        """Uninstall with no file creates none; with a file, leaves it as it is."""
        path = isolated_home.home / ".claude.json"

        absent = _memd("uninstall")
        created = path.exists()
        path.write_text('{"projects": {}}')
        present = _memd("uninstall")

        assert (0, False) == (absent.returncode, created)
        assert (0, '{"projects": {}}') == (present.returncode, path.read_text())

    def test_dry_run_shows_the_diff_and_writes_nothing(
        self, isolated_home: Home
    ) -> None:
        """--dry-run prints the lines that would go; the file keeps memd's entry."""
        path = isolated_home.home / ".claude.json"
        path.write_text('{\n  "projects": {}\n}\n')
        _memd("install")
        before = path.read_text()

        result = _memd("uninstall", "--dry-run")

        assert 0 == result.returncode
        assert before == path.read_text()
        assert '-  "mcpServers": {' in result.stdout

    def test_invalid_json_is_left_alone(self, isolated_home: Home) -> None:
        """A broken ~/.claude.json: one line on stderr, exit 2, file untouched."""
        path = isolated_home.home / ".claude.json"
        path.write_text('{"mcpServers": {"memd": ')

        result = _memd("uninstall")

        assert (2, 1) == (result.returncode, len(result.stderr.splitlines()))
        assert '{"mcpServers": {"memd": ' == path.read_text()


def test_installed_entry_serves_a_real_client_until_uninstalled(
    isolated_home: Home, git_repo: Path
) -> None:
    """The entry install writes starts a server the `mcp` SDK client talks to."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    path = isolated_home.home / ".claude.json"
    _memd("install")
    entry = json.loads(path.read_text())["mcpServers"]["memd"]

    async def tool_names() -> list[str]:
        params = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            cwd=str(git_repo),
            env={**os.environ, **entry["env"]},
        )
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                listed = await client.list_tools()
        return sorted(t.name for t in listed.tools)

    names = anyio.run(tool_names)
    _memd("uninstall")

    assert {"memory_recall", "memory_write"} <= set(names)
    assert not path.exists()
