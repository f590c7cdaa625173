"""Tests for memd.kairos.dream: one dream run end to end on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import DreamResult, dream_status, run_dream
from memd.locks import CONSOLIDATE_LOCK_NAME
from memd.snapshot.publish import SnapshotStore
from memd.snapshot.telemetry_sink import TelemetrySink
from memd.state import read_state
from tests.kairos.agents import with_stdout

NOW = datetime(2026, 11, 29, 14, 5).astimezone()
LOG = structlog.get_logger()


@dataclass(frozen=True)
class Setup:
    """A memory directory with a config whose cache and state are temp dirs."""

    memory: Path
    config: Config

    def log(self, text: str) -> None:
        append_entry(str(self.memory), text, now=NOW)

    def dream(
        self, *, dry_run: bool = False, telemetry: TelemetrySink | None = None
    ) -> DreamResult:
        return run_dream(
            str(self.memory),
            self.config,
            now=NOW,
            log=LOG,
            dry_run=dry_run,
            telemetry=telemetry,
        )

    def files(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.memory)): p.read_bytes()
            for p in sorted(self.memory.rglob("*"))
            if p.is_file() and p.name != CONSOLIDATE_LOCK_NAME
        }


@pytest.fixture(name="setup")
def _setup(tmp_path: Path) -> Setup:
    memory = tmp_path / "memory"
    memory.mkdir()
    config = Config(
        cache_dir=str(tmp_path / "cache"),
        state_dir=str(tmp_path / "state"),
        modes=("standard", "kairos"),
    )
    return Setup(memory, config)


class TestRunDream:
    def test_files_entries_and_indexes(self, setup: Setup) -> None:
        """Entries land in topic files, MEMORY.md links them, lint finds no error."""
        setup.log("[feedback] #testing use a real database")
        setup.log("untagged thought")

        result = setup.dream()

        assert ("ok", 2, 0) == (result.status, result.entries, result.lint_errors)
        index = (setup.memory / "MEMORY.md").read_text()
        assert "(feedback_testing.md)" in index
        assert "(project_thought.md)" in index
        assert (
            "use a real database" in (setup.memory / "feedback_testing.md").read_text()
        )

    def test_full_index_is_compacted_not_left_out(self, setup: Setup) -> None:
        """MEMORY.md at 200 lines: the dream compacts it, and its new file loads."""
        from memd.lint.compact import loads_whole
        from memd.lint.engine import lint_memdir
        from memd.memory.reader import load_memdir

        lines = []
        for i in range(200):
            (setup.memory / f"t{i}.md").write_text(
                f"---\nname: T{i}\ndescription: What memory {i} is about, exactly\n"
                f"type: user\n---\nFact {i}.\n"
            )
            lines.append(f"- [T{i}](t{i}.md) — memory {i}")
        (setup.memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
        setup.log("[reference] #docs the wiki is at w.example")

        result = setup.dream()

        index = (setup.memory / "MEMORY.md").read_text()
        assert ("ok", ()) == (result.status, result.unindexed)
        assert "(reference_docs.md)" in index
        assert loads_whole(index)
        codes = {d.code for d in lint_memdir(load_memdir(str(setup.memory)))}
        assert not codes & {"I002", "I003", "I006"}

    def test_rerun_files_nothing_twice(self, setup: Setup) -> None:
        """A second dream finds nothing new and leaves every file as it was."""
        setup.log("#a one")
        setup.dream()
        before = setup.files()

        result = setup.dream()

        assert ("nothing", before) == (result.status, setup.files())

    def test_new_entries_appended_next_time(self, setup: Setup) -> None:
        """Entries logged after a dream are filed by the next one, once each."""
        setup.log("#a one")
        setup.dream()
        setup.log("#a two")

        setup.dream()
        text = (setup.memory / "project_a.md").read_text()

        assert (1, 1) == (text.count(" one <!--"), text.count(" two <!--"))

    def test_watermark_recorded(self, setup: Setup) -> None:
        """dream_status reports the watermark and last success per directory."""
        setup.log("#a one")
        setup.dream()

        status = dream_status(setup.config.state_dir)[os.path.realpath(setup.memory)]
        size = (setup.memory / "logs/2026/11/2026-11-29.md").stat().st_size

        assert {"logs/2026/11/2026-11-29.md": size} == status["watermark"]
        assert NOW.isoformat() == status["last_success"]

    def test_snapshots_rendered(self, setup: Setup) -> None:
        """Each configured mode gets a new snapshot that includes the new index."""
        setup.log("#a one")

        setup.dream()
        store = SnapshotStore(setup.config.cache_dir)
        found = [store.read(str(setup.memory), m) for m in ("standard", "kairos")]

        assert [True, True] == [
            f is not None and b"(project_a.md)" in f[1] for f in found
        ]

    def test_dry_run_writes_nothing(self, setup: Setup) -> None:
        """--dry-run returns the diff and leaves files, lock and state alone."""
        setup.log("#a one")
        before = setup.files()

        result = setup.dream(dry_run=True)

        assert "+++ b/project_a.md" in result.diff
        assert before == setup.files()
        assert not (setup.memory / CONSOLIDATE_LOCK_NAME).exists()
        assert {} == read_state(setup.config.state_dir, "dreams.json")

    def test_symlinked_topic_fails_without_following(
        self, setup: Setup, tmp_path: Path
    ) -> None:
        """A topic file that is a symlink fails the dream; the target is untouched."""
        outside = tmp_path / "outside.md"
        outside.write_text("mine\n")
        (setup.memory / "project_a.md").symlink_to(outside)
        setup.log("#a one")

        result = setup.dream()

        assert "failed" == result.status
        assert "mine\n" == outside.read_text()
        assert (
            {}
            == dream_status(setup.config.state_dir)[os.path.realpath(setup.memory)][
                "watermark"
            ]
        )

    def test_telemetry_events(self, setup: Setup, tmp_path: Path) -> None:
        """A completed dream emits a dream_completed event to the sink."""
        sink = TelemetrySink(str(tmp_path / "t.jsonl"))
        setup.log("#a one")

        setup.dream(telemetry=sink)
        sink.close()
        events = [
            json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()
        ]

        assert ["dream_completed"] == [e["event"] for e in events]


class TestConsolidateLock:
    def test_live_holder_blocks(self, setup: Setup) -> None:
        """A fresh lock held by a live process blocks the dream and is left alone."""
        holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            (setup.memory / CONSOLIDATE_LOCK_NAME).write_text(f"{holder.pid}\n")
            setup.log("#a one")

            result = setup.dream()
        finally:
            holder.kill()
            holder.wait()

        assert "locked" == result.status
        assert f"{holder.pid}\n" == (setup.memory / CONSOLIDATE_LOCK_NAME).read_text()
        assert not (setup.memory / "project_a.md").exists()

    def test_dead_holder_broken(self, setup: Setup) -> None:
        """A lock whose pid is dead is broken and the dream runs."""
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        (setup.memory / CONSOLIDATE_LOCK_NAME).write_text(f"{dead.pid}\n")
        setup.log("#a one")

        result = setup.dream()

        assert "ok" == result.status
        assert "" == (setup.memory / CONSOLIDATE_LOCK_NAME).read_text()

    def test_old_live_holder_broken(self, setup: Setup) -> None:
        """A live holder older than an hour is stale and broken."""
        lock = setup.memory / CONSOLIDATE_LOCK_NAME
        lock.write_text(f"{os.getppid()}\n")
        old = time.time() - 2 * 3600
        os.utime(lock, (old, old))
        setup.log("#a one")

        assert "ok" == setup.dream().status

    def test_success_releases_and_stamps(self, setup: Setup) -> None:
        """After a dream the lock holds no pid and its mtime marks the consolidation."""
        lock = setup.memory / CONSOLIDATE_LOCK_NAME
        lock.write_text("")
        os.utime(lock, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        setup.log("#a one")

        setup.dream()

        assert "" == lock.read_text()
        assert lock.stat().st_mtime > 1_700_000_000 + 3600

    def test_failure_restores_mtime(self, setup: Setup, tmp_path: Path) -> None:
        """A failed dream winds the lock's mtime back to the last consolidation."""
        lock = setup.memory / CONSOLIDATE_LOCK_NAME
        lock.write_text("1\n")
        os.utime(lock, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
        (setup.memory / "project_a.md").symlink_to(tmp_path / "elsewhere.md")
        setup.log("#a one")

        setup.dream()

        assert 1_700_000_000_000_000_000 == lock.stat().st_mtime_ns


class TestExternalCommand:
    def _config(self, setup: Setup, script: str, timeout: float = 30.0) -> Config:
        from dataclasses import replace

        return replace(
            setup.config,
            dream_command=(sys.executable, "-c", script),
            dream_timeout_seconds=timeout,
        )

    def test_receives_env_and_stdin(self, setup: Setup) -> None:
        """The command gets the memory dir, log files and entries as JSON lines."""
        script = (
            "import json, os, sys; print(json.dumps("
            "{'dir': os.environ['MEMD_LIVE_MEMORY_DIR'],"
            " 'copy': os.environ['MEMD_MEMORY_DIR'], 'cwd': os.getcwd(),"
            " 'logs': os.environ['MEMD_LOG_FILES'],"
            " 'entries': [json.loads(l)['text'] for l in sys.stdin]}))"
        )
        setup.log("#a one")

        result, stdout = with_stdout(
            lambda: run_dream(
                str(setup.memory), self._config(setup, script), now=NOW, log=LOG
            )
        )
        seen = json.loads(stdout)

        assert "ok" == result.status
        assert os.path.realpath(setup.memory) == seen["dir"]
        assert seen["copy"] == seen["cwd"] != seen["dir"]  # it works on a copy
        assert seen["copy"].startswith(setup.config.state_dir)
        assert seen["logs"].endswith("logs/2026/11/2026-11-29.md")
        assert ["#a one"] == seen["entries"]

    def test_failure_keeps_watermark(self, setup: Setup) -> None:
        """A non-zero exit fails the dream and the entries stay for the next run."""
        setup.log("#a one")
        config = self._config(setup, "import sys; sys.exit(3)")

        result = run_dream(str(setup.memory), config, now=NOW, log=LOG)
        again = run_dream(str(setup.memory), config, now=NOW, log=LOG)

        assert ("failed", 1, 1) == (result.status, result.entries, again.entries)
        assert "status 3" in result.message

    def test_timeout(self, setup: Setup) -> None:
        """A command past its timeout is killed and the dream fails."""
        setup.log("#a one")
        config = self._config(setup, "import time; time.sleep(30)", timeout=0.5)

        result = run_dream(str(setup.memory), config, now=NOW, log=LOG)

        assert "failed" == result.status
        assert "timed out" in result.message

    def test_timeout_kills_what_the_command_started(self, setup: Setup) -> None:
        """On timeout the whole process group dies, grandchildren included."""
        setup.log("#a one")
        script = (
            "import subprocess, sys, time; "
            "p = subprocess.Popen("
            "[sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(p.pid, flush=True); time.sleep(60)"
        )
        # The timeout must cover two Python start-ups and the pid file: 5x what
        # that takes on this machine right now, measured, and at least 1 s.
        timeout = max(1.0, 5 * _time_to_start_a_child_and_grandchild())
        config = self._config(setup, script, timeout=timeout)

        result, stdout = with_stdout(
            lambda: run_dream(str(setup.memory), config, now=NOW, log=LOG)
        )
        grandchild = int(stdout)

        assert "failed" == result.status
        assert not _alive(grandchild)


def _time_to_start_a_child_and_grandchild() -> float:
    """Seconds for a Python that starts a Python, as the timeout test's command does."""
    import subprocess
    import time

    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])",
        ],
        check=True,
    )
    return time.monotonic() - started


