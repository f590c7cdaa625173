"""`memd setup` for every agent on PATH: Claude Code, Codex CLI, Gemini CLI.

Each agent's launcher on PATH is a stand-in script (setup only looks for
it); the config files are real files in the test's HOME, edited by the real
`memd setup`, and read back by the real `memd doctor`. The real releases
read what setup wrote in tests/e2e/test_codex.py and test_gemini.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memd import jsonedit
from tests.conftest import Home

MEMD = str(Path(sys.executable).parent / "memd")
CODEX = '# mine\nmodel = "o3"\n\n[tui]  # keep\nnotifications = false\n'
GEMINI = '{\n  // mine\n  "theme": "Dracula"\n}\n'


def memd(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, *args], capture_output=True, text=True, check=False, timeout=60, env=env
    )


@pytest.fixture(name="agents_env")
def _agents_env(isolated_home: Home, tmp_path: Path) -> dict[str, str]:
    """codex, gemini and claude on PATH; the user's Codex and Gemini configs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # What each release's `--version` prints (Gemini one release behind).
    versions = {"codex": "codex-cli 0.171.0", "gemini": "0.60.1", "claude": ""}
    for name, version in versions.items():
        launcher = bin_dir / name
        launcher.write_text(f"#!/bin/sh\necho '{version}'\n")
        launcher.chmod(0o755)
    (isolated_home.home / ".codex").mkdir()
    (isolated_home.home / ".codex" / "config.toml").write_text(CODEX)
    (isolated_home.home / ".gemini").mkdir()
    (isolated_home.home / ".gemini" / "settings.json").write_text(GEMINI)
    return isolated_home.env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def snapshot(home: Home) -> dict[str, bytes | None]:
    paths = (
        home.home / ".codex" / "config.toml",
        home.home / ".gemini" / "settings.json",
        home.claude / "settings.json",
        home.home / ".claude.json",
    )
    return {str(p): p.read_bytes() if p.exists() else None for p in paths}


def test_setup_wires_every_agent_on_path_and_says_which(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    done = memd("setup", "--no-service", env=agents_env)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "agents (found on PATH): Claude Code, Codex CLI, Gemini CLI" in done.stdout
    codex = (isolated_home.home / ".codex" / "config.toml").read_text()
    assert codex.startswith(CODEX)
    assert tomllib.loads(codex)["mcp_servers"]["memd"]["command"] == MEMD
    gemini = (isolated_home.home / ".gemini" / "settings.json").read_text()
    assert "// mine" in gemini
    settings = jsonedit.load(gemini, comments=True)
    assert isinstance(settings, dict)
    assert "memd" in settings["mcp"]["allowed"]
    claude = json.loads((isolated_home.claude / "settings.json").read_text())
    assert "SessionStart" in claude["hooks"]
    # How memd's tools may run in each agent is said.
    assert "read-only" in done.stdout
    assert "mcp.allowed" in done.stdout

    doctor = memd("doctor", "--format", "json", env=agents_env)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    for name in ("hooks", "mcp", "codex", "gemini"):
        assert checks[name]["verdict"] == "ok", checks[name]


def test_agent_limits_setup_to_the_named_agents(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    before = snapshot(isolated_home)

    done = memd("setup", "--agent", "codex", "--no-service", env=agents_env)

    assert done.returncode == 0, done.stderr
    assert "agents (as asked): Codex CLI" in done.stdout
    after = snapshot(isolated_home)
    changed = {p for p in before if before[p] != after[p]}
    assert changed == {str(isolated_home.home / ".codex" / "config.toml")}


def test_dry_run_shows_each_agents_change_and_writes_nothing(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    before = snapshot(isolated_home)

    done = memd("setup", "--dry-run", "--no-service", env=agents_env)

    assert done.returncode == 0, done.stderr
    assert snapshot(isolated_home) == before
    assert "+[mcp_servers.memd]" in done.stdout
    assert '+    "memd": {' in done.stdout or '+  "mcpServers"' in done.stdout


def test_undo_gives_every_file_back_byte_for_byte(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    before = snapshot(isolated_home)
    assert memd("setup", "--no-service", env=agents_env).returncode == 0

    done = memd("setup", "--undo", env=agents_env)

    assert done.returncode == 0, done.stderr
    assert snapshot(isolated_home) == before


def test_undo_after_an_edit_takes_out_only_memds_entries(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    config = isolated_home.home / ".codex" / "config.toml"
    assert (
        memd("setup", "--agent", "codex", "--no-service", env=agents_env).returncode
        == 0
    )
    config.write_text(config.read_text() + '\n[profiles.fast]\nmodel = "mini"\n')

    done = memd("setup", "--undo", env=agents_env)

    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert "memd" not in text
    assert text.startswith(CODEX)
    assert tomllib.loads(text)["profiles"]["fast"]["model"] == "mini"


def test_a_config_setup_cannot_parse_is_left_alone_with_one_line(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    config = isolated_home.home / ".codex" / "config.toml"
    config.write_text("model = \n")  # Codex itself refuses to start on it

    done = memd("setup", "--no-service", env=agents_env)

    assert done.returncode == 1
    assert config.read_text() == "model = \n"
    lines = [line for line in done.stderr.splitlines() if str(config) in line]
    assert len(lines) == 1, done.stderr
    assert "not valid TOML" in lines[0]
    assert "left untouched" in lines[0]
    assert "Traceback" not in done.stderr
    # The other agents are wired all the same.
    settings = jsonedit.load(
        (isolated_home.home / ".gemini" / "settings.json").read_text(), comments=True
    )
    assert isinstance(settings, dict)
    assert "memd" in settings["mcpServers"]


def test_doctor_fails_an_agent_whose_wiring_is_gone(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    assert memd("setup", "--no-service", env=agents_env).returncode == 0
    (isolated_home.home / ".codex" / "config.toml").write_text(CODEX)

    doctor = memd("doctor", "--format", "json", env=agents_env)

    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["codex"]["verdict"] == "fail"
    assert "memd setup --agent codex" in checks["codex"]["fix"]
    assert checks["gemini"]["verdict"] == "ok"


def test_doctor_says_when_gemini_runs_no_hook(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    settings = isolated_home.home / ".gemini" / "settings.json"
    settings.write_text('{\n  "hooksConfig": {"enabled": false}\n}\n')
    assert (
        memd("setup", "--agent", "gemini", "--no-service", env=agents_env).returncode
        == 0
    )

    doctor = memd("doctor", "--format", "json", env=agents_env)

    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["gemini"]["verdict"] == "fail"
    assert "hooksConfig.enabled is false" in checks["gemini"]["message"]


def test_doctor_names_each_agents_release(
    agents_env: dict[str, str], isolated_home: Home
) -> None:
    assert memd("setup", "--no-service", env=agents_env).returncode == 0

    doctor = memd("doctor", "--format", "json", env=agents_env)

    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["codex release"]["verdict"] == "ok"
    assert "Codex CLI 0.171.0" in checks["codex release"]["message"]
    assert checks["gemini release"]["verdict"] == "warn"
    assert "Gemini CLI 0.60.1 on PATH" in checks["gemini release"]["message"]
    assert "--agent gemini --release 0.60.1" in checks["gemini release"]["fix"]
