"""The daemon's status file, daemon.json: written when it changes, and as a heartbeat.

The daemon builds the status on its settle thread; this module decides whether
it is worth writing (changed, or `STATUS_HEARTBEAT_SECONDS` since the last
write) and writes it through `memd.state`, on the daemon's flusher thread
unless the caller must see it on disk first (readiness, stopping).
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from concurrent.futures import Executor

    from structlog.typing import FilteringBoundLogger

STATUS_FILE = "daemon.json"
STATUS_HEARTBEAT_SECONDS = 60.0


class StatusWriter:
    """Writes daemon.json into the state directory, skipping unchanged repeats.

    Holds the last status written; used from the settle thread only (the write
    itself may run on `flusher`).
    """

    __slots__ = ("flusher", "last", "last_time", "log", "state_dir")

    def __init__(
        self,
        state_dir: Callable[[], str],
        flusher: Executor,
        log: FilteringBoundLogger,
    ) -> None:
        self.state_dir = state_dir  # asked at write time: a config reload may move it
        self.flusher = flusher
        self.log = log
        self.last: Mapping[str, object] | None = None
        self.last_time = 0.0

    def write(
        self, data: Mapping[str, object], *, force: bool = False, inline: bool = False
    ) -> None:
        """Write `data` plus `updated` if it changed: on the flusher unless `inline`."""
        now = time.monotonic()
        if (
            not force
            and data == self.last
            and now - self.last_time < STATUS_HEARTBEAT_SECONDS
        ):
            return
        self.last, self.last_time = data, now
        payload = {**data, "updated": time.time()}
        if inline:
            self.store(payload)
        else:
            self.flusher.submit(self.store, payload)

    def store(self, payload: dict[str, object]) -> None:
        """Write `payload` to daemon.json now; a failure is logged, never raised."""
        from memd.state import write_state

        try:
            write_state(self.state_dir(), STATUS_FILE, payload)
        except (OSError, TypeError, ValueError) as error:
            self.log.warning("status_write_failed", error=str(error))