def _alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie counts as dead), after a short wait."""
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split(") ", 1)[1].startswith("Z"):
                    return False
        except FileNotFoundError:
            return False
        time.sleep(0.05)
    return True


class TestUndoStatus:
    def test_the_status_counts_what_the_undone_dream_did(self, setup: Setup) -> None:
        """Issue 42: a 3-entry dream, undone, read "undone, 0 entries"."""
        from memd.kairos.dream import undo_dream

        (setup.memory / "MEMORY.md").write_text("# Index\n")
        for text in ("#deploy blue green", "#deploy on Fridays", "[user] likes tabs"):
            setup.log(text)
        assert 3 == setup.dream().entries

        ok, _ = undo_dream(str(setup.memory), setup.config, now=NOW, log=LOG)
        [record] = dream_status(setup.config.state_dir).values()
        result = record["last_result"]

        assert ok
        assert isinstance(result, dict)
        assert ("undone", 3) == (result["status"], result["entries"])
        assert "its 3 entries wait for the next dream" in str(result["message"])
        assert result["files"] == 3  # two topic files and the index

    def test_a_quiet_night_after_it_does_not_hide_the_count(self, setup: Setup) -> None:
        """A dream of 2 entries, a night with nothing to do, then undo: 2 entries."""
        from memd.kairos.dream import undo_dream

        (setup.memory / "MEMORY.md").write_text("# Index\n")
        setup.log("#deploy blue green")
        setup.log("#deploy on Fridays")
        assert 2 == setup.dream().entries
        assert "nothing" == setup.dream().status

        ok, _ = undo_dream(str(setup.memory), setup.config, now=NOW, log=LOG)
        [record] = dream_status(setup.config.state_dir).values()
        result = record["last_result"]

        assert ok
        assert isinstance(result, dict)
        assert ("undone", 2) == (result["status"], result["entries"])
