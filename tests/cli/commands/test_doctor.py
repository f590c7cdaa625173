"""`memd doctor`: each check's verdict and fix, on real files, repositories and dirs.

The daemon's own checks (alive, stopped, gone) run against a real `memd run`
in tests/daemon/test_liveness.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Home, git

MEMD = str(Path(sys.executable).parent / "memd")


def doctor(*env_pairs: tuple[str, str]) -> tuple[int, dict[str, dict[str, str]]]:
    done = subprocess.run(
        [MEMD, "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**os.environ, **dict(env_pairs)},
    )
    data = json.loads(done.stdout)
    assert data["ok"] == (done.returncode == 0)
    return done.returncode, {c["name"]: c for c in data["checks"]}


class TestSettings:
    def test_nothing_installed_fails_with_setup_as_the_fix(self) -> None:
        code, checks = doctor()

        assert 1 == code
        assert ("fail", "fail") == (
            checks["hooks"]["verdict"],
            checks["mcp"]["verdict"],
        )
        assert "`memd setup`" in checks["hooks"]["fix"]
        assert "`memd setup`" in checks["mcp"]["fix"]

    def test_hooks_of_another_memd_fail(self, isolated_home: Home) -> None:
        """Hooks that run some other memd binary are not this memd's."""
        assert (
            0
            == subprocess.run(
                [MEMD, "setup", "--no-service"], capture_output=True
            ).returncode
        )
        settings = isolated_home.claude / "settings.json"
        settings.write_text(settings.read_text().replace(MEMD, "/opt/old/bin/memd"))

        _, checks = doctor()

        assert "fail" == checks["hooks"]["verdict"]
        assert (
            "they run another memd (/opt/old/bin/memd hook"
            in checks["hooks"]["message"]
        )

    def test_an_mcp_entry_of_another_memd_fails(self, isolated_home: Home) -> None:
        subprocess.run([MEMD, "setup", "--no-service"], capture_output=True, check=True)
        claude_json = isolated_home.home / ".claude.json"
        claude_json.write_text(
            claude_json.read_text().replace(MEMD, "/opt/old/bin/memd")
        )

        _, checks = doctor()

        assert "fail" == checks["mcp"]["verdict"]
        assert "runs /opt/old/bin/memd, not" in checks["mcp"]["message"]

    def test_broken_json_is_named(self, isolated_home: Home) -> None:
        isolated_home.claude.mkdir()
        (isolated_home.claude / "settings.json").write_text("{not json")

        _, checks = doctor()

        assert "not valid JSON" in checks["hooks"]["message"]


class TestRemotes:
    def test_a_reachable_and_an_unreachable_remote(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        remote = tmp_path / "remote.git"
        git("init", "-q", "--bare", str(remote), cwd=tmp_path)
        init = subprocess.run(
            [MEMD, "sync", "init", "--remote", str(remote)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert 0 == init.returncode, init.stderr

        _, good = doctor()
        remote.rename(tmp_path / "moved.git")
        code, bad = doctor()

        assert ("ok", f"{remote} answered") == (
            good["personal sync"]["verdict"],
            good["personal sync"]["message"],
        )
        assert 1 == code
        assert "fail" == bad["personal sync"]["verdict"]
        assert bad["personal sync"]["message"].startswith(
            "remote not reachable: git ls-remote"
        )
        assert "ls-remote origin" in bad["personal sync"]["fix"]


class TestBudgetsAndDirs:
    def test_an_index_over_budget_fails(self, isolated_home: Home) -> None:
        memory = isolated_home.claude / "projects" / "-srv-app" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("".join(f"line {i}\n" for i in range(250)))

        _, checks = doctor()

        assert "fail" == checks["index budgets"]["verdict"]
        assert "1 index over budget" in checks["index budgets"]["message"]
        assert checks["index budgets"]["fix"].startswith("run `memd fix`")

    def test_an_unwritable_state_dir_fails(self, tmp_path: Path) -> None:
        """A file where the state dir should be made: memd could write nothing."""
        (tmp_path / "a-file").write_text("in the way\n")

        code, checks = doctor(("MEMD_STATE_DIR", str(tmp_path / "a-file" / "state")))

        assert 1 == code
        assert "fail" == checks["state dir"]["verdict"]
        assert "a-file is a file, in the way" in checks["state dir"]["message"]
        assert "paths.state_dir" in checks["state dir"]["fix"]

    def test_writable_dirs_and_space_are_ok(self) -> None:
        _, checks = doctor()

        assert "ok" == checks["state dir"]["verdict"]
        assert "ok" == checks["cache dir"]["verdict"]
        assert "ok" == checks["disk space"]["verdict"]
        assert checks["disk space"]["message"].endswith(
            " MiB free for "
            + checks["disk space"]["message"].split(" MiB free for ")[1]
        )


def test_text_has_one_verdict_line_per_check_and_a_fix_for_each_failure() -> None:
    done = subprocess.run([MEMD, "doctor"], capture_output=True, text=True, check=False)

    lines = done.stdout.splitlines()
    verdicts = [line for line in lines if not line.startswith("      fix: ")]
    fails = [i for i, line in enumerate(lines) if line.startswith("FAIL  ")]
    assert 1 == done.returncode
    assert all(v.split()[0] in ("OK", "WARN", "FAIL") for v in verdicts)
    assert all(lines[i + 1].startswith("      fix: ") for i in fails)
