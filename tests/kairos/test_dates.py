"""Every date the dream reads or computes goes through one range-checked resolver."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import structlog
from hypothesis import given
from hypothesis import strategies as st

from memd.config import Config
from memd.kairos.consolidate import LogEntry, plan_consolidation
from memd.kairos.dates import parse_day, resolve_relative_dates, shift
from memd.kairos.dream import run_dream

LOG = structlog.get_logger()
_PHRASES = [
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "last monday",
    "next sunday",
    "this friday",
    "on wednesday",
    "coming tuesday",
    "next week",
    "last week",
    "this week",
    "in 999 weeks",
    "999 weeks ago",
    "3 days ago",
    "in 2 days",
]


def _entry(text: str, day: str) -> LogEntry:
    return LogEntry(
        log=f"logs/{day[:4]}/{day[5:7]}/{day}.md",
        offset=0,
        end=1,
        date=day,
        time=None,
        text=text,
    )


class TestResolver:
    @given(day=st.dates(), phrase=st.sampled_from(_PHRASES))
    def test_any_day_any_phrase_never_raises(self, day: dt.date, phrase: str) -> None:
        """From year 1 to 9999, a phrase becomes a real date or stays as written."""
        problems: list[str] = []
        text = f"the release is {phrase}"

        out = resolve_relative_dates(text, day.isoformat(), problems)

        if out == text:
            assert problems  # kept as written: said why
        else:
            assert not problems
            assert parse_day(out.rsplit(" ", 1)[-1].strip("()")) is not None

    def test_the_edges_of_the_calendar(self) -> None:
        """9999-12-31 has no tomorrow and 0001-01-01 no yesterday: kept, reported."""
        problems: list[str] = []

        late = resolve_relative_dates("due tomorrow", "9999-12-31", problems)
        early = resolve_relative_dates("done last week", "0001-01-01", problems)

        assert ("due tomorrow", "done last week") == (late, early)
        assert 2 == len(problems)
        assert "9999-12-31" in problems[0]

    def test_a_bad_log_date_is_reported_not_raised(self) -> None:
        """A day that is not in the calendar never reaches date arithmetic."""
        problems: list[str] = []

        assert "due tomorrow" == resolve_relative_dates(
            "due tomorrow", "9999-99-99", problems
        )
        assert problems
        assert parse_day("9999-99-99") is None
        assert parse_day("2026-02-29") is None
        assert shift(dt.date.max, 1) is None


class TestPlan:
    def test_a_log_dated_9999_12_31_with_tomorrow_is_filed(self) -> None:
        """The entry is kept as written and the problem named, not a crash."""
        plan = plan_consolidation(
            [_entry("#release the release is tomorrow", "9999-12-31")], {}, None
        )

        text = next(
            e for e in plan.edits if e.relpath == "project_release.md"
        ).new.decode()
        assert "- the release is tomorrow <!-- memd:fact 9999-12-31" in text
        assert any("tomorrow" in p and "9999-12-31" in p for p in plan.problems)

    @given(
        first=st.sampled_from(["9999-99-99", "2026-13-01", "0000-00-00", "9999-12-31"])
    )
    def test_a_hand_edited_date_never_freezes_its_fact(self, first: str) -> None:
        """A fact dated in no calendar (or far ahead) still takes a newer value."""
        topic = (
            "<!-- memd:facts v2 -->\n"
            f"- the gateway timeout is 30 s <!-- memd:fact {first} {first} 4 -->\n"
            "<!-- memd:end -->\n"
        ).encode()

        plan = plan_consolidation(
            [_entry("#gateway the gateway timeout is 60 s", "2026-11-30")],
            {"gateway.md": topic},
            None,
            today="2026-11-30",
        )

        text = next(e for e in plan.edits if e.relpath == "gateway.md").new.decode()
        assert "- the gateway timeout is 60 s <!-- memd:fact 2026-11-30" in text
        assert "previously: the gateway timeout is 30 s" in text
        assert plan.problems


def test_a_dream_over_a_log_dated_9999_12_31(tmp_path: Path) -> None:
    """The real dream over a far-future log: ok, the entry filed, nothing raised."""
    memory = tmp_path / "memory"
    log = memory / "logs" / "9999" / "12" / "9999-12-31.md"
    log.parent.mkdir(parents=True)
    log.write_text("# 9999-12-31\n\n- 10:00 #release the release is tomorrow\n")
    config = Config(cache_dir=str(tmp_path / "c"), state_dir=str(tmp_path / "s"))
    now = dt.datetime(2026, 11, 30, 12, 0).astimezone()

    first = run_dream(str(memory), config, now=now, log=LOG)
    log.write_text(log.read_text() + "- 11:00 #release the freeze is next week\n")
    second = run_dream(str(memory), config, now=now, log=LOG)

    assert ("ok", "ok") == (first.status, second.status)
    text = (memory / "project_release.md").read_text()
    assert "the release is tomorrow" in text
    assert "the freeze is next week" in text
    assert first.summary.get("problems")
