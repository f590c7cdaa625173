"""Daily-log paths for every month and day width: `logs/YYYY/MM/YYYY-MM-DD.md`.

The agent (REFERENCE.md, daily_log_path) pads month and day to two digits.
memd's writer, its lister and the agent's path must agree on every date, or
a log is written where neither the dream nor the agent looks.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from memd.claude_code.paths import daily_log_path
from memd.kairos.daily_log import (
    RetentionAction,
    append_entry,
    apply_retention,
    list_logs,
    log_date,
    log_relpath,
)

LEAP_YEAR = [datetime.date(2028, 1, 1) + datetime.timedelta(days=n) for n in range(366)]
SHAPE = re.compile(r"logs/(\d{4})/(\d{2})/(\d{4})-(\d{2})-(\d{2})\.md")
# One day of each width in every month: 1 and 9 pad, 10 does not, the last day.
SAMPLES = [
    d
    for d in LEAP_YEAR
    if d.day in (1, 9, 10) or (d + datetime.timedelta(days=1)).day == 1
]


class TestLogPaths:
    def test_every_day_of_a_leap_year(self) -> None:
        """Each day's relpath pads month and day, names the day, is the agent's path."""
        for day in LEAP_YEAR:
            relpath = log_relpath(day)
            m = SHAPE.fullmatch(relpath)

            assert m is not None, relpath
            year, month, year2, month2, dom = (int(g) for g in m.groups())
            assert (day.year, day.month, day.year, day.month, day.day) == (
                year,
                month,
                year2,
                month2,
                dom,
            )
            assert day == log_date(relpath)
            assert f"/m/{relpath}" == daily_log_path("/m", day)

    @pytest.mark.parametrize(
        ("day", "expected"),
        [
            (datetime.date(2026, 1, 1), "logs/2026/01/2026-01-01.md"),
            (datetime.date(2026, 9, 9), "logs/2026/09/2026-09-09.md"),
            (datetime.date(2026, 10, 10), "logs/2026/10/2026-10-10.md"),
            (datetime.date(2026, 11, 30), "logs/2026/11/2026-11-30.md"),
            (datetime.date(2028, 2, 29), "logs/2028/02/2028-02-29.md"),
        ],
    )
    def test_written_by_hand(self, day: datetime.date, expected: str) -> None:
        """A few dates spelled out, so the shape itself is pinned."""
        assert expected == log_relpath(day)

    def test_append_and_list_agree_in_every_month(self, tmp_path: Path) -> None:
        """Each sample day's entry lands at the agent's path; all listed, in order."""
        for day in reversed(SAMPLES):
            now = datetime.datetime.combine(day, datetime.time(12, 0))
            written = append_entry(str(tmp_path), f"note for {day}", now=now)

            assert daily_log_path(str(tmp_path), day) == written
            assert (tmp_path / log_relpath(day)).is_file()

        assert [log_relpath(d) for d in SAMPLES] == list(list_logs(str(tmp_path)))

    def test_only_real_log_names_in_their_own_month_are_listed(
        self, tmp_path: Path
    ) -> None:
        """Another month's date, a suffix, a copy or no such day: not a log."""
        month = tmp_path / "logs" / "2026" / "11"
        month.mkdir(parents=True)
        names = (
            "2026-11-29.md",
            "2026-12-01.md",
            "2026-11-29.md.bak",
            "2026-11-29-copy.md",
            "2026-11-31.md",
            "2026-11-2x.md",
        )
        for name in names:
            (month / name).write_text("# a day\n")

        assert ("logs/2026/11/2026-11-29.md",) == list_logs(str(tmp_path))

    def test_listing_creates_nothing(self, tmp_path: Path) -> None:
        """A memory directory without logs/ lists none and still has none."""
        assert ((), False) == (list_logs(str(tmp_path)), (tmp_path / "logs").exists())


def _consolidated_logs(root: Path, days: list[datetime.date]) -> dict[str, int]:
    """Write one entry per day; return watermarks that say all were consolidated."""
    marks = {}
    for day in days:
        now = datetime.datetime.combine(day, datetime.time(9, 0))
        append_entry(str(root), f"note of {day}", now=now)
        marks[log_relpath(day)] = (root / log_relpath(day)).stat().st_size
    return marks


class TestRetention:
    TODAY = datetime.date(2026, 11, 29)

    @pytest.mark.parametrize("delta", [-1, 0, 1])
    def test_a_log_exactly_days_old_is_kept(self, tmp_path: Path, delta: int) -> None:
        """With 30 days, a log 29 or 30 days old stays and one 31 days old goes."""
        day = self.TODAY - datetime.timedelta(days=30 + delta)
        marks = _consolidated_logs(tmp_path, [day])

        done = apply_retention(
            str(tmp_path), marks, today=self.TODAY, days=30, action="remove"
        )

        assert (delta > 0) == bool(done)
        assert (delta <= 0) == (tmp_path / log_relpath(day)).exists()

    def test_remove_removes_and_archives_nothing(self, tmp_path: Path) -> None:
        """`remove` deletes old consolidated logs, reports each, makes no archive."""
        days = [datetime.date(2026, 9, 1), datetime.date(2026, 9, 2)]
        marks = _consolidated_logs(tmp_path, days)

        done = apply_retention(
            str(tmp_path), marks, today=self.TODAY, days=30, action="remove"
        )

        assert [RetentionAction(log_relpath(d), "remove", None) for d in days] == list(
            done
        )
        assert ((), False) == (
            list_logs(str(tmp_path)),
            (tmp_path / "logs" / "archive").exists(),
        )

    def test_an_unconsolidated_log_does_not_stop_the_rest(self, tmp_path: Path) -> None:
        """The oldest log still has entries to file; the next old one is archived."""
        days = [datetime.date(2026, 9, 1), datetime.date(2026, 9, 2)]
        marks = _consolidated_logs(tmp_path, days)
        marks[log_relpath(days[0])] -= 1

        done = apply_retention(
            str(tmp_path), marks, today=self.TODAY, days=30, action="archive"
        )

        assert [log_relpath(days[1])] == [d.relpath for d in done]
        assert (tmp_path / "logs/archive/2026/09/2026-09-02.md").is_file()
        assert (tmp_path / log_relpath(days[0])).is_file()
