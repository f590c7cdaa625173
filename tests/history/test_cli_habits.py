"""The command line as a newcomer uses it (issue 42, item 5): git's habits.

`memd restore FILE` alone, a single file's undo, `memd history FILE` as
`git log -p FILE`, and a memory file named as the agent names it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.history.helpers import memd, record_now


def test_restore_file_alone_brings_back_the_version_before_its_newest_change(
    memory: Path, git_repo: Path
) -> None:
    (memory / "feedback_tests.md").write_text("use pytest\n")
    first = record_now(memory)
    (memory / "other.md").write_text("unrelated\n")
    record_now(memory)
    (memory / "feedback_tests.md").write_text("use pytest -x\n")
    newest = record_now(memory)
    done = memd("restore", "feedback_tests.md", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert (memory / "feedback_tests.md").read_text() == "use pytest\n"
    said = done.stdout.splitlines()[0]
    assert said.startswith(f"feedback_tests.md: the version of revision {newest - 1}")
    assert f"before its newest change (revision {newest})" in said
    assert first < newest - 1  # the revision before, not the file's previous one


def test_a_single_file_restore_undoes_that_file_alone(
    memory: Path, git_repo: Path
) -> None:
    (memory / "a.md").write_text("a one\n")
    (memory / "b.md").write_text("b one\n")
    first = record_now(memory)
    (memory / "a.md").write_text("a two\n")
    (memory / "b.md").write_text("b two\n")
    record_now(memory)
    done = memd("restore", "a.md", "--rev", str(first), cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert (memory / "a.md").read_text() == "a one\n"
    (memory / "b.md").write_text("b three, after the restore\n")
    (memory / "c.md").write_text("made after the restore\n")
    undo = shlex.split(done.stdout.strip().rsplit("`", 2)[-2])
    assert undo[:3] == ["memd", "restore", "a.md"]
    assert "--all" not in undo
    again = memd(*undo[1:], cwd=git_repo)
    assert again.returncode == 0, again.stderr
    assert (memory / "a.md").read_text() == "a two\n"
    assert (memory / "b.md").read_text() == "b three, after the restore\n"
    assert (memory / "c.md").read_text() == "made after the restore\n"


def test_undo_of_a_single_file_restore_that_created_it_removes_it(
    memory: Path, git_repo: Path
) -> None:
    (memory / "a.md").write_text("kept\n")
    first = record_now(memory)
    (memory / "a.md").unlink()
    record_now(memory)
    done = memd("restore", "a.md", "--rev", str(first), cwd=git_repo)
    assert done.returncode == 0, done.stderr
    undo = shlex.split(done.stdout.strip().rsplit("`", 2)[-2])
    again = memd(*undo[1:], cwd=git_repo)
    assert again.returncode == 0, again.stderr
    assert not (memory / "a.md").exists()


def test_history_file_is_git_log_p(memory: Path, git_repo: Path) -> None:
    (memory / "a.md").write_text("one\n")
    (memory / "b.md").write_text("bee\n")
    first = record_now(memory)
    (memory / "a.md").write_text("two\n")
    (memory / "b.md").write_text("bee two\n")
    second = record_now(memory)
    (memory / "b.md").write_text("only b\n")
    record_now(memory)
    shown = memd("history", "a.md", cwd=git_repo)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.index(f"rev {second}") < out.index(f"rev {first}")
    assert "-one\n+two\n" in out
    assert "+++ b/a.md" in out
    assert "b.md" not in out.replace("(and 1 other file in this change)", "")
    assert "(and 1 other file in this change)" in out
    assert "only b" not in out
    brief = memd("history", "a.md", "--no-patch", cwd=git_repo)
    assert "+two" not in brief.stdout
    everything = memd("history", cwd=git_repo).stdout
    assert "modified b.md" in everything  # without a file: changes as before


@pytest.mark.parametrize(
    "typed",
    [
        "feedback_tests.md",
        "./feedback_tests.md",
        "ABSOLUTE",
        "sub/../feedback_tests.md",
    ],
)
@pytest.mark.parametrize("where", ["root", "subdir"])
def test_a_memory_file_as_the_agent_names_it(
    memory: Path, git_repo: Path, typed: str, where: str
) -> None:
    (memory / "feedback_tests.md").write_text("one\n")
    first = record_now(memory)
    (memory / "feedback_tests.md").write_text("two\n")
    record_now(memory)
    cwd = git_repo if where == "root" else git_repo / "src"
    cwd.mkdir(exist_ok=True)
    name = str(memory / "feedback_tests.md") if typed == "ABSOLUTE" else typed
    listed = memd("history", name, cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    assert "+two" in listed.stdout
    done = memd("restore", name, "--rev", str(first), cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert (memory / "feedback_tests.md").read_text() == "one\n"


def test_a_revision_before_the_file_was_made_is_refused(
    memory: Path, git_repo: Path
) -> None:
    (memory / "other.md").write_text("older\n")
    before = record_now(memory)
    (memory / "a.md").write_text("new\n")
    record_now(memory)
    done = memd("restore", "a.md", "--rev", str(before), cwd=git_repo)
    assert done.returncode == 2
    assert f"a.md did not exist at revision {before}" in done.stderr
    assert (memory / "a.md").read_text() == "new\n"
