"""Cold lint + render of 10,000 topic files vs reading them with PyYAML's C loader.

Baseline: open and read every topic file and the index, and parse each file's
frontmatter with `yaml.CSafeLoader`. memd: for each project, `load_memdir`
(no parse cache: cold) then `build_snapshot`, whose steps render the prompt,
lint the directory, build the recall manifest and hash the text. `lint_memdir`
alone is timed too. Medians of alternating runs in one process, so the page
cache is equally warm for both. Target (SPEC §12): memd / baseline <= 2.

Usage: python bench/bench_cold_lint.py [--projects 100] [--files 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_corpus import make_corpus


def baseline(memory_dirs: list[str]) -> int:
    """Read each file, parse its frontmatter with the C loader; return the count."""
    import yaml

    parsed = 0
    for memory_dir in memory_dirs:
        for name in sorted(os.listdir(memory_dir)):
            with open(os.path.join(memory_dir, name), "rb") as handle:
                text = handle.read().decode("utf-8")
            if name == "MEMORY.md" or not text.startswith("---\n"):
                continue
            end = text.find("\n---", 4)
            yaml.load(text[4:end], Loader=yaml.CSafeLoader)
            parsed += 1
    return parsed


def memd_build(memory_dirs: list[str]) -> int:
    """load_memdir + build_snapshot (render, lint, manifest, digest); count files."""
    from memd.memory.reader import load_memdir
    from memd.snapshot.build import build_snapshot

    loaded = 0
    for memory_dir in memory_dirs:
        memdir = load_memdir(memory_dir)
        build_snapshot(memdir, "standard")
        loaded += len(memdir.files)
    return loaded


def memd_lint(memory_dirs: list[str]) -> int:
    """load_memdir + lint_memdir only; return diagnostics found."""
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    return sum(len(lint_memdir(load_memdir(d))) for d in memory_dirs)


def timed(function: object, memory_dirs: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    result = function(memory_dirs)  # type: ignore[operator]
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=100)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-bench-") as base:
        dirs = make_corpus(base, projects=args.projects, files=args.files)
        # Import everything first: module import cost is not lint cost.
        import yaml  # noqa: F401

        import memd.lint.engine
        import memd.memory.memdir
        import memd.snapshot.build  # noqa: F401

        times: dict[str, list[float]] = {
            "baseline": [],
            "memd build": [],
            "memd lint": [],
        }
        counts: dict[str, int] = {}
        for _ in range(args.repeat):
            for label, function in (
                ("baseline", baseline),
                ("memd build", memd_build),
                ("memd lint", memd_lint),
            ):
                seconds, counts[label] = timed(function, dirs)
                times[label].append(seconds)
    total = args.projects * args.files
    medians = {label: statistics.median(values) for label, values in times.items()}
    print(
        f"corpus: {args.projects} projects x {args.files} topic files = {total} files"
    )
    print(
        f"baseline (read + yaml.CSafeLoader): {medians['baseline']:.3f} s "
        f"({counts['baseline']} frontmatters)"
    )
    print(
        f"memd load_memdir + build_snapshot:  {medians['memd build']:.3f} s "
        f"({counts['memd build']} files)"
    )
    print(
        f"memd load_memdir + lint_memdir:     {medians['memd lint']:.3f} s "
        f"({counts['memd lint']} diagnostics)"
    )
    ratio = medians["memd build"] / medians["baseline"]
    print(f"ratio build/baseline: {ratio:.2f}x (target <= 2.00x)")
    print(f"ratio lint/baseline:  {medians['memd lint'] / medians['baseline']:.2f}x")


if __name__ == "__main__":
    main()
