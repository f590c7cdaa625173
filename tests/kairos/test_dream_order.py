"""The dream files entries in the order they were logged, across days and logs.

Driven through the public `memd dream`, so it holds whatever the dream's
insides become.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from memd.kairos.daily_log import append_entry
from tests.kairos.test_dream_gate import _dream, _memory


class TestFilingOrder:
    def test_entries_keep_their_logged_order(self, git_repo: Path) -> None:
        """Within a day by time logged, and the earlier day first."""
        memory = _memory(git_repo)
        day1 = datetime.datetime(2026, 3, 6, 9, 0).astimezone()
        day2 = datetime.datetime(2026, 3, 7, 9, 0).astimezone()
        # Logged out of day order: day 2's entries first.
        for n, when in (("three", day2), ("four", day2), ("one", day1)):
            append_entry(str(memory), f"#order entry {n}", now=when)
        append_entry(str(memory), "#order entry two", now=day1)

        result = _dream(git_repo)

        assert 0 == result.returncode, result.stdout + result.stderr
        text = (memory / "order.md").read_text()
        at = [text.index(f"entry {n}") for n in ("one", "two", "three", "four")]
        assert sorted(at) == at
