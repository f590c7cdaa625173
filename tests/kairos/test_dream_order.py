"""The dream files an earlier day's entries before a later day's, however logged.

Driven through the public `memd dream`, so it holds whatever the dream's
insides become.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from memd.kairos.daily_log import append_entry
from tests.kairos.test_dream_gate import _dream, _memory


class TestFilingOrder:
    def test_the_earlier_day_comes_first(self, git_repo: Path) -> None:
        """Day 2 logged first, day 1 after: day 1's entries are filed above day 2's."""
        memory = _memory(git_repo)
        day1 = datetime.datetime(2026, 3, 6, 9, 0).astimezone()
        day2 = datetime.datetime(2026, 3, 7, 9, 0).astimezone()
        minute = datetime.timedelta(minutes=1)
        # Logged out of day order: day 2's entries first.
        for n, when in (("three", day2), ("four", day2 + minute), ("one", day1)):
            append_entry(str(memory), f"#order entry {n}", now=when)
        append_entry(str(memory), "#order entry two", now=day1 + minute)

        result = _dream(git_repo)

        assert 0 == result.returncode, result.stdout + result.stderr
        text = (memory / "project_order.md").read_text()
        day1_at = [text.index(f"entry {n}") for n in ("one", "two")]
        day2_at = [text.index(f"entry {n}") for n in ("three", "four")]
        assert max(day1_at) < min(day2_at)
