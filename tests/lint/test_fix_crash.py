"""SIGKILL at every write point of `memd fix` compacting, and of its undo: old or new.

A real `memd fix` process compacts a long index (hubs, then MEMORY.md) and
kills itself at its n-th write point (`MEMD_TEST_CRASH_AT`, memd/atomic.py),
for n = 1, 2, ... until a run finishes. After each kill every file holds
its old or its new bytes, whole; and what runs next (`memd fix --undo`, or
`memd fix` again) first takes a half-applied fix back, so the directory is
then exactly the old one, or exactly the finished fix.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memd.atomic import CRASH_ENV, TEMP_PREFIX


def _files(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and not p.name.startswith(TEMP_PREFIX)
    }


def _seed(root: Path) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    memory = root / "memory"
    memory.mkdir(parents=True)
    lines = ["# Memory", "", "A note about the index."]
    for i in range(210):
        (memory / f"user_m{i}.md").write_text(
            f"---\nname: M{i}\ndescription: What memory {i} is about, exactly\n"
            "type: user\n---\nFact.\n"
        )
        lines.append(f"- [M{i}](user_m{i}.md) — memory {i}")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return memory


def _memd(args: list[str], env: dict[str, str], crash_at: int | None) -> int:
    env = {**env}
    env.pop(CRASH_ENV, None)
    if crash_at is not None:
        env[CRASH_ENV] = str(crash_at)
    done = subprocess.run(
        [sys.executable, "-m", "memd", *args],
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1, -signal.SIGKILL), done.stderr.decode()
    return done.returncode


def test_kill_at_every_write_point_leaves_old_or_new(tmp_path: Path) -> None:
    """Killed at write point n for every n: whole files, then old or new exactly."""
    env = dict(os.environ)
    memory = _seed(tmp_path / "seed")
    old = _files(memory)
    assert 0 == _memd(["fix", str(memory)], env, None)
    new = _files(memory)
    killed = 0
    for point in range(1, 400):
        root = tmp_path / "run"
        memory = _seed(root)
        env["XDG_STATE_HOME"] = str(root / "state")
        if _memd(["fix", str(memory)], env, point) == 0:
            break
        killed += 1
        for rel, data in _files(memory).items():  # each file whole: old or new
            assert data in (old.get(rel), new.get(rel)), (point, rel)

        _memd(["fix", "--undo", str(memory)], env, None)

        assert old == _files(memory), point
        assert 0 == _memd(["fix", str(memory)], env, None)
        assert new == _files(memory), point
    else:
        pytest.fail("still killed after 400 write points")
    assert new == _files(memory)
    assert killed >= 8, killed


def test_a_fix_keeps_its_pre_images_in_the_files_own_mode(tmp_path: Path) -> None:
    """A 0600 memory file's pre-image (for `fix --undo`) is 0600 too (#41 class 6)."""
    import stat

    from memd.lint.fix_files import apply_edits, undo_dir
    from memd.lint.fixes import FileEdit

    root, state = tmp_path / "memory", tmp_path / "state"
    root.mkdir()
    private = root / "private.md"
    private.write_bytes(b"token: hunter2\n")
    private.chmod(0o600)
    shared = root / "shared.md"
    shared.write_bytes(b"shared\n")
    shared.chmod(0o644)
    edits = (
        FileEdit(relpath="private.md", old=b"token: hunter2\n", new=b"x\n", reason="t"),
        FileEdit(relpath="shared.md", old=b"shared\n", new=b"y\n", reason="t"),
    )

    assert apply_edits(str(root), edits, str(state))

    journal = Path(undo_dir(str(state), str(root)))
    modes = {
        p.read_bytes(): stat.S_IMODE(p.stat().st_mode) for p in journal.glob("*.pre")
    }
    assert {b"token: hunter2\n": 0o600, b"shared\n": 0o644} == modes
