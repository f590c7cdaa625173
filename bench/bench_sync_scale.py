"""Personal sync at scale: a first sync of N daily logs, and the manifest check.

1. ``memd sync init`` of one project whose memory holds N daily logs, against
   a bare remote on disk, as a ratio to a plain ``git add -A && git commit``
   of the same files in the same run (the least any sync must pay).
2. The check of a fetched tree (`memd.sync.tree.refuse_hostile_tree`) for
   a manifest of I identities x P paths each, as a ratio to the
   ``git ls-tree -r`` of that tree measured in the same run.

Each is printed at two sizes; the growth line compares how the figure and
its baseline grow from the small size to the large one (1.0 = linear, as
the baseline). Before #32 the first sync of 3,000 logs failed ("Argument
list too long") and the check of 2,000 x 20 took 13 s.

    python bench/bench_sync_scale.py [LOGS] [IDENTITIES] [PATHS]
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_sync import MEMD, _env  # the same machine set-up as the sync bench


def _git(*args: str, cwd: Path, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def _logs_sync(base: Path, count: int) -> tuple[float, float]:
    """Return (memd's first sync, plain git add+commit) seconds for `count` logs."""
    root = base / f"logs-{count}"
    project = root / "src" / "app"
    project.mkdir(parents=True)
    _git("init", "-q", cwd=project)
    _git("remote", "add", "origin", "git@github.com:b/app.git", cwd=project)
    munged = "".join(c if c.isalnum() else "-" for c in str(project))
    memory = root / "home" / ".claude" / "projects" / munged / "memory"
    first = datetime.date(2000, 1, 1)
    for n in range(count):
        day = first + datetime.timedelta(days=n)
        path = memory / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day.isoformat()}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"- 10:00 note {n}: what happened that day\n")
    remote = root / "remote.git"
    _git("init", "-q", "--bare", str(remote), cwd=root)
    start = time.perf_counter()
    subprocess.run(
        [MEMD, "sync", "init", "--remote", str(remote)],
        env=_env(root, [project]),
        cwd=root,
        check=True,
        capture_output=True,
    )
    memd_seconds = time.perf_counter() - start
    plain = root / "plain"
    subprocess.run(["cp", "-r", str(memory), str(plain)], check=True)
    start = time.perf_counter()
    _git("init", "-q", cwd=plain)
    _git("add", "-A", cwd=plain)
    _git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x", cwd=plain)
    return memd_seconds, time.perf_counter() - start


def _manifest_check(base: Path, identities: int, paths: int) -> tuple[float, float]:
    """Return (memd's tree check, git ls-tree -r) seconds for identities x paths."""
    from memd.gitsync.git import Git
    from memd.sync.tree import manifest_bytes, refuse_hostile_tree

    repo = base / f"manifest-{identities}x{paths}"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    names = [f"host{i % 7}.example/org{i}/app" for i in range(identities)]
    stream = [b"commit refs/heads/main\n", b"committer b <b@b> 0 +0000\n"]
    stream.append(b"data 1\nx\n")
    manifest = manifest_bytes(names)
    stream.append(
        b"M 100644 inline manifest.json\ndata %d\n%s\n" % (len(manifest), manifest)
    )
    body = b"- a note\n"
    for name in names:
        for p in range(paths):
            path = f"projects/{name}/logs/2026/12/2026-12-{p % 28 + 1:02d}-{p}.md"
            stream.append(
                b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(body), body)
            )
    _git("fast-import", "--quiet", cwd=repo, data=b"".join(stream))
    git = Git(str(repo))
    commit = git.rev("refs/heads/main")
    assert commit is not None
    start = time.perf_counter()
    refuse_hostile_tree(git, commit)
    check = time.perf_counter() - start
    start = time.perf_counter()
    git.run("ls-tree", "-r", "-z", "--full-tree", commit)
    return check, time.perf_counter() - start


def _report(
    label: str,
    sizes: tuple[int, int],
    small: tuple[float, float],
    large: tuple[float, float],
) -> None:
    for size, (mine, baseline) in zip(sizes, (small, large), strict=True):
        print(
            f"{label}, {size} files: {mine:.3f} s ({mine / size * 1e6:.0f} us a file); "
            f"baseline {baseline:.3f} s; ratio {mine / baseline:.1f}"
        )
    growth = (large[0] / small[0]) / (sizes[1] / sizes[0])
    print(f"{label}: time grew {growth:.2f}x as fast as the input (1.0 = linear)")


def main() -> None:
    logs = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    identities = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    paths = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _report(
            "first sync of daily logs (baseline: git add -A && git commit)",
            (logs // 4, logs),
            _logs_sync(base, logs // 4),
            _logs_sync(base, logs),
        )
        _report(
            f"tree check, identities x {paths} paths (baseline: git ls-tree -r)",
            (identities // 4 * paths, identities * paths),
            _manifest_check(base, identities // 4, paths),
            _manifest_check(base, identities, paths),
        )


if __name__ == "__main__":
    main()
