"""A corrupt or linked dream history: one line, never a traceback or a read outside.

Each case takes a real dream's generation and breaks it the way a bad disk, a
hand edit or a planted link would; `undo` (and the next dream, which runs
`recover` first) must refuse with one line naming the file, and must neither
follow a link out of memd's state dir nor change a byte of the memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import DreamResult, run_dream, undo_dream
from memd.kairos.generations import generations_root
from memd.locks import CONSOLIDATE_LOCK_NAME

NOW = datetime(2026, 11, 29, 14, 5).astimezone()
LOG = structlog.get_logger()
EVIL = b"# planted outside memd's state dir\n"


class History:
    def __init__(self, tmp_path: Path) -> None:
        self.memory = tmp_path / "memory"
        self.memory.mkdir()
        (self.memory / "MEMORY.md").write_bytes(b"# Index\n")
        self.config = Config(
            cache_dir=str(tmp_path / "cache"), state_dir=str(tmp_path / "state")
        )
        append_entry(str(self.memory), "#notes the wiki is at w.example", now=NOW)
        assert "ok" == self.dream().status
        self.root = Path(generations_root(self.config.state_dir, str(self.memory)))
        self.generation = self.root / "000001"
        assert (self.generation / "before" / "MEMORY.md").is_file()
        # What a link would lead to: a generation-shaped tree outside.
        self.outside = tmp_path / "outside"
        (self.outside / "before").mkdir(parents=True)
        (self.outside / "after").mkdir()
        for rel in ("MEMORY.md", "project_notes.md"):
            (self.outside / "before" / rel).write_bytes(EVIL)
            (self.outside / "after" / rel).write_bytes((self.memory / rel).read_bytes())
        (self.outside / "plan.json").write_bytes(
            (self.generation / "plan.json").read_bytes()
        )
        (self.outside / "1").write_bytes(b"1\n")

    def dream(self) -> DreamResult:
        return run_dream(str(self.memory), self.config, now=NOW, log=LOG)

    def files(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.memory)): p.read_bytes()
            for p in sorted(self.memory.rglob("*"))
            if p.is_file() and p.name != CONSOLIDATE_LOCK_NAME
        }


def _replace_with_link(path: Path, target: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        import shutil

        shutil.rmtree(path)
    else:
        path.unlink()
    path.symlink_to(target)


CORRUPTIONS: dict[str, Callable[[History], None]] = {
    "APPLYING holds text": lambda h: (h.root / "APPLYING").write_bytes(b"garbage\n"),
    "APPLYING holds bytes that are not ASCII": lambda h: (
        h.root / "APPLYING"
    ).write_bytes(b"\xff\xfe1\n"),
    "APPLYING holds a huge number": lambda h: (h.root / "APPLYING").write_bytes(
        b"9" * 60
    ),
    "APPLYING is empty": lambda h: (h.root / "APPLYING").write_bytes(b""),
    "APPLYING is a link out": lambda h: (h.root / "APPLYING").symlink_to(
        h.outside / "1"
    ),
    "APPLYING is a FIFO": lambda h: os.mkfifo(h.root / "APPLYING"),
    "before/ is a link out": lambda h: _replace_with_link(
        h.generation / "before", h.outside / "before"
    ),
    "before/MEMORY.md is a link out": lambda h: _replace_with_link(
        h.generation / "before" / "MEMORY.md", h.outside / "before" / "MEMORY.md"
    ),
    "the generation is a link out": lambda h: _replace_with_link(
        h.generation, h.outside
    ),
    "the history folder is a link out": lambda h: _replace_with_link(h.root, h.outside),
    "plan.json nests deep": lambda h: (h.generation / "plan.json").write_bytes(
        b"[" * 200_000
    ),
    "plan.json is not an object": lambda h: (h.generation / "plan.json").write_bytes(
        b"[1, 2]"
    ),
    "plan.json names a path out": lambda h: (h.generation / "plan.json").write_bytes(
        (h.generation / "plan.json")
        .read_bytes()
        .replace(b'"MEMORY.md"', b'"../../outside/before/MEMORY.md"')
    ),
    "plan.json's number is not its folder's": lambda h: (
        h.generation / "plan.json"
    ).write_bytes(
        (h.generation / "plan.json")
        .read_bytes()
        .replace(b'"number": 1', b'"number": 7')
    ),
    "plan.json is a link out": lambda h: _replace_with_link(
        h.generation / "plan.json", h.outside / "plan.json"
    ),
}


@pytest.fixture(name="history")
def _history(tmp_path: Path) -> History:
    return History(tmp_path)


class TestCorruptHistory:
    @pytest.mark.parametrize("case", sorted(CORRUPTIONS))
    def test_undo_refuses_in_one_line_and_reads_nothing_outside(
        self, history: History, case: str
    ) -> None:
        """Undo of a corrupt or linked generation: one line, memory unchanged."""
        CORRUPTIONS[case](history)
        before = history.files()

        ok, message = undo_dream(str(history.memory), history.config, now=NOW, log=LOG)

        assert (False, 1) == (ok, len(message.splitlines())), message
        assert "corrupt" in message
        assert before == history.files()
        assert EVIL not in b"".join(history.files().values())

    @pytest.mark.parametrize("case", sorted(c for c in CORRUPTIONS if "APPLYING" in c))
    def test_the_next_dream_fails_in_one_line(
        self, history: History, case: str
    ) -> None:
        """A corrupt APPLYING fails the next dream in one line; it writes nothing."""
        CORRUPTIONS[case](history)
        append_entry(str(history.memory), "#notes the build takes 5 minutes", now=NOW)
        before = history.files()

        result = history.dream()

        assert ("failed", 1) == (result.status, len(result.message.splitlines()))
        assert "corrupt" in result.message
        assert before == history.files()
