"""Containment: a canary outside the memory directories never leaks in, never changes.

Outside every memory directory lies a tree holding a canary string: a topic
file, an index, and a logs tree whose entries carry the canary. Each project
links to it at a different level: `logs/` itself, `logs/<year>`,
`logs/<year>/<month>`, a log file, a topic file and MEMORY.md. Then every
command runs on every project (lint, fix, fix --dry-run, prompt, log, dream
with retention set to remove, both hooks) and a short real `memd run`, with
FIFOs in the way too. The canary must appear in no output, no snapshot, no
state, no cache, no log and no file memd wrote, and nothing outside may
change.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from tests.conftest import Home, git
from tests.daemon.conftest import Starter
from tests.reliability.conftest import hash_tree

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
CANARY = "CANARY-5b1f0c2e-never-copy-me"
TIMEOUT = 60
OLD_DAY = datetime.date(2020, 1, 15)  # old enough for retention to act on it
TODAY = datetime.date.today()


def _outside(root: Path) -> Path:
    out = root / "outside"
    month = out / "logs" / f"{OLD_DAY.year}" / f"{OLD_DAY.month:02}"
    month.mkdir(parents=True)
    entry = f"# {OLD_DAY}\n\n- 10:00 #canary {CANARY}\n"
    (month / f"{OLD_DAY:%Y-%m-%d}.md").write_text(entry)
    today = out / "logs" / f"{TODAY.year}" / f"{TODAY.month:02}"
    today.mkdir(parents=True, exist_ok=True)
    (today / f"{TODAY:%Y-%m-%d}.md").write_text(f"# {TODAY}\n\n- 09:00 {CANARY}\n")
    (out / "secret.md").write_text(
        f"---\nname: Secret\ndescription: {CANARY}\ntype: user\n---\n{CANARY}\n"
    )
    (out / "MEMORY.md").write_text(f"- [Secret](secret.md) — {CANARY}\n")
    return out


def _project(root: Path, name: str) -> tuple[Path, Path]:
    repo = root / name
    repo.mkdir()
    git("init", "-q", cwd=repo)
    memory = Path(resolve_memory_location(str(repo)).memory_dir)
    memory.mkdir(parents=True)
    (memory / "own.md").write_text(
        "---\nname: Own\ndescription: this project's own memory\ntype: user\n"
        "---\nOwn text.\n"
    )
    return repo, memory


def _link_at_every_level(root: Path, out: Path) -> dict[str, tuple[Path, Path]]:
    """One project per level at which a symlink leads to `out`."""
    old = f"{OLD_DAY:%Y-%m-%d}.md"
    y, m = f"{OLD_DAY.year}", f"{OLD_DAY.month:02}"
    projects = {}
    for level in ("logs", "year", "month", "file", "topic", "index", "fifo"):
        repo, memory = _project(root, f"p-{level}")
        projects[level] = (repo, memory)
        logs = memory / "logs"
        if level == "logs":
            logs.symlink_to(out / "logs")
        elif level == "year":
            logs.mkdir()
            (logs / y).symlink_to(out / "logs" / y)
        elif level == "month":
            (logs / y).mkdir(parents=True)
            (logs / y / m).symlink_to(out / "logs" / y / m)
        elif level == "file":
            (logs / y / m).mkdir(parents=True)
            (logs / y / m / old).symlink_to(out / "logs" / y / m / old)
        elif level == "topic":
            (memory / "secret.md").symlink_to(out / "secret.md")
        elif level == "index":
            (memory / "MEMORY.md").symlink_to(out / "MEMORY.md")
        else:  # FIFOs where memd reads: the index, a topic, the lock, today's log
            for name in ("MEMORY.md", "pipe.md", ".consolidate-lock"):
                os.mkfifo(memory / name)
            month = logs / f"{TODAY.year}" / f"{TODAY.month:02}"
            month.mkdir(parents=True)
            os.mkfifo(month / f"{TODAY:%Y-%m-%d}.md")
    return projects


def _run(env: dict[str, str], *argv: str, stdin: str = "") -> str:
    result = subprocess.run(
        [MEMD, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
    )
    assert "Traceback" not in result.stderr, (argv, result.stderr)
    return result.stdout + result.stderr


def _readable_files(root: Path) -> list[Path]:
    """Every regular file under `root`, found without following a symlink."""
    found = []
    for directory, dirs, names in os.walk(root):  # walk never follows links
        for name in names:
            path = Path(directory) / name
            if path.is_file() and not path.is_symlink():
                found.append(path)
        dirs[:] = [d for d in dirs if not (Path(directory) / d).is_symlink()]
    return found


def test_canary_never_leaks(
    tmp_path: Path, isolated_home: Home, start_daemon: Starter
) -> None:
    """Every command on every project: the canary is nowhere, outside is unchanged."""
    out = _outside(tmp_path)
    projects = _link_at_every_level(tmp_path, out)
    outside_before = hash_tree(out)
    stamps_before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    env = isolated_home.env(
        MEMD_TELEMETRY="jsonl",
        MEMD_LOG_RETENTION_DAYS="1",
        MEMD_LOG_RETENTION_ACTION="remove",
        MEMD_LOG_LEVEL="debug",
    )
    outputs: list[str] = []
    for repo, memory in projects.values():
        outputs.append(_run(env, "log", "--project", str(repo), "an own entry"))
        outputs.append(_run(env, "lint", str(memory)))
        outputs.append(_run(env, "fix", "--dry-run", str(memory)))
        outputs.append(_run(env, "fix", str(memory)))
        for mode in ("standard", "kairos"):
            outputs.append(_run(env, "prompt", "--project", str(repo), "--mode", mode))
        outputs.append(_run(env, "dream", "--now", "--project", str(repo)))
        payload = {"cwd": str(repo), "hook_event_name": "SessionStart"}
        outputs.append(_run(env, "hook", "session-start", stdin=json.dumps(payload)))
        post = {
            "cwd": str(repo),
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": str(memory / "own.md")},
        }
        outputs.append(_run(env, "hook", "post-tool-use", stdin=json.dumps(post)))
    daemon = start_daemon(
        MEMD_TELEMETRY="jsonl",
        MEMD_LOG_RETENTION_DAYS="1",
        MEMD_LOG_RETENTION_ACTION="remove",
    )
    time.sleep(2)  # start-up rotation and catch-up dreams, first snapshots
    assert 0 == daemon.stop(signal.SIGTERM)  # the FIFOs never blocked a thread
    outputs.append(daemon.log_text())

    leaks = [i for i, text in enumerate(outputs) if CANARY in text]
    assert [] == leaks, [outputs[i] for i in leaks]
    written = [
        *_readable_files(isolated_home.cache),
        *_readable_files(isolated_home.state),
        *_readable_files(isolated_home.runtime),
        *(f for _, memory in projects.values() for f in _readable_files(memory)),
    ]
    assert written  # the scan is not vacuous: memd wrote state, snapshots, logs
    tainted = [str(p) for p in written if CANARY.encode() in p.read_bytes()]
    assert [] == tainted
    assert outside_before == hash_tree(out)
    assert stamps_before == {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    for _, memory in projects.values():  # each project's own entry was kept
        assert "Own text." in (memory / "own.md").read_text()
