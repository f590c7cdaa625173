"""The watcher: real inotify (or polling) events in, settled `Change` batches out."""

from __future__ import annotations

import os
import queue
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from memd.atomic import write_atomic
from memd.config import load_config
from memd.daemon.discovery import Discovery, discover
from memd.daemon.watcher import Batch, Change, Watcher
from tests.conftest import git
from tests.daemon.conftest import chain, rename_storm, unchain

TIMEOUT = 20.0


class Recorder:
    """A started watcher plus the batches it delivered."""

    def __init__(self, settle_seconds: float):
        self.batches: queue.Queue[Batch] = queue.Queue()
        self.watcher = Watcher(
            settle_seconds=settle_seconds,
            on_batch=self._on_batch,
            log=structlog.get_logger(),
        )

    def _on_batch(self, batch: Batch) -> float | None:
        self.batches.put(batch)
        return None

    def next(self) -> Batch:
        return self.batches.get(timeout=TIMEOUT)

    def until(self, predicate: object) -> list[Batch]:
        """Collect batches until one satisfies `predicate`; return them all."""
        seen = []
        while True:
            batch = self.next()
            seen.append(batch)
            if predicate(batch):  # type: ignore[operator]
                return seen


@pytest.fixture(name="recorder")
def _recorder() -> Iterator[Recorder]:
    recorder = Recorder(settle_seconds=0.2)
    recorder.watcher.start()
    yield recorder
    recorder.watcher.stop()


def _collect(recorder: Recorder, wanted: set[str]) -> list[Batch]:
    """Take batches until every relpath in `wanted` has been reported."""
    batches: list[Batch] = []
    seen: set[str] = set()
    while not wanted <= seen:
        batches.append(recorder.next())
        seen |= {change.relpath for change in batches[-1].changes}
    return batches


def _project(root: Path, name: str = "p") -> Path:
    memory = root / ".claude" / "projects" / name / "memory"
    memory.mkdir(parents=True)
    return memory


def _discover() -> Discovery:
    return discover(load_config())


class TestChanges:
    def test_write_reported_as_change(self, recorder: Recorder, tmp_path: Path) -> None:
        """A file written in a memory dir arrives as a Change with its relpath."""
        memory = _project(Path(os.environ["HOME"]))
        recorder.watcher.watch(_discover())

        (memory / "a.md").write_text("x")
        batch = recorder.next()

        assert str(memory) in batch.memory_dirs
        assert Change(str(memory), "a.md", "closed") in batch.changes

    def test_reads_are_not_events(self, recorder: Recorder) -> None:
        """Opening and reading files produces nothing (SPEC §7 fact 1)."""
        memory = _project(Path(os.environ["HOME"]))
        (memory / "old.md").write_text("x")
        recorder.watcher.watch(_discover())

        for _ in range(20):
            (memory / "old.md").read_text()
        (memory / "new.md").write_text("y")
        batch = recorder.next()

        assert {"new.md"} == {change.relpath for change in batch.changes}

    def test_burst_coalesced(self, tmp_path: Path) -> None:
        """A burst of writes in one directory settles into one batch."""
        memory = _project(Path(os.environ["HOME"]))
        recorder = Recorder(settle_seconds=1.0)
        recorder.watcher.start()
        try:
            recorder.watcher.watch(_discover())
            wanted = {f"f{i}.md" for i in range(50)}
            longest_gap = 0.0
            last = time.monotonic()
            for name in sorted(wanted):
                (memory / name).write_text("x")
                now = time.monotonic()
                longest_gap, last = max(longest_gap, now - last), now
            batches = _collect(recorder, wanted)
        finally:
            recorder.watcher.stop()

        # Settling waits for quiet: however slow the machine, the burst is one
        # batch as long as no pause in it reached the settle time.
        if longest_gap < 1.0:
            assert 1 == len(batches), [len(b.changes) for b in batches]

    def test_atomic_replace(self, recorder: Recorder) -> None:
        """Write-to-temp then os.replace reports the destination as moved in."""
        memory = _project(Path(os.environ["HOME"]))
        recorder.watcher.watch(_discover())

        (memory / ".tmp").write_text("x")
        os.replace(memory / ".tmp", memory / "a.md")
        batches = recorder.until(lambda b: any(c.relpath == "a.md" for c in b.changes))

        changes = [c for b in batches for c in b.changes]
        assert Change(str(memory), "a.md", "moved_to") in changes


