"""What checking memory against its repository costs: 1,000 memories vs 100,000 files.

Builds (with `git fast-import`, so in seconds) a repository whose `HEAD` holds
`--files` files after `--commits` commits that removed and renamed some, and
a memory dir of `--memories` topic files, each naming paths that exist, paths
that went, paths that never existed and a few commands. Then times
`memd.truth.check.check_memory` (reading the memory dir included):

- cold: an empty cache, so every git read runs (target < 5 s);
- warm: the same `HEAD` again, facts from the cache (target < 1 s);
- after one commit: `HEAD` moved forward, only the new commits' log is read;

each against a baseline run in the same process: `git ls-tree -r --name-only
HEAD` of the same repository, the least any reader of the tree pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memd.truth.check import check_memory

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@memd.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@memd.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def path_of(number: int) -> str:
    return f"src/pkg{number % 97}/mod{number % 1009}/file{number}.py"


def build_repository(
    root: Path, files: int, commits: int
) -> tuple[list[str], list[str]]:
    """A repository of `files` files at HEAD; returns (gone, renamed-from) paths."""
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=ENV)
    lines: list[str] = []
    blob = b"print('x')\n"
    lines.append(f"blob\nmark :1\ndata {len(blob)}\n{blob.decode()}\n")
    package = b'{"scripts": {"build": "tsc", "lint": "eslint ."}}'
    lines.append(f"blob\nmark :2\ndata {len(package)}\n{package.decode()}\n")
    package2 = b'{"scripts": {"build": "tsc"}}'
    lines.append(f"blob\nmark :3\ndata {len(package2)}\n{package2.decode()}\n")
    when = 1_700_000_000
    extra = commits * 10
    first = [f"M 100644 :1 {path_of(n)}" for n in range(files + extra)]
    first.append("M 100644 :2 package.json")
    lines.append(_commit("init", when, first))
    gone, renamed = [], []
    for number in range(commits):
        changes = []
        for k in range(10):
            victim = files + number * 10 + k
            if k % 2:
                changes.append(f"D {path_of(victim)}")
                gone.append(path_of(victim))
            else:
                target = path_of(victim).replace(".py", "_moved.py")
                changes.append(f"R {path_of(victim)} {target}")
                changes.append(f"D {target}")  # keep the file count at `files`
                renamed.append(path_of(victim))
        if number == commits // 2:
            changes.append("M 100644 :3 package.json")
        lines.append(_commit(f"change {number}", when + 60 * (number + 1), changes))
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=root,
        input="".join(lines).encode(),
        check=True,
        env=ENV,
    )
    subprocess.run(
        ["git", "update-ref", "HEAD", "refs/heads/main"], cwd=root, check=True
    )
    subprocess.run(
        ["git", "symbolic-ref", "HEAD", "refs/heads/main"], cwd=root, check=True
    )
    return gone, renamed


def _commit(message: str, when: int, changes: list[str]) -> str:
    body = "\n".join(changes)
    return (
        f"commit refs/heads/main\ncommitter bench <bench@memd.invalid> {when} +0000\n"
        f"data {len(message)}\n{message}\n{body}\n\n"
    )


def build_memory(memory: Path, count: int, files: int, gone: list[str]) -> None:
    memory.mkdir(parents=True)
    index = []
    for number in range(count):
        name = f"project_note_{number}.md"
        present = path_of((number * 7919) % files)
        went = gone[number % len(gone)]
        body = (
            f"The handler for case {number} lives in `{present}`; the old one was "
            f"`{went}`.\nPlanned: `src/new/plan{number}.ts` (not written yet).\n"
            f"Build with `npm run build`, lint with `npm run lint`.\n"
            "**Why:** so the next session finds it.\n**How to apply:** read it first.\n"
        )
        (memory / name).write_text(
            f"---\nname: note {number}\ndescription: where case {number} is handled "
            f"in the code base\ntype: project\n---\n{body}"
        )
        index.append(f"- [Note {number}]({name}) — case {number}\n")
    (memory / "MEMORY.md").write_text("".join(index[:150]))


def timed(action: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-truth-bench-") as scratch:
        root = Path(scratch) / "repo"
        started = time.perf_counter()
        gone, _ = build_repository(root, args.files, args.commits)
        memory = Path(scratch) / "memory"
        build_memory(memory, args.memories, args.files, gone)
        print(
            f"built {args.files:,} files, {args.commits} commits, "
            f"{args.memories:,} memories in {time.perf_counter() - started:.1f} s"
        )

        def ls_tree() -> None:
            subprocess.run(
                ["git", "ls-tree", "-r", "--name-only", "HEAD"],
                cwd=root,
                check=True,
                stdout=subprocess.DEVNULL,
            )

        baseline = timed(ls_tree, args.runs)
        caches = iter(range(10_000))

        def cold() -> None:
            cache = Path(scratch) / f"cache-{next(caches)}"
            report = check_memory(str(memory), str(root), cache_dir=str(cache))
            assert report.head is not None

        warm_cache = Path(scratch) / "warm"
        first = check_memory(str(memory), str(root), cache_dir=str(warm_cache))
        gone_found = sum(d.code == "D001" for d in first.diagnostics)
        commands_found = sum(d.code == "D002" for d in first.diagnostics)

        def warm() -> None:
            check_memory(str(memory), str(root), cache_dir=str(warm_cache))

        cold_time = timed(cold, args.runs)
        warm_time = timed(warm, args.runs)
        (root / "extra.txt").write_text("x\n")
        subprocess.run(["git", "add", "extra.txt"], cwd=root, check=True, env=ENV)
        subprocess.run(
            ["git", "commit", "-qm", "one more"], cwd=root, check=True, env=ENV
        )
        start = time.perf_counter()
        warm()
        moved = time.perf_counter() - start
        print(f"findings: {gone_found} paths gone, {commands_found} commands gone")
        print(f"baseline git ls-tree -r: {baseline * 1000:.0f} ms")
        print(
            f"cold:  {cold_time:.2f} s  ({cold_time / baseline:.1f}x ls-tree;"
            " target < 5 s)"
        )
        print(
            f"warm:  {warm_time:.2f} s  ({warm_time / baseline:.1f}x ls-tree;"
            " target < 1 s)"
        )
        print(
            f"HEAD moved by one commit: {moved:.2f} s"
            f"  ({moved / baseline:.1f}x ls-tree)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
