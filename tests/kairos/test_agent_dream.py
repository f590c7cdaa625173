"""The agent dream as a transaction: real agent scripts on a copy, checked, undoable."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import DreamResult, dream_status, run_dream, undo_dream
from memd.kairos.external import agent_argv
from memd.kairos.generations import GENERATIONS_KEPT, list_generations
from memd.locks import CONSOLIDATE_LOCK_NAME
from tests.kairos.agents import with_stdout

NOW = datetime(2026, 11, 29, 14, 5).astimezone()
LOG = structlog.get_logger()
TOPIC = b"---\nname: Old\ndescription: The old notes\ntype: project\n---\n- keep me\n"
INDEX = b"# Index\n\n- [Old](old.md) \xe2\x80\x94 The old notes\n"

# A well-behaved agent: merges old.md into notes.md, files the entries, re-indexes.
GOOD = """
import json, os, sys
entries = [json.loads(line)["text"] for line in sys.stdin]
old = open("old.md").read().split("---\\n", 2)[2]
body = old + "".join(f"- {t}\\n" for t in sorted(set(entries)))
head = "---\\nname: Notes\\ndescription: Everything, merged\\ntype: project\\n---\\n"
open("notes.md", "w").write(head + body)
os.remove("old.md")
index = "# Index\\n\\n- [Notes](notes.md) \\u2014 Everything, merged\\n"
open("MEMORY.md", "w").write(index)
"""

BAD = {
    "deletes MEMORY.md": ("import os; os.remove('MEMORY.md')", "deleted MEMORY.md"),
    "unparsable frontmatter": (
        "open('old.md', 'w')"
        ".write('---\\nname: [unclosed\\ndescription: x\\n---\\nhi\\n')",
        "would not lint",
    ),
    "absolute path into the live memory": (
        "import os; d = os.environ['MEMD_LIVE_MEMORY_DIR']; "
        "open(os.path.join(d, 'old.md'), 'w').write('overwritten'); "
        "open(os.path.join(d, 'new.md'), 'w').write('new')",
        "Permission denied",  # Landlock: the agent cannot write outside its copy
    ),
    "../": ("open('../escape.md', 'w').write('out')", "outside the staging copy"),
    "symlink": ("import os; os.symlink('/etc/hostname', 'link.md')", "a symlink"),
    "exits non-zero": ("import sys; sys.exit(7)", "status 7"),
    "hard link to a file outside": (
        "import os; os.link(os.environ['MEMD_PROMPT_FILE'], 'linked.md')",
        "a hard link",
    ),
    "a FIFO": ("import os; os.mkfifo('pipe.md')", "a special file"),
    "../ through a subfolder": (
        "import os; os.makedirs('sub', exist_ok=True); "
        "open('sub/../../escape.md', 'w').write('out')",
        "outside the staging copy",
    ),
    "hangs": ("import time; time.sleep(120)", "timed out"),
    "deletes a file whose content is nowhere": (
        "import os; os.remove('old.md')",
        "deleted old.md and its content is nowhere else",
    ),
    "index past its limits": (
        "open('MEMORY.md', 'a').write(''.join(f'- line {i}\\n' for i in range(300)))",
        "past 200 lines",
    ),
}


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.memory = tmp_path / "memory"
        self.memory.mkdir()
        (self.memory / "old.md").write_bytes(TOPIC)
        (self.memory / "MEMORY.md").write_bytes(INDEX)
        self.config = Config(
            cache_dir=str(tmp_path / "cache"), state_dir=str(tmp_path / "state")
        )
        append_entry(str(self.memory), "#notes the wiki is at w.example", now=NOW)

    def files(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.memory)): p.read_bytes()
            for p in sorted(self.memory.rglob("*"))
            if p.is_file() and p.name != CONSOLIDATE_LOCK_NAME
        }

    def dream(self, script: str, timeout: float = 60.0) -> DreamResult:
        config = replace(
            self.config,
            dream_command=(sys.executable, "-c", script),
            dream_timeout_seconds=timeout,
        )
        return run_dream(str(self.memory), config, now=NOW, log=LOG)

    def record(self) -> dict[str, object]:
        return dream_status(self.config.state_dir).get(
            os.path.realpath(self.memory), {}
        )


@pytest.fixture(name="world")
def _world(tmp_path: Path) -> World:
    return World(tmp_path)


class TestMisbehavingAgent:
    @pytest.mark.parametrize("case", sorted(BAD))
    def test_live_memory_untouched_and_reason_named(
        self, world: World, case: str, tmp_path: Path
    ) -> None:
        """Each misbehaviour fails the dream, names why, and changes no live byte."""
        script, reason = BAD[case]
        before = world.files()

        result = world.dream(script, timeout=3.0 if case == "hangs" else 60.0)

        assert ("failed", True) == (result.status, reason in result.message), (
            result.message
        )
        assert before == world.files()
        assert not (tmp_path / "escape.md").exists()
        record = world.record()
        assert {} == record["watermark"]
        assert reason in str(record["last_result"])
        assert not os.listdir(os.path.join(world.config.state_dir, "dream-staging"))


class TestLiveLinks:
    def test_a_symlink_in_the_live_memory_is_skipped_not_followed(
        self, world: World, tmp_path: Path
    ) -> None:
        """A user's symlink in the live dir neither fails the dream nor is copied."""
        outside = tmp_path / "outside.md"
        outside.write_text("secret\n")
        (world.memory / "link.md").symlink_to(outside)

        result, seen = with_stdout(lambda: world.dream("import os; print(os.listdir())"))

        assert "ok" == result.status, result.message
        assert "MEMORY.md" in seen
        assert "link.md" not in seen
        assert (world.memory / "link.md").is_symlink()


