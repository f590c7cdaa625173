"""`memd history`, `memd history show|purge` and `memd restore` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from memd.agent.paths import resolve_memory_location
from memd.history.store import History
from memd.lint.secrets import find_secrets

MEMD = (sys.executable, "-m", "memd")
SECRET = "sk-ant-api03-QWxhZGRpbjpvcGVuIHNlc2FtZQ-history-test"  # noqa: S105 -- a fake key for the purge test


def memd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture(name="memory")
def _memory(git_repo: Path) -> Path:
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    return path


def state_dir() -> str:
    return os.path.join(os.environ["XDG_STATE_HOME"], "memd")


def record(memory: Path, cause: str = "edit", at: float | None = None) -> int:
    with History.open(state_dir()) as history:
        change = history.record(str(memory), cause=cause, at=at)
        assert change is not None
        return change.rev


def test_list_show_and_json(memory: Path, git_repo: Path) -> None:
    (memory / "a.md").write_text("one\n")
    first = record(memory, at=1_000_000.0)
    (memory / "a.md").write_text("two\n")
    (memory / "b.md").write_text("bee\n")
    second = record(memory, cause="fix")
    listed = memd("history", cwd=git_repo)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.index(f"rev {second}") < listed.stdout.index(f"rev {first}")
    assert "fix" in listed.stdout
    assert "modified a.md" in listed.stdout
    only_b = memd("history", str(memory / "b.md"), "--format", "json", cwd=git_repo)
    assert [c["rev"] for c in json.loads(only_b.stdout)] == [second]
    since = memd("history", "--since", "1 hour ago", "--format", "json", cwd=git_repo)
    assert [c["rev"] for c in json.loads(since.stdout)] == [second]
    shown = memd("history", "show", str(second), "a.md", cwd=git_repo)
    assert "-one\n+two\n" in shown.stdout
    assert "b.md" not in shown.stdout.split("\n", 3)[-1]
    everything = memd("history", "--all", cwd=git_repo)
    # each change names its project by its folder (#42), not its memory dir
    assert f"  {git_repo.resolve()}\n" in everything.stdout
    assert str(memory.resolve()).rstrip("/") not in everything.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("history", "--since", "soon"), "--since: cannot read the time 'soon'"),
        (("history", "show", "999"), "no change 999"),
        (("history", "show", "x"), "usage: memd history show REV"),
        (("history", "purge"), "usage: memd history purge PATH"),
        (("history", "purge", "--secret", "nothex"), "expected 16 hex digits"),
        (("history", "--secret", "0123456789abcdef"), "--secret goes with"),
        (("restore", "a.md"), "say which version: --at WHEN or --rev REV"),
        (("restore", "--at", "now"), "give a PATH or --all"),
        (("restore", "gone.md", "--at", "now"), "gone.md did not exist"),
        (("restore", "--all", "--at", "1970-01-02"), "no history of"),
        (("restore", "../x.md", "--rev", "1"), "../x.md"),
    ],
)
def test_mistakes_are_one_line(
    memory: Path, git_repo: Path, args: tuple[str, ...], message: str
) -> None:
    (memory / "a.md").write_text("one\n")
    record(memory)
    done = memd(*args, cwd=git_repo)
    assert done.returncode == 2
    assert message in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("command", ["history", "restore"])
def test_help(command: str, tmp_path: Path) -> None:
    done = memd(command, "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "WHEN" in done.stdout


def test_restore_one_file_deleted_and_the_restore_undone(
    memory: Path, git_repo: Path
) -> None:
    data = b"---\nname: A\n---\nbytes \xff\r\n"
    (memory / "a.md").write_bytes(data)
    rev = record(memory)
    (memory / "a.md").unlink()
    (memory / "other.md").write_text("stays\n")
    dry = memd("restore", "a.md", "--rev", str(rev), "--dry-run", cwd=git_repo)
    assert dry.returncode == 0
    assert "+++ b/a.md" in dry.stdout
    assert not (memory / "a.md").exists()
    done = memd("restore", "a.md", "--rev", str(rev), cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert (memory / "a.md").read_bytes() == data
    assert (memory / "other.md").read_text() == "stays\n"
    with History.open(state_dir()) as history:
        causes = [c.cause for c in history.changes(str(memory))]
    assert causes[:2] == ["restore", "edit"]  # the deletion was recorded first


def test_restore_all_at_a_time(memory: Path, git_repo: Path) -> None:
    for i in range(5):
        (memory / f"t{i}.md").write_text(f"fact {i}\n")
    (memory / "MEMORY.md").write_text("index\n")
    before = {p.name: p.read_bytes() for p in memory.iterdir()}
    record(memory, at=1_000_000.0)
    for i in range(4):
        (memory / f"t{i}.md").unlink()
    (memory / "new.md").write_text("made later\n")
    (memory / "MEMORY.md").write_text("rewritten\n")
    done = memd("restore", "--all", "--at", "1970-01-13", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert {p.name: p.read_bytes() for p in memory.iterdir()} == before
    undo = done.stdout.strip().rsplit("`", 2)[-2].split()
    again = memd(*undo[1:], cwd=git_repo)
    assert again.returncode == 0, again.stderr
    assert (memory / "new.md").read_text() == "made later\n"


def test_restore_never_writes_through_a_link(
    memory: Path, git_repo: Path, tmp_path: Path
) -> None:
    (memory / "sub").mkdir()
    (memory / "sub" / "a.md").write_text("one\n")
    rev = record(memory)
    (memory / "sub" / "a.md").unlink()
    (memory / "sub").rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (memory / "sub").symlink_to(outside)
    done = memd("restore", "--all", "--rev", str(rev), cwd=git_repo)
    assert done.returncode == 2
    assert "sub/a.md" in done.stderr
    assert "nothing restored" in done.stderr
    assert not (outside / "a.md").exists()


def _raw_files(root: str) -> dict[str, bytes]:
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            with open(path, "rb") as handle:
                found[path] = handle.read()
    return found


def _inflate_everywhere(data: bytes) -> list[bytes]:
    """Every zlib or raw deflate stream that starts anywhere in `data`, inflated."""
    found = []
    for start in range(len(data)):
        for wbits in (15, -15):
            try:
                inflated = zlib.decompressobj(wbits).decompress(data[start:], 1 << 20)
            except zlib.error:
                continue
            if len(inflated) >= 8:
                found.append(inflated)
    return found


def test_purge_secret_leaves_no_byte_behind(memory: Path, git_repo: Path) -> None:
    """Decompress the whole store and grep every file of the state dir raw."""
    (memory / "keep.md").write_text("a fact worth keeping\n" * 20)
    body = "".join(f"line {i} of notes\n" for i in range(60))
    for i in range(20):  # deltas on deltas, some holding the secret
        secret_line = f"token: {SECRET}\n" if 5 <= i < 12 else ""
        (memory / "notes.md").write_text(body + secret_line + f"edit {i}\n")
        record(memory)
    [finding] = find_secrets(f"token: {SECRET}")
    with History.open(state_dir()) as history:  # the compressed forms that hold it
        stored = [
            bytes(data)
            for blob, data in history._db.execute(
                "SELECT id, data FROM blobs"
            ).fetchall()
            if SECRET.encode() in history._blob_bytes(blob)
        ]
    assert len(stored) == 7
    done = memd("history", "purge", "--secret", finding.fingerprint, cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert "purged 7 version(s) of notes.md" in done.stdout
    with History.open(state_dir()) as history:
        contents = list(history.every_blob())
        for change in history.changes(str(memory)):
            history.file_at(
                str(memory), "notes.md", change.rev
            )  # every version still reads
    assert contents
    assert not any(SECRET.encode() in c for c in contents)
    assert any(b"edit 19" in c for c in contents)
    raw = _raw_files(state_dir())
    needle = SECRET.encode()
    for path, data in raw.items():
        assert needle not in data, path
        assert needle[:24] not in data, path
        for compressed in stored:  # no page, WAL frame or free cell kept a copy
            assert compressed[:24] not in data, path
        for inflated in _inflate_everywhere(data) if len(data) < 400_000 else ():
            assert needle[:24] not in inflated, path


def test_purge_path(memory: Path, git_repo: Path) -> None:
    (memory / "diary.md").write_text("private thought one\n")
    record(memory)
    (memory / "diary.md").write_text("private thought two\n")
    record(memory)
    (memory / "diary.md").unlink()
    (memory / "other.md").write_text("other\n")
    record(memory)
    done = memd("history", "purge", "diary.md", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert "purged 3 version(s) of diary.md" in done.stdout
    for path, data in _raw_files(state_dir()).items():
        assert b"private thought" not in data, path
    listed = memd("history", "diary.md", cwd=git_repo)
    assert "no recorded changes" in listed.stdout


def test_restore_leaves_a_purged_file_alone(memory: Path, git_repo: Path) -> None:
    (memory / "keep.md").write_text("kept\n")
    rev = record(memory)
    (memory / "secret.md").write_text("private\n")
    record(memory)
    assert memd("history", "purge", "secret.md", cwd=git_repo).returncode == 0
    done = memd("restore", "--all", "--rev", str(rev), cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert (memory / "secret.md").read_text() == "private\n"


def test_odd_names_are_skipped_not_fatal(memory: Path, git_repo: Path) -> None:
    (memory / "ok.md").write_text("fine\n")
    os.close(os.open(os.path.join(os.fsencode(memory), b"bad\xff\n.md"), os.O_CREAT))
    with History.open(state_dir()) as history:
        change = history.record(str(memory), cause="edit")
    assert change is not None
    assert [f.relpath for f in change.files] == ["ok.md"]
