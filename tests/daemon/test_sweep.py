"""What events miss, the daemon still sees: the stat sweep, deaf watches, quiet idling.

Each test runs a real `memd run` and checks an outcome a user would: the
snapshot catches up, the daemon keeps serving every other project, and it
neither spins nor writes when nothing happens.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.daemon.conftest import (
    Daemon,
    Starter,
    backdate,
    chain,
    overflow_queue,
    rename_storm,
    topic,
    unchain,
    wait_for,
)

pytestmark = [pytest.mark.daemon, pytest.mark.slow]


def _make_project(claude: Path, name: str) -> Path:
    memory = claude / "projects" / name / "memory"
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text(topic("user_role"))
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    backdate(memory)
    return memory


def _status(daemon: Daemon) -> dict[str, object]:
    path = daemon.home.state / "memd" / "daemon.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class TestSweep:
    def test_touch_alone_reaches_the_snapshot(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """A touch no watch hears reaches the snapshot by the sweep.

        A touch in the memory dir is an event (IN_ATTRIB, issue 22); one
        through a hard link in an unwatched directory reaches the same file
        and no watch. The recall manifest shows mtimes.
        """
        elsewhere = isolated_home.root / "elsewhere"
        elsewhere.mkdir()
        alias = elsewhere / "alias.md"
        os.link(project / "user_role.md", alias)
        daemon = start_daemon(MEMD_SWEEP_SECONDS="1")
        daemon.wait_fresh(project)
        then = time.time() - 3600
        os.utime(alias, (then, then))

        daemon.wait_fresh(project)
        assert daemon.events("sweep_found_stale")

    def test_files_dated_in_the_future_are_served_and_left_alone(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A clock stepped back (or `touch -d`) must not make a snapshot stale forever.

        Counted racy until the clock caught up, such a file had every sweep
        find its directory stale and rebuild it, and the prompt never warm.
        """
        ahead = time.time() + 86_400
        for path in (project, *project.iterdir()):
            os.utime(path, (ahead, ahead))
        daemon = start_daemon(MEMD_SWEEP_SECONDS="1")
        daemon.wait_fresh(project)
        found = daemon.store.read(str(project), "standard")
        assert found is not None
        version = found[0]["version_dir"]

        time.sleep(3.5)  # three full sweeps
        assert [] == daemon.events("sweep_found_stale")
        again = daemon.store.read(str(project), "standard")
        assert again is not None
        assert version == again[0]["version_dir"], "rebuilt with nothing changed"

        (project / "user_role.md").write_text(topic("user_role", body="Now.\n"))
        daemon.wait_fresh(project)

    def test_a_wiped_cache_is_rebuilt(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """Deleting the snapshot cache under a running daemon heals without a save."""
        daemon = start_daemon(MEMD_SWEEP_SECONDS="1")
        daemon.wait_fresh(project)
        shutil.rmtree(daemon.home.cache / "memd" / "snapshots")

        daemon.wait_fresh(project)


class TestDeafWatches:
    def test_a_chain_too_deep_to_watch_leaves_the_daemon_serving(
        self,
        start_daemon: Starter,
        isolated_home: Home,
        project: Path,
        request: pytest.FixtureRequest,
    ) -> None:
        """1,100 nested directories kill watchdog's recursive walk; memd still works.

        Only the deep project is left to the stat sweep: the watch of
        `projects/` is split, so the others keep their native watches. The
        full sweep is 10 minutes away, so a save elsewhere can only arrive
        by an event.
        """
        deep = _make_project(isolated_home.claude, "-deep")
        chain(deep, 1100)
        request.addfinalizer(lambda: unchain(deep))  # rmtree recurses: too deep
        daemon = start_daemon(MEMD_SWEEP_SECONDS="600")
        daemon.wait_fresh(project)

        (project / "user_role.md").write_text(topic("user_role", body="Changed.\n"))
        daemon.wait_fresh(project)
        (deep / "user_role.md").write_text(topic("user_role", body="Deep too.\n"))
        daemon.wait_fresh(deep)
        watch = _status(daemon).get("watch") or {}
        assert isinstance(watch, dict)
        assert [str(deep)] == [problem["root"] for problem in watch["deaf"]]
        assert daemon.events("watch_split")
        assert daemon.events("watch_deaf")

        # Each rediscovery used to hand the chain to watchdog again, leaking
        # the ~1,000 watches its failed walk had added: 583 MiB in 10 minutes.
        for _ in range(10):
            daemon.proc.send_signal(signal.SIGHUP)
            time.sleep(0.1)
        (project / "user_role.md").write_text(topic("user_role", body="Again.\n"))
        daemon.wait_fresh(project)
        assert [] == daemon.events("watch_failed")

    def test_one_overflow_among_many_split_watches_is_one_overflow(
        self,
        start_daemon: Starter,
        isolated_home: Home,
        project: Path,
        request: pytest.FixtureRequest,
    ) -> None:
        """A kernel overflow reaches the many emitters a split makes: one overflow.

        Several emitters log the same overflow; each used to count (and
        rescan) once more, and to count towards the runaway-warning guard.
        The queue is filled from another project's folder: its events name
        no memory dir and no watch of this project, so only the re-check
        after the overflow can find the lost save. Filled from this memory
        dir, the queue's own events re-read it first whenever the reader
        took longer than a settle to reach the overflow, and their burst (a
        flood to the meter) split this project's watch, whose new parts were
        rescanned: either way the re-check found nothing stale.
        """
        for i in range(220):
            _make_project(isolated_home.claude, f"-many-{i:03}")
        deep = _make_project(isolated_home.claude, "-deep")
        chain(deep, 40)
        backdate(deep)  # not racy when first built
        daemon = start_daemon(MEMD_SWEEP_SECONDS="600")
        daemon.wait_fresh(project)
        overflow_queue(
            daemon,
            isolated_home.claude / "projects" / "-many-000",
            then=lambda: (project / "user_role.md").write_text(
                topic("user_role", body="Lost.\n")
            ),
        )

        daemon.wait_fresh(project)
        status = wait_for(
            lambda: (s := _status(daemon))["queue_overflows"] and s, what="overflow"
        )
        assert 1 == status["queue_overflows"]
        # What the lost events changed is read again (and at most a racy
        # neighbour), not all 222.
        lost = [
            e for e in daemon.events("rescan_started") if e["reason"] == "events_lost"
        ]
        counts = [int(str(e["dirs"])) for e in lost]
        assert counts
        assert 1 <= max(counts) <= 3, counts
        # watchdog re-adds its watches after an overflow; once it has, only
        # the deep one is deaf.
        wait_for(
            lambda: (
                [str(deep)]
                == [p["root"] for p in (_status(daemon).get("watch") or {})["deaf"]]
            ),
            what="only the deep memory dir deaf",
        )
        assert all("runaway" not in str(e) for e in daemon.events("watch_deaf"))

    def test_inotify_watches_running_out_are_seen_and_swept(
        self, start_daemon: Starter, isolated_home: Home
    ) -> None:
        """A real ENOSPC: the watch limit of a user namespace of its own, set to 40.

        watchdog swallows a subdirectory watch it cannot add, so only the
        coverage check can see the gap. Every project gets a save in its
        last subdirectory, at start and in a project made later, with the
        full sweep 10 minutes away: each must still reach its snapshot, and
        the deaf ones are named by memory dir, never the whole tree. (A gap
        that opens later in a known directory waits for the full sweep.)
        """
        memories = [_make_project(isolated_home.claude, f"-p{i}") for i in range(3)]
        for memory in memories:
            for j in range(20):
                (memory / f"n{j:02}").mkdir()
            backdate(memory)
        limit = 'echo 40 > /proc/sys/user/max_inotify_watches && exec "$@"'
        wrapper = ("unshare", "--user", "--map-root-user", "sh", "-c", limit, "sh")
        daemon = start_daemon(wrapper=wrapper, MEMD_SWEEP_SECONDS="600")
        # Made whole and moved in, as a restore or a sync would: no race with
        # the rediscovery its arrival causes.
        made = _make_project(isolated_home.root / "elsewhere", "-later")
        (made / "n00").mkdir()
        os.rename(made.parent, isolated_home.claude / "projects" / "-later")
        later = isolated_home.claude / "projects" / "-later" / "memory"
        for memory in [*memories, later]:
            (memory / "n19" if memory != later else memory / "n00").joinpath(
                "deep_note.md"
            ).write_text(topic("deep_note", body="Saved where no watch is.\n"))

        for memory in [*memories, later]:
            daemon.wait_fresh(memory)
        status = _status(daemon)
        watch = status.get("watch") or {}
        assert isinstance(watch, dict)
        deaf = {str(problem["root"]) for problem in watch["deaf"]}
        assert deaf, "the watches that ran out are reported"
        # A memory dir, or a project dir that holds one, never the whole tree.
        narrow = {str(p) for m in [*memories, later] for p in (m, m.parent)}
        assert deaf <= narrow, deaf
        assert daemon.events("watch_deaf")
        assert int(str(status["fallbacks"])) >= len(deaf)

    def test_a_rename_storm_never_leaves_a_project_stale(
        self, start_daemon: Starter, isolated_home: Home, project: Path
    ) -> None:
        """Renaming projects onto just-deleted ones, in a loop; saves still arrive."""
        daemon = start_daemon(MEMD_SWEEP_SECONDS="2")
        daemon.wait_fresh(project)
        projects = isolated_home.claude / "projects"
        storm = [_make_project(isolated_home.claude, f"-storm-{i}") for i in range(4)]
        deadline = time.monotonic() + 5
        round_ = 0
        while time.monotonic() < deadline:
            round_ += 1
            for i, memory in enumerate(storm):
                source, target = memory.parent, projects / f"-storm-{(i + 1) % 4}"
                moved = projects / f"-moving-{i}"
                os.rename(source, moved)
                shutil.rmtree(target, ignore_errors=True)
                os.rename(moved, target)
                (target / "memory" / "user_role.md").write_text(
                    topic("user_role", body=f"Round {round_}.\n")
                )
        (project / "user_role.md").write_text(topic("user_role", body="After.\n"))

        daemon.wait_fresh(project)
        daemon.assert_alive()

    def test_a_rename_storm_is_shed_and_every_other_save_arrives(
        self, start_daemon: Starter, isolated_home: Home, project: Path
    ) -> None:
        """An unthrottled rename storm in another process, while four projects save.

        The storm's watch is shed and reported (`watch.deaf`, "event flood"),
        the calm projects keep their native watches, and every save reaches
        its snapshot. Once the storm stops, the shed watch comes back. The
        full sweep is 10 minutes away.
        """
        calm = [
            project,
            *(_make_project(isolated_home.claude, f"-c{i}") for i in range(3)),
        ]
        storm = [_make_project(isolated_home.claude, f"-s{i}").parent for i in range(4)]
        projects = str(isolated_home.claude / "projects")
        flat = {"path": projects, "recursive": False, "observer": "native"}
        daemon = start_daemon(MEMD_SWEEP_SECONDS="600")
        for memory in calm:
            daemon.wait_fresh(memory)

        def floods() -> list[dict[str, object]]:
            watch = _status(daemon).get("watch") or {}
            deaf = watch.get("deaf", []) if isinstance(watch, dict) else []
            return [p for p in deaf if str(p["reason"]).startswith("event flood: ")]

        with rename_storm(storm):
            flooded = wait_for(floods, timeout=60, what="the storm's watch shed")
            for round_ in range(3):
                for memory in calm:
                    (memory / "user_role.md").write_text(
                        topic("user_role", body=f"Saved in storm round {round_}.\n")
                    )
                for memory in calm:
                    daemon.wait_fresh(memory)
            status = _status(daemon)
            roots = status["watched_roots"]
            assert isinstance(roots, list)
            assert flat not in roots
            for memory in calm:
                native = {"path": str(memory.parent), "recursive": True}
                assert {**native, "observer": "native"} in roots
            assert isinstance(flooded, list)
            stormed = {str(d) for d in storm} | {f"{d}.moving" for d in storm}
            assert {str(p["root"]) for p in flooded} <= stormed
            assert int(str(status["fallbacks"])) >= 1

        def native_again() -> bool:
            status = _status(daemon)
            roots = status.get("watched_roots") or []
            return not floods() and flat in roots  # type: ignore[operator]

        wait_for(native_again, timeout=90, what="the shed watch back")
        (project / "user_role.md").write_text(topic("user_role", body="After.\n"))
        daemon.wait_fresh(project)
        assert daemon.events("watch_shed")
        assert daemon.events("watch_flood_calm")


class TestQuiet:
    def test_idle_with_its_own_files_in_a_watched_tree(
        self, start_daemon: Starter, isolated_home: Home, project: Path
    ) -> None:
        """State and cache inside a watched dir: idle means no CPU and no writes."""
        state = isolated_home.home / "notes" / ".state"
        cache = isolated_home.home / "notes" / ".cache"
        notes = isolated_home.home / "notes"
        notes.mkdir()
        (notes / "MEMORY.md").write_text("- [Role](user_role.md) — who\n")
        (notes / "user_role.md").write_text(topic("user_role"))
        backdate(notes)
        daemon = start_daemon(
            MEMD_WATCH_DIRS=str(notes),
            XDG_STATE_HOME=str(state),
            XDG_CACHE_HOME=str(cache),
        )
        status = state / "memd" / "daemon.json"
        wait_for(status.exists, what="daemon.json")
        time.sleep(2)  # let start-up's own writes settle
        before_cpu = _cpu_seconds(daemon.proc.pid)
        writes, last = 0, _stamp(status)
        stop = time.monotonic() + 10
        while time.monotonic() < stop:
            time.sleep(0.05)
            stamp = _stamp(status)
            if stamp != last:
                writes, last = writes + 1, stamp
        cpu = _cpu_seconds(daemon.proc.pid) - before_cpu

        assert cpu < 0.1, f"{cpu:.3f} CPU-s idle"
        assert writes <= 2


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0)
    return (st.st_ino, st.st_mtime_ns)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of `pid` and its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")
