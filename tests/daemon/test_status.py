"""memd.daemon.status: daemon.json's document and systemd's status line."""

from __future__ import annotations

from memd.daemon.status import daemon_status, status_line
from memd.daemon.watched import DirStatus

# The keys `memd status` and the daemon tests read (memd/cli/commands/status.py).
TOP_KEYS = {
    "pid",
    "running",
    "ready",
    "started",
    "config_file",
    "dirs",
    "disabled",
    "rescans",
    "queue_overflows",
    "fallbacks",
    "watch",
    "sweep_catches",
    "hook_lint",
    "telemetry_dropped",
    "watched_roots",
    "agent_profile",
    "next_dream",
    "scheduler",
}


def _status(**overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "pid": 7,
        "running": True,
        "ready": True,
        "started": 1.5,
        "config_file": "/c/config.toml",
        "dirs": {"/m/-b/memory": {"source": "default"}, "/m/-a/memory": {}},
        "disabled": [("/p", "settings:autoMemoryEnabled")],
        "rescans": 2,
        "queue_overflows": 1,
        "fallbacks": 0,
        "deaf": (),
        "sweep_catches": 3,
        "hook_lint": {"socket": "/r/hooks.sock", "listening": True, "crashes": 0},
        "telemetry_dropped": 0,
        "watched_roots": [],
        "agent_profile": ("2.1.332", "default"),
        "scheduler": {"next_dream": "2026-12-02T03:30:00"},
    }
    values.update(overrides)
    return daemon_status(**values)  # type: ignore[arg-type]


class TestDaemonStatus:
    def test_the_document_keeps_the_keys_memd_status_reads(self) -> None:
        """Every key, sorted dirs, lists for tuples, the next dream lifted out."""
        status = _status()

        assert TOP_KEYS == set(status)
        assert ["/m/-a/memory", "/m/-b/memory"] == list(status["dirs"])  # type: ignore[call-overload]
        assert [["/p", "settings:autoMemoryEnabled"]] == status["disabled"]
        assert {"version": "2.1.332", "reason": "default"} == status["agent_profile"]
        assert "2026-12-02T03:30:00" == status["next_dream"]
        assert {"state": "ok", "deaf": []} == status["watch"]

    def test_a_deaf_watch_degrades_the_watch_state(self) -> None:
        """Any deaf watch: degraded, and each listed."""
        deaf = ({"root": "/m/-a", "reason": "inotify thread stopped"},)

        status = _status(deaf=deaf)

        assert {"state": "degraded", "deaf": [dict(deaf[0])]} == status["watch"]


class TestStatusLine:
    def test_slow_rebuilds_win_over_lint_errors(self) -> None:
        """A slow rebuild is the news; otherwise the lint errors."""
        assert "watching 3 memory dirs, 1 slow" == status_line(
            dirs=3, slow=1, lint_errors=4
        )
        assert "watching 3 memory dirs, 4 lint errors" == status_line(
            dirs=3, slow=0, lint_errors=4
        )


class TestDirStatus:
    def test_before_a_rebuild_the_entry_is_empty(self) -> None:
        """A directory not yet rebuilt shows nothing but what is known."""
        assert {} == DirStatus().to_dict()
        assert {"slow": True} == DirStatus().to_dict(is_slow=True)

    def test_a_built_directory_shows_its_counts_and_snapshots(self) -> None:
        """The keys `memd status` prints, with lists and dicts as JSON wants."""
        status = DirStatus(
            source="default",
            lint_errors=1,
            lint_warnings=2,
            snapshots=(("standard", 3.5),),
            modes=("standard",),
            files=4,
            slow_seconds=1.25,
        )

        assert {
            "source": "default",
            "lint_errors": 1,
            "lint_warnings": 2,
            "snapshots": {"standard": 3.5},
            "modes": ["standard"],
            "files": 4,
            "slow_seconds": 1.25,
        } == status.to_dict()

    def test_a_missing_or_failed_directory_says_so(self) -> None:
        """Missing: the flag alone; a rebuild that raised: its error."""
        assert {"source": "s", "missing": True} == DirStatus(
            source="s", is_missing=True
        ).to_dict()
        assert {"source": "s", "error": "OSError: full"} == DirStatus(
            source="s", error="OSError: full"
        ).to_dict()
