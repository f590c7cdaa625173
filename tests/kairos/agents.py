"""What a confined dream agent script says: it can write only in its copy.

Under Landlock (memd.kairos.confine) an agent script cannot leave a file in
the test's temp dir, so it reports on stdout, which memd logs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import structlog

T = TypeVar("T")


def with_stdout(run: Callable[[], T]) -> tuple[T, str]:
    """Return what `run()` returns and the stdout of the one agent it ran."""
    with structlog.testing.capture_logs() as logs:
        value = run()
    [finished] = [e for e in logs if e["event"] == "dream_command_finished"]
    return value, str(finished["stdout"])


def is_alive(pid: int) -> bool:
    """Whether `pid` is a live process now (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return not stat.read().rsplit(") ", 1)[1].startswith(("Z", "X"))
    except FileNotFoundError:
        return False
