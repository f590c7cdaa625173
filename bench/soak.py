"""Soak: a synthetic editing workload over many projects against a real `memd run`.

Each step makes a few unmeasured saves to random projects (topic files in place
or by rename, the index by rename), then one measured save: a unique token in
one project's MEMORY.md, timed until a snapshot holding it is published.
Resident memory (VmRSS) of the daemon is sampled at READY, every tenth of the
run and at the end. When the workload stops, every project's snapshot must
equal a fresh render: the ones that do not are missed updates (target 0).

With `--hostile`, a few more projects sit among the normal ones: a FIFO in
place of a topic file and of MEMORY.md, a `logs/` symlinked out of the memory
dir, a quadratic-bait feedback file (60 KB of blank lines), a 1,100-level
directory chain, and four projects renamed onto just-deleted ones in a loop
for the whole run. Missed updates are counted over the normal projects, and
the watches shed for flooding (watch_shed) are counted in the daemon's log.

Usage: python bench/soak.py [--seconds 180] [--projects 200] [--files 10] [--seed 1]
                            [--hostile]
Exit status 1 when an update was missed, no measured save came back, or the
daemon died.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_daemon import Daemon, _environment, _memd
from make_corpus import make_memory_dir

from memd.snapshot.build import load_and_build
from memd.snapshot.publish import SnapshotStore
from memd.snapshot.store import encode_prompt

CATCH_UP_SECONDS = 120.0


def _save(path: str, data: str, *, rename: bool) -> None:
    if rename:
        temp = f"{path}.soak-{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(data)
        os.replace(temp, path)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(data)


def _edit(rng: random.Random, memory: str, step: int) -> None:
    """One unmeasured save: rewrite a topic's body, or append to the index."""
    names = sorted(n for n in os.listdir(memory) if n.endswith(".md"))
    name = rng.choice(names)
    path = os.path.join(memory, name)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if name == "MEMORY.md":
        lines = [line for line in text.splitlines() if "soak edit" not in line]
        text = "\n".join([*lines, f"<!-- soak edit {step} -->"]) + "\n"
        _save(path, text, rename=True)
    else:
        head, _, _ = text.partition("\n---\n")  # keep the frontmatter
        _save(path, f"{head}\n---\nSoak edit {step}.\n", rename=rng.random() < 0.5)


def _measured(store: SnapshotStore, memory: str, step: int) -> float:
    """Save a token into MEMORY.md; return seconds until a snapshot shows it."""
    path = os.path.join(memory, "MEMORY.md")
    with open(path, encoding="utf-8") as handle:
        lines = [
            line for line in handle.read().splitlines() if "soak token" not in line
        ]
    token = f"soak token {step}-{os.urandom(4).hex()}"
    _save(path, "\n".join([*lines, f"- {token}"]) + "\n", rename=True)
    saved = time.perf_counter()
    deadline = saved + CATCH_UP_SECONDS
    needle = token.encode()
    while time.perf_counter() < deadline:
        found = store.read(memory, "standard")
        if found is not None and needle in found[1]:
            return time.perf_counter() - saved
        time.sleep(0.002)
    return float("inf")


def _stale(store: SnapshotStore, dirs: list[str]) -> list[str]:
    stale = []
    for memory in dirs:
        found = store.read(memory, "standard")
        fresh = encode_prompt(load_and_build(memory, "standard").text)
        if found is None or found[1] != fresh:
            stale.append(memory)
    return stale


def _hostile_projects(base: str, outside: str) -> list[str]:
    """Make the hostile projects; return the storm's four project dirs."""

    def memory_of(name: str) -> str:
        memory = os.path.join(base, name, "memory")
        make_memory_dir(memory, 3, seed=len(name))
        return memory

    os.mkfifo(os.path.join(memory_of("-hostile-fifo-topic"), "feedback_fifo.md"))
    fifo_index = memory_of("-hostile-fifo-index")
    os.unlink(os.path.join(fifo_index, "MEMORY.md"))
    os.mkfifo(os.path.join(fifo_index, "MEMORY.md"))
    os.makedirs(os.path.join(outside, "2026", "01"), exist_ok=True)
    with open(os.path.join(outside, "2026", "01", "2026-01-01.md"), "w") as f:
        f.write("- OUTSIDE CANARY must never reach memd [project]\n")
    os.symlink(outside, os.path.join(memory_of("-hostile-logs-link"), "logs"))
    bait = os.path.join(memory_of("-hostile-quadratic"), "feedback_bait.md")
    with open(bait, "w") as f:
        f.write("---\nname: bait\ndescription: blank lines\ntype: feedback\n---\n")
        f.write("\n" * 60_000)
    fd = os.open(memory_of("-hostile-deep"), os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1100):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    return [os.path.dirname(memory_of(f"-hostile-storm-{i}")) for i in range(4)]


