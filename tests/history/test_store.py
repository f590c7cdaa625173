"""The history store on real files: record, list, read back, renames, deltas, losses."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memd.history import codec
from memd.history.record import recording
from memd.history.store import History


@pytest.fixture(name="mem")
def _mem(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    path.mkdir()
    return path


@pytest.fixture(name="history")
def _history(tmp_path: Path) -> History:
    return History.open(str(tmp_path / "state"))


def test_nothing_changed_records_nothing(mem: Path, history: History) -> None:
    (mem / "a.md").write_text("one\n")
    assert history.record(str(mem), cause="edit") is not None
    assert history.record(str(mem), cause="edit") is None
    (mem / "a.md").write_text("one\n")  # same bytes, new stat
    assert history.record(str(mem), cause="edit") is None


def test_every_kind_is_recorded_and_read_back(mem: Path, history: History) -> None:
    (mem / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (mem / "a.md").write_bytes(b"first\r\n\xff")
    (mem / "team").mkdir()
    (mem / "team" / "t.md").write_text("team\n")
    first = history.record(str(mem), cause="edit", session="s1")
    assert first is not None
    assert {f.relpath: f.kind for f in first.files} == {
        "MEMORY.md": "created",
        "a.md": "created",
        "team/t.md": "created",
    }
    (mem / "a.md").write_bytes(b"second\n")
    os.rename(mem / "team" / "t.md", mem / "team" / "u.md")
    (mem / "MEMORY.md").unlink()
    second = history.record(str(mem), cause="fix")
    assert second is not None
    kinds = {f.relpath: (f.kind, f.old_relpath) for f in second.files}
    assert kinds == {
        "MEMORY.md": ("deleted", None),
        "a.md": ("modified", None),
        "team/u.md": ("renamed", "team/t.md"),
    }
    assert history.file_at(str(mem), "a.md", first.rev) == b"first\r\n\xff"
    assert history.file_at(str(mem), "a.md", second.rev) == b"second\n"
    assert history.file_at(str(mem), "MEMORY.md", second.rev) is None
    assert history.file_at(str(mem), "team/t.md", second.rev) is None
    assert history.file_at(str(mem), "team/u.md", second.rev) == b"team\n"
    assert [c.cause for c in history.changes(str(mem))] == ["fix", "edit"]
    assert history.changes(str(mem))[1].session == "s1"
    assert [c.rev for c in history.changes(str(mem), relpath="a.md")] == [
        second.rev,
        first.rev,
    ]


def test_hidden_links_and_outside_files_are_never_read(
    mem: Path, history: History, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("outside\n")
    (mem / "link.md").symlink_to(secret)
    (mem / "sub").symlink_to(tmp_path)
    (mem / ".consolidate-lock").write_text("123")
    (mem / "real.md").write_text("real\n")
    change = history.record(str(mem), cause="edit")
    assert change is not None
    assert [f.relpath for f in change.files] == ["real.md"]


def test_small_edits_are_stored_as_bounded_deltas(mem: Path, history: History) -> None:
    body = "".join(f"line {i}: some remembered fact\n" for i in range(120))
    for i in range(40):
        (mem / "a.md").write_text(body + f"edit {i}\n")
        history.record(str(mem), cause="edit")
    depths = [
        row[0] for row in history._db.execute("SELECT depth FROM blobs ORDER BY id")
    ]
    assert max(depths) == codec.FULL_EVERY - 1
    assert depths.count(0) == 3  # a full copy every FULL_EVERY versions
    assert history.stored_bytes() < 40 * len(body) // 10
    for change in history.changes(str(mem)):
        data = history.file_at(str(mem), "a.md", change.rev)
        assert data is not None
        assert data.startswith(body.encode())


def test_a_mass_deletion_is_a_loss(mem: Path, history: History) -> None:
    for i in range(5):
        (mem / f"t{i}.md").write_text("fact\n" * 50)
    history.record(str(mem), cause="edit", at=1000.0)
    for i in range(3):
        (mem / f"t{i}.md").unlink()
    change = history.record(str(mem), cause="dream", at=5000.0)
    assert change is not None
    assert change.is_loss
    assert change.loss == "3 memory files were deleted"


def test_a_burst_of_small_deletions_is_one_loss(mem: Path, history: History) -> None:
    for i in range(12):
        (mem / f"t{i}.md").write_text("fact\n" * 50)
    history.record(str(mem), cause="edit", at=1000.0)
    results = []
    for i in range(3):
        (mem / f"t{i}.md").unlink()
        change = history.record(str(mem), cause="edit", at=5000.0 + i)
        assert change is not None
        results.append(change.is_loss)
    assert results == [False, False, True]


def test_an_index_losing_a_fifth_of_its_reach_is_a_loss_a_shrunk_file_is_not(
    mem: Path, history: History
) -> None:
    links = "".join(f"- [T{i}](t{i}.md) — fact {i}\n" for i in range(10))
    for i in range(10):
        (mem / f"t{i}.md").write_text(f"fact {i} worth keeping\n")
    (mem / "MEMORY.md").write_text(links)
    (mem / "big.md").write_text("x" * 5000)
    history.record(str(mem), cause="edit", at=1000.0)
    (mem / "MEMORY.md").write_text("".join(links.splitlines(True)[:8]))
    change = history.record(str(mem), cause="edit", at=5000.0)
    assert change is not None
    assert change.loss == "MEMORY.md no longer reaches 2 of its 10 memory files"
    # A file that changed shape (60 % shorter, far from empty) reaches as before.
    (mem / "big.md").write_text("x" * 2000)
    change = history.record(str(mem), cause="edit", at=9000.0)
    assert change is not None
    assert not change.is_loss


def test_logs_are_kept_but_never_a_loss(mem: Path, history: History) -> None:
    logs = mem / "logs" / "2026" / "11"
    logs.mkdir(parents=True)
    for day in range(1, 6):
        (logs / f"2026-11-0{day}.md").write_text("- entry\n")
    history.record(str(mem), cause="edit", at=1000.0)
    for path in logs.iterdir():
        path.unlink()
    change = history.record(str(mem), cause="dream", at=5000.0)
    assert change is not None
    assert len(change.files) == 5
    assert not change.is_loss


def test_recording_names_the_writer_and_keeps_edits_apart(
    mem: Path, tmp_path: Path
) -> None:
    state = str(tmp_path / "state")
    (mem / "a.md").write_text("by hand\n")
    with recording(state, str(mem), cause="fix"):
        (mem / "b.md").write_text("by fix\n")
    with History.open(state) as history:
        changes = history.changes(str(mem))
    assert [(c.cause, [f.relpath for f in c.files]) for c in changes] == [
        ("fix", ["b.md"]),
        ("edit", ["a.md"]),
    ]


def test_recording_is_off_when_history_is(mem: Path, tmp_path: Path) -> None:
    from memd.config import load_config

    state = str(tmp_path / "state")
    config = load_config({**os.environ, "MEMD_HISTORY_ENABLED": "false"})
    with recording(state, str(mem), cause="fix", config=config):
        (mem / "b.md").write_text("by fix\n")
    assert not (tmp_path / "state" / "history").exists()


def test_two_processes_share_the_store(mem: Path, tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    first, second = History.open(state), History.open(state)
    (mem / "a.md").write_text("one\n")
    assert first.record(str(mem), cause="edit") is not None
    assert second.record(str(mem), cause="edit") is None  # sees the first's tree
    (mem / "a.md").write_text("two\n")
    assert second.record(str(mem), cause="edit") is not None
    (mem / "a.md").write_text("three\n")
    assert first.record(str(mem), cause="edit") is not None
    assert [c.rev for c in first.changes(str(mem))] == [3, 2, 1]


def test_threads_record_each_change_once(mem: Path, history: History) -> None:
    (mem / "a.md").write_text("one\n")
    results: list[object] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(history.record(str(mem), cause="edit"))
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(r is not None for r in results) == 1


def test_an_edit_carries_the_session_the_hooks_last_saw(
    mem: Path, tmp_path: Path
) -> None:
    from memd.history.record import record_edit

    state = tmp_path / "state"
    hooks = state / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "other-session.txt").write_text(
        "memd-hook-session 1\nrecorded_ns 1\nmemory_dir /somewhere/else/\n"
    )
    (hooks / "the-session.txt").write_text(
        f"memd-hook-session 1\nrecorded_ns 1\nmemory_dir {mem}/\n"
    )
    (mem / "a.md").write_text("written by the agent\n")
    with History.open(str(state)) as history:
        change = record_edit(history, str(state), str(mem))
        assert isinstance(change, tuple)
        assert change.session == "the-session"
        (mem / "a.md").write_text("and again\n")
        stopped = record_edit(history, str(state), str(mem), cause="stopped")
        assert isinstance(stopped, tuple)
        assert stopped.session is None


def test_emptied_files_are_a_loss_and_renames_are_not(
    mem: Path, history: History
) -> None:
    for i in range(6):
        (mem / f"t{i}.md").write_text("a fact worth keeping\n" * 10)
    history.record(str(mem), cause="edit", at=1000.0)
    for i in range(6):
        os.rename(mem / f"t{i}.md", mem / f"moved_{i}.md")
    moved = history.record(str(mem), cause="edit", at=5000.0)
    assert moved is not None
    assert not moved.is_loss
    assert {f.kind for f in moved.files} == {"renamed"}
    for i in range(3):
        (mem / f"moved_{i}.md").write_text("  \n")
    emptied = history.record(str(mem), cause="mcp", at=9000.0)
    assert emptied is not None
    assert emptied.loss == "3 memory files were emptied"
    assert history.file_at(str(mem), "t0.md", moved.rev - 1) == (
        b"a fact worth keeping\n" * 10
    )


def test_dropping_links_to_files_long_gone_takes_nothing(
    mem: Path, history: History
) -> None:
    """`memd fix` drops entries whose file is gone: the index reached nothing there."""
    links = "".join(f"- [T{i}](t{i}.md) — fact {i}\n" for i in range(10))
    for i in range(5):
        (mem / f"t{i}.md").write_text(f"fact {i} worth keeping\n")
    (mem / "MEMORY.md").write_text(links)
    history.record(str(mem), cause="edit", at=1000.0)
    (mem / "MEMORY.md").write_text("".join(links.splitlines(True)[:5]))
    change = history.record(str(mem), cause="fix", at=5000.0)
    assert change is not None
    assert not change.is_loss


def test_a_dream_moving_facts_is_no_loss_dropping_them_is(
    mem: Path, history: History
) -> None:
    """memd's own change is judged by where each fact went."""
    for i in range(4):
        (mem / f"t{i}.md").write_text(f"---\nname: t{i}\n---\n- fact {i} kept here\n")
    history.record(str(mem), cause="edit", at=1000.0)
    merged = "".join(f"- fact {i} kept here\n" for i in range(3))
    (mem / "merged.md").write_text(f"---\nname: merged\n---\n{merged}")
    for i in range(3):
        (mem / f"t{i}.md").unlink()
    moved = history.record(str(mem), cause="dream", at=5000.0)
    assert moved is not None
    assert not moved.is_loss
    for i in range(3):
        (mem / f"n{i}.md").write_text(f"- note {i} only here\n")
    history.record(str(mem), cause="edit", at=13000.0)
    for i in range(3):
        (mem / f"n{i}.md").unlink()
    gone = history.record(str(mem), cause="dream", at=17000.0)
    assert gone is not None
    assert gone.loss == "3 memory files were deleted"


