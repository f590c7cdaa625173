"""Retention: every version a month, one a day for a year, none after; the size cap."""

from __future__ import annotations

from pathlib import Path

from memd.history.retention import DAY, plan_prune
from memd.history.store import History, Retention

NOW = 1_000 * DAY


def test_plan_keeps_all_recent_daily_older_and_none_ancient() -> None:
    rows = [
        ("a.md", 1, NOW - 500 * DAY, False),  # past a year: goes
        ("a.md", 2, NOW - 100 * DAY + 10, False),  # not the day's last: goes
        ("a.md", 3, NOW - 100 * DAY + 20, False),  # the day's last: kept
        ("a.md", 4, NOW - 5 * DAY, False),
        ("a.md", 5, NOW - 5 * DAY + 1, False),  # both recent: kept
    ]
    doomed = plan_prune(
        rows,
        existing={"a.md"},
        sizes={},
        now=NOW,
        keep_all_seconds=30 * DAY,
        keep_daily_seconds=365 * DAY,
        max_bytes=1 << 30,
    )
    assert doomed == [("a.md", 1), ("a.md", 2)]


def test_plan_never_drops_the_newest_version_of_an_existing_file() -> None:
    rows = [("a.md", 1, 0.0, False), ("b.md", 2, 0.0, False), ("b.md", 3, 1.0, True)]
    doomed = plan_prune(
        rows,
        existing={"a.md"},
        sizes={("a.md", 1): 10, ("b.md", 2): 10},
        now=NOW,
        keep_all_seconds=DAY,
        keep_daily_seconds=DAY,
        max_bytes=0,
    )
    assert ("a.md", 1) not in doomed
    assert {("b.md", 2), ("b.md", 3)} <= set(doomed)


def test_the_cap_takes_the_oldest_first_and_no_deletion_outlives_its_file() -> None:
    rows = [("a.md", r, NOW - 10 + r, r == 3) for r in range(1, 6)]
    sizes = {("a.md", r): 100 for r in range(1, 6)}
    doomed = plan_prune(
        rows,
        existing={"a.md"},
        sizes=sizes,
        now=NOW,
        keep_all_seconds=30 * DAY,
        keep_daily_seconds=365 * DAY,
        max_bytes=250,
    )
    assert doomed == [("a.md", 1), ("a.md", 2), ("a.md", 3)]


def test_prune_on_a_real_store(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    history = History.open(str(tmp_path / "state"))
    body = "".join(f"line {i}\n" for i in range(100))
    for i in range(40):
        (memory / "a.md").write_text(body + f"edit {i}\n")
        history.record(str(memory), cause="edit", at=NOW - 400 * DAY + i * 3600)
    (memory / "gone.md").write_text("short-lived\n")
    history.record(str(memory), cause="edit", at=NOW - 399 * DAY)
    (memory / "gone.md").unlink()
    history.record(str(memory), cause="edit", at=NOW - 398 * DAY)
    dropped = history.prune(str(memory), Retention(), now=NOW)
    assert dropped == 39 + 2
    assert [c.rev for c in history.changes(str(memory))] == [40]
    assert history.file_at(str(memory), "a.md", 40) == (body + "edit 39\n").encode()
    assert history.file_at(str(memory), "gone.md", 42) is None
    assert all(isinstance(b, bytes) for b in history.every_blob())
    # the survivor was a delta on a pruned base: it was re-encoded in full
    assert [r[0] for r in history._db.execute("SELECT depth FROM blobs")] == [0]