class TestStructure:
    def test_new_project_asks_for_rediscovery(self, recorder: Recorder) -> None:
        """A project created under the projects root triggers rediscovery."""
        home = Path(os.environ["HOME"])
        _project(home, "first")
        recorder.watcher.watch(_discover())

        (home / ".claude" / "projects" / "second" / "memory").mkdir(parents=True)
        batches = recorder.until(lambda b: b.rediscover)

        assert batches[-1].rediscover

    def test_base_appearing_later(self, recorder: Recorder) -> None:
        """Before ~/.claude exists its parent is watched; its creation is seen."""
        home = Path(os.environ["HOME"])
        recorder.watcher.watch(_discover())

        (home / ".claude").mkdir()
        batch = recorder.until(lambda b: b.rediscover)[-1]
        recorder.watcher.watch(_discover())
        roots = recorder.watcher.watched_roots()

        assert batch.rediscover
        assert {
            "path": str(home / ".claude"),
            "recursive": False,
            "observer": "native",
        } in roots

    def test_settings_file_change(self, recorder: Recorder) -> None:
        """Saving a watched settings file reports it and asks to rediscover."""
        home = Path(os.environ["HOME"])
        (home / ".claude").mkdir()
        recorder.watcher.watch(_discover())

        (home / ".claude" / "settings.json").write_text("{}")
        batch = recorder.until(lambda b: b.touched_files)[-1]

        assert (
            frozenset({str(home / ".claude" / "settings.json")}) == batch.touched_files
        )
        assert batch.rediscover

    def test_request_is_delivered(self, recorder: Recorder) -> None:
        """An explicit request (a signal, an overflow) arrives as flags."""
        recorder.watcher.request(rescan_all=True, reload_config=True)
        batch = recorder.next()

        assert (True, True) == (batch.rescan_all, batch.reload_config)

    def test_deleted_and_recreated_root_rewatched(
        self, recorder: Recorder, tmp_path: Path
    ) -> None:
        """A watched directory deleted and recreated is watched again."""
        extra = tmp_path / "extra"
        extra.mkdir()
        import dataclasses

        config = dataclasses.replace(load_config(), watch_dirs=(str(extra),))
        recorder.watcher.watch(discover(config))
        extra.rmdir()
        recorder.until(lambda b: b.rediscover)
        recorder.watcher.watch(discover(config))
        extra.mkdir()
        recorder.until(lambda b: b.rediscover)
        recorder.watcher.watch(discover(config))

        (extra / "a.md").write_text("x")
        batches = recorder.until(
            lambda b: (
                bool(b.changes)
                and b.memory_dirs == (str(extra),)
                and any(c.relpath == "a.md" for c in b.changes)
            )
        )

        assert batches


class TestInotifyReader:
    def test_a_touch_is_a_change(self, recorder: Recorder) -> None:
        """A utime writes nothing, but changes a stat a snapshot recorded."""
        memory = _project(Path(os.environ["HOME"]))
        (memory / "a.md").write_text("x")
        recorder.watcher.watch(_discover())

        os.utime(memory / "a.md", (1_000_000, 1_000_000))
        batches = _collect(recorder, {"a.md"})

        assert Change(str(memory), "a.md", "attrib") in {
            c for b in batches for c in b.changes
        }


class TestPollingFallback:
    def test_fd_exhaustion_falls_back(self) -> None:
        """When inotify cannot get a descriptor (EMFILE), polling takes over."""
        memory = _project(Path(os.environ["HOME"]))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        fillers: list[int] = []
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, hard))
        try:
            while True:  # take every free descriptor below the limit
                try:
                    fillers.append(os.open(os.devnull, os.O_RDONLY))
                except OSError:
                    break
            recorder = Recorder(settle_seconds=0.2)
        finally:
            for fd in fillers:
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        recorder.watcher.start()
        try:
            recorder.watcher.watch(_discover())
            (memory / "a.md").write_text("x")
            batch = recorder.until(
                lambda b: any(c.relpath == "a.md" for c in b.changes)
            )[-1]
            roots = recorder.watcher.watched_roots()
        finally:
            recorder.watcher.stop()

        assert 1 == recorder.watcher.fallbacks
        assert {"polling"} == {root["observer"] for root in roots}
        assert str(memory) in batch.memory_dirs


