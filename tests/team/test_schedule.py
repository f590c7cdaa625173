"""The daemon's side of team sync: due rules, the dream lock, the scheduler jobs."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from typing import TYPE_CHECKING

import pytest
from structlog.testing import capture_logs

from memd.config import load_config
from memd.gitsync.backoff import backoff_seconds, should_sync
from memd.kairos.scheduler import DreamScheduler
from memd.logconfig import get_logger
from memd.team.schedule import is_team_change, sync_teams, team_dirs

if TYPE_CHECKING:
    from pathlib import Path

    from tests.team.conftest import Team


class TestDue:
    def test_interval_waits_for_the_next_attempt(self) -> None:
        """After a good sync the interval decides; a settled change does not wait."""
        record: dict[str, object] = {"next_attempt": 1000.0, "failures": 0}

        assert (False, True, True) == (
            should_sync(record, 999.0, "interval"),
            should_sync(record, 1000.0, "interval"),
            should_sync(record, 999.0, "settled"),
        )

    def test_a_settled_change_does_not_cut_a_backoff_short(self) -> None:
        """While the remote is unreachable, only the backoff's end makes it due."""
        record: dict[str, object] = {"next_attempt": 1000.0, "failures": 2}

        assert not should_sync(record, 999.0, "settled")

    def test_backoff_doubles_up_to_an_hour(self) -> None:
        """30 s, 60 s, 120 s ... then an hour at most (or the interval if longer)."""
        assert [30.0, 60.0, 120.0, 3600.0, 7200.0] == [
            backoff_seconds(1, 300),
            backoff_seconds(2, 300),
            backoff_seconds(3, 300),
            backoff_seconds(20, 300),
            backoff_seconds(20, 7200),
        ]


class TestTeamChange:
    def test_only_files_under_team_count(self) -> None:
        """team/x.md counts; git's own files, hidden files and private files do not."""
        assert [True, True, False, False, False, False] == [
            is_team_change(path)
            for path in (
                "team/x.md",
                "team/sub/y.md",
                "team/.git/index",
                "team/.memd-tmp-1-x.md",
                "MEMORY.md",
                "team",
            )
        ]


class TestSyncTeams:
    def test_a_live_dream_lock_makes_the_sync_step_aside(self, team: Team) -> None:
        """A `.consolidate-lock` held by a live process: skipped, nothing pushed."""
        ana = team.members[0]
        ana.write(
            "a.md", "---\nname: A\ndescription: a thing we know\ntype: user\n---\nx\n"
        )
        holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            (ana.memory_dir / ".consolidate-lock").write_text(f"{holder.pid}\n")
            config = load_config(ana.env())
            results = sync_teams(
                [str(ana.memory_dir)], config, log=get_logger(), reason="settled"
            )
        finally:
            holder.kill()
            holder.wait()

        assert [("skipped", "a dream is running")] == [
            (r.state, r.error) for r in results
        ]
        assert {} == team.remote_files()

    def test_only_initialised_team_dirs_are_synced(self, tmp_path: Path) -> None:
        """A memory dir whose team/ is not a memd repository is left alone."""
        (tmp_path / "m" / "team").mkdir(parents=True)

        assert () == team_dirs([str(tmp_path / "m")])


def _scheduler(sync: object, interval: float, settle: float = 10.0) -> DreamScheduler:
    """A real DreamScheduler with no memory dirs and `sync` as its team job."""
    return DreamScheduler(
        load_config(),
        memory_dirs=lambda: (),
        log=get_logger(),
        team_sync=sync,  # type: ignore[arg-type]
        team_interval_seconds=interval,
        team_settle_seconds=settle,
    )


class TestSchedulerJobs:
    def test_interval_and_settled_triggers_call_the_sync(self, tmp_path: Path) -> None:
        """Real APScheduler: the interval job fires, and a settled change fires once."""
        calls: list[str] = []
        fired = threading.Event()

        def sync(reason: str) -> None:
            calls.append(reason)
            if "settled" in calls:
                fired.set()

        scheduler = _scheduler(sync, 0.2, 0.3)
        scheduler.start()
        try:
            for _ in range(5):  # a burst of changes: one settled sync
                scheduler.team_dir_settled()
                time.sleep(0.02)
            assert fired.wait(10)
            time.sleep(0.5)
        finally:
            scheduler.shutdown()

        assert 1 == calls.count("settled")
        assert calls.count("interval") >= 2

    def test_a_settled_change_reaches_the_remote_through_the_scheduler(
        self, team: Team, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The wiring the daemon uses: scheduler + sync_teams push a saved file."""
        ana = team.members[0]
        for name, value in ana.env().items():
            monkeypatch.setenv(name, value)
        config = load_config()
        ana.write(
            "fresh.md", "---\nname: F\ndescription: a new thing\ntype: user\n---\nx\n"
        )
        done = threading.Event()

        def sync(reason: str) -> None:
            sync_teams([str(ana.memory_dir)], config, log=get_logger(), reason=reason)
            done.set()

        scheduler = _scheduler(sync, 3600.0, 0.1)
        scheduler.start()
        try:
            scheduler.team_dir_settled()
            assert done.wait(60)
        finally:
            scheduler.shutdown()

        assert {"fresh.md"} == set(team.remote_files())

    def test_a_crashing_sync_is_logged_and_the_scheduler_goes_on(self) -> None:
        """One guard per pass: an exception is logged, the next pass still runs."""
        calls: list[str] = []

        def sync(reason: str) -> None:
            calls.append(reason)
            raise RuntimeError("boom")

        scheduler = _scheduler(sync, 0.1)
        with capture_logs() as logs:
            scheduler.start()
            try:
                deadline = time.monotonic() + 10
                while len(calls) < 2 and time.monotonic() < deadline:
                    time.sleep(0.05)
            finally:
                scheduler.shutdown()

        assert len(calls) >= 2
        assert "team_sync_crashed" in {entry["event"] for entry in logs}
