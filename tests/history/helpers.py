"""What the history tests share: running memd as a user does, recording by hand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memd.history.store import History

MEMD = (sys.executable, "-m", "memd")


def memd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def state_dir() -> str:
    return os.path.join(os.environ["XDG_STATE_HOME"], "memd")


def record_now(memory: Path) -> int:
    """Record `memory` as it is; the directory's last revision after."""
    with History.open(state_dir()) as history:
        history.record(str(memory), cause="edit")
        return history.last_rev(str(memory))
