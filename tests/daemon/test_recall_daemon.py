"""The daemon keeps the recall index current in the same pass as the snapshots."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.daemon.conftest import Starter, topic, wait_for

pytestmark = [pytest.mark.daemon, pytest.mark.slow]


def _indexed(cache: Path, relpath: str) -> bool:
    """Whether the daemon's own database has a row for `relpath`."""
    path = cache / "memd" / "recall.sqlite3"
    if not path.exists():
        return False
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]
            if "relpath" in columns:
                query = f"SELECT count(*) FROM '{table}' WHERE relpath = ?"  # noqa: S608
                if conn.execute(query, (relpath,)).fetchone()[0]:
                    return True
    return False


class TestRecallIndex:
    def test_a_save_is_recalled_and_a_delete_is_forgotten(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """The daemon indexes what it reads; `memd recall` finds it, then loses it."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        saved = project / "project_zeppelin.md"
        saved.write_text(
            topic(
                "project_zeppelin",
                type_="project",
                body="The zeppelin hangar moves to Friedrichshafen.\n\n"
                "**Why:** cheaper.\n\n**How to apply:** book early.\n",
            )
        )
        daemon.wait_fresh(project)
        wait_for(
            lambda: _indexed(daemon.home.cache, "project_zeppelin.md"),
            what="the daemon's index row",
        )

        found = daemon.memd("recall", "zeppelin hangar", "--all", "--format", "json")
        assert 0 == found.returncode, found.stderr
        assert "project_zeppelin.md" in found.stdout
        os.unlink(saved)
        daemon.wait_fresh(project)
        gone = daemon.memd("recall", "zeppelin hangar", "--all", "--format", "json")

        assert "project_zeppelin.md" not in json.dumps(gone.stdout)
