"""`memd history purge` reaches every copy memd keeps (issue 41, class 5).

A real `memd run`, a real `memd fix` (its undo journal), a real `memd dream`
(its generations), the daemon's recall index and snapshots; then every file
under memd's state and cache dirs is read raw and every zlib stream in it
inflated, and no trace of the purged bytes may be left.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

from memd.claude_code.paths import resolve_memory_location
from memd.kairos.daily_log import append_entry
from memd.lint.secrets import find_secrets
from tests.conftest import Home
from tests.daemon.conftest import (  # noqa: F401 -- the fixture, registered here
    Daemon,
    Starter,
    _start_daemon,
    wait_for,
)

MEMD = (sys.executable, "-m", "memd")
SECRET = "sk-ant-api03-QWxhZGRpbjpvcGVuIHNlc2FtZQ-purge-everywhere"  # noqa: S105 -- fake
MARK = b"qwxhzgrpbjpvcgvuihnlc2ftzq"  # its distinctive middle, as a tokenizer folds it
TOPIC = (
    "---\nname: {name}\ndescription: {name} notes for the purge tests\n"
    "type: user\n---\n"
)


def run(daemon: Daemon, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, *args],
        cwd=cwd,
        env={**daemon.env, "MEMD_TELEMETRY": "off"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def recorded_text(daemon: Daemon, memory: Path) -> str:
    return daemon.memd("history", "--project", str(memory), "--format", "json").stdout


def _traces(roots: list[Path], needles: list[bytes]) -> list[str]:
    """Each file under `roots` whose raw bytes, or a zlib stream in them, hold one."""
    found = []
    for root in roots:
        for path in sorted(
            p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
        ):
            data = path.read_bytes()
            forms = [data, data.lower()]
            if len(data) < 600_000:
                for start in range(len(data)):
                    if data[start] not in (
                        0x78,
                        0x08,
                        0x58,
                        0x68,
                        0x18,
                        0x28,
                        0x38,
                        0x48,
                    ):
                        continue  # not a zlib header's first byte
                    try:
                        forms.append(
                            zlib.decompressobj().decompress(data[start:], 1 << 22)
                        )
                    except zlib.error:
                        continue
            found += [
                f"{path}: {needle!r}"
                for needle in needles
                for form in forms
                if needle in form
            ]
    return found


def test_purge_secret_reaches_every_store(
    start_daemon: Starter, git_repo: Path, isolated_home: Home
) -> None:
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    daemon = start_daemon()
    (memory / "alpha.md").write_text(TOPIC.format(name="Alpha") + "alpha body\n")
    (memory / "beta.md").write_text(TOPIC.format(name="Beta") + "beta body\n")
    (memory / "MEMORY.md").write_text(
        f"- [Alpha](alpha.md) — Alpha notes, key {SECRET}\n"
    )
    wait_for(
        lambda: SECRET[:10] not in "x" and "MEMORY.md" in recorded_text(daemon, memory)
    )
    fixed = run(daemon, "fix", cwd=git_repo)  # MEMORY.md's orphan: the undo keeps it
    assert fixed.returncode == 0, fixed.stderr
    assert list(isolated_home.state.rglob("fix-undo/*/0.pre"))
    now = datetime.datetime.now().astimezone() - datetime.timedelta(days=1)
    append_entry(str(memory), f"#alpha the staging key was {SECRET}", now=now)
    dreamt = run(daemon, "dream", "--now", "--project", str(git_repo), cwd=git_repo)
    assert dreamt.returncode == 0, dreamt.stdout + dreamt.stderr
    assert SECRET in (memory / "alpha.md").read_text()
    assert list(isolated_home.state.rglob("dream-generations/*/*/after/alpha.md"))
    recall = run(daemon, "recall", "staging", cwd=git_repo)
    assert recall.returncode == 0, recall.stderr
    daemon.wait_fresh(memory)
    stores = [isolated_home.state, isolated_home.cache]
    assert _traces(stores, [SECRET.encode()[:24]])  # it is everywhere now
    # the person takes the secret out of their files, then purges its copies
    for path in memory.rglob("*.md"):
        path.write_text(path.read_text().replace(SECRET, "<rotated>"))
    daemon.wait_fresh(memory)
    [finding] = find_secrets(f"key {SECRET}")
    done = run(
        daemon, "history", "purge", "--secret", finding.fingerprint, cwd=git_repo
    )
    assert done.returncode == 0, done.stderr
    assert "removed the fix undo journal" in done.stdout
    assert "removed the dream generation" in done.stdout
    daemon.wait_fresh(memory)
    daemon.stop()
    assert _traces(stores, [SECRET.encode()[:24], MARK]) == []
    # the history of the rest is whole: every later version still reads
    with_history = run(
        daemon, "history", "MEMORY.md", "--project", str(memory), cwd=git_repo
    )
    assert "<rotated>" in with_history.stdout


def test_purge_a_renamed_file_reaches_its_old_names(git_repo: Path) -> None:
    from memd.history.store import History

    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    state = os.path.join(os.environ["XDG_STATE_HOME"], "memd")
    with History.open(state) as history:
        for i in range(5):
            (memory / "diary.md").write_text(f"private thought {i}\n")
            history.record(str(memory), cause="edit")
        (memory / "diary.md").rename(memory / "journal.md")
        history.record(str(memory), cause="edit")
        (memory / "journal.md").write_text("private thought 5\n")
        (memory / "diary.md").write_text("a new diary, not the purged file\n")
        history.record(str(memory), cause="edit")
    done = subprocess.run(
        [*MEMD, "history", "purge", "journal.md"],
        cwd=git_repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "purged 7 version(s) of journal.md" in done.stdout
    assert "diary.md" in done.stdout  # says it reached the old name
    assert _traces([Path(state)], [b"private thought"]) == []
    with History.open(state) as history:
        assert history.file_at(str(memory), "diary.md", 10**6) == (
            b"a new diary, not the purged file\n"
        )
    listed = json.loads(
        subprocess.run(
            [*MEMD, "history", "diary.md", "--format", "json"],
            cwd=git_repo,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    )
    assert [c["files"][0]["kind"] for c in listed] == ["created"]


def test_a_sync_repository_still_holding_it_is_named_not_rewritten(
    git_repo: Path,
) -> None:
    """Team memory's git objects hold it: the purge says so, rewrites nothing."""
    from memd.history.store import History
    from tests.conftest import git

    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    team = memory / "team"
    team.mkdir(parents=True)
    git("init", "-q", cwd=team)
    (team / "keys.md").write_text(f"deploy key {SECRET}\n")
    git("add", "keys.md", cwd=team)
    git("commit", "-q", "-m", "keys", cwd=team)
    with History.open(os.path.join(os.environ["XDG_STATE_HOME"], "memd")) as history:
        history.record(str(memory), cause="edit")
    head = git("rev-parse", "HEAD", cwd=team)
    [finding] = find_secrets(f"key {SECRET}")
    done = subprocess.run(
        [*MEMD, "history", "purge", "--secret", finding.fingerprint],
        cwd=git_repo,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "purged 1 version(s) of team/keys.md" in done.stdout
    assert f"the sync repository {team.resolve()} still holds it" in done.stderr
    assert done.stderr.count("\n") == 1
    assert git("rev-parse", "HEAD", cwd=team) == head  # nothing rewritten
