"""Is the daemon alive and answering? The lock, a ping with a deadline, the heartbeat.

A held instance lock says only that a `memd run` process exists: a stopped
(SIGSTOP) or wedged one holds it too. So `memd status` and `memd doctor` ask
the daemon itself, with a ping over its hooks socket that must be answered
within `PING_SECONDS`, and check the heartbeat the pong carries (how long
since the settle thread last finished a round, which it does at least every
`STATUS_HEARTBEAT_SECONDS`, on the monotonic clock so a suspend is no stall):
one older than `STALE_SECONDS` means the socket's thread lives while the
daemon's work is stuck.
"Since" is the last sign of life memd has: that heartbeat, or daemon.json's
`updated` stamp when nothing answered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memd.daemon.status import STATUS_FILE, STATUS_HEARTBEAT_SECONDS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PING_SECONDS = 2.0
STALE_SECONDS = 3 * STATUS_HEARTBEAT_SECONDS + 30.0

RUNNING, NOT_RUNNING, NOT_RESPONDING = "running", "not running", "not responding"
START_HINT = "start it with `memd service install` (or `memd run` in a terminal)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Liveness:
    """What the lock, the ping and the heartbeat say about the daemon."""

    state: str  # RUNNING | NOT_RUNNING | NOT_RESPONDING
    pid: int | None
    since: float | None  # the last sign of life (wall time), when not responding
    detail: str  # one line: what was seen

    @property
    def ok(self) -> bool:
        return self.state == RUNNING


def check_liveness(
    state_dir: str,
    env: Mapping[str, str],
    *,
    seconds: float = PING_SECONDS,
    stale_seconds: float = STALE_SECONDS,
    now: float | None = None,
) -> Liveness:
    """Ask the lock, then the daemon itself (within `seconds`), how it is.

    A heartbeat older than `stale_seconds` is a daemon whose work is stuck.
    """
    from memd.dirs import runtime_dir
    from memd.hook_lint import ping_daemon, socket_path
    from memd.locks import is_lock_held, read_lock_pid
    from memd.state import read_state

    lock_dir = runtime_dir(env, state_dir=state_dir)
    if not is_lock_held(lock_dir):
        return Liveness(
            state=NOT_RUNNING,
            pid=None,
            since=None,
            detail="no `memd run` holds the lock",
        )
    pid = read_lock_pid(lock_dir)
    saved = read_state(state_dir, STATUS_FILE)
    updated = saved.get("updated")
    last_written = float(updated) if isinstance(updated, int | float) else None
    now = time.time() if now is None else now
    pong = ping_daemon(socket_path(env, state_dir=state_dir), seconds)
    hook_lint = saved.get("hook_lint")
    deaf = isinstance(hook_lint, dict) and hook_lint.get("listening") is False
    if pong is None and deaf and saved.get("pid") == pid and last_written is not None:
        # It could not listen at all: only its heartbeat in daemon.json can tell.
        pong = {"pong": pid, "heartbeat_age": now - last_written}
    if pong is None:
        return Liveness(
            state=NOT_RESPONDING,
            pid=pid,
            since=last_written,
            detail=f"pid {pid} holds the lock but did not answer a ping"
            f" within {seconds:g} s",
        )
    age = pong.get("heartbeat_age")
    if isinstance(age, int | float) and age > stale_seconds:
        return Liveness(
            state=NOT_RESPONDING,
            pid=pid,
            since=now - age,
            detail=f"pid {pid} answers, but its work has not moved for {int(age)} s",
        )
    return Liveness(state=RUNNING, pid=pid, since=None, detail=f"pid {pid} answered")


def describe_since(stamp: float | None) -> str:
    """A wall time as a person reads it (`today 23:08:13`), or "an unknown time"."""
    import time

    from memd.times import clock

    if stamp is None:
        return "an unknown time"
    return clock(stamp, now=time.time())
