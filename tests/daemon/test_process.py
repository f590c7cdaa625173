"""The daemon as a process: readiness, one instance, signals, config reload, status."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from memd.state import remember_project
from tests.daemon.conftest import (
    MEMD,
    Daemon,
    Starter,
    overflow_queue,
    topic,
    wait_for,
)

pytestmark = pytest.mark.daemon

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conftest import Home


def _config(home: Home, text: str) -> Path:
    path = home.config / "memd" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TestLifecycle:
    def test_ready_with_status(self, start_daemon: Starter, project: Path) -> None:
        """READY=1 arrives with a STATUS= line once the first scan is done."""
        daemon = start_daemon()
        message = daemon.wait_notify("READY=1")

        assert "STATUS=watching 1 memory dirs" in message
        assert daemon.is_fresh(project)

    def test_second_instance_refused(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A second `memd run` exits 1 with one line naming the running pid."""
        daemon = start_daemon()
        second = daemon.memd("run")

        assert 1 == second.returncode
        assert (
            f"memd: memd is already running (pid {daemon.proc.pid})\n" == second.stderr
        )

    def test_second_instance_refused_with_another_runtime_dir(
        self, start_daemon: Starter, project: Path, tmp_path: Path
    ) -> None:
        """Another XDG_RUNTIME_DIR would hold another lock file; same cache: refused."""
        daemon = start_daemon()
        other = tmp_path / "other-runtime"
        other.mkdir(mode=0o700)
        env = {**daemon.env, "XDG_RUNTIME_DIR": str(other)}
        second = subprocess.run(
            [*MEMD, "run"], env=env, capture_output=True, text=True, timeout=30
        )

        assert 1 == second.returncode
        assert f"(pid {daemon.proc.pid})" in second.stderr

    def test_second_instance_refused_after_the_state_dir_is_deleted(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """Deleting the state dir (and the lock file with it) frees nothing."""
        env = {"XDG_RUNTIME_DIR": ""}  # the lock file then lives in the state dir
        daemon = start_daemon(**env)
        shutil.rmtree(daemon.home.state / "memd")
        second = daemon.memd("run")

        assert 1 == second.returncode
        assert "already running" in second.stderr
        daemon.assert_alive()

    @pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
    def test_stop_signals_exit_zero(
        self, start_daemon: Starter, project: Path, signum: int
    ) -> None:
        """SIGTERM and SIGINT stop the daemon cleanly with exit 0 and STOPPING=1."""
        daemon = start_daemon()
        code = daemon.stop(signum)
        stopping = daemon.wait_notify("STOPPING=1")

        assert 0 == code
        assert "STOPPING=1" == stopping
        assert [] == daemon.events("batch_failed")

    def test_only_the_main_thread_takes_stop_signals(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A SIGTERM the kernel hands to a worker thread would never wake the waiter.

        Linux delivers a process-directed signal to any thread not blocking
        it; Python runs the handler only once the main thread wakes. So every
        other thread (watchdog's, APScheduler's, the settle and flush
        threads) must block the signals memd handles, and the main must not.
        """
        daemon = start_daemon()
        handled = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}

        def blocked_by_thread() -> dict[int, set[int]]:
            found: dict[int, set[int]] = {}
            for task in Path(f"/proc/{daemon.proc.pid}/task").iterdir():
                with contextlib.suppress(FileNotFoundError):  # a pool thread ended
                    status = (task / "status").read_text()
                    mask = int(status.split("SigBlk:")[1].split()[0], 16)
                    found[int(task.name)] = {s for s in handled if mask >> s - 1 & 1}
            return found

        # READY comes from the settle thread; the main thread unblocks just after.
        blocked = wait_for(
            lambda: (found := blocked_by_thread())[daemon.proc.pid] == set() and found,
            what="the main thread waiting for signals",
        )
        assert isinstance(blocked, dict)
        blocked.pop(daemon.proc.pid)
        assert len(blocked) > 3, "watchdog, settle and scheduler threads run"
        assert all(handled == found for found in blocked.values()), blocked
        assert 0 == daemon.stop()

    def test_watchdog_pings_when_systemd_asks(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """With WATCHDOG_USEC set (systemd's WatchdogSec), WATCHDOG=1 keeps arriving."""
        daemon = start_daemon(WATCHDOG_USEC="200000")
        first = daemon.wait_notify("WATCHDOG=1")
        daemon.messages.clear()
        second = daemon.wait_notify("WATCHDOG=1")

        assert "WATCHDOG=1" == first
        assert "WATCHDOG=1" == second

    def test_disabled_project_emits_memdir_disabled_once(
        self, start_daemon: Starter, isolated_home: Home, project: Path, tmp_path: Path
    ) -> None:
        """A watched project with memory switched off: one memdir_disabled event."""
        root = tmp_path / "off"
        (root / ".claude").mkdir(parents=True)
        (root / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
        telemetry = isolated_home.state / "memd" / "telemetry.jsonl"

        def disabled_events() -> list[dict[str, object]]:
            if not telemetry.exists():
                return []
            lines = telemetry.read_text().splitlines()
            records = [json.loads(line) for line in lines]
            return [r for r in records if r.get("event") == "memdir_disabled"]

        daemon = start_daemon(MEMD_WATCH_PROJECTS=str(root))
        wait_for(disabled_events, what="a memdir_disabled event")
        daemon.proc.send_signal(signal.SIGHUP)  # rediscovery must not repeat it
        (project / "user_role.md").write_text(topic("user_role", body="Later.\n"))
        daemon.wait_fresh(project)
        daemon.stop()
        events = disabled_events()

        assert 1 == len(events)
        assert str(root) == events[0]["project_root"]
        assert "settings:autoMemoryEnabled" == events[0]["rule"]

    def test_base_dir_appears_after_start(
        self, start_daemon: Starter, isolated_home: Home
    ) -> None:
        """With no ~/.claude at start, a project created later is still found."""
        daemon = start_daemon()
        memory = isolated_home.claude / "projects" / "-late" / "memory"
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Late](late.md) — arrived after start\n")
        (memory / "late.md").write_text(topic("late"))

        daemon.wait_fresh(memory)

    def test_telemetry_written(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """Each render emits a memdir_loaded event to the JSON-lines sink."""
        daemon = start_daemon()
        daemon.stop()
        lines = (
            (isolated_home.state / "memd" / "telemetry.jsonl").read_text().splitlines()
        )
        events = [json.loads(line) for line in lines]

        assert ["memdir_loaded"] == sorted({str(e.get("event")) for e in events})


class TestReload:
    def test_sighup_applies_good_config(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """After SIGHUP, a newly configured mode is rendered."""
        _config(isolated_home, "")
        daemon = start_daemon()
        _config(isolated_home, '[prompt]\nmodes = ["standard", "kairos"]\n')
        daemon.proc.send_signal(signal.SIGHUP)

        daemon.wait_fresh(project, "kairos")

    def test_sighup_keeps_old_config_when_bad(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """A bad config on SIGHUP is logged with why; the old one stays in force."""
        _config(isolated_home, "")
        daemon = start_daemon()
        _config(isolated_home, "[prompt]\nmodes = 3\n")
        daemon.proc.send_signal(signal.SIGHUP)
        failures = wait_for(
            lambda: daemon.events("config_reload_failed"), what="config_reload_failed"
        )
        (project / "MEMORY.md").write_text("- [Role](user_role.md) — still served\n")

        daemon.wait_fresh(project, config_text="")  # the config still in force
        assert "prompt.modes" in str(failures[0]["error"])  # type: ignore[index]

    def test_config_saved_without_signal(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """Saving config.toml is enough: the daemon watches its own config."""
        daemon = start_daemon()
        _config(isolated_home, '[prompt]\nmodes = ["standard", "team"]\n')

        daemon.wait_fresh(project, "team")


class TestLintOnSave:
    def test_broken_logged_once_then_fixed(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A file that becomes invalid is logged once as broken, then as fixed."""
        daemon = start_daemon()
        (project / "user_role.md").write_text("no frontmatter at all\n")
        daemon.wait_fresh(project)
        (project / "MEMORY.md").write_text("- [Role](user_role.md) — another save\n")
        daemon.wait_fresh(project)
        (project / "user_role.md").write_text(topic("user_role"))
        wait_for(lambda: daemon.events("memory_file_fixed"), what="memory_file_fixed")

        broken = daemon.events("memory_file_broken")
        assert ["user_role.md"] == [event["file"] for event in broken]
        assert broken[0]["diagnostics"]
        assert ["user_role.md"] == [
            e["file"] for e in daemon.events("memory_file_fixed")
        ]

    def test_racy_snapshot_restamped(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A snapshot built right after a save is re-stamped; read_fresh serves it."""
        daemon = start_daemon()
        (project / "MEMORY.md").write_text("- [Role](user_role.md) — racy\n")
        daemon.wait_fresh(project)

        wait_for(
            lambda: daemon.store.read_fresh(str(project), "standard"), what="re-stamp"
        )


class TestHostileFiles:
    def test_daemon_survives(
        self, start_daemon: Starter, project: Path, tmp_path: Path
    ) -> None:
        """Binary, bad UTF-8, alias bombs, huge files, bad symlinks: it lives."""
        daemon = start_daemon()
        bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{b}: &{b} [*{a},*{a},*{a}]\n"
            for a, b in zip("abcdefghi", "bcdefghij", strict=True)
        )
        (project / "bomb.md").write_text(f"---\n{bomb}---\nbody\n")
        (project / "binary.md").write_bytes(b"\x00\x01\x02\xff" * 100)
        (project / "latin1.md").write_bytes(
            "---\nname: caf\xe9\n---\n".encode("latin-1")
        )
        (project / "huge.md").write_text(topic("huge", body="x" * 400_000))
        (project / "empty.md").write_bytes(b"")
        (project / "crlf.md").write_bytes(topic("crlf").replace("\n", "\r\n").encode())
        (project / "loop.md").symlink_to(project / "loop.md")
        (project / "passwd.md").symlink_to("/etc/passwd")
        (project / "team").mkdir()
        (project / "team" / "up.md").symlink_to(tmp_path)
        (project / "MEMORY.md").write_text(
            "- [x](../../etc/passwd) — escape\n- [y](https://e.invalid/x.md) — url\n"
        )
        daemon.wait_fresh(project)
        (project / "user_role.md").write_text(topic("user_role", body="Still alive.\n"))

        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")


class TestStatusCommand:
    def test_running_then_stopped(self, start_daemon: Starter, project: Path) -> None:
        """`memd status` reports the running daemon, then that it is not running."""
        daemon = start_daemon()
        (project / "bad.md").write_text("no frontmatter\n")
        wait_for(lambda: daemon.events("memory_file_broken"), what="memory_file_broken")
        wait_for(
            lambda: _status(daemon)["dirs"].get(str(project), {}).get("lint_errors"),
            what="status with lint errors",
        )
        running = _status(daemon)
        text = daemon.memd("status").stdout
        daemon.stop()
        stopped = _status(daemon)

        assert (True, daemon.proc.pid) == (running["running"], running["pid"])
        assert running["uptime_seconds"] is not None
        entry = running["dirs"][str(project)]
        assert entry["lint_errors"] >= 1
        assert ["standard"] == entry["modes"]
        assert entry["snapshot_age_seconds"] >= 0
        assert (0, 0) == (running["fallbacks"], running["telemetry_dropped"])
        assert running["next_dream"]
        assert f"memd is running (pid {daemon.proc.pid}" in text
        # no folder is known for it: named by its path, ~ for home (#42)
        assert f"  ~/{project.relative_to(Path.home())}  errors " in text
        assert (False, None) == (stopped["running"], stopped["uptime_seconds"])
        assert str(project) in stopped["dirs"]

    def test_a_new_agent_profile_rerenders_every_snapshot(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """Pinning another Claude Code release (or upgrading) re-renders under it."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[agent]\nversion = "2.1.112"\n')
        daemon.proc.send_signal(signal.SIGHUP)

        def profile() -> object:
            found = daemon.store.read(str(project), "standard")
            return found is not None and found[0].get("profile")

        wait_for(lambda: profile() == "2.1.112", what="a 2.1.112 snapshot")

    def test_next_dream_shown_right_after_start(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """No save needed: `next dream` is known well before the 60 s heartbeat."""
        daemon = start_daemon()

        wait_for(lambda: _status(daemon)["next_dream"], timeout=10, what="a next dream")

    def test_never_started(self) -> None:
        """With no daemon ever run, status says so, names the start, and exits 3."""
        done = subprocess.run(
            [*MEMD, "status"], capture_output=True, text=True, check=False
        )

        assert 3 == done.returncode
        assert "memd is not running" in done.stdout
        assert "start it with `memd service install`" in done.stdout


def _status(daemon: Daemon) -> dict:  # type: ignore[type-arg]
    result = daemon.memd("status", "--format", "json")
    status = json.loads(result.stdout)
    # 0 while it runs and answers, 3 once it does not (README, exit status)
    assert (0 if status["responding"] else 3) == result.returncode, result.stderr
    return status  # type: ignore[no-any-return]


class TestRecovery:
    def test_queue_overflow_rescans(self, start_daemon: Starter, project: Path) -> None:
        """Events lost to an inotify queue overflow end in a counted rescan."""
        daemon = start_daemon()
        overflow_queue(
            daemon,
            project,
            then=lambda: (project / "MEMORY.md").write_text(
                "- [Role](user_role.md) — after overflow\n"
            ),
        )

        daemon.wait_fresh(project)
        status = wait_for(
            lambda: (s := _status(daemon))["rescans"] and s, what="a counted rescan"
        )
        assert status["queue_overflows"] >= 1  # type: ignore[index]


class TestKnownProjects:
    def test_remembered_project_with_own_directory(
        self, start_daemon: Starter, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        """A project `memd prompt --project` remembers, whose settings pick the dir."""
        custom = tmp_path / "custom-memory"
        custom.mkdir()
        (custom / "MEMORY.md").write_text("- [C](c.md) — chosen by local settings\n")
        (custom / "c.md").write_text(topic("c"))
        (git_repo / ".claude").mkdir()
        settings = {"autoMemoryDirectory": str(custom)}
        (git_repo / ".claude" / "settings.local.json").write_text(json.dumps(settings))
        # Under 2.1.332 local settings count only for a trusted workspace.
        trusted = {str(git_repo.resolve()): {"hasTrustDialogAccepted": True}}
        (isolated_home.home / ".claude.json").write_text(
            json.dumps({"projects": trusted})
        )
        daemon = start_daemon()
        remember_project(str(isolated_home.state / "memd"), str(git_repo))

        daemon.wait_fresh(custom)
