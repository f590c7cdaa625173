"""`find_canonical_git_root` under 2.1.332's stricter checks against 2.1.112's.

2.1.332 adds, per call, one bounded read of /proc/self/mounts (to skip autofs
map roots) and, for a worktree, two realpaths. Baseline: the same call under
the 2.1.112 profile in the same run, on the same real git worktree, started
from a directory some levels below it. The cost matters only where memd
resolves a project's memory dir (paths, status, the daemon's re-resolve),
never on the warm `memd prompt` path. A third figure reads a mount table of
`--mounts` autofs lines from a file instead of the kernel's, to show the cost
on a host with many mounts.

Usage: python bench/bench_gitroot.py [--calls 2000] [--depth 6] [--mounts 2000]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from memd.claude_code import gitroot
from memd.claude_code.gitroot import autofs_mount_points, find_canonical_git_root


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _worktree(tmp: Path, depth: int) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f").write_text("f\n")
    _git("add", "f", cwd=repo)
    _git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "f", cwd=repo)
    worktree = tmp / "wt"
    _git("worktree", "add", "-q", str(worktree), cwd=repo)
    start = worktree.joinpath(*[f"d{i}" for i in range(depth)])
    start.mkdir(parents=True)
    return start


def _time(profile: str, start: str, calls: int) -> float:
    runs = []
    for _ in range(3):
        began = time.perf_counter()
        for _ in range(calls):
            find_canonical_git_root(start, profile=profile)
        runs.append((time.perf_counter() - began) / calls)
    return min(runs)  # the least disturbed run: the machine is shared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--mounts", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name).resolve()
        start = str(_worktree(tmp, args.depth))
        lenient = _time("2.1.112", start, args.calls)
        strict = _time("2.1.332", start, args.calls)
        print(f"2.1.112 (baseline) {lenient * 1e6:9.1f} us/call")
        print(
            f"2.1.332            {strict * 1e6:9.1f} us/call  {strict / lenient:.2f}x"
        )
        table = tmp / "mounts"
        table.write_text(
            "".join(f"auto.{i} /mnt/map{i} autofs rw 0 0\n" for i in range(args.mounts))
        )
        gitroot._MOUNTS = str(table)  # a bigger table than this host has
        found = len(autofs_mount_points(table.read_text()))
        many = _time("2.1.332", start, args.calls)
        print(
            f"2.1.332, {found} autofs mounts {many * 1e6:9.1f} us/call  "
            f"{many / lenient:.2f}x"
        )


if __name__ == "__main__":
    main()
