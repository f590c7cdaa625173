"""`memd setup`: hooks, MCP server and service in one command; `--undo` takes them out.

The settings files are real files in the test's HOME; systemctl is the
recording stub (tests/service_stub), so the service's unit file is real and
the commands are recorded. The live user manager case is in
tests/service/test_live_systemd.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home, recorded

MEMD = str(Path(sys.executable).parent / "memd")

# Odd on purpose: tabs, a key order, no final newline, a non-ASCII value.
USER_SETTINGS = '{\n\t"model": "opus",\n\t"theme": "dark — ünïcode"\n}'
CLAUDE_JSON = '{"numStartups": 3, "projects": {"/srv/app": {"x": 1}}}\n'


def memd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, *args], capture_output=True, text=True, check=False, timeout=60
    )


def files(home: Home) -> dict[str, bytes | None]:
    """Every file setup may touch, as bytes (None: absent)."""
    paths = {
        "settings": home.claude / "settings.json",
        "settings backup": home.claude / "settings.json.memd-backup",
        "claude.json": home.home / ".claude.json",
        "claude.json backup": home.home / ".claude.json.memd-backup",
        "unit": home.config / "systemd" / "user" / "memd.service",
    }
    return {k: p.read_bytes() if p.exists() else None for k, p in paths.items()}


def existing(home: Home) -> None:
    home.claude.mkdir(exist_ok=True)
    (home.claude / "settings.json").write_text(USER_SETTINGS)
    (home.home / ".claude.json").write_text(CLAUDE_JSON)


class TestSetup:
    def test_dry_run_shows_every_change_and_writes_nothing(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)
        before = files(isolated_home)

        done = memd("setup", "--dry-run")

        assert 0 == done.returncode, done.stderr
        assert before == files(isolated_home)
        assert [] == recorded(stub)
        out = done.stdout
        assert f"+++ {isolated_home.claude / 'settings.json'} (with memd hooks)" in out
        assert "hook post-tool-use" in out
        assert (
            f"+++ {isolated_home.home / '.claude.json'} (with memd MCP server)" in out
        )
        assert "systemctl --user enable --now memd.service" in out
        assert not (isolated_home.state / "memd" / "setup.json").exists()

    def test_installs_hooks_mcp_and_service_and_says_what_next(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)

        done = memd("setup")

        assert 0 == done.returncode, done.stdout + done.stderr
        settings = json.loads((isolated_home.claude / "settings.json").read_text())
        assert "opus" == settings["model"]
        assert {"SessionStart", "PostToolUse"} == set(settings["hooks"])
        config = json.loads((isolated_home.home / ".claude.json").read_text())
        assert 3 == config["numStartups"]
        assert ["mcp"] == config["mcpServers"]["memd"]["args"]
        assert [
            "systemctl --user daemon-reload",
            "systemctl --user enable --now memd.service",
        ] == recorded(stub)
        lines = done.stdout.splitlines()
        assert "next:" in lines
        assert any(line.startswith(f"  {MEMD} doctor ") for line in lines)
        assert any(line.startswith(f"  {MEMD} setup --undo ") for line in lines)

    def test_lints_every_project(self, isolated_home: Home, stub: Path) -> None:
        memory = isolated_home.claude / "projects" / "-srv-app" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Gone](gone.md) — a dangling link\n")

        done = memd("setup", "--no-service")

        assert (
            "  lint: 1 memory directories, 0 errors, 1 warnings;"
            " `memd lint --all` shows them" in done.stdout.splitlines()
        )

    def test_a_second_run_changes_nothing(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)
        memd("setup")
        after_first = files(isolated_home)
        record = (isolated_home.state / "memd" / "setup.json").read_bytes()

        done = memd("setup")

        assert 0 == done.returncode
        assert after_first == files(isolated_home)
        assert record == (isolated_home.state / "memd" / "setup.json").read_bytes()
        assert "memd hooks already installed in" in done.stdout


class TestUndo:
    def test_restores_every_file_byte_for_byte(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)
        before = files(isolated_home)
        memd("setup")
        memd("setup")  # twice: the copy kept is still the first one's

        done = memd("setup", "--undo")

        assert 0 == done.returncode, done.stdout + done.stderr
        assert before == files(isolated_home)
        assert "systemctl --user disable --now memd.service" in recorded(stub)
        assert "restored byte for byte" in done.stdout

    def test_files_setup_created_are_deleted(
        self, isolated_home: Home, stub: Path
    ) -> None:
        """A fresh HOME: no settings, no ~/.claude.json before, none after."""
        before = files(isolated_home)
        memd("setup")

        memd("setup", "--undo")

        assert before == files(isolated_home)
        assert {None} == set(before.values())

    def test_a_file_edited_since_loses_only_memds_entries(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)
        memd("setup", "--no-service")
        path = isolated_home.claude / "settings.json"
        edited = json.loads(path.read_text())
        edited["theme"] = "light"
        path.write_text(json.dumps(edited, indent="\t"))

        done = memd("setup", "--undo")

        assert 0 == done.returncode
        assert {"model": "opus", "theme": "light"} == json.loads(path.read_text())
        assert "changed since setup, so only memd's entries" in done.stdout

    def test_a_service_there_before_stays(
        self, isolated_home: Home, stub: Path
    ) -> None:
        assert 0 == memd("service", "install").returncode
        unit = files(isolated_home)["unit"]

        memd("setup")
        done = memd("setup", "--undo")

        assert unit == files(isolated_home)["unit"]
        assert "service: kept (it was installed before setup)" in done.stdout

    def test_undo_dry_run_changes_nothing(
        self, isolated_home: Home, stub: Path
    ) -> None:
        existing(isolated_home)
        memd("setup")
        after = files(isolated_home)

        done = memd("setup", "--undo", "--dry-run")

        assert after == files(isolated_home)
        assert "would restore the bytes setup found" in done.stdout

    def test_nothing_to_undo(self, isolated_home: Home) -> None:
        done = memd("setup", "--undo")

        assert 0 == done.returncode
        assert "nothing to undo" in done.stdout


def test_the_hooks_setup_writes_run_this_memd(isolated_home: Home, stub: Path) -> None:
    memd("setup", "--no-service")

    settings = json.loads((isolated_home.claude / "settings.json").read_text())
    command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    assert command.split()[0] == os.path.realpath(MEMD) or command.split()[0] == MEMD


class TestCommandOnPath:
    """setup's next steps work as printed, whatever PATH the newcomer has."""

    def test_a_user_bin_on_path_gets_a_link_that_undo_takes_out(
        self, isolated_home: Home, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        user_bin = isolated_home.home / ".local" / "bin"
        monkeypatch.setenv("PATH", f"{user_bin}:{os.environ['PATH']}")

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        assert os.readlink(user_bin / "memd") == MEMD
        assert f"  command: linked {user_bin / 'memd'} -> {MEMD}" in done.stdout
        assert "  memd doctor " in done.stdout
        doctor = subprocess.run(
            ["sh", "-c", "memd doctor"], capture_output=True, text=True, check=False
        )
        assert doctor.returncode in (0, 1), doctor.stderr
        assert "index budgets" in doctor.stdout

        undone = memd("setup", "--undo")

        assert f"  command: removed the link {user_bin / 'memd'}" in undone.stdout
        assert not os.path.lexists(user_bin / "memd")

    def test_no_user_bin_on_path_prints_the_line_that_puts_memd_there(
        self, isolated_home: Home, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("PATH", f"{os.path.dirname(stub)}:/usr/bin:/bin")

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        assert f'    export PATH="{Path(MEMD).parent}:$PATH"' in done.stdout
        assert f"  {MEMD} doctor " in done.stdout
        assert not (isolated_home.home / ".local" / "bin").exists()

    def test_memd_already_on_path_changes_nothing(
        self, isolated_home: Home, stub: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("PATH", f"{Path(MEMD).parent}:{os.environ['PATH']}")

        done = memd("setup", "--no-service")

        assert "command:" not in done.stdout
        assert "  memd doctor " in done.stdout
