"""Crash safety: a real `memd dream` SIGKILLed after every write leaves whole files.

`MEMD_DREAM_CRASH_AFTER_WRITES=k` makes the dream kill itself right after its
k-th write (lock, topic files, MEMORY.md, state). For every k the memory files
must each be exactly as before or exactly as after, and a rerun must finish
with every entry filed once.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from memd.agent.paths import resolve_memory_location
from memd.kairos.daily_log import append_entry
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
SEED_ENTRIES = (
    (datetime(2026, 11, 28, 9, 0), "[feedback] #testing use a real database"),
    (datetime(2026, 11, 28, 9, 5), "untagged note\nwith a second line"),
    (datetime(2026, 11, 29, 10, 0), "#testing second rule"),
    (datetime(2026, 11, 29, 10, 1), "[user] #role senior Go developer"),
    (datetime(2026, 11, 29, 10, 2), "#existing appended to a user file"),
)
EXISTING = (
    b"---\nname: Existing\ndescription: A file the user wrote\ntype: project\n---\n"
    b"Mine.\n"
)
INDEX = b"# Index\n\n- [Existing](existing.md) \xe2\x80\x94 A file the user wrote\n"


def _snapshot(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and p.name != ".consolidate-lock"
    }


def _seed(memory: Path, state: Path) -> None:
    shutil.rmtree(memory, ignore_errors=True)
    shutil.rmtree(state, ignore_errors=True)
    memory.mkdir(parents=True)
    (memory / "existing.md").write_bytes(EXISTING)
    (memory / "MEMORY.md").write_bytes(INDEX)
    for when, text in SEED_ENTRIES:
        append_entry(str(memory), text, now=when)


def _dream(project: Path, home: Home, crash_after: int | None) -> int:
    extra = (
        {}
        if crash_after is None
        else {"MEMD_DREAM_CRASH_AFTER_WRITES": str(crash_after)}
    )
    done = subprocess.run(
        [MEMD, "dream", "--now", "--project", str(project)],
        env=home.env(**extra),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr.decode()
    return done.returncode


@pytest.mark.slow
class TestDreamCrash:
    def test_every_write_point(self, git_repo: Path, isolated_home: Home) -> None:
        """Killed after each write: files whole, a rerun files every entry once."""
        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        state = isolated_home.state / "memd"
        _seed(memory, state)
        before = _snapshot(memory)
        assert 0 == _dream(git_repo, isolated_home, None)
        after = _snapshot(memory)
        assert before != after

        crashed_at: list[int] = []
        for k in range(1, 30):
            _seed(memory, state)
            code = _dream(git_repo, isolated_home, k)
            if code == 0:
                break
            crashed_at.append(k)
            middle = _snapshot(memory)
            for relpath in sorted(set(before) | set(after) | set(middle)):
                assert middle.get(relpath) in (
                    before.get(relpath),
                    after.get(relpath),
                ), (
                    k,
                    relpath,
                )
            assert [] == list(memory.rglob(".memd-tmp-*"))

            assert 0 == _dream(git_repo, isolated_home, None)

            assert after == _snapshot(memory), k

        # lock, 3 new topic files, 1 appended, MEMORY.md, dreams.json, lock release
        assert list(range(1, 9)) == crashed_at
