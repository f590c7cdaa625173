"""Naming N projects (memd.projects) vs resolving each one's memory dir once.

Baseline: `resolve_memory_location` of each project root, the least any
naming must do (read its settings, find its git root). memd:
`load_project_names` over the N memory dirs with nothing remembered, so each
name comes from the agent's transcripts (a session per project, in a
subfolder of a git repository) or from spelling the folder back, under a
`/`-like tree whose first level holds `--crowd` other folders. Medians of
alternating runs. Target: memd / baseline <= 3.

Usage: python bench/bench_project_names.py [--projects 200] [--crowd 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def build(root: str, projects: int, crowd: int) -> tuple[list[str], list[str]]:
    """Projects under <root>/home/code, half git repos with a session in src/."""
    from memd.claude_code.paths import auto_mem_path

    home = os.path.join(root, "home")
    for number in range(crowd):
        os.makedirs(os.path.join(root, f"other-{number}"))
    roots, dirs = [], []
    for number in range(projects):
        project = os.path.join(home, "code", f"project-{number:04d}")
        os.makedirs(os.path.join(project, "src"))
        if number % 2:
            subprocess.run(["git", "init", "-q", project], check=True)
            folder = os.path.join(
                home, ".claude", "projects", (project + "/src").replace("/", "-")
            )
            os.makedirs(folder)
            with open(os.path.join(folder, "session.jsonl"), "w") as out:
                out.write(json.dumps({"type": "user", "cwd": project + "/src"}) + "\n")
        roots.append(project)
        dirs.append(auto_mem_path(project))
    return roots, dirs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--crowd", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        os.environ["HOME"] = os.path.join(root, "home")
        os.environ["XDG_STATE_HOME"] = os.path.join(root, "state")
        os.environ["MEMD_MANAGED_SETTINGS_PATH"] = os.path.join(root, "managed.json")
        from memd.claude_code.paths import resolve_memory_location
        from memd.projects.roots import load_project_names

        roots, dirs = build(root, args.projects, args.crowd)
        base, ours = [], []
        named = 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            for project in roots:
                resolve_memory_location(project)
            base.append(time.perf_counter() - start)
            start = time.perf_counter()
            names = load_project_names(dirs)
            ours.append(time.perf_counter() - start)
            named = sum(names.known(d) for d in dirs)
    b, o = statistics.median(base), statistics.median(ours)
    print(f"projects {args.projects}, named {named}")
    print(f"baseline (resolve each)  {b * 1000:8.1f} ms")
    print(f"memd (name each)         {o * 1000:8.1f} ms")
    print(f"ratio memd / baseline    {o / b:8.2f}")
    return 0 if named == args.projects else 1


if __name__ == "__main__":
    sys.exit(main())