class TestSplitWatch:
    def test_a_chain_too_deep_leaves_only_its_project_deaf(
        self, recorder: Recorder, request: pytest.FixtureRequest
    ) -> None:
        """watchdog cannot walk 1,100 levels; the other projects keep native events.

        The recursive watch of `projects/` is split into a flat watch and one
        per project, down to the deep memory dir, which gets a flat watch of
        its own level and alone is reported.
        """
        home = Path(os.environ["HOME"])
        others = [_project(home, f"p{i}") for i in range(3)]
        deep = _project(home, "deep")
        chain(deep, 1100)
        request.addfinalizer(lambda: unchain(deep))

        added = recorder.watcher.watch(_discover())

        projects = str(home / ".claude" / "projects")
        roots = {(r["path"], r["recursive"]) for r in recorder.watcher.watched_roots()}
        assert (projects, False) in roots
        assert {(str(m.parent), True) for m in others} <= roots
        assert (str(deep), False) in roots
        assert set(added) >= {projects, *(str(m.parent) for m in others)}
        health = recorder.watcher.health()
        assert [(str(deep), "deeper than 34 levels below the watch")] == [
            (p["root"], p["reason"]) for p in health
        ]
        (deep / "top.md").write_text("z")  # its own level still has events
        batches = _collect(recorder, {"top.md"})
        assert str(deep) in {c.memory_dir for b in batches for c in b.changes}

        (others[1] / "a.md").write_text("x")
        batches = _collect(recorder, {"a.md"})
        assert str(others[1]) in {c.memory_dir for b in batches for c in b.changes}

        new = _project(home, "later")  # a project made after the split is seen
        recorder.until(lambda b: b.rediscover)
        recorder.watcher.watch(_discover())
        (new / "b.md").write_text("y")
        batches = _collect(recorder, {"b.md"})
        assert str(new) in {c.memory_dir for b in batches for c in b.changes}

    def test_a_gap_names_the_memory_dir_not_the_root(self, recorder: Recorder) -> None:
        """Too deep to watch (34 levels) in one project: that memory dir, no other."""
        home = Path(os.environ["HOME"])
        shallow = _project(home, "shallow")
        deep = _project(home, "deep")
        chain(deep, 40)

        recorder.watcher.watch(_discover())

        assert [str(deep)] == [p["root"] for p in recorder.watcher.health()]
        assert str(shallow) not in str(recorder.watcher.health())

    def test_a_deep_chain_beside_the_memory_dir_costs_no_watch_per_level(
        self, recorder: Recorder
    ) -> None:
        """A project's own deep tooling tree: split, never followed level by level."""
        home = Path(os.environ["HOME"])
        memory = _project(home, "p")
        other = _project(home, "q")
        tooling = memory.parent / "tooling"
        tooling.mkdir()
        chain(tooling, 60)

        recorder.watcher.watch(_discover())

        projects = str(home / ".claude" / "projects")
        roots = {(r["path"], r["recursive"]) for r in recorder.watcher.watched_roots()}
        assert {
            (projects, False),
            (str(memory.parent), False),
            (str(memory), True),
            (str(other.parent), True),
        } <= roots
        assert not any(path.startswith(str(tooling)) for path, _ in roots)
        assert (str(memory.parent), True) not in roots
        assert [] == recorder.watcher.health()
        (memory / "a.md").write_text("x")
        batches = _collect(recorder, {"a.md"})
        assert str(memory) in {c.memory_dir for b in batches for c in b.changes}


class _Serving:
    """Plays the daemon's part around a watcher: rediscover when asked, retry the deaf.

    Batches asking for a rediscovery get `watch(discover())`; every second
    `health()` is checked, and while it finds problems `restart()` is tried
    every `retry_seconds` (the daemon backs off from 5 s).
    """

    def __init__(self, recorder: Recorder, retry_seconds: float = 2.0):
        self.recorder = recorder
        self.watcher = recorder.watcher
        self.retry_seconds = retry_seconds
        self.changes: list[Change] = []
        self.health: list[dict[str, object]] = []
        self.checked = self.retried = -1e9

    def until(self, done: object, *, timeout: float = TIMEOUT, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not done():  # type: ignore[operator]
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}: health {self.health}")
            try:
                batch = self.recorder.batches.get(timeout=0.1)
            except queue.Empty:
                pass
            else:
                self.changes.extend(batch.changes)
                if batch.rediscover:
                    self.watcher.watch(_discover())
            now = time.monotonic()
            if now - self.checked >= 1.0:
                self.checked, self.health = now, self.watcher.health()
                if self.health and now - self.retried >= self.retry_seconds:
                    self.retried = now
                    self.watcher.restart()

    def roots(self) -> set[tuple[object, object]]:
        return {(r["path"], r["recursive"]) for r in self.watcher.watched_roots()}


