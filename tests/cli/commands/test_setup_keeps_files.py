"""`memd setup` keeps the user's files as the user has them (#41 class 6).

Real files in the test's HOME, the real `memd` executable: every copy keeps
its file's mode, a settings file that is a link stays a link (its target is
edited, and `--undo` puts the target's bytes back), JSON text memd did not
touch keeps its bytes, and a file memd cannot edit gives one line.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home

MEMD = str(Path(sys.executable).parent / "memd")

CLAUDE_JSON = (  # a made-up API key: where do copies of it go
    "{\n"
    '  "primaryApiKey": "sk-ant-api03-not-a-real-key",\n'
    '  "cleanupPeriodDays": 1e400,\n'
    '  "ratio": 1.0,\n'
    '  "odd": "\\ud800",\n'
    '  "projects": {"/srv/app": {"allowedTools": [ ]}}\n'
    "}\n"
)


def memd(
    *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, *args], capture_output=True, text=True, check=False, timeout=60, env=env
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def copies(home: Home) -> list[Path]:
    """Every copy setup keeps: backups beside the files, copies in the state dir."""
    found = list(home.home.glob(".claude.json.memd-backup"))
    found += list(home.claude.glob("*.memd-backup"))
    found += [p for p in (home.state / "memd" / "setup").glob("*") if p.is_file()]
    return found


class TestModes:
    def test_every_copy_of_a_0600_file_is_0600(self, isolated_home: Home) -> None:
        """~/.claude.json holds API keys: no copy of it is readable by others."""
        claude_json = isolated_home.home / ".claude.json"
        claude_json.write_text(CLAUDE_JSON)
        claude_json.chmod(0o600)

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        kept = [p for p in copies(isolated_home) if p.read_text() == CLAUDE_JSON]
        assert len(kept) >= 2  # the backup beside it and setup's own copy
        assert {0o600} == {mode(p) for p in kept}
        assert 0o600 == mode(claude_json)

    def test_a_copy_keeps_any_mode_and_undo_gives_it_back(
        self, isolated_home: Home
    ) -> None:
        """A 0640 settings file's backup is 0640; undo restores bytes and mode."""
        isolated_home.claude.mkdir()
        settings = isolated_home.claude / "settings.json"
        settings.write_text('{"model": "opus"}\n')
        settings.chmod(0o640)

        memd("setup", "--no-service")

        assert 0o640 == mode(isolated_home.claude / "settings.json.memd-backup")
        settings.chmod(0o600)  # whatever happened since, undo puts back what it found
        done = memd("setup", "--undo")
        assert 0 == done.returncode, done.stderr
        assert ('{"model": "opus"}\n', 0o640) == (settings.read_text(), mode(settings))


class TestLinks:
    def link_settings(self, home: Home) -> tuple[Path, Path, str]:
        dotfiles = home.root / "dotfiles" / "claude"
        dotfiles.mkdir(parents=True)
        target = dotfiles / "settings.json"
        original = '{\n    "model": "opus"\n}\n'
        target.write_text(original)
        home.claude.mkdir()
        link = home.claude / "settings.json"
        link.symlink_to(target)
        return link, target, original

    def test_a_linked_settings_file_is_edited_through_the_link(
        self, isolated_home: Home
    ) -> None:
        """The link into a dotfiles repository stays; its target gets the hooks."""
        link, target, _ = self.link_settings(isolated_home)

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        assert link.is_symlink()
        assert target == link.resolve()
        assert "hook post-tool-use" in target.read_text()
        assert target.read_text().startswith('{\n    "model": "opus",\n')
        assert ["settings.json"] == sorted(p.name for p in target.parent.iterdir())

    def test_undo_leaves_the_link_and_restores_its_target(
        self, isolated_home: Home
    ) -> None:
        link, target, original = self.link_settings(isolated_home)
        memd("setup", "--no-service")

        done = memd("setup", "--undo")

        assert 0 == done.returncode, done.stderr
        assert link.is_symlink()
        assert target == link.resolve()
        assert original == target.read_text()

    def test_hook_uninstall_keeps_the_link_too(self, isolated_home: Home) -> None:
        """`memd hook install/uninstall` share the writer: the link stays."""
        link, target, original = self.link_settings(isolated_home)

        memd("hook", "install")
        memd("hook", "uninstall")

        assert link.is_symlink()
        assert original == target.read_text()

    def test_a_dangling_link_is_refused_in_one_line(self, isolated_home: Home) -> None:
        """A link to nothing is not replaced, and nothing is created at its target."""
        isolated_home.claude.mkdir()
        link = isolated_home.claude / "settings.json"
        link.symlink_to(isolated_home.root / "gone" / "settings.json")

        done = memd("hook", "install")

        assert 0 != done.returncode
        assert 1 == len(done.stderr.strip().splitlines()), done.stderr
        assert "which does not exist; left untouched" in done.stderr
        assert link.is_symlink()
        assert not link.exists()


