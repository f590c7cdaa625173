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

from memd.daemon.settle import Batch, Change, Settler

LOG = structlog.get_logger()


class Recorder:
    """Collects the batches the settler hands over, and lets a test wait for them."""

    def __init__(self) -> None:
        self.batches: list[Batch] = []
        self._cond = threading.Condition()

    def __call__(self, batch: Batch) -> None:
        with self._cond:
            self.batches.append(batch)
            self._cond.notify_all()

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
        self, running: list[Settler]
    ) -> None:
        """Changes 20 ms apart for three settle times arrive as one batch, in order."""
        settle = 0.6
        for _attempt in range(5):
            recorder = Recorder()
            settler = _settler(settle, 60.0, recorder)
            running.append(settler)
            settler.start()
            sent, longest = _burst(settler, "/m", 3 * settle, 0.02)
            recorder.wait_for_changes(sent)
            if longest < settle / 2:  # else the test thread stalled: replay
                break
        else:
            pytest.fail("the machine stalled the burst five times")

        assert 1 == len(recorder.batches), recorder.batches
        assert [f"f{i}.md" for i in range(sent)] == [
            c.relpath for c in recorder.batches[0].changes
        ]

    def test_an_endless_stream_is_flushed_at_max_delay(
        self, running: list[Settler]
    ) -> None:
        """Never quiet for the settle time, a stream still flushes, more than once."""
        recorder = Recorder()
        settler = _settler(600.0, 0.3, recorder)
        running.append(settler)
        settler.start()

        _burst(settler, "/m", 2.0, 0.02)
        during = list(recorder.batches)

        assert len(during) >= 2, during
        delivered = [c.relpath for b in during for c in b.changes]
        assert [f"f{i}.md" for i in range(len(delivered))] == delivered

    def test_directories_settle_on_their_own(self, running: list[Settler]) -> None:
        """A stream in one directory does not hold back a quiet one's batch."""
        recorder = Recorder()
        settler = _settler(0.2, 600.0, recorder)
        running.append(settler)
        settler.start()
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
