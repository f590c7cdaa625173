"""systemd's notify protocol (sd_notify(3)) without libsystemd.

One datagram per message to the unix socket named by `$NOTIFY_SOCKET`; a
leading `@` means the Linux abstract namespace. Everything is a no-op when the
variable is unset (not running under `Type=notify`). `WATCHDOG_USEC` asks for
`WATCHDOG=1` pings; sd_watchdog_enabled(3) recommends half the interval.
"""

from __future__ import annotations

import os
import socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def notify(message: str, *, env: Mapping[str, str] | None = None) -> bool:
    """Send `message` ("READY=1", "STATUS=...") to the service manager; True if sent."""
    environ = os.environ if env is None else env
    address = environ.get("NOTIFY_SOCKET", "")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]
    try:
        with socket.socket(
            socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
        ) as sock:
            sock.connect(address)
            # Never block the daemon on a manager that stopped reading: drop instead.
            sock.send(message.encode(), socket.MSG_DONTWAIT)
    except OSError:  # no listener, or its queue is full (EAGAIN)
        return False
    return True


def watchdog_interval_seconds(env: Mapping[str, str] | None = None) -> float | None:
    """Return how often to send WATCHDOG=1 (half WATCHDOG_USEC), or None if not asked.

    `WATCHDOG_PID`, when set, must be our pid, as sd_watchdog_enabled(3) requires.
    """
    environ = os.environ if env is None else env
    usec = environ.get("WATCHDOG_USEC", "")
    pid = environ.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid != str(os.getpid()):
        return None
    return int(usec) / 2_000_000
