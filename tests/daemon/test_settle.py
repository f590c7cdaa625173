"""Settling: a burst is one batch however long it lasts; `max_delay` caps the wait.

The real `Settler` thread on the real clock. The settle and delay times are
chosen so the machine's stalls cannot change the outcome: a burst whose
own gaps came near the settle time (a stalled test thread) is replayed, and
the stream's settle time is longer than the whole test, so only `max_delay`
can flush it. The asserts are about batches, never about durations.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest
import structlog
import structlog.testing

from memd.daemon.settle import Batch, Change, Settler

LOG = structlog.get_logger()


class Recorder:
    """Collects the batches the settler hands over, and lets a test wait for them."""

    def __init__(self, wakes: list[float | None] | None = None) -> None:
        self.batches: list[Batch] = []
        self._cond = threading.Condition()
        self._wakes = list(wakes or [])

    def __call__(self, batch: Batch) -> float | None:
        with self._cond:
            self.batches.append(batch)
            self._cond.notify_all()
        return self._wakes.pop(0) if self._wakes else None

    def changes(self) -> list[Change]:
        with self._cond:
            return [c for b in self.batches for c in b.changes]

    def wait_for(self, predicate: Callable[[list[Batch]], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.batches), 30.0), (
                f"only {self.batches} after 30 s"
            )

    def wait_for_changes(self, count: int) -> None:
        self.wait_for(lambda batches: sum(len(b.changes) for b in batches) >= count)


def _settler(settle: float, max_delay: float, recorder: Recorder) -> Settler:
    return Settler(
        settle_seconds=settle, max_delay_seconds=max_delay, on_batch=recorder, log=LOG
    )


@pytest.fixture(name="running")
def _running() -> Iterator[list[Settler]]:
    started: list[Settler] = []
    yield started
    for settler in started:
        settler.stop()


Starter = Callable[..., tuple[Settler, Recorder]]


@pytest.fixture(name="start")
def _start(running: list[Settler]) -> Starter:
    """Start a settler that hands its batches to a Recorder; stopped after the test."""

    def start(
        settle: float, max_delay: float, *, wakes: list[float | None] | None = None
    ) -> tuple[Settler, Recorder]:
        recorder = Recorder(wakes)
        settler = _settler(settle, max_delay, recorder)
        running.append(settler)
        settler.start()
        return settler, recorder

    return start


def _burst(
    settler: Settler, memory_dir: str, seconds: float, every: float
) -> tuple[int, float]:
    """Add changes every `every` s for `seconds`; return how many, the longest gap."""
    end = time.monotonic() + seconds
    last = time.monotonic()
    longest = 0.0
    n = 0
    while time.monotonic() < end:
        settler.add(Change(memory_dir, f"f{n}.md", "modified"))
        now = time.monotonic()
        longest, last = max(longest, now - last), now
        n += 1
        time.sleep(every)
    return n, longest


class TestSettler:
    def test_a_burst_longer_than_the_settle_time_is_one_batch(
        self, start: Starter
    ) -> None:
        """Changes 50 ms apart for three settle times arrive as one batch, in order."""
        settle = 1.0
        for _attempt in range(5):
            settler, recorder = start(settle, 60.0)
            sent, longest = _burst(settler, "/m", 3 * settle, 0.05)
            recorder.wait_for_changes(sent)
            # A gap near the settle time (this thread starved) may split it: replay.
            if longest < 0.8 * settle:
                break
        else:
            pytest.fail("the machine stalled the burst five times")

        assert 1 == len(recorder.batches), recorder.batches
        assert [f"f{i}.md" for i in range(sent)] == [
            c.relpath for c in recorder.batches[0].changes
        ]

    def test_an_endless_stream_is_flushed_at_max_delay(self, start: Starter) -> None:
        """Never quiet for the settle time, a stream still flushes, more than once."""
        settler, recorder = start(600.0, 0.3)

        _burst(settler, "/m", 2.0, 0.02)
        during = list(recorder.batches)

        assert len(during) >= 2, during
        delivered = [c.relpath for b in during for c in b.changes]
        assert [f"f{i}.md" for i in range(len(delivered))] == delivered

    def test_directories_settle_on_their_own(self, start: Starter) -> None:
        """A stream in one directory does not hold back a quiet one's batch."""
        settler, recorder = start(0.2, 600.0)
        settler.add(Change("/quiet", "a.md", "modified"))

        stop = threading.Event()

        def stream() -> None:
            while not stop.is_set():
                settler.add(Change("/busy", "b.md", "modified"))
                time.sleep(0.02)

        busy = threading.Thread(target=stream)
        busy.start()
        try:
            recorder.wait_for(lambda bs: any("/quiet" in b.memory_dirs for b in bs))
            is_streaming = busy.is_alive()
        finally:
            stop.set()
            busy.join()

        assert is_streaming


