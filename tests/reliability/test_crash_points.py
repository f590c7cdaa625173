"""Crash at every write point: a real process SIGKILLed and rerun ends as if unkilled.

`MEMD_TEST_CRASH_AT=n` (memd/atomic.py) makes the process kill itself at its
n-th write point: four inside every `write_atomic` (temp written, temp
fsynced, renamed, directory fsynced), each file a snapshot version writes,
its link swap, each retention unlink or rename, and the creation and heading
of a daily log. For n = 1, 2, ... until a run finishes unkilled, the harness
seeds a fresh state, kills the process at point n, checks that nothing is
torn, reruns it without the hook, and compares the final state with the one
an unkilled run reached: the same topic files, index, logs, lock state and
watermarks. A temp file a kill leaves is the only thing allowed to differ,
and so does the watermark of a log retention already retired (it is never
read again; a rerun after a kill between two retirements drops it early).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from memd.atomic import CRASH_ENV, TEMP_PREFIX
from memd.claude_code.paths import resolve_memory_location
from memd.history.restore import HELD_PREFIX
from memd.kairos.daily_log import append_entry
from tests.conftest import Home

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
MAX_POINTS = 200  # far above any scenario: a loop that never ends is a failure
ROUNDS_FILE_ENV = "CRASH_ROUNDS_FILE"  # docs/reliability.md: append the counts here

EXISTING = (
    b"---\nname: Existing\ndescription: A file the user wrote\ntype: project\n---\n"
    b"Mine.\n"
)
INDEX = b"# Index\n\n- [Existing](existing.md) \xe2\x80\x94 A file the user wrote\n"
ENTRIES = (
    (datetime(2026, 11, 20, 9, 0), "[feedback] #testing use a real database"),
    (datetime(2026, 11, 20, 9, 5), "untagged note"),
    (datetime(2026, 11, 21, 10, 0), "#testing second rule"),
    (datetime(2026, 11, 21, 10, 1), "[user] #role senior Go developer"),
)


@dataclass(frozen=True)
class World:
    """The paths one scenario works on."""

    home: Home
    project: Path
    memory: Path

    @property
    def state_dir(self) -> Path:
        return self.home.state / "memd"

    @property
    def cache_dir(self) -> Path:
        return self.home.cache / "memd"


@dataclass(frozen=True)
class Scenario:
    """One command to kill: how to seed it, run it, and read what it left."""

    name: str
    seed: Callable[[World], None]
    argv: Callable[[World], list[str]]
    state: Callable[[World], dict[str, object]]
    # A scenario whose first write points are another's (already killed at
    # each of them there) names the seed that reaches exactly those points.
    shared_prefix: Callable[[World], None] | None = None


def _reset(world: World) -> None:
    for path in (world.memory, world.state_dir, world.cache_dir, world.home.config):
        subprocess.run(["rm", "-rf", str(path)], check=True)
    world.memory.mkdir(parents=True)
    world.home.config.mkdir(parents=True)


def _memory_files(world: World) -> dict[str, bytes]:
    """Every regular file of the memory dir but the lock and kill-left temp files
    (a restore's held files too: the next restore records and drops them)."""
    return {
        str(p.relative_to(world.memory)): p.read_bytes()
        for p in sorted(world.memory.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and p.name != ".consolidate-lock"
        and not p.name.startswith((TEMP_PREFIX, HELD_PREFIX))
    }


def _lock_state(world: World, since_ns: int) -> str:
    """The dream lock as the agent sees it: absent, held, or released (when)."""
    lock = world.memory / ".consolidate-lock"
    if not lock.exists():
        return "absent"
    body = lock.read_bytes()
    if body.strip():
        return "held"
    return "released now" if lock.stat().st_mtime_ns >= since_ns else "released before"


def _dream_record(world: World) -> dict[str, object]:
    """What a dream must persist: watermarks, closed logs, a success. Not timings."""
    path = world.state_dir / "dreams.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    records = [r for r in data.values() if isinstance(r, dict)]
    assert len(records) <= 1, data
    record = records[0] if records else {}
    marks = record.get("watermark")
    live = (
        {rel: size for rel, size in marks.items() if (world.memory / rel).is_file()}
        if isinstance(marks, dict)
        else marks
    )
    return {
        "watermark": live,
        "closed_logs": record.get("closed_logs"),
        "succeeded": "last_success" in record,
    }


# --- the scenarios ---------------------------------------------------------


def _seed_dream(retention: str | None) -> Callable[[World], None]:
    def seed(world: World) -> None:
        _reset(world)
        (world.memory / "existing.md").write_bytes(EXISTING)
        (world.memory / "MEMORY.md").write_bytes(INDEX)
        for when, text in ENTRIES:
            append_entry(str(world.memory), text, now=when)
        if retention is not None:
            (world.home.config / "memd").mkdir(parents=True, exist_ok=True)
            (world.home.config / "memd" / "config.toml").write_text(
                f'[logs]\nretention_days = 1\nretention_action = "{retention}"\n'
            )

    return seed


# An external dream command: files each entry's text once, whatever it is given,
# in a memory file that lints (memd checks the copy it works on before applying).
EXTERNAL = """
import json, os, sys
path = os.path.join(os.environ["MEMD_MEMORY_DIR"], "external.md")
old = open(path).read().splitlines() if os.path.exists(path) else []
old = [line[2:] for line in old if line.startswith("- ")]
new = [json.loads(line)["text"] for line in sys.stdin]
head = "---\\nname: External\\ndescription: What it filed\\ntype: project\\n---\\n"
with open(path + ".part", "w") as out:
    out.write(head + "".join(f"- {t}\\n" for t in sorted({*old, *new})))
os.replace(path + ".part", path)
"""


def _seed_external(world: World) -> None:
    _seed_dream(None)(world)
    command = json.dumps([sys.executable, "-c", EXTERNAL])
    (world.home.config / "memd").mkdir(parents=True, exist_ok=True)
    (world.home.config / "memd" / "config.toml").write_text(
        f"[dream]\ncommand = {command}\n"
    )


def _dream_argv(world: World) -> list[str]:
    return [MEMD, "dream", "--now", "--project", str(world.project)]


def _dream_state(world: World) -> dict[str, object]:
    return {"files": _memory_files(world), "dream": _dream_record(world)}


def _seed_rotation(world: World) -> None:
    _reset(world)
    (world.memory / "MEMORY.md").write_bytes(INDEX)
    for when, text in ENTRIES:
        append_entry(str(world.memory), text, now=when)


def _rotation_argv(world: World) -> list[str]:
    # The daemon's midnight job, in a process of its own so it can be killed.
    code = (
        "import datetime, sys\n"
        "from memd.kairos.daily_log import rotate\n"
        "rotate(sys.argv[1], sys.argv[2], today=datetime.date(2026, 11, 22))\n"
    )
    return [sys.executable, "-c", code, str(world.memory), str(world.state_dir)]


def _seed_fix(world: World) -> None:
    _reset(world)
    topic = (
        "---\nname: {0}\ndescription: The {0} memory for the crash test\n"
        "type: user\n---\nFact.\n"
    )
    (world.memory / "crlf.md").write_bytes(
        topic.format("Crlf").replace("\n", "\r\n").encode()
    )
    (world.memory / "bom.md").write_bytes(
        b"\xef\xbb\xbf" + topic.format("Bom").encode()
    )
    (world.memory / "orphan_a.md").write_text(topic.format("Orphan A"))
    (world.memory / "orphan_b.md").write_text(topic.format("Orphan B"))
    (world.memory / "MEMORY.md").write_bytes(
        b"- [Crlf](crlf.md) \xe2\x80\x94 line endings\r\n"
        b"- [Bom](bom.md) \xe2\x80\x94 a byte order mark\r\n"
        b"- [Gone](gone.md) \xe2\x80\x94 a file that is not there\r\n"
        b"- [Bom again](bom.md) \xe2\x80\x94 a duplicate\r\n"
    )


def _fix_argv(world: World) -> list[str]:
    return [MEMD, "fix", str(world.memory)]


def _fix_state(world: World) -> dict[str, object]:
    return {"files": _memory_files(world)}


def _seed_snapshot(world: World) -> None:
    _reset(world)
    (world.memory / "existing.md").write_bytes(EXISTING)
    (world.memory / "MEMORY.md").write_bytes(INDEX)
    old = datetime(2026, 11, 1).timestamp()  # fixed, and not racily clean
    for path in (*world.memory.iterdir(), world.memory):
        os.utime(path, (old, old))


def _prompt_argv(world: World) -> list[str]:
    return [MEMD, "prompt", "--project", str(world.project), "--path"]


def _snapshot_state(world: World) -> dict[str, object]:
    """The published snapshot's content files, whatever its version is called."""
    from memd.snapshot.publish import SnapshotStore

    store = SnapshotStore(str(world.cache_dir))
    found = store.read(str(world.memory), "standard")
    if found is None:
        return {"published": None}
    meta, _ = found
    inputs = meta["inputs"]
    assert isinstance(inputs, list)
    version_dir = Path(str(meta["version_dir"]))
    return {
        "published": {
            p.name: p.read_bytes()
            for p in sorted(version_dir.iterdir())
            if p.name not in ("meta.txt", "meta.json")  # version name, build time
        },
        # Inputs by size, mtime and path: every seed makes new inodes.
        "inputs": [(size, mtime, path) for size, mtime, _, path in inputs],
    }


# -- history (memd/history): restore, purge, prune ------------------------------

_SECRET = "sk-ant-api03-Q3Jhc2hQb2ludFNlY3JldEtleQ-crash-test"  # noqa: S105 -- a fake key


def _history_matches_disk(world: World) -> object:
    """Whether the store opens, every blob decodes, and its last tree is the disk."""
    import hashlib

    from memd.history.store import History

    if not (world.state_dir / "history").exists():
        return None
    with History.open(str(world.state_dir)) as history:
        blobs = list(history.every_blob())
        tree = history.recorded_tree(str(world.memory))
    disk = {
        rel: hashlib.sha256(data).digest() for rel, data in _memory_files(world).items()
    }
    return {"blobs": len(blobs) > 0, "tree_is_disk": tree == disk}


def _seed_history(world: World, *, secret: bool = False, old: bool = False) -> None:
    from memd.history.store import History

    _reset(world)
    body = "".join(f"line {i} of a memory\n" for i in range(40))
    with History.open(str(world.state_dir)) as history:
        for i in range(6):
            (world.memory / f"topic_{i}.md").write_text(body + f"topic {i}\n")
        (world.memory / "MEMORY.md").write_bytes(INDEX)
        history.record(str(world.memory), cause="edit", at=1_000_000.0 if old else None)
        for i in range(4):
            text = body + f"edit {i}\n" + (f"key: {_SECRET}\n" if secret else "")
            (world.memory / "topic_0.md").write_text(text)
            history.record(
                str(world.memory), cause="edit", at=1_000_100.0 + i if old else None
            )
        for i in range(1, 5):
            (world.memory / f"topic_{i}.md").unlink()
        (world.memory / "MEMORY.md").write_text("# Index\n")
        history.record(str(world.memory), cause="edit")


def _restore_argv(world: World) -> list[str]:
    return [MEMD, "restore", "--all", "--rev", "1", "--project", str(world.memory)]


def _history_state(world: World) -> dict[str, object]:
    return {"files": _memory_files(world), "history": _history_matches_disk(world)}


def _seed_purge(world: World) -> None:
    _seed_history(world, secret=True)


def _purge_argv(world: World) -> list[str]:
    from memd.lint.secrets import find_secrets

    [finding] = find_secrets(f"key: {_SECRET}")
    return [MEMD, "history", "purge", "--secret", finding.fingerprint]


def _purge_state(world: World) -> dict[str, object]:
    from memd.history.store import History

    with History.open(str(world.state_dir)) as history:
        held = sum(_SECRET.encode() in blob for blob in history.every_blob())
        revs = [c.rev for c in history.changes(str(world.memory))]
    return {"files": _memory_files(world), "holding": held, "revs": revs}


def _seed_prune(world: World) -> None:
    _seed_history(world, old=True)


def _prune_argv(world: World) -> list[str]:
    code = (
        "import sys\n"
        "from memd.history.store import History, Retention\n"
        "with History.open(sys.argv[1]) as h:\n"
        "    h.prune(sys.argv[2], Retention(), now=1_000_000.0 + 400 * 86400)\n"
        "    h.record(sys.argv[2], cause='edit')\n"
        "    h.compact()\n"
    )
    return [sys.executable, "-c", code, str(world.state_dir), str(world.memory)]


def _prune_state(world: World) -> dict[str, object]:
    from memd.history.store import History

    with History.open(str(world.state_dir)) as history:
        revs = [c.rev for c in history.changes(str(world.memory))]
    return {**_history_state(world), "revs": revs}


SCENARIOS = (
    # The plain dream's write points are the first ones of dream+archive's and
    # of dream+remove's: killed at each of them in the first, only the
    # retention's own points are left for the second.
    Scenario("dream+archive", _seed_dream("archive"), _dream_argv, _dream_state),
    Scenario(
        "dream+remove",
        _seed_dream("remove"),
        _dream_argv,
        _dream_state,
        shared_prefix=_seed_dream(None),
    ),
    Scenario("dream+command", _seed_external, _dream_argv, _dream_state),
    Scenario("rotation", _seed_rotation, _rotation_argv, _dream_state),
    Scenario("fix", _seed_fix, _fix_argv, _fix_state),
    Scenario("snapshot", _seed_snapshot, _prompt_argv, _snapshot_state),
    Scenario("history-restore", _seed_history, _restore_argv, _history_state),
    Scenario("history-purge", _seed_purge, _purge_argv, _purge_state),
    Scenario("history-prune", _seed_prune, _prune_argv, _prune_state),
)


# --- the harness -----------------------------------------------------------


def _run(world: World, scenario: Scenario, crash_at: int | None) -> int:
    extra = {} if crash_at is None else {CRASH_ENV: str(crash_at)}
    done = subprocess.run(
        scenario.argv(world),
        env=world.home.env(**extra),
        cwd=world.project,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, -signal.SIGKILL), (
        scenario.name,
        crash_at,
        done.returncode,
        done.stderr.decode(errors="replace"),
    )
    return done.returncode


def _full_state(world: World, scenario: Scenario, since_ns: int) -> dict[str, object]:
    return {**scenario.state(world), "lock": _lock_state(world, since_ns)}


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_kill_at_every_write_point(
    scenario: Scenario, git_repo: Path, isolated_home: Home
) -> None:
    """Killed at write point n for every n, a rerun reaches the unkilled final state."""
    world = World(
        isolated_home, git_repo, Path(resolve_memory_location(str(git_repo)).memory_dir)
    )
    scenario.seed(world)
    before = _memory_files(world)
    started = time.time_ns()
    assert 0 == _run(world, scenario, None)
    expected = _full_state(world, scenario, started)
    if scenario.name not in ("snapshot", "history-purge", "history-prune"):
        assert before != expected["files"], "the scenario must write memory files"

    killed = 0
    left_temp = 0
    first = 1 if scenario.shared_prefix is None else _points(world, scenario) + 1
    for point in range(first, MAX_POINTS + 1):
        scenario.seed(world)
        started = time.time_ns()
        if _run(world, scenario, point) == 0:
            break
        killed += 1
        temps = list(world.memory.rglob(f"{TEMP_PREFIX}*"))
        left_temp += bool(temps)
        middle = _memory_files(world)
        # Nothing torn: every memory file is whole, either as seeded or as finished
        # (a daily log may also exist empty: created, its heading not yet written).
        finished = _expected_files(expected)
        for relpath, data in middle.items():
            allowed = {before.get(relpath), finished.get(relpath)}
            if relpath.startswith("logs/"):
                allowed.add(b"")
            assert data in allowed, (scenario.name, point, relpath)
        if "published" in expected:  # a reader sees no snapshot or the whole one
            assert scenario.state(world)["published"] in (None, expected["published"])
        assert 0 == _run(world, scenario, None), point
        final = _full_state(world, scenario, started)
        assert expected == final, (scenario.name, point, _diff(expected, final))
    else:
        pytest.fail(f"{scenario.name}: still killed after {MAX_POINTS} write points")

    assert killed >= 4, f"{scenario.name}: only {killed} write points were hit"
    killed += first - 1
    rounds_file = os.environ.get(ROUNDS_FILE_ENV)
    if rounds_file:
        with open(rounds_file, "a") as out:
            out.write(f"{scenario.name}\t{killed}\t{left_temp}\n")


def _points(world: World, scenario: Scenario) -> int:
    """How many write points a run seeded by `scenario.shared_prefix` passes.

    A run killed at point n was at n or past it; one that finished was not:
    bisected, in a handful of runs instead of one per point.
    """
    assert scenario.shared_prefix is not None
    low, high = 0, MAX_POINTS  # killed at low (0: trivially), finished at high
    while high - low > 1:
        middle = (low + high) // 2
        scenario.shared_prefix(world)
        if _run(world, scenario, middle) == 0:
            high = middle
        else:
            low = middle
    assert low > 0, f"{scenario.name}: its shared prefix wrote nothing"
    return low


def _expected_files(expected: dict[str, object]) -> dict[str, bytes]:
    files = expected.get("files")
    return files if isinstance(files, dict) else {}


def _diff(expected: dict[str, object], final: dict[str, object]) -> list[str]:
    """Name the keys (one level down) where two states differ, for the message."""
    names = []
    for key in sorted(set(expected) | set(final)):
        a, b = expected.get(key), final.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            names += [
                f"{key}/{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)
            ]
        else:
            names.append(key)
    return names
