"""The daemon's latency, incremental cost and footprint (SPEC §12).

1. Save-to-fresh-snapshot latency: a real `memd run` watches one project; each
   save rewrites MEMORY.md and waits for the snapshot link to be replaced.
   Baseline, in the same run and for the same saves: a watchdog observer in
   this process (same event filter) timing the raw close-after-write event.
   Target: p50 and p99 <= settle + 2 x raw.
2. Incremental work: one changed file, then what the daemon does:
   `load_memdir` with its parse cache, the last read and the changed relpath,
   plus `build_snapshot` with its lint cache, in a 10,000-file directory vs a
   10-file one. Target: ratio < 1.5.
3. Footprint: `memd run` over 1,000 projects x 10 files: start-up to READY=1,
   resident memory (VmRSS), CPU seconds while idle. Targets: RSS < 80 MB,
   idle CPU < 0.1 s per 60 s.

Usage: python bench/bench_daemon.py [--saves 300] [--projects 1000] [--idle 60]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_corpus import isolated_env, make_corpus, make_memory_dir

SETTLE_SECONDS = 0.1


def _memd() -> list[str]:
    found = shutil.which("memd")
    return [found] if found else [sys.executable, "-m", "memd"]


def _environment(root: str) -> dict[str, str]:
    """An isolated environment (make_corpus.isolated_env) tuned for the daemon."""
    env = isolated_env(root)
    env.update(
        MEMD_SETTLE_SECONDS=str(SETTLE_SECONDS),
        MEMD_LOG_LEVEL="warning",
        PYTHONFAULTHANDLER="1",
    )
    return env


class Daemon:
    """`memd run` with a NOTIFY_SOCKET; `ready_seconds` is start-up to READY=1."""

    def __init__(self, env: dict[str, str]):
        # The daemon's log, for when a run goes wrong.
        self.log = open(os.path.join(env["XDG_STATE_HOME"], "memd-run.log"), "wb")  # noqa: SIM115
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = f"memd-bench-{os.getpid()}-{os.urandom(4).hex()}"
        self.sock.bind("\0" + name)
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [*_memd(), "run"],
            env={**env, "NOTIFY_SOCKET": "@" + name},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.sock.settimeout(600)
        while b"READY=1" not in self.sock.recv(4096):
            pass
        self.ready_seconds = time.perf_counter() - started

    def cpu_seconds(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(
                signal.SIGABRT
            )  # PYTHONFAULTHANDLER: threads to the log
            self.proc.wait()
            print("memd run did not stop on SIGTERM", file=sys.stderr)
        self.sock.close()
        self.log.close()


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    cut = statistics.quantiles(ordered, n=100, method="inclusive")
    return statistics.median(ordered), cut[94], cut[98]


def bench_latency(root: str, saves: int, *, unpaired: bool = False) -> None:
    """Time saves; with `unpaired`, each save follows a rename out of the tree.

    watchdog holds an unpaired IN_MOVED_FROM up to 0.5 s waiting for its pair,
    and everything queued behind it waits too (SPEC §7 fact 3).
    """
    from watchdog.events import FileClosedEvent, FileMovedEvent, FileSystemEventHandler
    from watchdog.observers import Observer

    from memd.snapshot.publish import SnapshotStore

    env = _environment(root)
    memory = os.path.join(
        env["HOME"], ".claude", "projects", "-bench-latency", "memory"
    )
    make_memory_dir(memory, 20, seed=1)
    index = os.path.join(memory, "MEMORY.md")
    daemon = Daemon(env)
    store = SnapshotStore(os.path.join(env["XDG_CACHE_HOME"], "memd"))
    link = store.directory_for(memory, "standard").rstrip(os.sep)
    raw_seen, snap_seen = threading.Event(), threading.Event()
    stamps: dict[str, float] = {}

    class Handler(FileSystemEventHandler):
        def dispatch(self, event: object) -> None:
            now = time.perf_counter()
            if isinstance(event, FileClosedEvent) and event.src_path == index:
                stamps.setdefault("raw", now)
                raw_seen.set()
            elif isinstance(event, FileMovedEvent) and event.dest_path == link:
                stamps.setdefault("snap", now)
                snap_seen.set()

    observer = Observer()
    observer.schedule(Handler(), memory, event_filter=[FileClosedEvent])
    observer.schedule(Handler(), os.path.dirname(link), event_filter=[FileMovedEvent])
    observer.start()
    time.sleep(0.2)
    raw, total = [], []
    original = _read(index)
    try:
        for number in range(saves):
            stamps.clear()
            raw_seen.clear()
            snap_seen.clear()
            if unpaired:
                scratch = os.path.join(memory, "scratch.md")
                with open(scratch, "w", encoding="utf-8") as handle:
                    handle.write("scratch\n")
                time.sleep(SETTLE_SECONDS * 2)
                raw_seen.clear()
                snap_seen.clear()
                stamps.clear()
                os.rename(scratch, os.path.join(root, f"moved-out-{number}.md"))
            started = time.perf_counter()
            with open(index, "w", encoding="utf-8") as handle:
                handle.write(
                    original + f"- [Save {number}](save.md) — bench save {number}\n"
                )
            if not (raw_seen.wait(5) and snap_seen.wait(10)):
                print(
                    f"  save {number}: raw {raw_seen.is_set()}"
                    f" snapshot {snap_seen.is_set()}: timed out",
                    file=sys.stderr,
                )
                continue
            raw.append(stamps["raw"] - started)
            total.append(stamps["snap"] - started)
            time.sleep(
                SETTLE_SECONDS * 1.5
            )  # let the racy re-stamp pass out of the way
    finally:
        observer.stop()
        observer.join()
        daemon.stop()
        if len(total) < saves:
            print(_read(daemon.log.name)[-3000:], file=sys.stderr)
    r50, r95, r99 = _percentiles(raw)
    s50, s95, s99 = _percentiles(total)
    settle_ms = SETTLE_SECONDS * 1e3
    what = "after a rename out of the tree" if unpaired else ""
    print(
        f"save {what}-> fresh snapshot over {len(total)} saves"
        f" (settle {settle_ms:.0f} ms)"
    )
    for label, (p50, p95, p99) in (
        ("raw watchdog event", (r50, r95, r99)),
        ("snapshot in place ", (s50, s95, s99)),
    ):
        print(
            f"  {label}  p50 {p50 * 1e3:7.2f} ms  p95 {p95 * 1e3:7.2f} ms"
            f"  p99 {p99 * 1e3:7.2f} ms"
        )
    for label, got, base in (("p50", s50, r50), ("p99", s99, r99)):
        budget = SETTLE_SECONDS + 2 * base
        print(
            f"  {label}: {got * 1e3:.1f} ms vs settle + 2 x raw = {budget * 1e3:.1f} ms"
            f" -> ratio {got / budget:.2f} (target <= 1)"
        )


def bench_incremental(root: str, repeat: int) -> None:
    from memd.lint.engine import LintCache
    from memd.memory.memdir import ParseCache
    from memd.memory.reader import load_memdir
    from memd.snapshot.build import build_snapshot

    medians = {}
    for files in (10, 10_000):
        memory = os.path.join(root, f"incremental-{files}", "memory")
        make_memory_dir(memory, files, seed=files)
        cache, lint_cache = ParseCache(), LintCache()
        memdir = load_memdir(memory, cache=cache)
        build_snapshot(
            memdir, "standard", lint_cache=lint_cache
        )  # warm, like the daemon
        names = sorted(
            n for n in os.listdir(memory) if n.endswith(".md") and n != "MEMORY.md"
        )
        name = names[len(names) // 2]
        target = os.path.join(memory, name)
        content = _read(target)
        times = []
        for number in range(repeat):
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(content + f"\nEdit {number}.\n")
            started = time.perf_counter()
            memdir = load_memdir(memory, cache=cache, previous=memdir, changed={name})
            build_snapshot(memdir, "standard", lint_cache=lint_cache)
            times.append(time.perf_counter() - started)
        medians[files] = statistics.median(times)
    ratio = medians[10_000] / medians[10]
    print(f"one change, reload + re-render (median of {repeat}):")
    print(
        f"  10 files {medians[10] * 1e3:8.2f} ms"
        f"   10,000 files {medians[10_000] * 1e3:8.2f} ms"
        f"   ratio {ratio:.1f} (target < 1.5)"
    )


def bench_footprint(root: str, projects: int, files: int, idle: float) -> None:
    env = _environment(root)
    make_corpus(os.path.join(env["HOME"], ".claude"), projects=projects, files=files)
    daemon = Daemon(env)
    try:
        time.sleep(2.0)  # let the racy re-stamps of freshly written files finish
        cpu_before = daemon.cpu_seconds()
        time.sleep(idle)
        cpu_idle = daemon.cpu_seconds() - cpu_before
        rss = daemon.rss_mib()
        threads = daemon.threads()
    finally:
        daemon.stop()
    per_minute = cpu_idle * 60 / idle
    print(f"footprint, {projects} projects x {files} files:")
    print(f"  start-up to READY=1 {daemon.ready_seconds:.2f} s")
    print(f"  resident memory {rss:.1f} MiB (target < 80)   threads {threads}")
    print(
        f"  idle CPU {cpu_idle:.3f} s over {idle:.0f} s"
        f" = {per_minute:.3f} s/min (target < 0.1)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument(
        "--idle", type=float, default=60.0, help="idle window in seconds"
    )
    parser.add_argument(
        "--only", choices=("latency", "unpaired", "incremental", "footprint")
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-bench-") as root:
        if args.only in (None, "latency"):
            bench_latency(os.path.join(root, "latency"), args.saves)
        if args.only in (None, "unpaired"):
            bench_latency(
                os.path.join(root, "unpaired"), args.saves // 3, unpaired=True
            )
        if args.only in (None, "incremental"):
            bench_incremental(os.path.join(root, "incremental"), args.repeat)
        if args.only in (None, "footprint"):
            bench_footprint(
                os.path.join(root, "footprint"), args.projects, args.files, args.idle
            )


if __name__ == "__main__":
    main()