def test_a_loss_whose_files_come_back_by_hand_is_restored(
    mem: Path, history: History
) -> None:
    originals = {
        f"t{i}.md": f"a fact worth keeping, number {i}\n" * 5 for i in range(4)
    }
    for name, text in originals.items():
        (mem / name).write_text(text)
    history.record(str(mem), cause="edit", at=1000.0)
    for name in originals:
        (mem / name).unlink()
    loss = history.record(str(mem), cause="edit", at=5000.0)
    assert loss is not None
    assert loss.loss == "4 memory files were deleted"
    [kept] = history.losses()
    assert (kept.rev, kept.state) == (loss.rev, "open")
    for name, text in list(originals.items())[:3]:
        (mem / name).write_text(text)
    partly = history.record(str(mem), cause="edit", at=9000.0)
    assert partly is not None
    assert partly.restored == ()
    (mem / "t3.md").write_text("not what it held\n")
    history.record(str(mem), cause="edit", at=9001.0)
    assert history.losses()[0].state == "open"
    (mem / "t3.md").write_text(originals["t3.md"])
    back = history.record(str(mem), cause="edit", at=9002.0)
    assert back is not None
    assert back.restored == (loss.rev,)
    [settled] = history.losses()
    assert (settled.state, settled.settled_at) == ("restored", 9002.0)
