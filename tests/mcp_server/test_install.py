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
