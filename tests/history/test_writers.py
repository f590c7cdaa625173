"""memd's own writers record their cause: a dream and its undo, through the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from memd.claude_code.paths import resolve_memory_location
from memd.history.store import History
from memd.kairos.daily_log import append_entry

MEMD = (sys.executable, "-m", "memd")


def test_a_dream_and_its_undo_are_changes(git_repo: Path) -> None:
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    (memory / "existing.md").write_text(
        "---\nname: Existing\ndescription: A file the user wrote\ntype: project\n---\n"
        "Mine.\n"
    )
    (memory / "MEMORY.md").write_text("- [Existing](existing.md) — a file\n")
    append_entry(str(memory), "[feedback] #testing use a real database",
                 now=datetime(2026, 11, 20, 9, 0))  # fmt: skip
    before = (memory / "MEMORY.md").read_bytes()
    for argv in (("dream", "--now"), ("dream", "undo")):
        done = subprocess.run(
            [*MEMD, *argv, "--project", str(git_repo)],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    state = os.path.join(os.environ["XDG_STATE_HOME"], "memd")
    with History.open(state) as history:
        changes = history.changes(str(memory))
        causes = [c.cause for c in changes]
        assert causes[:2] == ["dream-undo", "dream"], causes
        dream = changes[1]
        assert dream.files
        assert history.file_at(str(memory), "MEMORY.md", changes[0].rev) == before
