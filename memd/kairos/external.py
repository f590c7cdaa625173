"""The external dream hook: run the configured command over one memory directory.

The command (for example an agent CLI) gets the memory directory and the log
files on its environment (`MEMD_MEMORY_DIR`, `MEMD_LOG_FILES`,
`MEMD_ENTRY_COUNT`) and the entries as JSON lines on stdin. It runs in its own
process group, so a timeout kills everything it started, not just its shell.
"""

from __future__ import annotations

import contextlib
import os
import signal

from memd.errors import DreamError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.kairos.consolidate import LogEntry

_OUTPUT_TAIL = 4000  # characters of stdout/stderr kept in the log


class DreamCommandFailed(DreamError):
    """The command could not start, timed out or exited non-zero (one-line reason)."""


def run_dream_command(
    memory_dir: str,
    config: Config,
    entries: tuple[LogEntry, ...],
    log_files: tuple[str, ...],
    log: FilteringBoundLogger,
) -> None:
    """Run `config.dream_command`; raise `DreamCommandFailed` unless it succeeds."""
    import json
    import subprocess

    env = {
        **os.environ,
        "MEMD_MEMORY_DIR": memory_dir,
        "MEMD_LOG_FILES": os.pathsep.join(
            os.path.join(memory_dir, r) for r in log_files
        ),
        "MEMD_ENTRY_COUNT": str(len(entries)),
    }
    stdin = "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in entries)
    try:
        proc = subprocess.Popen(
            list(config.dream_command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=memory_dir,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        raise DreamCommandFailed(f"dream command could not start: {error}") from None
    try:
        out, err = proc.communicate(
            stdin.encode("utf-8"), timeout=config.dream_timeout_seconds
        )
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        log.warning(
            "dream_command_timed_out", timeout_seconds=config.dream_timeout_seconds
        )
        raise DreamCommandFailed(
            f"dream command timed out after {config.dream_timeout_seconds:g}s"
        ) from None
    log.info(
        "dream_command_finished",
        exit_status=proc.returncode,
        stdout=out.decode("utf-8", errors="replace")[-_OUTPUT_TAIL:],
        stderr=err.decode("utf-8", errors="replace")[-_OUTPUT_TAIL:],
    )
    if proc.returncode != 0:
        raise DreamCommandFailed(f"dream command exited with status {proc.returncode}")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