class TestFlagsAndTicks:
    def test_an_urgent_flag_does_not_wait_for_settling(self, start: Starter) -> None:
        """rescan_all flagged urgently arrives at once, before a settling directory."""
        settler, recorder = start(600.0, 600.0)
        settler.add(Change("/m", "a.md", "modified"))

        settler.flag(rescan_all=True, reload_config=True)
        recorder.wait_for(lambda batches: len(batches) >= 1)
        [batch] = recorder.batches

        assert (True, True, False, False, ()) == (
            batch.rescan_all,
            batch.reload_config,
            batch.rediscover,
            batch.recheck_all,
            batch.changes,
        )

    def test_an_urgent_flag_jumps_a_settling_one(self, start: Starter) -> None:
        """A settling touch_file, then an urgent flag: both arrive at once, together."""
        settler, recorder = start(600.0, 600.0)

        settler.touch_file("/s.json")
        settler.flag(rescan_all=True)
        recorder.wait_for(lambda batches: len(batches) >= 1)
        [batch] = recorder.batches

        assert (frozenset({"/s.json"}), True, True) == (
            batch.touched_files,
            batch.rediscover,
            batch.rescan_all,
        )

    def test_flags_raised_apart_are_all_kept(self, start: Starter) -> None:
        """Flags raised one after another before a batch all arrive in it."""
        settler, recorder = start(0.1, 600.0)

        settler.flag(rediscover=True, urgent=False)
        settler.flag(recheck_all=True, urgent=False)
        settler.flag(reload_config=True, urgent=False)
        recorder.wait_for(lambda batches: len(batches) >= 1)
        [batch] = recorder.batches

        assert (True, True, True, False) == (
            batch.rediscover,
            batch.recheck_all,
            batch.reload_config,
            batch.rescan_all,
        )

    def test_a_touched_file_settles_then_asks_for_rediscovery(
        self, start: Starter
    ) -> None:
        """touch_file waits for quiet, then hands over the files and `rediscover`."""
        settler, recorder = start(0.2, 600.0)

        settler.touch_file("/home/u/.claude/settings.json")
        settler.touch_file("/p/.claude/settings.local.json")
        recorder.wait_for(lambda batches: len(batches) >= 1)
        [batch] = recorder.batches

        assert (
            frozenset(
                {"/home/u/.claude/settings.json", "/p/.claude/settings.local.json"}
            )
            == batch.touched_files
        )
        assert (True, False) == (batch.rediscover, batch.rescan_all)

    def test_flags_are_handed_over_once(self, start: Starter) -> None:
        """A batch hands its flags and files over: the next one has only its own."""
        settler, recorder = start(0.05, 600.0)
        settler.touch_file("/s.json")
        settler.flag(recheck_all=True)
        recorder.wait_for(lambda batches: len(batches) >= 1)

        settler.touch_file("/t.json")
        settler.flag(reload_config=True)
        recorder.wait_for(lambda batches: len(batches) >= 2)
        second = recorder.batches[1]

        assert (frozenset({"/t.json"}), False, True) == (
            second.touched_files,
            second.recheck_all,
            second.reload_config,
        )

    def test_a_tick_wakes_the_daemon_with_an_empty_batch(self, start: Starter) -> None:
        """tick(s) asks for a batch after `s` even when nothing happened."""
        settler, recorder = start(600.0, 600.0)

        settler.tick(0.05)
        recorder.wait_for(lambda batches: len(batches) >= 1)

        assert [Batch()] == recorder.batches

    def test_the_wake_on_batch_returns_is_a_tick(self, start: Starter) -> None:
        """on_batch returning seconds gets another batch that long after."""
        settler, recorder = start(600.0, 600.0, wakes=[0.05, 0.05, None])

        settler.tick(0.0)
        recorder.wait_for(lambda batches: len(batches) >= 3)

        assert [Batch()] * 3 == recorder.batches

    def test_a_failing_batch_does_not_stop_the_settler(
        self, running: list[Settler]
    ) -> None:
        """on_batch raising is logged as batch_failed; the next change still arrives."""
        batches: list[Batch] = []
        done = threading.Event()

        def on_batch(batch: Batch) -> None:
            batches.append(batch)
            if len(batches) == 1:
                raise RuntimeError("boom")
            done.set()

        settler = Settler(
            settle_seconds=0.05, max_delay_seconds=600.0, on_batch=on_batch, log=LOG
        )
        running.append(settler)
        with structlog.testing.capture_logs() as logs:
            settler.start()
            settler.add(Change("/m", "a.md", "modified"))
            while not batches:
                time.sleep(0.01)
            settler.add(Change("/m", "b.md", "modified"))
            assert done.wait(30)

        assert ["a.md", "b.md"] == [c.relpath for b in batches for c in b.changes]
        assert ["batch_failed"] == [e["event"] for e in logs]

    def test_stop_ends_the_thread(self) -> None:
        """stop() returns with the thread gone, pending changes left undelivered."""
        recorder = Recorder()
        settler = _settler(600.0, 600.0, recorder)
        settler.start()
        settler.add(Change("/m", "a.md", "modified"))

        settler.stop()

        assert (False, []) == (settler.is_alive(), recorder.batches)


def test_batch_memory_dirs_are_unique_and_sorted() -> None:
    """A batch names each changed directory once, in order."""
    names = [f"/m{i:02}" for i in (7, 3, 19, 0, 11, 3, 15, 8, 1, 19, 12, 5, 16)]
    batch = Batch(changes=tuple(Change(n, "x.md", "modified") for n in names))

    assert tuple(sorted(set(names))) == batch.memory_dirs