class TestGoodAgentAndUndo:
    def test_good_dream_applies_and_reports_where_content_went(
        self, world: World
    ) -> None:
        """A good agent's result is applied; the deleted file's content is traced."""
        result = world.dream(GOOD)

        assert "ok" == result.status, result.message
        files = world.files()
        assert "old.md" not in files
        assert b"- keep me\n- #notes the wiki is at w.example\n" in files["notes.md"]
        assert {"old.md": ["notes.md"]} == result.summary["deleted_to"]

    def test_undo_restores_bytes_and_watermark(self, world: World) -> None:
        """`undo` after a good dream gives back every byte and the entries to redo."""
        before = world.files()
        world.dream(GOOD)

        ok, message = undo_dream(str(world.memory), world.config, now=NOW, log=LOG)

        assert ok, message
        assert before == world.files()
        assert {} == world.record()["watermark"]
        again, _ = undo_dream(str(world.memory), world.config, now=NOW, log=LOG)
        assert not again  # nothing left to undo

    def test_undo_refuses_when_a_file_changed_since(self, world: World) -> None:
        """A file edited after the dream is never overwritten by an undo."""
        world.dream(GOOD)
        (world.memory / "notes.md").write_text("mine now\n")

        ok, message = undo_dream(str(world.memory), world.config, now=NOW, log=LOG)

        assert (False, "changed after dream") == (ok, message[9:28])
        assert "mine now\n" == (world.memory / "notes.md").read_text()

    def test_builtin_dreams_undo_one_by_one(self, world: World) -> None:
        """Undo steps back through the kept generations, newest first."""
        states = [world.files()]
        for day in range(3):
            append_entry(
                str(world.memory),
                f"#notes the build takes {day + 5} minutes",
                now=NOW.replace(day=10 + day),
            )
            assert (
                "ok"
                == run_dream(str(world.memory), world.config, now=NOW, log=LOG).status
            )
            states.append(world.files())

        for expected in reversed(states[:-1]):
            ok, message = undo_dream(str(world.memory), world.config, now=NOW, log=LOG)
            assert ok, message
            logs = {k: v for k, v in world.files().items() if k.startswith("logs/")}
            assert expected | logs == world.files()

    def test_only_a_few_generations_are_kept(self, world: World) -> None:
        """Generations past GENERATIONS_KEPT are pruned."""
        for day in range(GENERATIONS_KEPT + 2):
            append_entry(
                str(world.memory), f"#notes fact {day}x", now=NOW.replace(day=1 + day)
            )
            run_dream(str(world.memory), world.config, now=NOW, log=LOG)

        kept = list_generations(world.config.state_dir, str(world.memory))

        assert GENERATIONS_KEPT == len(kept)


class TestAgentFlags:
    def test_claude_gets_memds_flags(self) -> None:
        """Print mode, file tools only, edits in the cwd only, no Bash, no MCP."""
        argv = agent_argv("claude")

        assert ["claude", "-p"] == argv[:2]
        assert "Read,Edit,Write,Glob,Grep" == argv[argv.index("--tools") + 1]
        # No --allowedTools: it would approve Write anywhere; acceptEdits approves
        # edits inside the working directory only (tests/e2e/test_agent_dream.py).
        assert "acceptEdits" == argv[argv.index("--permission-mode") + 1]
        assert "--allowedTools" not in argv
        assert "Bash" in argv[argv.index("--disallowedTools") + 1].split(",")
        assert "--strict-mcp-config" in argv
        assert "--add-dir" not in argv

    def test_dream_agent_runs_the_executable_with_the_prompt_on_stdin(
        self, world: World, tmp_path: Path
    ) -> None:
        """`dream.agent` is run with memd's flags, in the copy, the prompt on stdin."""
        agent = tmp_path / "fake-claude"
        agent.write_text(
            f"#!{sys.executable}\nimport os, sys\n"
            "print(repr((sys.argv[1:], os.getcwd(),"
            " os.environ['HOME'], sys.stdin.read())))\n"
        )
        agent.chmod(0o755)
        config = replace(world.config, dream_agent=str(agent))

        result, seen = with_stdout(
            lambda: run_dream(str(world.memory), config, now=NOW, log=LOG)
        )
        argv, cwd, home, stdin = eval(seen)  # noqa: S307 -- our own repr

        assert "ok" == result.status, result.message
        assert agent_argv(str(agent))[1:] == argv
        assert cwd.startswith(world.config.state_dir)
        assert cwd.endswith("/memory")
        assert home.startswith(os.path.dirname(cwd))
        assert "the wiki is at w.example" in stdin
        assert "consolidating a memory directory for memd" in stdin
