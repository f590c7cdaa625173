"""Agents in several processes write while the daemon renders and `memd log` appends."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from tests.daemon.conftest import Starter, backdate
from tests.reliability.conftest import scale

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

WRITERS = 3
TOPICS = 3

# One agent: whole-file versions, each tagged, by rename or in place.
WRITER = """
import os, random, sys, time
memory, w, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def topic(k, v):
    return (f"---\\nname: w{w}_t{k}\\ndescription: topic {w}-{k} version {v}\\n"
            f"type: project\\n---\\nBody {v}.\\n")
def index(w, seq):
    head = f"# Index {w}-{seq}\\n"
    return head + "".join(
        f"- [W{w} {seq} {k}](w{w}_t{k}.md) — hook {w}-{seq}-{k}\\n" for k in range(3)
    )
def save(name, text, seq):
    path = os.path.join(memory, name)
    if seq % 2:
        temp = os.path.join(memory, f".{name}.{os.getpid()}.tmp")
        with open(temp, "w") as f:
            f.write(text)
        os.replace(temp, path)
    else:
        with open(path, "w") as f:
            f.write(text)
for seq in range(count):
    save(f"w{w}_t{seq % 3}.md", topic(seq % 3, seq), seq)
    if seq % 4 == 0:
        save("MEMORY.md", index(w, seq), seq // 4)
    time.sleep(random.uniform(0, 0.15))  # pauses let the daemon settle in between
"""

LOGGER = """
import datetime, sys
from memd.kairos.daily_log import append_entry
memory, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    append_entry(memory, f"entry {name}-{i}", now=datetime.datetime.now().astimezone())
"""

INDEX_HEAD = re.compile(r"^# Index (\d+)-(\d+)$", re.MULTILINE)
DESCRIPTION = re.compile(r"^topic (\d+)-(\d+) version (\d+)$")


def _index(w: int, seq: int) -> str:
    return f"# Index {w}-{seq}\n" + "".join(
        f"- [W{w} {seq} {k}](w{w}_t{k}.md) — hook {w}-{seq}-{k}\n"
        for k in range(TOPICS)
    )


def _check(prompt: str, manifest: list[dict[str, object]], count: int) -> str:
    """Return what is wrong with one observed snapshot, or ""."""
    heads = INDEX_HEAD.findall(prompt)
    if len(heads) > 1:
        return f"two index versions in one prompt: {heads}"
    if heads:
        w, seq = (int(x) for x in heads[0])
        if seq >= count or _index(w, seq) not in prompt:
            return f"index {w}-{seq} is not a version that was written"
    elif "# Index" in prompt:
        return "a torn index heading"
    for entry in manifest:
        relpath = str(entry.get("relpath"))
        match = re.fullmatch(r"w(\d)_t(\d)\.md", relpath)
        description = entry.get("description")
        if not match or not description:
            continue  # an empty or half-written file: a state that existed
        found = DESCRIPTION.match(str(description))
        if not found or found.groups()[:2] != match.groups():
            return f"{relpath}: description {description!r} was never written"
        if int(found.group(3)) % TOPICS != int(match.group(2)):
            return f"{relpath}: {description!r} belongs to another file"
    return ""


class TestAgentsAndLogs:
    def test_no_torn_snapshot_no_lost_entry(
        self, start_daemon: Starter, git_repo: Path
    ) -> None:
        """Every snapshot a reader sees is a whole state; every log entry lands once."""
        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("")
        backdate(memory)
        daemon = start_daemon()
        daemon.wait_fresh(memory)
        count = scale(60)
        log_count = scale(150)
        cli_count = scale(8)
        seen: dict[str, tuple[str, list[dict[str, object]]]] = {}
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                found = daemon.store.read(str(memory), "standard")
                if found is None:
                    continue
                meta, data = found
                version_dir = str(meta["version_dir"])
                if version_dir in seen:
                    continue
                try:
                    manifest = json.loads(
                        Path(version_dir, "manifest.json").read_text()
                    )
                except (OSError, ValueError):
                    continue  # removed after its grace period: read too late
                seen[version_dir] = (data.decode(), manifest)

        reader = threading.Thread(target=read)
        reader.start()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, str(memory), str(w), str(count)]
            )
            for w in range(WRITERS)
        ]
        procs += [
            subprocess.Popen(
                [sys.executable, "-c", LOGGER, str(memory), f"L{n}", str(log_count)]
            )
            for n in range(2)
        ]
        for i in range(cli_count):
            result = daemon.memd("log", "--project", str(git_repo), f"entry cli-{i}")
            assert 0 == result.returncode, result.stderr
        assert [0] * len(procs) == [p.wait(timeout=120) for p in procs]
        daemon.wait_fresh(memory)
        done.set()
        reader.join()

        problems = {v: _check(p, m, count) for v, (p, m) in seen.items()}
        print(f"snapshots seen: {len(seen)}")
        assert {} == {v: why for v, why in problems.items() if why}
        assert len(seen) >= 3, "the reader saw too few snapshots to mean anything"
        entries = [
            line
            for path in (memory / "logs").rglob("*.md")
            for line in path.read_text().splitlines()
            if line.startswith("- ")
        ]
        expected = sorted(
            [f"entry L{n}-{i}" for n in range(2) for i in range(log_count)]
            + [f"entry cli-{i}" for i in range(cli_count)]
        )
        assert expected == sorted(line.split(" ", 2)[2] for line in entries)
        daemon.assert_alive()
        assert [] == daemon.events("memory_dir_rebuild_failed")
        assert os.path.isdir(memory / "logs")
