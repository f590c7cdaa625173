"""The daemon's log stays small whatever happens under a memory dir (issue 22).

Two 400-level directory chains made while `memd run` watched once put
104-320 MiB into its stderr in 5 s: watchdog re-added each directory its
walk had already found and warned every time with a 700 KB repr.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.daemon.conftest import Starter, chain, topic, wait_for

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

LOG_BOUND_BYTES = 1024 * 1024
LINE_BOUND_BYTES = 64 * 1024


def _chains_at_once(tops: list[Path], depth: int) -> None:
    """Nest `depth` directories below each of `tops`, all at the same time."""
    for top in tops:
        top.mkdir()
    threads = [threading.Thread(target=chain, args=(top, depth)) for top in tops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class TestLogFlood:
    def test_deep_chains_made_while_watching_keep_the_log_small(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """The chains cost a few lines; a file written afterwards is still linted."""
        daemon = start_daemon(MEMD_SWEEP_SECONDS="2")  # health is checked as often
        daemon.wait_fresh(project)

        _chains_at_once([project / "a", project / "b"], 400)
        # The daemon has seen the chains once it reports their directory deep.
        wait_for(
            lambda: daemon.events("watch_shallow") or daemon.events("watch_deaf"),
            what="the deep chains noticed",
        )
        (project / "user_later.md").write_text(topic("user_later"))
        (project / "broken_later.md").write_text("no frontmatter\n")
        wait_for(
            lambda: any(
                e.get("file") == "broken_later.md"
                for e in daemon.events("memory_file_broken")
            ),
            what="the later file linted",
        )
        daemon.wait_fresh(project)
        daemon.stop()
        size = daemon.log_path.stat().st_size
        longest = max(len(line) for line in daemon.log_path.read_bytes().splitlines())

        assert size < LOG_BOUND_BYTES, size
        assert longest < LINE_BOUND_BYTES, longest
        assert [] == [
            e
            for e in daemon.events("python_warning")
            if "already exists" in str(e.get("message"))
        ]
