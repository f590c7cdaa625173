"""The one WHEN parser: every documented form, and one-line refusals."""

from __future__ import annotations

from datetime import datetime

import pytest

from memd.history.when import parse_when

NOW = datetime(2026, 12, 4, 15, 30, 0).timestamp()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", datetime(2026, 12, 4, 15, 30, 0)),
        ("10 minutes ago", datetime(2026, 12, 4, 15, 20, 0)),
        ("2 hours ago", datetime(2026, 12, 4, 13, 30, 0)),
        ("1 day ago", datetime(2026, 12, 3, 15, 30, 0)),
        ("30 s ago", datetime(2026, 12, 4, 15, 29, 30)),
        ("2 weeks ago", datetime(2026, 11, 20, 15, 30, 0)),
        ("yesterday", datetime(2026, 12, 3, 0, 0, 0)),
        ("yesterday 18:00", datetime(2026, 12, 3, 18, 0, 0)),
        ("today 09:30", datetime(2026, 12, 4, 9, 30, 0)),
        ("Today 09:30:15", datetime(2026, 12, 4, 9, 30, 15)),
        ("03:11", datetime(2026, 12, 4, 3, 11, 0)),
        ("03:11:42", datetime(2026, 12, 4, 3, 11, 42)),
        ("2026-12-01", datetime(2026, 12, 1, 0, 0, 0)),
        ("2026-12-01T03:11", datetime(2026, 12, 1, 3, 11, 0)),
        ("2026-12-01 03:11:30", datetime(2026, 12, 1, 3, 11, 30)),
    ],
)
def test_forms(text: str, expected: datetime) -> None:
    assert parse_when(text, now=NOW) == expected.timestamp()


def test_zones() -> None:
    assert parse_when("2026-12-01T03:11:00Z", now=NOW) == parse_when(
        "2026-12-01T04:11:00+01:00", now=NOW
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "soon",
        "10 parsecs ago",
        "25:00",
        "3:11",
        "yesterday 3pm",
        "x" * 100,
        "1" * 30 + " minutes ago",
        "2026-13-01",
        "- 5 minutes ago",
    ],
)
def test_refusals_name_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="expected now, 'N minutes"):
        parse_when(text, now=NOW)


def test_long_input_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="cannot read the time"):
        parse_when("1 " * 1_000_000, now=NOW)
