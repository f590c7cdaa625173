"""Recall quality on memd's labelled set, and the speed of `memd recall` and updates.

Quality: the 300 memories and 200 queries of `bench/recall_set.py` (English,
Chinese, Japanese; 30 projects) are indexed with each tokenizer, and every
query is searched across all 300 memories and within its own project.
Prints recall@5 and MRR per tokenizer and language. Target: recall@5 >= 0.85.

Speed, in a throwaway HOME holding 10,000 memories (100 projects x 100),
each about its own topic (`make_corpus.vocabulary`), as real notes are:

- warm `memd recall` (the installed script) against the same interpreter
  running `python -c pass`, for one project (`--project`), for `--all`
  refreshed by stat (no daemon), and for `--all` with every directory owned by
  a live daemon: a real `memd run`, started in the throwaway HOME and timed
  once it has recorded itself as every directory's owner (it holds the index
  open, as it does in use). Target: <= 2x.
- the daemon's `RecallIndex.update(memdir, changed={one file})` after one
  save, median of N. Target: < 5 ms.

Usage: python bench/bench_recall.py [--runs 30] [--updates 50]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_warm_prompt import imports_re, interpreter_of
from make_corpus import isolated_env, make_corpus, make_memory_dir, vocabulary
from recall_set import build, topic_text


def quality(root: str) -> None:
    from memd.memory.reader import load_memdir
    from memd.recall.index import RecallIndex
    from memd.recall.text import TOKENIZERS

    projects, queries = build()
    dirs = []
    for number, memories in enumerate(projects):
        memory_dir = os.path.join(root, "set", f"project{number:02d}")
        os.makedirs(memory_dir)
        for memory in memories:
            with open(os.path.join(memory_dir, memory["relpath"]), "w") as handle:
                handle.write(topic_text(memory))
        dirs.append(memory_dir)
    total = sum(len(m) for m in projects)
    print(f"labelled set: {total} memories in {len(projects)} projects, "
          f"{len(queries)} queries")  # fmt: skip
    for tokenizer in TOKENIZERS:
        path = os.path.join(root, f"quality-{tokenizer}.sqlite3")
        with RecallIndex(path, tokenizer=tokenizer) as index:
            for memory_dir in dirs:
                index.update(load_memdir(memory_dir))
            for scope in ("all", "project"):
                by_lang: dict[str, list[float]] = {}
                for project, relpath, lang, question in queries:
                    where = None if scope == "all" else [dirs[project]]
                    hits = index.search(question, memory_dirs=where, limit=5)
                    found = [(h.memory_dir, h.relpath) for h in hits]
                    target = (dirs[project], relpath)
                    rank = found.index(target) + 1 if target in found else 0
                    by_lang.setdefault(lang, []).append(1 / rank if rank else 0.0)
                    by_lang.setdefault("all", []).append(1 / rank if rank else 0.0)
                line = []
                for lang in ("all", "en", "zh", "ja"):
                    ranks = by_lang[lang]
                    hit5 = sum(1 for r in ranks if r > 0) / len(ranks)
                    mrr = sum(ranks) / len(ranks)
                    line.append(f"{lang} recall@5 {hit5:.3f} MRR {mrr:.3f}")
                print(f"  {tokenizer:9s} scope={scope:7s} " + " | ".join(line))


def _medians_ms(
    commands: dict[str, list[str]], env: dict[str, str], runs: int
) -> dict[str, float]:
    """Median wall time of each command, run in turn so load hits all alike."""
    times: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            started = time.perf_counter()
            subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
            times[label].append(time.perf_counter() - started)
    return {label: statistics.median(t) * 1000 for label, t in times.items()}


def indexed_dirs(cache: str) -> int:
    """How many memory directories the index holds."""
    from memd.recall.index import open_index

    with open_index(cache) as index:
        count: int = index.conn.execute("SELECT count(*) FROM dirs").fetchone()[0]
    return count


def _wait_until_owner(
    cache: str, daemon: subprocess.Popen[bytes], dirs: int, timeout: float = 300.0
) -> None:
    """Wait until the daemon has recorded itself as the owner of all `dirs`."""
    from memd.recall.index import open_index

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            sys.exit(f"bench_recall: memd run exited with {daemon.returncode}")
        with open_index(cache) as index:
            owned = index.conn.execute(
                "SELECT count(*) FROM dirs WHERE owner_pid = ?", (daemon.pid,)
            ).fetchone()[0]
        if owned >= dirs:
            time.sleep(1.0)  # let its first pass finish writing snapshots
            return
        time.sleep(0.2)
    sys.exit(f"bench_recall: memd run owned {owned} of {dirs} directories")


def speed(root: str, runs: int, updates: int) -> None:
    from memd.claude_code.paths import auto_mem_path
    from memd.memory.memdir import ParseCache
    from memd.memory.reader import load_memdir
    from memd.recall.index import open_index
    from memd.recall.store import index_path

    memd = shutil.which("memd")
    if memd is None:
        sys.exit("bench_recall: no `memd` on PATH; install memd first")
    if imports_re(memd):
        print("note: this memd script imports `re` (pip older than 25.2 wrote it);"
              " it costs about 4 ms of every run")  # fmt: skip
    python = interpreter_of(memd)
    env = isolated_env(root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # time memd as installed: with .pyc files
    terms = vocabulary()
    make_corpus(
        os.path.join(env["HOME"], ".claude"), projects=99, files=100, terms=terms
    )
    project = os.path.join(env["HOME"], "src", "app")
    os.makedirs(project)
    subprocess.run(["git", "init", "-q", project], env=env, check=True)
    memory_dir = auto_mem_path(project, env=env)
    make_memory_dir(memory_dir, 100, seed=999, terms=terms)
    query = ["recall", "--project", project, "which", "tests", "use", "the", "database"]
    every = ["recall", "--all", "which", "tests", "use", "the", "database"]
    for argv in (query, every):  # build, then let racy mtimes age past the window
        subprocess.run([memd, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
    time.sleep(1.2)
    for argv in (query, every):
        subprocess.run([memd, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
    cache = os.path.join(env["XDG_CACHE_HOME"], "memd")
    with open_index(cache) as index:
        rows = index.conn.execute("SELECT count(*) FROM files").fetchone()[0]
    print(f"speed: {rows} memories indexed in {index_path(cache)}")
    first_pass = _medians_ms(
        {
            "python -c pass": [python, "-c", "pass"],
            "memd recall --project (100)": [memd, *query],
            "memd recall --all, stat refresh": [memd, *every],
        },
        env,
        runs,
    )
    daemon = subprocess.Popen(
        [memd, "run"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_until_owner(cache, daemon, indexed_dirs(cache))
        second_pass = _medians_ms(
            {
                "python -c pass (again)": [python, "-c", "pass"],
                "memd recall --all, daemon-owned": [memd, *every],
            },
            env,
            runs,
        )
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    for results in (first_pass, second_pass):
        baseline = next(iter(results.values()))
        for label, value in results.items():
            ratio = "" if value is baseline else f"  {value / baseline:5.2f}x (<= 2x)"
            print(f"  {label:31s}{value:7.1f} ms{ratio}")

    cache_parse = ParseCache()
    previous = load_memdir(memory_dir, cache=cache_parse)
    name = previous.files[0].relpath
    path = os.path.join(memory_dir, name)
    with open(path, encoding="utf-8") as handle:
        original = handle.read()
    took = []
    with open_index(cache) as index:
        for number in range(updates):
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(original + f"\nsaved {number} kafka\n")
            changed = frozenset({name})
            memdir = load_memdir(
                memory_dir, cache=cache_parse, previous=previous, changed=changed
            )
            started = time.perf_counter()
            written = index.update(memdir, changed=changed, owner_pid=os.getpid())
            took.append(time.perf_counter() - started)
            assert written == 1
            previous = memdir
    median = statistics.median(took) * 1000
    p99 = sorted(took)[int(len(took) * 0.99) - 1] * 1000
    print(f"  daemon update after one save   {median:7.2f} ms median, {p99:.2f} ms "
          f"p99 over {updates} saves (target < 5 ms)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--updates", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memd-bench-recall-") as root:
        quality(root)
        speed(root, args.runs, args.updates)


if __name__ == "__main__":
    main()
