"""Soak: three members x 200 edits each, syncing team memory through one bare remote.

Each member has its own HOME and runs the installed `memd team sync` as a
subprocess. An edit is one of: a new topic file, a change to one of the
member's own files, a change to a file every member edits (the conflict
case), or a new index entry. Each edit carries a unique token. Every
`--every` edits a member syncs; the three members run at the same time, so
pushes race and conflicts happen. After two quiet rounds every token must
be on the remote, in the file it was written to or in a conflict copy
(target: 0 lost).

Baseline, measured in the same run: the same number of plain
`git add -A && git commit && git pull --no-rebase -X ours && git push` rounds
in three plain clones (no lint, no conflict rules). The figure is the ratio
of memd's median sync time to that baseline's median.

Usage: python bench/team_soak.py [--edits 200] [--every 10] [--seed 1]
Exit status 1 when a token was lost or a member's tree was left inconsistent.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_corpus import isolated_env

MEMBERS = ("ana", "bob", "cy")
TOPIC = (
    "---\nname: {name}\ndescription: What the team knows about {name}\n"
    "type: project\n---\n{body}\n\n**Why:** agreed.\n**How to apply:** always.\n"
)


def _memd() -> str:
    return os.path.join(os.path.dirname(sys.executable), "memd")


def _member_env(root: str, name: str) -> dict[str, str]:
    env = {k: v for k, v in isolated_env(root).items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.path.join(root, "gitconfig"),
        GIT_AUTHOR_NAME=name,
        GIT_COMMITTER_NAME=name,
        GIT_AUTHOR_EMAIL=f"{name}@team.invalid",
        GIT_COMMITTER_EMAIL=f"{name}@team.invalid",
        MEMD_LOG_LEVEL="warning",
    )
    return env


def _run(command: list[str], env: dict[str, str], cwd: str | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - started


class Member:
    def __init__(self, base: str, name: str, remote: str, seed: int):
        self.name = name
        self.root = os.path.join(base, name)
        self.project = os.path.join(self.root, "project")
        os.makedirs(self.project)
        self.env = _member_env(self.root, name)
        self.rng = random.Random(f"{seed}-{name}")
        self.tokens: list[str] = []
        self.sync_seconds: list[float] = []
        done = subprocess.run(
            [_memd(), "team", "init", "--remote", remote, "--project", self.project],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{name}: init failed: {done.stderr.strip()}")
        projects = os.path.join(self.root, "home", ".claude", "projects")
        (sanitized,) = os.listdir(projects)
        self.team = os.path.join(projects, sanitized, "memory", "team")

    def edit(self, number: int) -> None:
        token = f"tok-{self.name}-{number}"
        self.tokens.append(token)
        kind = self.rng.random()
        own = [f for f in os.listdir(self.team) if f.startswith(self.name + "-")]
        if kind < 0.3 or not own:
            path = f"{self.name}-{number}.md"
        elif kind < 0.6:
            path = self.rng.choice(own)
        elif kind < 0.8:
            path = "shared.md"
        else:
            index = os.path.join(self.team, "MEMORY.md")
            with open(index, "a", encoding="utf-8") as handle:
                handle.write(f"- [{token}]({self.name}-{number}.md) — {token}\n")
            return
        target = os.path.join(self.team, path)
        body = ""
        if os.path.exists(target):
            with open(target, encoding="utf-8") as handle:
                body = handle.read().split("---\n", 2)[-1]
        text = TOPIC.format(name=path[:-3], body=f"{body.strip()}\n- {token}".strip())
        with open(target + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(target + ".tmp", target)

    def sync(self) -> None:
        self.sync_seconds.append(
            _run([_memd(), "team", "sync", "--project", self.project], self.env)
        )


def _work(member: Member, edits: int, every: int) -> None:
    for number in range(edits):
        member.edit(number)
        if (number + 1) % every == 0:
            member.sync()


def _baseline(base: str, rounds: int) -> list[float]:
    """Time plain git commit/pull/push rounds by three clones racing."""
    remote = os.path.join(base, "plain.git")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", remote], check=True)
    times: list[float] = []
    clones = []
    for name in MEMBERS:
        root = os.path.join(base, "plain-" + name)
        env = _member_env(root, name)
        subprocess.run(
            ["git", "clone", "-q", remote, root + "/wt"], env=env, check=True
        )
        subprocess.run(
            ["git", "-C", root + "/wt", "checkout", "-q", "-b", "main"],
            env=env,
            check=False,
        )
        clones.append((root + "/wt", env, name))

    def loop(clone: tuple[str, dict[str, str], str]) -> None:
        path, env, name = clone
        for number in range(rounds):
            with open(os.path.join(path, f"{name}-{number}.md"), "w") as handle:
                handle.write(TOPIC.format(name=name, body=str(number)))
            started = time.perf_counter()
            for command in (
                ["git", "add", "-A"],
                ["git", "commit", "-qm", "edit"],
                [
                    "git",
                    "pull",
                    "-q",
                    "--no-rebase",
                    "--no-edit",
                    "-X",
                    "ours",
                    "origin",
                    "main",
                ],
                ["git", "push", "-q", "origin", "HEAD:main"],
            ):
                subprocess.run(
                    command, cwd=path, env=env, capture_output=True, check=False
                )
            times.append(time.perf_counter() - started)

    threads = [threading.Thread(target=loop, args=(c,)) for c in clones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def _remote_text(remote: str) -> str:
    names = subprocess.run(
        ["git", "--git-dir", remote, "ls-tree", "-r", "--name-only", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return "".join(
        subprocess.run(
            ["git", "--git-dir", remote, "show", f"main:{name}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for name in names
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-team-soak-") as base:
        remote = os.path.join(base, "remote.git")
        subprocess.run(
            ["git", "init", "-q", "--bare", "-b", "main", remote], check=True
        )
        members = [Member(base, name, remote, args.seed) for name in MEMBERS]
        started = time.perf_counter()
        threads = [
            threading.Thread(target=_work, args=(m, args.edits, args.every))
            for m in members
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for _ in range(2):  # quiet rounds: everyone converges
            for member in members:
                member.sync()
        wall = time.perf_counter() - started
        text = _remote_text(remote)
        lost = [t for m in members for t in m.tokens if t not in text]
        inconsistent = [
            m.name
            for m in members
            if subprocess.run(
                ["git", "-C", m.team, "status", "--porcelain"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        ]
        copies = [n for n in os.listdir(members[0].team) if ".from-" in n]
        with open(os.path.join(members[0].team, "MEMORY.md"), encoding="utf-8") as f:
            index_lines = len(f.read().splitlines())
        syncs = [s for m in members for s in m.sync_seconds]
        baseline = _baseline(base, max(1, args.edits // args.every))
    median, base_median = statistics.median(syncs), statistics.median(baseline)
    p95 = sorted(syncs)[int(0.95 * (len(syncs) - 1))]
    print(
        f"members: {len(MEMBERS)}  edits each: {args.edits}  sync every: {args.every}"
    )
    print(f"wall time: {wall:.1f} s  syncs: {len(syncs)}")
    print(f"memd team sync: median {median * 1000:.0f} ms  p95 {p95 * 1000:.0f} ms")
    print(f"plain git commit+pull+push (baseline): median {base_median * 1000:.0f} ms")
    print(f"ratio memd/baseline: {median / base_median:.2f}x")
    print(f"conflict copies: {len(copies)}  index lines: {index_lines}")
    print(
        f"tokens: {sum(len(m.tokens) for m in members)}  lost: {len(lost)}"
        f"  members with a dirty tree: {len(inconsistent)}"
    )
    return 1 if lost or inconsistent else 0


if __name__ == "__main__":
    raise SystemExit(main())
