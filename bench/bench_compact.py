"""How long `memd fix` takes to compact an index, against a plain `memd lint`.

For indexes of 250, 600 and 2,000 entries (sections, a table, prose) in a
throwaway directory, times planning the compaction (`plan_directory`, which
reads and lints nothing but what fix needs), applying it as one change
(`apply_edits`) and undoing it (`undo_fix`), each the median of N runs, and
prints the ratio of planning to linting the same directory in the same run
(the baseline: `lint_memdir(load_memdir(dir))`). Also prints the size before
and after and how many entries stayed in MEMORY.md.

Usage: python bench/bench_compact.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from memd.lint.compact import index_size
from memd.lint.engine import lint_memdir
from memd.lint.fix_files import apply_edits, plan_directory, undo_fix
from memd.memory.reader import load_memdir

TYPES = ("user", "feedback", "project", "reference")


def make(root: str, entries: int) -> None:
    lines = ["# Memory", ""]
    for i in range(entries):
        kind = TYPES[i % 4]
        relpath = f"{kind}_m{i}.md"
        with open(os.path.join(root, relpath), "w", encoding="utf-8") as f:
            f.write(
                f"---\nname: Memory {i}\ndescription: What memory {i} is about\n"
                f"type: {kind}\n---\nFact.\n\n**Why:** x.\n**How to apply:** y.\n"
            )
        if i % (entries // 8) == 0:
            lines += ["", f"## Area {i}", ""]
        lines.append(f"- [Memory {i}]({relpath}) — what memory {i} is about")
        if i % 25 == 0:
            lines += ["", f"A note after memory {i}.", ""]
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def timed(run: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        run()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print("entries  lint_ms  plan_ms  ratio  apply_ms  undo_ms  before -> after  kept")
    for entries in (250, 600, 2000):
        with (
            tempfile.TemporaryDirectory() as root,
            tempfile.TemporaryDirectory() as state,
        ):
            make(root, entries)
            with open(os.path.join(root, "MEMORY.md"), encoding="utf-8") as f:
                before = index_size(f.read())
            lint = timed(lambda: lint_memdir(load_memdir(root)), args.runs)
            plan = timed(lambda: plan_directory(root), args.runs)
            edits = plan_directory(root)
            applied = []
            undone = []
            for _ in range(args.runs):
                started = time.perf_counter()
                assert apply_edits(root, edits, state)
                applied.append(time.perf_counter() - started)
                started = time.perf_counter()
                undo_fix(root, state)
                undone.append(time.perf_counter() - started)
            assert apply_edits(root, edits, state)
            with open(os.path.join(root, "MEMORY.md"), encoding="utf-8") as f:
                after_text = f.read()
            after = index_size(after_text)
            kept = sum(
                1
                for line in after_text.split("\n")
                if "](" in line and "](index-" not in line
            )
            apply_ms = statistics.median(applied) * 1e3
            undo_ms = statistics.median(undone) * 1e3
            print(
                f"{entries:7}  {lint * 1e3:7.0f}  {plan * 1e3:7.0f}  {plan / lint:5.2f}"
                f"  {apply_ms:8.0f}  {undo_ms:7.0f}  {before.lines}/{before.units}"
                f" -> {after.lines}/{after.units}  {kept}"
            )


if __name__ == "__main__":
    main()
