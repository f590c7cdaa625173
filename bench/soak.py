"""Soak: a synthetic editing workload over many projects against a real `memd run`.

Each step makes a few unmeasured saves to random projects (topic files in place
or by rename, the index by rename), then one measured save: a unique token in
one project's MEMORY.md, timed until a snapshot holding it is published.
Resident memory (VmRSS) of the daemon is sampled at READY, every tenth of the
run and at the end. When the workload stops, every project's snapshot must
equal a fresh render: the ones that do not are missed updates (target 0).

Usage: python bench/soak.py [--seconds 180] [--projects 200] [--files 10] [--seed 1]
Exit status 1 when an update was missed or the daemon died.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

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


def soak(root: str, *, seconds: float, projects: int, files: int, seed: int) -> int:
    env = _environment(root)
    base = os.path.join(env["HOME"], ".claude", "projects")
    dirs = []
    for number in range(projects):
        memory = os.path.join(base, f"-soak-project{number:03d}", "memory")
        make_memory_dir(memory, files, seed=number)
        dirs.append(memory)
    store = SnapshotStore(os.path.join(env["XDG_CACHE_HOME"], "memd"))
    daemon = Daemon(env)
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
        daemon.stop()
    ordered = sorted(latencies)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    print(f"projects {projects} x {files} files, {seconds:.0f} s, seed {seed}")
    print(f"saves {saves} ({saves / seconds:.1f}/s), measured {len(latencies)}")
    print(
        f"save-to-snapshot latency: p50 {statistics.median(ordered) * 1000:.0f} ms,"
        f" p99 {cut[98] * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )
    print("RSS MiB: " + ", ".join(f"{t:.0f}s {m:.1f}" for t, m in rss))
    print(f"RSS growth start->end: {rss[-1][1] - rss[0][1]:+.1f} MiB")
    print(
        f"rescans {status.get('rescans')}, queue overflows"
        f" {status.get('queue_overflows')}, errors"
        f" {sum(1 for d in status.get('dirs', {}).values() if d.get('error'))}"
    )
    print(f"missed updates: {len(stale)}")
    return 1 if stale else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-soak-") as root:
        sys.exit(
            soak(
                root,
                seconds=args.seconds,
                projects=args.projects,
                files=args.files,
                seed=args.seed,
            )
        )


if __name__ == "__main__":
    main()
