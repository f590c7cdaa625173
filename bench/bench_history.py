"""Memory history: its storage, the cost of recording, and `memd history`'s speed.

- Storage: 10,000 small edits of a 4 KiB file, each recorded; the whole
  `<state>/history/` after a WAL checkpoint. Target: < 8 MiB (the raw
  versions would be 10,000 x 4 KiB = 39 MiB; the ratio is printed).
- Recording cost: a 30-file memory directory, one file saved per batch, as
  the daemon records it after a settled batch (`record_edit`: the lock, the
  stat comparison, one read, one transaction). Median of N, against the
  batch's own baseline measured in the same run: re-reading the directory and
  rendering its snapshot (`load_and_build`). Target: <= 5 ms p50.
- `memd history FILE` on that file's 10,000 versions (the installed script,
  a subprocess, all 10,000 listed), against `python -c pass` from the same
  interpreter in the same run. Target: < 200 ms.

Usage: python bench/bench_history.py [--edits 10000] [--batches 200] [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TOPIC = (
    "---\nname: {name}\ndescription: A memory the history bench edits\n"
    "type: user\n---\n"
)


def _body(size: int = 4096) -> str:
    lines, total, i = [], 0, 0
    while total < size - 64:
        line = f"- fact {i}: the user prefers small, well named functions {i * 7}\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


def _dir_bytes(path: str) -> int:
    return sum(
        os.path.getsize(os.path.join(root, name))
        for root, _, names in os.walk(path)
        for name in names
    )


def storage(root: str, edits: int) -> tuple[str, str]:
    from memd.history.store import History

    memory = os.path.join(root, "storage", "memory")
    state = os.path.join(root, "storage", "state")
    os.makedirs(memory)
    body = _body()
    path = os.path.join(memory, "notes.md")
    lines = body.splitlines(keepends=True)
    with History.open(state) as history:
        for n in range(edits):
            at = n % len(lines)
            lines[at] = f"- fact {at}: edited {n} times now, still a small change\n"
            with open(path, "w") as out:
                out.write(TOPIC.format(name="notes") + "".join(lines))
            history.record(memory, cause="edit")
        history._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        count = len(history.changes(memory))
    size = _dir_bytes(os.path.join(state, "history"))
    raw = edits * (len(TOPIC) + len(body))
    kib = (len(TOPIC) + len(body)) / 1024
    print(f"storage: {count} versions of a {kib:.1f} KiB file take "
          f"{size / 2**20:.2f} MiB (target < 8 MiB; raw {raw / 2**20:.1f} MiB, "
          f"{size / raw:.3f}x)")  # fmt: skip
    return memory, state


def recording_cost(root: str, batches: int) -> None:
    from memd.history.record import record_edit
    from memd.history.store import History
    from memd.snapshot.build import load_and_build

    memory = os.path.join(root, "cost", "memory")
    state = os.path.join(root, "cost", "state")
    os.makedirs(memory)
    body = _body()
    index = []
    for i in range(30):
        with open(os.path.join(memory, f"topic_{i}.md"), "w") as out:
            out.write(TOPIC.format(name=f"topic {i}") + body)
        index.append(f"- [Topic {i}](topic_{i}.md) — fact {i}\n")
    with open(os.path.join(memory, "MEMORY.md"), "w") as out:
        out.write("".join(index))
    record_times, batch_times = [], []
    with History.open(state) as history:
        record_edit(history, state, memory)
        for n in range(batches):
            with open(os.path.join(memory, f"topic_{n % 30}.md"), "a") as out:
                out.write(f"- one more fact {n}\n")
            started = time.perf_counter()
            load_and_build(memory, "standard")
            batch_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            record_edit(history, state, memory)
            record_times.append(time.perf_counter() - started)
    record = statistics.median(record_times) * 1000
    batch = statistics.median(batch_times) * 1000
    print(f"recording: p50 {record:.2f} ms per settled batch (target <= 5 ms); "
          f"the batch's own read and render p50 {batch:.2f} ms, "
          f"recording adds {record / batch:.2f}x of it")  # fmt: skip


def history_speed(memory: str, state: str, runs: int) -> None:
    memd = os.path.join(os.path.dirname(sys.executable), "memd")
    env = {**os.environ, "XDG_STATE_HOME": os.path.dirname(state)}
    # The CLI reads <XDG_STATE_HOME>/memd: point it at the bench's state.
    link = os.path.join(os.path.dirname(state), "memd")
    if not os.path.exists(link):
        os.symlink(state, link)
    listing = [memd, "history", os.path.join(memory, "notes.md"), "--no-patch"]

    def timed(command: list[str]) -> tuple[float, float]:
        """(p50 wall ms, p50 CPU ms): CPU time holds up on a loaded machine."""
        import resource

        walls, cpus = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(command, env=env, capture_output=True, check=False)
            walls.append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(
                after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            )
            assert done.returncode == 0, done.stderr
        return statistics.median(walls) * 1000, statistics.median(cpus) * 1000

    base_wall, base_cpu = timed([sys.executable, "-c", "pass"])
    # the listing (target < 200 ms), then `git log -p`'s form: every diff too
    for argv, target in ((listing, " (target < 200 ms)"), (listing[:-1], "")):
        wall, cpu = timed(argv)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        shown = done.stdout.count("\nrev ") + done.stdout.startswith("rev ")
        load = os.getloadavg()[0]
        print(f"{' '.join(['memd', *argv[1:2], 'FILE', *argv[3:]])}: p50 {wall:.1f} ms "
              f"wall, {cpu:.1f} ms CPU for {shown} versions{target}; python -c pass "
              f"{base_wall:.1f} ms wall, {base_cpu:.1f} ms CPU; "
              f"{wall / base_wall:.2f}x wall; load {load:.1f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-bench-history-") as root:
        memory, state = storage(root, args.edits)
        recording_cost(root, args.batches)
        history_speed(memory, state, args.runs)


if __name__ == "__main__":
    main()
