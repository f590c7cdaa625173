"""Adversarial text: parse + lint + render + dream planning at 16 KB vs 64 KB.

Each unit (an unclosed `<!--`, blank lines, brackets, a line of links...) is
repeated to each size and put in MEMORY.md, a topic body, a frontmatter
value and a daily-log entry; the same steps as `tests/reliability/test_linear.py`
are timed (best of `--repeat`). The baseline is the same work on the 16 KB
text in the same run. Linear work gives a ratio near 4; a quadratic pattern
gives about 16. Target (issue 11): < 8 for every unit.

Usage: python bench/bench_linear.py [--repeat 5] [--large 65536] [--small 16384]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

UNITS = (
    "<!--",
    "<!-- ",
    "\n",
    "[",
    "[a](",
    "*",
    "`",
    "```\n",
    "---\n",
    "\r",
    "- [a](a.md) `",
    "**why" + " " * 64,
    "\nwhy" + " " * 64,
)
HEAD = "---\nname: t\ndescription: a description long enough\ntype: feedback\n---\n"


def pipeline(root: Path, body: str) -> float:
    from memd.kairos.consolidate import parse_log_entries, plan_consolidation
    from memd.lint.engine import lint_memdir
    from memd.lint.fixes import normalise_bytes
    from memd.memory.reader import load_memdir
    from memd.snapshot.build import build_snapshot

    (root / "MEMORY.md").write_text(body)
    (root / "body.md").write_text(HEAD + body)
    (root / "front.md").write_text(
        "---\nname: f\ndescription: " + body.replace("\n", " ") + "\ntype: user\n---\n"
    )
    log = ("# 2026-01-01\n\n- 10:00 " + body).encode()
    # The cyclic GC's full collections cost more as the heap grows: noise
    # here, not the parsing this measures.
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        memdir = load_memdir(str(root), max_file_bytes=1 << 20)
        lint_memdir(memdir)
        build_snapshot(memdir, "standard")
        normalise_bytes(body.encode())
        entries, _ = parse_log_entries("logs/2026/01/2026-01-01.md", log)
        plan_consolidation(entries, {}, body.encode())
        return time.perf_counter() - started
    finally:
        gc.enable()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--small", type=int, default=16 * 1024)
    parser.add_argument("--large", type=int, default=64 * 1024)
    args = parser.parse_args(argv)
    worst = 0.0
    print(f"{'unit':24} {'small ms':>9} {'large ms':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for unit in UNITS:
            times = []
            for size in (args.small, args.large):
                root = Path(tmp) / f"{size}"
                root.mkdir(exist_ok=True)
                body = unit * (size // len(unit))
                times.append(min(pipeline(root, body) for _ in range(args.repeat)))
            ratio = times[1] / max(times[0], 1e-6)
            worst = max(worst, ratio)
            print(
                f"{unit[:20]!r:24} {times[0] * 1e3:9.1f} {times[1] * 1e3:9.1f} "
                f"{ratio:6.1f}"
            )
    print(f"worst ratio {worst:.1f} (target < 8)")
    return 0 if worst < 8 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
