"""Personal sync time for 50 projects x 30 files, against a bare remote on disk.

Prints the first sync (everything pushed), a no-change sync, a sync after one
edit, and a new machine's first sync (everything received), each as seconds
and as a ratio to `git status` on one repository measured in the same run.
Then the SessionStart hook with personal sync on: its median cost when no
pull is due (the common case), as a ratio to a bare `python -c pass`, as
bench/bench_hooks.py reports it, and one session start whose pull is due.

    python bench/bench_sync.py [PROJECTS] [FILES]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEMD = str(Path(sys.executable).with_name("memd"))


def _env(root: Path, projects: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMD_", "XDG_"))}
    env.update(
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_CACHE_HOME=str(root / "cache"),
        MEMD_WATCH_PROJECTS=os.pathsep.join(map(str, projects)),
        MEMD_LOG_LEVEL="warning",
        GIT_AUTHOR_NAME="b",
        GIT_COMMITTER_NAME="b",
        GIT_AUTHOR_EMAIL="b@b",
        GIT_COMMITTER_EMAIL="b@b",
    )
    return env


def _timed(args: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        remote = base / "remote.git"
        subprocess.run(
            ["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True
        )
        machines = []
        for machine in ("one", "two"):
            root = base / machine
            projects = []
            for n in range(count):
                project = root / "src" / f"p{n}"
                project.mkdir(parents=True)
                subprocess.run(["git", "init", "-q", str(project)], check=True)
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(project),
                        "remote",
                        "add",
                        "origin",
                        f"git@example.org:me/p{n}.git",
                    ],
                    check=True,
                )
                projects.append(project)
            machines.append((root, projects))
        root, projects = machines[0]
        env = _env(root, projects)
        for project in projects:
            munged = "".join(c if c.isalnum() else "-" for c in str(project))
            memory = root / "home" / ".claude" / "projects" / munged / "memory"
            memory.mkdir(parents=True)
            index = []
            for f in range(files - 1):
                (memory / f"t{f}.md").write_text(
                    f"---\nname: t{f}\ndescription: topic {f} of the bench\n"
                    f"type: user\n---\nBody {f}.\n"
                )
                index.append(f"- [t{f}](t{f}.md) — topic {f}")
            (memory / "MEMORY.md").write_text("\n".join(index) + "\n")
        baseline = _timed(["git", "-C", str(projects[0]), "status"], env)
        first = _timed([MEMD, "sync", "init", "--remote", str(remote)], env)
        again = _timed([MEMD, "sync"], env)
        (memory / "t0.md").write_text((memory / "t0.md").read_text() + "edit\n")
        edit = _timed([MEMD, "sync"], env)
        root2, projects2 = machines[1]
        env2 = _env(root2, projects2)
        received = _timed([MEMD, "sync", "init", "--remote", str(remote)], env2)
        hook_due_off, hook_due = _hook_costs(root2, projects2[0], env2)
        print(
            f"{count} projects x {files} files; "
            f"baseline git status {baseline * 1000:.1f} ms"
        )
        for label, value in (
            ("first sync (push all)", first),
            ("no-change sync", again),
            ("one edit", edit),
            ("new machine (receive all)", received),
        ):
            print(f"{label:28} {value:7.2f} s  {value / baseline:8.0f}x")
        print(hook_due_off)
        print(hook_due)


def _hook_costs(root: Path, project: Path, env: dict[str, str]) -> tuple[str, str]:
    import json
    import statistics

    payload = json.dumps(
        {"session_id": "b", "hook_event_name": "SessionStart", "cwd": str(project)}
    ).encode()
    hook = [MEMD, "hook", "session-start"]

    def once(args: list[str], data: bytes | None = None) -> float:
        start = time.perf_counter()
        subprocess.run(args, env=env, input=data, capture_output=True, check=True)
        return time.perf_counter() - start

    once(hook, payload)  # warm the snapshot and the session record
    bare = statistics.median(once([sys.executable, "-c", "pass"]) for _ in range(20))
    marker = root / "state" / "memd" / "sync" / "repo" / ".git" / "memd"
    marker.rename(marker.with_name("memd-off"))  # personal sync off, for a baseline
    off = statistics.median(once(hook, payload) for _ in range(20))
    marker.with_name("memd-off").rename(marker)
    warm = statistics.median(once(hook, payload) for _ in range(20))
    record = root / "state" / "memd" / "sync.json"
    os.utime(record, (time.time() - 3600, time.time() - 3600))
    due = once(hook, payload)
    return (
        f"session-start, no pull due: {warm * 1000:.1f} ms = {warm / bare:.2f}x "
        f"python -c pass ({bare * 1000:.1f} ms); personal sync off: "
        f"{off / bare:.2f}x",
        f"session-start, pull due: {due:.2f} s (bounded at 10 s)",
    )


if __name__ == "__main__":
    main()
