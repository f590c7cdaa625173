"""The daemon's incremental rebuild of a big directory equals a fresh build."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from memd.daemon.watched import INCREMENTAL_FROM_FILES
from memd.memory.reader import load_memdir
from memd.snapshot.build import build_snapshot
from tests.daemon.conftest import backdate, topic, wait_for

if TYPE_CHECKING:
    from pathlib import Path

    from tests.daemon.conftest import Daemon, Starter


def _link(daemon: Daemon, memory: Path) -> str | None:
    link = daemon.store.directory_for(str(memory), "standard").rstrip(os.sep)
    try:
        return str(os.readlink(link))
    except OSError:
        return None


class TestIncrementalRebuild:
    def test_first_snapshot_after_an_edit_is_exact(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """The snapshot written for one edited file, before any full read, is exact."""
        for number in range(INCREMENTAL_FROM_FILES):
            (project / f"topic_{number:03d}.md").write_text(
                topic(f"topic_{number:03d}")
            )
        backdate(project)
        daemon = start_daemon()
        daemon.wait_fresh(project)
        before = _link(daemon, project)
        (project / "topic_007.md").write_text(
            "---\nname: topic_007\ntype: user\n---\nNo description now.\n"
        )

        after = wait_for(
            lambda: (link := _link(daemon, project)) != before and link,
            what="a new snapshot version",
        )
        key_dir = os.path.dirname(
            daemon.store.directory_for(str(project), "standard").rstrip(os.sep)
        )
        with open(os.path.join(key_dir, str(after), "diagnostics.json")) as handle:
            written = json.load(handle)
        fresh = build_snapshot(load_memdir(str(project)), "standard")

        assert [d.to_dict() for d in fresh.diagnostics] == written
        assert "M006" in {d["code"] for d in written}
