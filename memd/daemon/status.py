"""The daemon's status file, daemon.json: its contents, written when they change.

`daemon_status` builds the document from the values the daemon hands it (on
its settle thread) and `status_line` the line systemd shows; both are pure.
`StatusWriter` decides whether it is worth writing (changed, or
`STATUS_HEARTBEAT_SECONDS` since the last write) and writes it through
`memd.state`, on the daemon's flusher thread unless the caller must see it on
disk first (readiness, stopping). `memd status` reads these keys.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from concurrent.futures import Executor

    from structlog.typing import FilteringBoundLogger

STATUS_FILE = "daemon.json"
STATUS_HEARTBEAT_SECONDS = 60.0


def daemon_status(
    *,
    pid: int,
    running: bool,
    ready: bool,
    started: float,
    config_file: str,
    dirs: Mapping[str, Mapping[str, object]],
    disabled: Iterable[tuple[str, str]],
    rescans: int,
    queue_overflows: int,
    fallbacks: int,
    deaf: Iterable[Mapping[str, object]],
    sweep_catches: int,
    hook_lint: Mapping[str, object],
    telemetry_dropped: int,
    watched_roots: list[dict[str, object]],
    agent_profile: tuple[str, str],
    scheduler: Mapping[str, object],
) -> dict[str, object]:
    """Return daemon.json's document (less `updated`, which the writer stamps)."""
    deaf_watches = [dict(problem) for problem in deaf]
    version, reason = agent_profile
    return {
        "pid": pid,
        "running": running,
        "ready": ready,
        "started": started,
        "config_file": config_file,
        "dirs": {path: dict(dirs[path]) for path in sorted(dirs)},
        "disabled": [list(item) for item in disabled],
        "rescans": rescans,
        "queue_overflows": queue_overflows,
        "fallbacks": fallbacks,
        "watch": {"state": "degraded" if deaf_watches else "ok", "deaf": deaf_watches},
        "sweep_catches": sweep_catches,
        "hook_lint": dict(hook_lint),
        "telemetry_dropped": telemetry_dropped,
        "watched_roots": watched_roots,
        "agent_profile": {"version": version, "reason": reason},
        "next_dream": scheduler.get("next_dream"),
        "scheduler": dict(scheduler),
    }


def status_line(*, dirs: int, slow: int, lint_errors: int) -> str:
    """Return the one line systemd shows (`STATUS=`)."""
    if slow:
        return f"watching {dirs} memory dirs, {slow} slow"
    return f"watching {dirs} memory dirs, {lint_errors} lint errors"


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
