"""Incremental reload: one changed file in a 10,000-file directory vs a 10-file one.

For each size, fill one memory directory, warm a `ParseCache` with one
`load_memdir`, then repeatedly rewrite one topic file (new bytes, new mtime)
and time what the daemon does: `load_memdir(..., cache=cache, previous=last,
changed={relpath})`, which re-reads only that file. `--full` times the full
re-read with the cache instead (every entry stat-ed, only that file
re-parsed): the fallback after an overflow. Medians of `--repeat` reloads.
Target (SPEC §12): large / small < 1.5.

Usage: python bench/bench_incremental.py [--large 10000] [--small 10] [--repeat 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_corpus import make_memory_dir


def reload_times(memory_dir: str, repeat: int, *, full: bool = False) -> list[float]:
    """Warm a cache, then time `repeat` reloads that each follow one file change."""
    from memd.memory.memdir import ParseCache
    from memd.memory.reader import load_memdir

    cache = ParseCache()
    memdir = load_memdir(memory_dir, cache=cache)
    name = sorted(n for n in os.listdir(memory_dir) if n != "MEMORY.md")[0]
    changed = os.path.join(memory_dir, name)
    with open(changed, "rb") as handle:
        original = handle.read()
    times = []
    for number in range(repeat):
        with open(changed, "wb") as handle:
            handle.write(original + f"\n- edit {number}\n".encode())
        start = time.perf_counter()
        if full:
            memdir = load_memdir(memory_dir, cache=cache)
        else:
            memdir = load_memdir(
                memory_dir, cache=cache, previous=memdir, changed={name}
            )
        times.append(time.perf_counter() - start)
        assert memdir.files, "the directory was read"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument(
        "--full", action="store_true", help="time the full re-read fallback"
    )
    args = parser.parse_args()
    import memd.memory.memdir  # noqa: F401  -- import cost is not reload cost

    with tempfile.TemporaryDirectory(prefix="memd-bench-") as base:
        results = {}
        for label, files in (("small", args.small), ("large", args.large)):
            memory_dir = os.path.join(base, label, "memory")
            make_memory_dir(memory_dir, files)
            times = reload_times(memory_dir, args.repeat, full=args.full)
            results[label] = statistics.median(times)
    ratio = results["large"] / results["small"]
    print("full re-read (fallback)" if args.full else "incremental re-read (daemon)")
    print(f"one change, {args.small} files:  {results['small'] * 1000:.2f} ms")
    print(f"one change, {args.large} files: {results['large'] * 1000:.2f} ms")
    print(f"ratio large/small: {ratio:.1f}x (target < 1.5x)")


if __name__ == "__main__":
    main()
