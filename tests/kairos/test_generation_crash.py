"""SIGKILL at every write point of a dream's apply and of an undo: old or new, whole.

A real `python` process applies a generation (or undoes one) and kills itself
at its n-th write point (`MEMD_TEST_CRASH_AT`, memd/atomic.py), for n = 1, 2,
... until a run finishes. After each kill, `recover` (what the next dream or
undo runs first) must leave the memory exactly as it was before or exactly
as the finished run leaves it: never a mix of the two.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memd.atomic import CRASH_ENV, TEMP_PREFIX
from memd.kairos.generations import list_generations, recover

OLD = {
    "MEMORY.md": b"# Index\n- [A](a.md) \xe2\x80\x94 a\n",
    "a.md": b"---\nname: A\n---\nold a\n",
    "gone.md": b"---\nname: Gone\n---\nmoved to a\n",
}
NEW_WRITES = {
    "MEMORY.md": b"# Index\n- [A](a.md) \xe2\x80\x94 a, merged\n",
    "a.md": b"---\nname: A\n---\nold a\nmoved to a\n",
    "archive/a/2026-11.md": b"---\nname: a-archive\n---\nolder\n",
}
NEW = {k: v for k, v in {**OLD, **NEW_WRITES}.items() if k != "gone.md"}

APPLY = """
import sys
from memd.kairos.generations import apply_generation
state, memory = sys.argv[1], sys.argv[2]
old = {OLD!r}
new = {NEW_WRITES!r}
apply_generation(
    state, memory, {{rel: (old.get(rel), data) for rel, data in new.items()}},
    {{"gone.md": old["gone.md"]}}, created="2026-11-29T03:30:00+00:00",
)
"""
UNDO = """
import sys
from memd.kairos.generations import undo
undo(sys.argv[1], sys.argv[2], created="2026-11-29T04:00:00+00:00")
"""


def _files(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and not p.name.startswith(TEMP_PREFIX)
    }


def _seed(tmp_path: Path) -> tuple[Path, Path]:
    subprocess.run(["rm", "-rf", str(tmp_path / "m"), str(tmp_path / "s")], check=True)
    memory, state = tmp_path / "m", tmp_path / "s"
    memory.mkdir()
    for rel, data in OLD.items():
        (memory / rel).write_bytes(data)
    return memory, state


def _run(code: str, state: Path, memory: Path, crash_at: int | None) -> int:
    env = {**os.environ}
    env.pop(CRASH_ENV, None)
    if crash_at is not None:
        env[CRASH_ENV] = str(crash_at)
    done = subprocess.run(
        [sys.executable, "-c", code, str(state), str(memory)],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr.decode()
    return done.returncode


@pytest.mark.parametrize("step", ["apply", "undo"])
def test_kill_at_every_write_point_leaves_old_or_new(tmp_path: Path, step: str) -> None:
    """Killed at write point n for every n, memory is the old or the new, whole."""
    apply_code = APPLY.format(OLD=OLD, NEW_WRITES=NEW_WRITES)
    before, after = (OLD, NEW) if step == "apply" else (NEW, OLD)
    killed = 0
    for point in range(1, 200):
        memory, state = _seed(tmp_path)
        if step == "undo":
            assert 0 == _run(apply_code, state, memory, None)
        code = apply_code if step == "apply" else UNDO
        if _run(code, state, memory, point) == 0:
            break
        killed += 1
        middle = _files(memory)
        for rel, data in middle.items():  # each file whole: old or new bytes
            assert data in (before.get(rel), after.get(rel)), (point, rel)

        recover(str(state), str(memory))

        assert _files(memory) in (before, after), point
    else:
        pytest.fail("still killed after 200 write points")
    assert after == _files(memory)
    assert killed >= 8, killed
    assert list_generations(str(state), str(memory))
