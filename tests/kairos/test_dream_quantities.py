"""The dream's update rule: a quantity is a value, an identifier names (#41 class 11).

"Backups go to the bucket acme-backups-eu with 35-day retention" supersedes
the same sentence with "14-day retention": a changed quantity of the same
subject is an update, however the quantity is written (`35 days`, `35d`,
`35-day`). Near-miss identifiers (ticket 4411 and 4502, `4411-hotfix` and
`4502-hotfix`) stay two facts.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import structlog

from memd.config import Config
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import run_dream
from tests.kairos.test_dream_rule import _file

LOG = structlog.get_logger()

# (old, new): the same subject, another quantity.
UPDATES = [
    (
        "Backups go to the bucket acme-backups-eu with 14-day retention",
        "Backups go to the bucket acme-backups-eu with 35-day retention",
    ),
    (
        "Sessions expire after a 30-minute idle timeout",
        "Sessions expire after a 15-minute idle timeout",
    ),
    (
        "the nightly job has a 90-second budget",
        "the nightly job has a 120-second budget",
    ),
    ("ship the 32-bit agent to the kiosks", "ship the 64-bit agent to the kiosks"),
    ("logs are kept on a 7-day rotation", "logs are kept on a 30-day rotation"),
    ("quota is a 10-GB volume per user", "quota is a 20-GB volume per user"),
    ("keep snapshots for 7 days", "keep snapshots for 30 days"),
    ("keep snapshots for 7d", "keep snapshots for 30d"),
    ("the trial runs on a 2-week clock", "the trial runs on a 3-week clock"),
]

# (one, other): one template, two identifiers: two facts.
DISTINCT = [
    (
        "ticket 4411 is blocked by the migration",
        "ticket 4502 is blocked by the migration",
    ),
    ("deploy the 4411-hotfix branch today", "deploy the 4502-hotfix branch today"),
    (
        "the bucket acme-backups-eu has versioning",
        "the bucket acme-backups-us has versioning",
    ),
    ("region us-east-1 hosts the blue pool", "region us-east-2 hosts the blue pool"),
    ("PR 118-a fixes the upload test", "PR 131-a fixes the upload test"),
    ("host db-7 runs the 35-day backup", "host db-9 runs the 35-day backup"),
]


@pytest.mark.parametrize(("old", "new"), UPDATES)
def test_a_changed_quantity_supersedes(old: str, new: str) -> None:
    """One fact: the newer quantity current, the older one its history."""
    book = _file(old, new)

    assert [(new, [old])] == [(f.text, [p.text for p in f.history]) for f in book.facts]


@pytest.mark.parametrize(("one", "other"), DISTINCT)
def test_near_miss_identifiers_stay_two_facts(one: str, other: str) -> None:
    """An identifier with a number in it names a thing; it is never a value."""
    book = _file(one, other)

    assert [one, other] == [f.text for f in book.facts]
    assert all(not f.history for f in book.facts)


def test_the_dream_shows_only_the_newest_retention(tmp_path: Path) -> None:
    """The issue's example through a real dream: 35-day is current, 14-day history."""
    memory = tmp_path / "memory"
    memory.mkdir()
    config = Config(cache_dir=str(tmp_path / "c"), state_dir=str(tmp_path / "s"))
    old, new = UPDATES[0]
    append_entry(str(memory), old, now=dt.datetime(2026, 11, 28, 9, 0).astimezone())
    append_entry(str(memory), new, now=dt.datetime(2026, 11, 29, 9, 0).astimezone())
    for text in DISTINCT[0]:
        append_entry(
            str(memory), text, now=dt.datetime(2026, 11, 29, 10, 0).astimezone()
        )
    now = dt.datetime(2026, 11, 30, 9, 0).astimezone()

    assert run_dream(str(memory), config, now=now, log=LOG).ok

    current: list[str] = []
    for topic in memory.glob("*.md"):
        if topic.name == "MEMORY.md":
            continue
        text = topic.read_text()
        block = text.split("<!-- memd:facts -->", 1)[-1]
        current += [
            line
            for line in block.splitlines()
            if line.startswith("- ") and "previously" not in line
        ]
    assert 1 == sum("35-day retention" in line for line in current), current
    assert not any(
        line.startswith("- Backups") and "14-day" in line for line in current
    )
    assert 1 == sum("ticket 4411" in line for line in current)
    assert 1 == sum("ticket 4502" in line for line in current)
    everything = "".join(p.read_text() for p in memory.rglob("*.md"))
    assert "14-day retention" in everything  # kept as history, never lost