def _unchain(top: str) -> None:
    """Remove the 1,100-level chain bottom up (shutil.rmtree would recurse)."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def _canary_leaks(root: str) -> int:
    """Files under memd's cache and state that hold the outside canary's text."""
    leaks = 0
    for top in ("cache", "state"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    leaks += b"OUTSIDE CANARY" in handle.read()
    return leaks


def _rename_storm(projects: list[str], stop: threading.Event) -> None:
    """Rename each storm project onto the next one just deleted, until `stop`."""
    while not stop.is_set():
        for i, source in enumerate(projects):
            target, moving = projects[(i + 1) % 4], f"{source}.moving"
            try:
                os.rename(source, moving)
                shutil.rmtree(target, ignore_errors=True)
                os.rename(moving, target)
                make_memory_dir(source + "/memory", 2, seed=i)
            except OSError:
                continue


def _log_figures(path: str) -> tuple[int, int]:
    """The daemon log's size in bytes, and how many watches it shed for flooding."""
    with open(path, "rb") as handle:
        data = handle.read()
    return len(data), data.count(b'"event": "watch_shed"')


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def soak(
    root: str, *, seconds: float, projects: int, files: int, seed: int, hostile: bool
) -> int:
    env = _environment(root)
    base = os.path.join(env["HOME"], ".claude", "projects")
    dirs = []
    for number in range(projects):
        memory = os.path.join(base, f"-soak-project{number:03d}", "memory")
        make_memory_dir(memory, files, seed=number)
        dirs.append(memory)
    storm = _hostile_projects(base, os.path.join(root, "outside")) if hostile else []
    stop_storm = threading.Event()
    storm_thread = threading.Thread(target=_rename_storm, args=(storm, stop_storm))
    store = SnapshotStore(os.path.join(env["XDG_CACHE_HOME"], "memd"))
    daemon = Daemon(env)
    cpu_start = _cpu_seconds(daemon.proc.pid)
    if storm:
        storm_thread.start()
    rng = random.Random(seed)
    rss = [(0.0, daemon.rss_mib())]
    latencies: list[float] = []
    saves = 0
    started = time.perf_counter()
    next_sample = seconds / 10
    step = 0
    try:
        while (elapsed := time.perf_counter() - started) < seconds:
            for _ in range(rng.randint(1, 8)):
                _edit(rng, rng.choice(dirs), step)
                saves += 1
            latencies.append(_measured(store, rng.choice(dirs), step))
            saves += 1
            step += 1
            if elapsed >= next_sample:
                rss.append((elapsed, daemon.rss_mib()))
                next_sample += seconds / 10
            if daemon.proc.poll() is not None:
                print(f"memd run died with {daemon.proc.returncode}", file=sys.stderr)
                return 1
        rss.append((time.perf_counter() - started, daemon.rss_mib()))
        stop_storm.set()
        if storm:
            storm_thread.join()
        cpu = _cpu_seconds(daemon.proc.pid) - cpu_start
        deadline = time.perf_counter() + CATCH_UP_SECONDS
        stale = _stale(store, dirs)
        while stale and time.perf_counter() < deadline:
            time.sleep(0.5)
            stale = _stale(store, stale)
        status = json.loads(
            subprocess.run(
                [*_memd(), "status", "--format", "json"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
    finally:
        stop_storm.set()
        daemon.stop()
        if hostile:
            _unchain(os.path.join(base, "-hostile-deep", "memory"))
    leaks = _canary_leaks(root) if hostile else 0
    log_bytes, shed = _log_figures(os.path.join(env["XDG_STATE_HOME"], "memd-run.log"))
    ordered = sorted(latencies) or [math.inf]  # no measured save came back
    p99 = (
        statistics.quantiles(ordered, n=100, method="inclusive")[98]
        if len(ordered) > 1
        else ordered[-1]
    )
    print(f"projects {projects} x {files} files, {seconds:.0f} s, seed {seed}")
    print(f"saves {saves} ({saves / seconds:.1f}/s), measured {len(latencies)}")
    print(
        f"save-to-snapshot latency: p50 {statistics.median(ordered) * 1000:.0f} ms,"
        f" p99 {p99 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )
    print("RSS MiB: " + ", ".join(f"{t:.0f}s {m:.1f}" for t, m in rss))
    print(f"RSS growth start->end: {rss[-1][1] - rss[0][1]:+.1f} MiB")
    print(
        f"rescans {status.get('rescans')}, queue overflows"
        f" {status.get('queue_overflows')}, errors"
        f" {sum(1 for d in status.get('dirs', {}).values() if d.get('error'))}"
    )
    print(f"daemon CPU: {cpu:.1f} s over {seconds:.0f} s ({cpu / seconds:.1%})")
    if hostile:
        watch = status.get("watch", {})
        deaf = watch.get("deaf", [])
        reasons = Counter(str(problem.get("reason")) for problem in deaf)
        why = "; ".join(f"{n} {reason}" for reason, n in reasons.most_common())
        print(f"watch: {watch.get('state')}, deaf roots {len(deaf)} ({why or '-'})")
        catches = status.get("sweep_catches")
        print(f"fallbacks {status.get('fallbacks')}, sweep catches {catches}")
        print(f"watches shed for flooding: {shed}")
        print(f"outside canary in cache or state: {leaks} files")
    print(f"daemon log: {log_bytes / 1024:.0f} KiB")
    print(f"missed updates: {len(stale)}")
    return 1 if stale or leaks or not latencies else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hostile", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-soak-") as root:
        sys.exit(
            soak(
                root,
                seconds=args.seconds,
                projects=args.projects,
                files=args.files,
                seed=args.seed,
                hostile=args.hostile,
            )
        )


if __name__ == "__main__":
    main()
