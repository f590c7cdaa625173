"""How D004 (duplicate-topic) behaves on real memory, for choosing its threshold.

For every memory dir at the newest commit of the corpus repositories
(`--corpus`, as bench_truth_precision.py), scores every ordered pair of
topic files with `memd.truth.duplicates.containment` and prints the highest
ones, whether the identifier rule keeps them apart, and what D004 flags at
`THRESHOLD`. `LABELS` holds a person's reading of the top pairs of the
corpus measured in bench/README.md (True: the first says nothing the second
does not); precision is counted over the labelled flagged pairs.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_truth_precision import SAFE, memory_dirs, repositories

from memd.memory.reader import load_memdir
from memd.truth import duplicates as dup

LABELS = {
    (
        "4444J99+application-pipeline",
        "feedback_cover_letter_quality.md",
        "feedback_resume_cover_letter_quality_2026-03-26.md",
    ): True,  # the second quotes every rule of the first, "original rules"
    (
        "AlexSergey+opensa",
        "player-cube-placeholder.md",
        "character-model-plan.md",
    ): True,
    ("AdielMag+ClashUp", "feedback-no-singletons.md", "debugging.md"): False,
    ("AdielMag+ClashUp", "dev-environment.md", "debugging.md"): False,  # a part only
    ("AdielMag+ClashUp", "project-structure.md", "debugging.md"): False,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=os.environ.get("MEMD_TRUTH_CORPUS", ""))
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    corpus = Path(args.corpus) if args.corpus else None
    if corpus is None or not corpus.is_dir():
        print("no corpus (--corpus DIR or MEMD_TRUTH_CORPUS): skipped")
        return 0
    rows = []
    files = dirs = 0
    flagged = []
    with tempfile.TemporaryDirectory() as scratch:
        for name, git_dir in repositories(corpus):
            for folder in memory_dirs(git_dir):
                target = Path(scratch, name, folder.replace("/", "_") or "root")
                target.mkdir(parents=True)
                archive = subprocess.run(
                    [
                        "git",
                        *SAFE,
                        "--git-dir",
                        str(git_dir),
                        "archive",
                        "HEAD",
                        folder,
                    ],
                    capture_output=True,
                    check=True,
                ).stdout
                subprocess.run(
                    [
                        "tar",
                        "-x",
                        "-C",
                        str(target),
                        f"--strip-components={folder.count('/') + 1}",
                    ],
                    input=archive,
                    check=True,
                )
                memdir = load_memdir(str(target))
                dirs += 1
                files += len(memdir.files)
                flagged.extend(
                    (name, d.path, d.message) for d in dup.find_duplicates(memdir.files)
                )
                docs = []
                for memory in memdir.files:
                    words, ids = dup._words(
                        f"{memory.description or ''}\n{memory.body}"
                    )
                    if len(words) >= dup.MIN_WORDS:
                        docs.append((memory.relpath, words, ids))
                weights = dup._weights([words for _, words, _ in docs])
                for i, j in itertools.permutations(range(len(docs)), 2):
                    score = dup.containment(weights[i], weights[j])
                    apart = dup._is_near_miss(docs[i][2], docs[j][2])
                    rows.append((score, name, docs[i][0], docs[j][0], apart))
    rows.sort(reverse=True)
    print(f"{dirs} memory dirs, {files} topic files, {len(rows)} ordered pairs")
    print(f"top {args.top} pairs by containment (APART: the identifier rule):")
    for score, name, first, second, apart in rows[: args.top]:
        label = LABELS.get((name, first, second))
        mark = {True: "dup ", False: "not ", None: "    "}[label]
        print(
            f"  {score:.3f} {'APART' if apart else '     '} {mark}"
            f" {name}: {first} in {second}"
        )
    right = sum(
        1
        for name, path, message in flagged
        if any(
            LABELS.get((name, path, other))
            for (n, p, other) in LABELS
            if n == name and p == path and other in message
        )
    )
    print(
        f"D004 at threshold {dup.THRESHOLD}: {len(flagged)} flagged,"
        f" {right} labelled duplicates"
    )
    for name, path, message in flagged:
        print(f"  {name}: {path} {message}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
