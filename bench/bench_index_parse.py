"""`parse_index` on hostile and real-looking indexes: time grows linearly with size.

For each shape the index is parsed at N and at 4N characters; a linear parser
shows a 4N/N ratio near 4 (a quadratic one near 16). Baseline: splitting the
same text into lines, measured in the same run, to show the constant factor.
The shapes are the ones a backtracking link regex chokes on: runs of `[`, of
unclosed `[a](`, of backticks of growing length, and of nested parentheses.

Usage: python bench/bench_index_parse.py [--size 50000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

from memd.memory.index import parse_index

SHAPES = {
    "real entries": "- [Role](user_role.md) — a staff SRE who owns the paging rota\n",
    "table rows": "| [x](x.md) | reference | see [y](y.md) for more |\n",
    "open brackets": "[",
    "unclosed links": "[a](x ",
    "backtick runs": "`a``b```c [x](y.md) ",
    "nested parens": "[a](b(",
    "wiki-links": "[[name]] and [[other|alias]] ",
}


def _time(action: object, text: str, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        action(text)  # type: ignore[operator]
        runs.append(time.perf_counter() - start)
    return min(runs)  # the least disturbed run: the machine is shared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'shape':16} {'N s':>9} {'4N s':>9} {'4N/N':>6} {'vs split':>9}")
    for name, piece in SHAPES.items():
        small = piece * (args.size // len(piece))
        large = piece * (4 * args.size // len(piece))
        t_small = _time(parse_index, small, args.repeat)
        t_large = _time(parse_index, large, args.repeat)
        t_split = _time(lambda t: t.split("\n"), large, args.repeat)
        print(
            f"{name:16} {t_small:9.4f} {t_large:9.4f} {t_large / t_small:6.2f} "
            f"{t_large / max(t_split, 1e-9):8.0f}x"
        )


if __name__ == "__main__":
    main()
