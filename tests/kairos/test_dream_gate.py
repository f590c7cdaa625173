"""The dream's lint gate blocks only the errors the dream itself would introduce.

SPEC: a dream whose result would not lint writes nothing; an error the user
already had in a file the dream touches is theirs and never blocks it. These
tests drive the public `memd dream` command, so they hold whatever the dream's
insides look like.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

from memd.claude_code.paths import resolve_memory_location
from memd.kairos.daily_log import append_entry
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
NOW = datetime.datetime(2026, 3, 7, 10, 0).astimezone()
TOPIC = (
    "---\nname: {name}\ndescription: {name} notes for the gate tests\n"
    "type: {type}\n---\n"
)


def _memory(git_repo: Path) -> Path:
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    return memory


def _dream(git_repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, "dream", "--now", "--project", str(git_repo)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={
            **os.environ,
            "MEMD_TELEMETRY": "off",
            "MEMD_LOG_LEVEL": "error",
            **env,
        },
    )


def _last_status(home: Home) -> str:
    (dreams,) = home.state.rglob("dreams.json")
    (record,) = json.loads(dreams.read_text()).values()
    return str(record["last_result"]["status"])


class TestLintGate:
    def test_pre_existing_error_in_a_touched_topic_does_not_block(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """`type: Feedback` (M008) in alpha.md stays the user's; the entry is filed."""
        memory = _memory(git_repo)
        (memory / "alpha.md").write_text(TOPIC.format(name="Alpha", type="Feedback"))
        (memory / "MEMORY.md").write_text("- [Alpha](alpha.md) — Alpha notes\n")
        append_entry(str(memory), "#alpha filed despite the old error", now=NOW)

        result = _dream(git_repo)

        assert 0 == result.returncode, result.stdout + result.stderr
        assert "ok" == _last_status(isolated_home)
        text = (memory / "alpha.md").read_text()
        assert "filed despite the old error" in text
        assert "type: Feedback" in text  # the user's own value is not "fixed"

    def test_pre_existing_error_in_the_index_does_not_block(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """A dangling link made an error by config stays; the dream still indexes."""
        memory = _memory(git_repo)
        (memory / "MEMORY.md").write_text("- [Gone](gone.md) — a file the user lost\n")
        append_entry(str(memory), "#beta a new topic for the index", now=NOW)

        result = _dream(git_repo, MEMD_LINT_SEVERITIES="I005=error")

        assert 0 == result.returncode, result.stdout + result.stderr
        assert "ok" == _last_status(isolated_home)
        index = (memory / "MEMORY.md").read_text()
        assert "(gone.md)" in index
        assert "(project_beta.md)" in index

    def test_an_introduced_error_blocks_beside_a_pre_existing_one(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """A user's M008 in big.md does not hide the F003 the dream would add to it."""
        memory = _memory(git_repo)
        topic = TOPIC.format(name="Big", type="Feedback")
        (memory / "big.md").write_text(topic + "x" * (1500 - len(topic)))
        (memory / "MEMORY.md").write_text("- [Big](big.md) — Big notes\n")
        before = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
        append_entry(str(memory), "#big " + "y" * 200, now=NOW)

        result = _dream(
            git_repo,
            MEMD_MAX_TOPIC_FILE_BYTES="1600",
            MEMD_LINT_SEVERITIES="F003=error",
        )

        assert 1 == result.returncode, result.stdout + result.stderr
        assert "F003" in result.stdout + result.stderr
        assert "error" == _last_status(isolated_home)
        after = {p.name: p.read_bytes() for p in memory.iterdir() if p.is_file()}
        assert before == {k: v for k, v in after.items() if k != ".consolidate-lock"}