class TestText:
    def test_keys_memd_did_not_touch_keep_their_bytes(
        self, isolated_home: Home
    ) -> None:
        """`1e400` is not written back as `Infinity`; `1.0`, `\\ud800` stay."""
        claude_json = isolated_home.home / ".claude.json"
        claude_json.write_text(CLAUDE_JSON)

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        text = claude_json.read_text()
        assert text.startswith(CLAUDE_JSON[: CLAUDE_JSON.rindex("\n}")] + ",\n")
        assert "Infinity" not in text
        assert '"mcpServers": {\n    "memd": {\n' in text

    @pytest.mark.parametrize(
        ("text", "words"),
        [
            ("[" * 100_000, "nested deeper than"),
            ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested deeper than"),
            ('{"a": NaN}', "NaN is not JSON"),
            ('{"hooks": {}, "hooks": {}}', "'hooks' appears twice"),
        ],
    )
    def test_a_file_memd_cannot_edit_gives_one_line(
        self, isolated_home: Home, text: str, words: str
    ) -> None:
        """No traceback, the file left as it was, exit non-zero."""
        isolated_home.claude.mkdir()
        settings = isolated_home.claude / "settings.json"
        settings.write_text(text)

        done = memd("setup", "--no-service")

        assert 0 != done.returncode
        assert "Traceback" not in done.stderr
        assert 1 == len(done.stderr.strip().splitlines()), done.stderr
        assert words in done.stderr
        assert "left untouched" in done.stderr
        assert text == settings.read_text()

    def test_a_lone_surrogate_escape_is_kept(self, isolated_home: Home) -> None:
        """`"\\ud800"` is valid JSON: setup edits around it, byte for byte."""
        isolated_home.claude.mkdir()
        settings = isolated_home.claude / "settings.json"
        settings.write_text('{"statusLine": "\\ud800"}')

        done = memd("setup", "--no-service")

        assert 0 == done.returncode, done.stderr
        assert settings.read_text().startswith('{"statusLine": "\\ud800", "hooks": {')


@pytest.mark.parametrize("linked_at", ["doctor", "setup"])
def test_doctor_knows_the_same_memd_through_a_link(
    isolated_home: Home, linked_at: str
) -> None:
    """README: `ln -s …/venv/bin/memd ~/.local/bin/`; either path is this memd."""
    bin_dir = isolated_home.home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "memd").symlink_to(MEMD)
    plain = dict(os.environ)
    plain["PATH"] = os.pathsep.join(
        p
        for p in plain.get("PATH", "").split(os.pathsep)
        if p != str(Path(MEMD).parent)
    )
    linked = {**plain, "PATH": f"{bin_dir}{os.pathsep}{plain['PATH']}"}
    setup_env, doctor_env = (
        (plain, linked) if linked_at == "doctor" else (linked, plain)
    )
    assert 0 == memd("setup", "--no-service", env=setup_env).returncode

    done = memd("doctor", "--format", "json", env=doctor_env)

    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert ("ok", "ok") == (checks["hooks"]["verdict"], checks["mcp"]["verdict"]), (
        checks["hooks"]["message"] + checks["mcp"]["message"]
    )


def test_uninstall_after_an_edit_takes_out_only_memds_bytes(
    isolated_home: Home,
) -> None:
    """The user's own hook group, spacing and numbers survive install and uninstall."""
    isolated_home.claude.mkdir()
    settings = isolated_home.claude / "settings.json"
    original = (
        "{\n"
        '  "hooks": {\n'
        '    "PostToolUse": [ {"matcher": "Bash", "hooks": [{"type": "command",'
        ' "command": "my-linter", "timeout": 3.0}]} ]\n'
        "  },\n"
        '  "cleanupPeriodDays": 1e400\n'
        "}\n"
    )
    settings.write_text(original)
    assert 0 == memd("hook", "install").returncode
    edited = settings.read_text().replace("1e400", "2e400")
    settings.write_text(edited)

    done = memd("hook", "uninstall")

    assert 0 == done.returncode, done.stderr
    assert original.replace("1e400", "2e400") == settings.read_text()
