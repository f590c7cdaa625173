"""Where telemetry events go: a bounded queue drained by one thread into JSON lines.

`emit` never blocks the caller (`put_nowait`); when the queue is full the
event is dropped and counted in `dropped`, because rendering a prompt matters
more than recording that it happened. One daemon thread drains the queue in
batches and appends each batch with a single `write` on an `O_APPEND` file
descriptor, under an `flock` on `<path>.lock`, so the daemon and short-lived
CLI processes can share the file. Past `max_bytes` the file rotates:
`telemetry.jsonl` -> `.1` -> ... -> `.<keep>`, the oldest falling off.
Appending is the one write here that is not `write_atomic`: a log is
append-only by nature, and a torn last line is skipped by the reader.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import threading
from collections.abc import Iterator, Mapping

from memd.fsread import open_regular, read_text

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_QUEUE_SIZE = 1024
DEFAULT_KEEP = 3
FILE_NAME = "telemetry.jsonl"

_STOP = object()


def default_path(state_dir: str) -> str:
    """Return `<state>/telemetry.jsonl`."""
    return os.path.join(state_dir, FILE_NAME)


class TelemetrySink:
    """A JSON-lines sink with a bounded queue and one drain thread; call `close()`."""

    def __init__(
        self,
        path: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        keep: int = DEFAULT_KEEP,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self._queue: queue.Queue[object] = queue.Queue(maxsize=queue_size)
        self._lock = threading.Lock()
        self._dropped = 0
        self._write_errors = 0
        self._closed = False
        self._thread = threading.Thread(
            target=self._drain, name="memd-telemetry", daemon=True
        )
        self._thread.start()

    @property
    def dropped(self) -> int:
        """Events lost because the queue was full or the sink closed."""
        with self._lock:
            return self._dropped

    @property
    def write_errors(self) -> int:
        """Batches that could not be written (disk full, permissions)."""
        with self._lock:
            return self._write_errors

    def emit(self, event: Mapping[str, object]) -> None:
        """Queue `event` for writing; never blocks, never raises."""
        if self._closed:
            self._count_drop()
            return
        try:
            self._queue.put_nowait(dict(event))
        except queue.Full:
            self._count_drop()

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, then stop the drain thread."""
        if self._closed:
            return
        self._closed = True
        # The stop marker must get in even when the queue is full: wait for room.
        with contextlib.suppress(queue.Full):
            self._queue.put(_STOP, timeout=timeout)
        self._thread.join(timeout)

    def __enter__(self) -> TelemetrySink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _count_drop(self) -> None:
        with self._lock:
            self._dropped += 1

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            batch: list[object] = []
            stop = item is _STOP
            if not stop:
                batch.append(item)
            while not stop:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                else:
                    batch.append(item)
            if batch:
                self._write(batch)
            if stop:
                return

    def _write(self, batch: list[object]) -> None:
        data = "".join(
            json.dumps(event, ensure_ascii=False, sort_keys=True, default=str) + "\n"
            for event in batch
        ).encode("utf-8", "replace")
        try:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            lock_fd = open_regular(self.path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX)
                self._rotate_if_full()
                fd = open_regular(
                    self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600
                )
                try:
                    os.write(fd, data)
                finally:
                    os.close(fd)
            finally:
                os.close(lock_fd)  # closing releases the flock
        except OSError:
            with self._lock:
                self._write_errors += 1

    def _rotate_if_full(self) -> None:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size < self.max_bytes:
            return
        if self.keep <= 0:
            os.unlink(self.path)
            return
        for index in range(self.keep - 1, 0, -1):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{self.path}.{index}", f"{self.path}.{index + 1}")
        os.replace(self.path, f"{self.path}.1")


def rotated_paths(path: str, *, keep: int = DEFAULT_KEEP) -> tuple[str, ...]:
    """Return the sink's files oldest first: `.<keep>` ... `.1`, then `path`."""
    return (*(f"{path}.{i}" for i in range(keep, 0, -1)), path)


def read_events(path: str, *, keep: int = DEFAULT_KEEP) -> Iterator[dict[str, object]]:
    """Yield every event in the sink's files, oldest first; torn lines are skipped."""
    for file_path in rotated_paths(path, keep=keep):
        try:
            lines = read_text(file_path).splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event
