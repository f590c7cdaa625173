"""`memd restore --all` killed at any write point is all or nothing on the next run.

Unlike the shared harness (tests/reliability/test_crash_points.py), which reruns
the same restore, this runs a different command after the kill (`memd history`,
which only reads) and checks that the directory is then either wholly as it
was before the restore or wholly as restored: the journal was rolled forward,
or nothing had been written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memd.atomic import CRASH_ENV, TEMP_PREFIX
from memd.history.store import History

MEMD = (sys.executable, "-m", "memd")


def _files(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and not p.name.startswith(TEMP_PREFIX)
    }


def _seed(memory: Path, state: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    subprocess.run(["rm", "-rf", str(memory), state], check=True)
    memory.mkdir(parents=True)
    for i in range(5):
        (memory / f"t{i}.md").write_text(f"fact {i}\n" * 30)
    (memory / "sub").mkdir()
    (memory / "sub" / "deep.md").write_text("deep\n")
    with History.open(state) as history:
        history.record(str(memory), cause="edit")
        restored = _files(memory)
        for i in range(4):
            (memory / f"t{i}.md").unlink()
        (memory / "sub" / "deep.md").unlink()
        (memory / "sub").rmdir()
        (memory / "t4.md").write_text("changed\n")
        (memory / "new.md").write_text("new\n")
        history.record(str(memory), cause="edit")
    return _files(memory), restored


@pytest.mark.slow
def test_killed_restore_is_all_or_nothing(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    state = os.path.join(os.environ["XDG_STATE_HOME"], "memd")
    argv = [*MEMD, "restore", "--all", "--rev", "1", "--project", str(memory)]
    outcomes = set()
    for point in range(1, 200):
        before, restored = _seed(memory, state)
        done = subprocess.run(
            argv,
            env={**os.environ, CRASH_ENV: str(point)},
            capture_output=True,
            timeout=60,
            check=False,
        )
        if done.returncode == 0:
            break
        assert done.returncode == -signal.SIGKILL, done.stderr
        after = subprocess.run(
            [*MEMD, "history", "--project", str(memory)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert after.returncode == 0, after.stderr
        now = _files(memory)
        assert now in (before, restored), point
        outcomes.add("restored" if now == restored else "before")
        with History.open(state) as history:
            assert all(isinstance(blob, bytes) for blob in history.every_blob())
            causes = [c.cause for c in history.changes(str(memory))]
        assert causes[0] == ("restore" if now == restored else "edit"), (point, causes)
    else:
        pytest.fail("still killed after 200 write points")
    assert outcomes == {"before", "restored"}
    assert point > 10
