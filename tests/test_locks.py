"""The single-instance lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.errors import LockHeldError
from memd.locks import acquire_instance_lock, is_lock_held, lock_path, read_lock_pid

HOLD = """
import sys, time
from memd.locks import acquire_instance_lock
lock = acquire_instance_lock(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
"""


class TestInstanceLock:
    def test_records_pid(self, tmp_path: Path) -> None:
        """The holder's pid is written into the lock file."""
        with acquire_instance_lock(str(tmp_path / "run")):
            pid = read_lock_pid(str(tmp_path / "run"))

        assert os.getpid() == pid

    def test_second_holder_refused_with_pid(self, tmp_path: Path) -> None:
        """A second process gets LockHeldError naming the first one's pid."""
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert "held" == holder.stdout.readline().strip()
            with pytest.raises(LockHeldError) as caught:
                acquire_instance_lock(str(tmp_path))
        finally:
            holder.communicate("")

        assert f"memd is already running (pid {holder.pid})" == str(caught.value)
        assert holder.pid == caught.value.pid
        assert 1 == caught.value.exit_code

    def test_released_when_holder_dies(self, tmp_path: Path) -> None:
        """The kernel drops the lock of a dead holder, so no stale lock remains."""
        subprocess.run(
            [sys.executable, "-c", HOLD, str(tmp_path)],
            input="",
            check=True,
            capture_output=True,
        )

        with acquire_instance_lock(str(tmp_path)) as lock:
            assert lock_path(str(tmp_path)) == lock.path

    def test_is_lock_held(self, tmp_path: Path) -> None:
        """is_lock_held is True only while someone holds the lock."""
        before = is_lock_held(str(tmp_path))
        with acquire_instance_lock(str(tmp_path)):
            # flock conflicts between open file descriptions, even in one process.
            during = is_lock_held(str(tmp_path))
        after = is_lock_held(str(tmp_path))

        assert (False, True, False) == (before, during, after)

    def test_garbled_pid(self, tmp_path: Path) -> None:
        """A lock file without a number yields no pid."""
        Path(lock_path(str(tmp_path))).write_text("nope")

        assert read_lock_pid(str(tmp_path)) is None