class TestFloodShedding:
    # watchdog's own threads die of the storm (its KeyError): what `health` finds.
    @pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
    def test_a_rename_storm_sheds_only_the_part_that_storms(
        self, recorder: Recorder
    ) -> None:
        """Project dirs renamed onto just-deleted ones, in a loop, in another process.

        The recursive watch of `projects/` floods: it is split, and only its
        flat part (where the renames happen) is shed. What stormed in it is
        reported deaf, never a calm project nor the whole tree; the calm
        projects keep their own native watches and their events. Once the
        storm has stopped and the shed part stats the same for a while,
        it is watched natively again.
        """
        home = Path(os.environ["HOME"])
        projects = str(home / ".claude" / "projects")
        calm = [_project(home, f"calm{i}") for i in range(3)]
        storm = [_project(home, f"storm{i}").parent for i in range(4)]
        serving = _Serving(recorder)
        recorder.watcher.watch(_discover())

        with rename_storm(storm):
            serving.until(
                lambda: any(
                    str(p["reason"]).startswith("event flood: ")
                    and str(p["reason"]).endswith(f" events/s in {projects}")
                    for p in serving.health
                ),
                what="the flat watch of projects/ shed",
            )
            roots = serving.roots()
            assert (projects, False) not in roots
            assert (projects, True) not in roots
            assert {(str(m.parent), True) for m in calm} <= roots
            flooded = {
                str(p["root"]) for p in serving.health if "flood" in str(p["reason"])
            }
            stormed = {str(d) for d in storm} | {f"{d}.moving" for d in storm}
            assert flooded <= stormed, flooded
            (calm[1] / "a.md").write_text("x")
            serving.until(
                lambda: Change(str(calm[1]), "a.md", "closed") in serving.changes,
                what="a calm project's event during the storm",
            )

        serving.until(
            lambda: not serving.health and (projects, False) in serving.roots(),
            timeout=60,
            what="native watching back after the storm",
        )
        (calm[2] / "b.md").write_text("y")
        serving.until(
            lambda: Change(str(calm[2]), "b.md", "closed") in serving.changes,
            what="an event after the storm",
        )

    def test_normal_bursts_never_shed(self, recorder: Recorder) -> None:
        """200 projects saving at once, a dream's 20 files, a git checkout: all events.

        One recursive watch of `projects/` sees all of it; nothing is split
        or shed, and every change arrives.
        """
        home = Path(os.environ["HOME"])
        projects = str(home / ".claude" / "projects")
        memories = [_project(home, f"p{i:03}") for i in range(200)]
        repo = memories[0]
        for i in range(100):
            (repo / f"note_{i:03}.md").write_text(f"first {i}\n")
        git("init", "-q", cwd=repo)
        git("add", ".", cwd=repo)
        git("commit", "-q", "-m", "first", cwd=repo)
        git("checkout", "-q", "-b", "second", cwd=repo)
        for i in range(100):
            (repo / f"note_{i:03}.md").write_text(f"second {i}\n")
        git("commit", "-q", "-a", "-m", "second", cwd=repo)
        serving = _Serving(recorder)
        recorder.watcher.watch(_discover())

        for memory in memories:  # everyone saves once, as fast as it goes
            write_atomic(str(memory / "MEMORY.md"), b"- saved\n")
        dream = memories[1]
        for i in range(20):
            write_atomic(str(dream / f"dreamed_{i:02}.md"), b"---\nname: d\n---\n")
        git("checkout", "-q", "main", cwd=repo)

        def arrived() -> bool:
            seen = {(c.memory_dir, c.relpath) for c in serving.changes}
            return (
                all((str(m), "MEMORY.md") in seen for m in memories)
                and all((str(dream), f"dreamed_{i:02}.md") in seen for i in range(20))
                and all((str(repo), f"note_{i:03}.md") in seen for i in range(100))
            )

        serving.until(arrived, what="every change")
        serving.checked = -1e9  # one more health check, now
        serving.until(lambda: serving.checked > 0, what="a health check")
        assert [] == serving.health
        assert (projects, True) in serving.roots()
