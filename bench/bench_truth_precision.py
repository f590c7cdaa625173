"""Precision and recall of memd.truth on real memory checked against its own repository.

The corpus is public repositories that commit their agent memory next to
their code (`.claude/memory/MEMORY.md`, `memory/MEMORY.md`), as git
directories under CORPUS (`CORPUS/<name>/repo` or `CORPUS/<name>/.git`;
`--corpus`, default `$MEMD_TRUTH_CORPUS`). Nothing of theirs is committed
here; the script skips when the corpus is absent.

For each memory dir and up to `--commits` commits that changed it (M), the
memory as it was at M is checked

- against the repository at M: nothing the memory names can be gone yet
  (a finding there is a false alarm unless the path was already gone);
- against the repository at its newest commit (L): a D001 is right when the
  path (or a file under the folder) was in the tree at M and is not at L, a
  D002 when the command was defined at M and is not at L.

Recall counts the references an independent reader finds (every backticked
token and every token with a slash that is a file or folder of the tree at
M) that are gone at L and neither on disk nor ignored there, and how many of
them memd flagged. Findings are counted once per (repository, memory file,
claim). A working copy of each repository is checked out under `--work`
(hooks off) and reused.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memd.truth.check import memory_claims
from memd.truth.judge import TreeIndex, judge
from memd.truth.repo import open_repository

SAFE = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
_BACKTICKED = re.compile(r"`([^`\s]+)`")
_SLASHED = re.compile(r"[\w.@+-]+(?:/[\w.@+-]+)+/?")


def git(git_dir: Path, *args: str, work: Path | None = None) -> str:
    command = ["git", *SAFE, "--git-dir", str(git_dir)]
    if work is not None:
        command += ["--work-tree", str(work)]
    done = subprocess.run(
        [*command, *args], check=True, capture_output=True, timeout=300
    )
    return done.stdout.decode("utf-8", "replace")


def repositories(corpus: Path) -> list[tuple[str, Path]]:
    found = []
    for entry in sorted(corpus.iterdir()):
        for candidate in (entry / "repo", entry / ".git", entry):
            if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
                found.append((entry.name, candidate))
                break
    return found


def memory_dirs(git_dir: Path) -> list[str]:
    names = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    return sorted(
        {
            name.rsplit("/", 1)[0] if "/" in name else ""
            for name in names
            if name.endswith("MEMORY.md")
            and (name.rsplit("/", 1)[0] if "/" in name else "").endswith("memory")
        }
    )


def memory_at(git_dir: Path, commit: str, folder: str, into: Path) -> int:
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    listed = git(git_dir, "ls-tree", "-r", "--name-only", commit, "--", folder + "/")
    count = 0
    for name in listed.splitlines():
        if not name.endswith(".md") or "/logs/" in name:
            continue
        relative = name[len(folder) + 1 :]
        data = subprocess.run(
            [
                "git",
                *SAFE,
                "--git-dir",
                str(git_dir),
                "cat-file",
                "blob",
                f"{commit}:{name}",
            ],
            check=True,
            capture_output=True,
        ).stdout
        target = into / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        count += 1
    return count


def checkout(git_dir: Path, work: Path, commit: str) -> None:
    """Lay `commit` out at `work` in a clone of `git_dir` (the corpus is never written).

    Snapshots leave out their largest blobs, so files are laid out empty
    (lstat is all memd asks of the work tree) except the .gitignore files,
    whose rules `check-ignore` reads.
    """
    if not (work / ".git").exists():
        work.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "git",
                *SAFE,
                "clone",
                "-q",
                "--no-checkout",
                "--shared",
                str(git_dir),
                str(work),
            ],
            check=True,
            capture_output=True,
        )
    for entry in work.iterdir():
        if entry.name != ".git":
            shutil.rmtree(
                entry
            ) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for args in (
        ("update-ref", "--no-deref", "HEAD", commit),
        ("read-tree", "--reset", commit),
    ):
        done = subprocess.run(
            ["git", *SAFE, "-C", str(work), *args], capture_output=True
        )
        if done.returncode != 0:
            raise CheckoutError(done.stderr.decode("utf-8", "replace").strip())
    for name in tree(git_dir, commit):
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        data = b""
        if name.endswith(".gitignore"):
            data = subprocess.run(
                [
                    "git",
                    *SAFE,
                    "--git-dir",
                    str(git_dir),
                    "cat-file",
                    "blob",
                    f"{commit}:{name}",
                ],
                capture_output=True,
            ).stdout
        target.write_bytes(data)


class CheckoutError(Exception):
    """A commit of the corpus could not be checked out here (skipped)."""


def tree(git_dir: Path, commit: str) -> frozenset[str]:
    return frozenset(git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines())


def folders(files: frozenset[str]) -> frozenset[str]:
    found = set()
    for path in files:
        parts = path.split("/")
        for end in range(1, len(parts)):
            found.add("/".join(parts[:end]))
    return frozenset(found)


def flagged(memdir: Path, work: Path, cache: Path) -> list[tuple[str, object]]:
    """(relpath, Finding) of D001/D002 for `memdir` against the checkout at `work`."""
    from memd.memory.reader import load_memdir

    memory = load_memdir(str(memdir))
    claims = memory_claims(memory, str(work))
    repo = open_repository(str(work))
    facts = repo.facts(str(cache))
    by_claim = {id(claim): relpath for relpath, claim in claims}
    findings = judge((c for _, c in claims), TreeIndex(facts))
    present = repo.present(f.path for f in findings if f.path is not None)
    return [
        (by_claim[id(f.claim)], f)
        for f in findings
        if f.path is None or f.path not in present
    ]


def existed_before(git_dir: Path, message: str, path: str) -> bool:
    """Whether the parent of the commit the message names had `path`."""
    found = re.search(r" in ([0-9a-f]{7,40}) on ", message)
    if found is None:
        return False
    done = subprocess.run(
        [
            "git",
            *SAFE,
            "--git-dir",
            str(git_dir),
            "cat-file",
            "-e",
            f"{found.group(1)}^:{path}",
        ],
        capture_output=True,
    )
    return done.returncode == 0


def defined_at(work: Path, cache: Path) -> dict[str, frozenset[str] | None]:
    return dict(open_repository(str(work)).facts(str(cache)).commands)


def independent_references(memdir: Path) -> set[tuple[str, str]]:
    """(relpath, token) of every backticked token and slashed token, fences skipped."""
    found = set()
    for path in memdir.rglob("*.md"):
        relpath = path.relative_to(memdir).as_posix()
        fenced = False
        for line in path.read_text("utf-8", "replace").splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                continue
            if fenced:
                continue
            for token in _BACKTICKED.findall(line) + _SLASHED.findall(line):
                token = token.strip(".,;:()").removeprefix("./")
                token = re.sub(r":\d+(:\d+)?$", "", token)
                if token and "://" not in token:
                    found.add((relpath, token))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=os.environ.get("MEMD_TRUTH_CORPUS", ""))
    parser.add_argument(
        "--work", default=os.path.join(tempfile.gettempdir(), "memd-truth-work")
    )
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    corpus = Path(args.corpus) if args.corpus else None
    if corpus is None or not corpus.is_dir():
        print("no corpus (--corpus DIR or MEMD_TRUTH_CORPUS): skipped")
        return 0
    work_root = Path(args.work)
    tp = fp = strict_tp = at_m = at_m_already_gone = at_m_false = 0
    truly_gone: set[tuple[str, str, str]] = set()
    caught: set[tuple[str, str, str]] = set()
    seen: set[tuple[str, str, str]] = set()
    repos_used = memories = 0
    for name, git_dir in repositories(corpus):
        head = git(git_dir, "rev-parse", "HEAD").strip()
        tree_l = tree(git_dir, head)
        folders_l = folders(tree_l)
        work = work_root / name / "tree"
        cache = work_root / name / "cache"
        used = False
        for folder in memory_dirs(git_dir):
            commits = git(
                git_dir, "log", "--format=%H", head, "--", folder + "/"
            ).split()
            commits = [c for c in commits if c != head]
            if not commits:
                continue
            step = max(1, len(commits) // args.commits)
            for m in commits[::step][: args.commits]:
                memdir = work_root / name / "memory"
                if not memory_at(git_dir, m, folder, memdir):
                    continue
                used = True
                memories += 1
                tree_m = tree(git_dir, m)
                folders_m = folders(tree_m)
                try:
                    checkout(git_dir, work, m)
                except CheckoutError as error:
                    print(f"  skipped {name} {m[:7]}: {error}")
                    continue
                commands_m = defined_at(work, cache)
                for relpath, finding in flagged(memdir, work, cache):
                    at_m += 1
                    if finding.path is not None:
                        there = finding.path in tree_m or finding.path in folders_m
                    else:
                        defined = commands_m.get(finding.claim.kind) or frozenset()
                        there = finding.claim.value in defined
                    at_m_false += there
                    at_m_already_gone += not there
                    if args.verbose:
                        print(f"  at M {name} {m[:7]} {relpath}: {finding.message}")
                checkout(git_dir, work, head)
                commands_l = defined_at(work, cache)
                for relpath, finding in flagged(memdir, work, cache):
                    key = (
                        name,
                        relpath,
                        finding.claim.kind + ":" + finding.claim.value,
                    )
                    if key in seen:
                        continue
                    seen.add(key)
                    if finding.path is not None:
                        p = finding.path
                        strict = (p in tree_m or p in folders_m) and not (
                            p in tree_l or p in folders_l
                        )
                        right = not (p in tree_l or p in folders_l) and existed_before(
                            git_dir, finding.message, p
                        )
                        caught.add((name, relpath, p))
                    else:
                        was = commands_m.get(finding.claim.kind) or frozenset()
                        now = commands_l.get(finding.claim.kind) or frozenset()
                        strict = finding.claim.value in was
                        right = finding.claim.value not in now
                    tp += right
                    fp += not right
                    strict_tp += strict
                    if args.verbose or not right:
                        mark = "ok " if right else "BAD"
                        if finding.path is not None and not right:
                            p = finding.path
                            at_first = p in tree_m or p in folders_m
                            at_last = p in tree_l or p in folders_l
                            mark += f" (at M: {at_first}, at L: {at_last})"
                        print(
                            f"  {mark} {name} {relpath}:{finding.claim.line}:"
                            f" {finding.message}"
                        )
                repo = open_repository(str(work))
                for relpath, token in independent_references(memdir):
                    path = token.rstrip("/")
                    was = path in tree_m or path in folders_m
                    still = path in tree_l or path in folders_l
                    if was and not still and not repo.present([path]):
                        truly_gone.add((name, relpath, path))
        repos_used += used
    findings = tp + fp
    precision = tp / findings if findings else float("nan")
    hit = len(truly_gone & caught)
    if args.verbose:
        for missed in sorted(truly_gone - caught):
            print("  missed", *missed)
    recall = hit / len(truly_gone) if truly_gone else float("nan")
    print(f"repositories: {repos_used}, memory versions checked: {memories}")
    print(
        f"at the memory's commit: {at_m} findings, {at_m_already_gone} about something"
        f" already gone then, {at_m_false} false alarms (named something still there)"
    )
    print(f"at the newest commit: {findings} findings, {tp} right, {fp} wrong")
    print(f"precision: {precision:.3f}")
    if findings:
        print(
            f"strict precision (the path was there at the memory's commit): "
            f"{strict_tp}/{findings} = {strict_tp / findings:.3f}"
        )
    print(
        "recall (paths an independent reader finds gone):"
        f" {hit}/{len(truly_gone)} = {recall:.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
