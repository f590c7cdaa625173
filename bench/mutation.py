"""Mutation testing of memd's core modules with mutmut; prints a score per module.

Each module is mutated alone and judged by the tests of its own area only, so
a run is bounded and a score says how well *those* tests pin the module down.
mutmut 3 copies the tree into `mutants/`, so every module runs in its own copy
under `bench/out/mutation/<module>/` (the repository is never touched), with
`[tool.mutmut]` from pyproject.toml plus that module's `only_mutate` and test
selection. Tests that run memd in a subprocess cannot kill a mutant (the
child imports the real module), so a module's in-process tests are what count.

Not run in CI: it is slow (minutes per module). Install the extra and run it
niced, smallest modules first:

    .venv/bin/pip install -e '.[test,mutation]'
    nice -n 19 .venv/bin/python bench/mutation.py truncation settle atomic
    .venv/bin/python bench/mutation.py --list
    .venv/bin/python bench/mutation.py --survivors truncation   # diffs of survivors

`score` is killed / all mutants, timeouts counted as killed (the tests noticed
something); `reached` leaves out the mutants in functions no selected test
calls in-process ("no tests": e.g. an edge exercised only by subprocess
tests), so it says how well the code the tests do run is pinned.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "mutation"


@dataclass(frozen=True, slots=True)
class Target:
    """One module (or folder) to mutate and the tests of its area."""

    name: str
    sources: tuple[str, ...]
    tests: tuple[str, ...]


# Smallest and most central first: the order `all` runs them in.
TARGETS = (
    Target(
        "truncation",
        ("memd/claude_code/truncation.py",),
        ("tests/claude_code/test_truncation.py",),
    ),
    Target("settle", ("memd/daemon/settle.py",), ("tests/daemon/test_settle.py",)),
    Target(
        "atomic",
        ("memd/atomic.py",),
        (
            "tests/test_atomic.py",
            "tests/reliability/test_durability.py",
            "tests/test_state.py",
        ),
    ),
    Target(
        "feedback",
        ("memd/hooks/feedback.py",),
        ("tests/hooks/test_feedback.py", "tests/hooks/test_session_state.py"),
    ),
    Target("merge", ("memd/gitsync/merge.py",), ("tests/team/test_merge.py",)),
    Target(
        "daily_log",
        ("memd/kairos/daily_log.py",),
        ("tests/kairos/test_daily_log.py", "tests/kairos/test_log_paths.py"),
    ),
    Target("recall_text", ("memd/recall/text.py",), ("tests/recall",)),
    Target(
        "recall_store",
        ("memd/recall/store.py", "memd/recall/index.py", "memd/recall/query.py"),
        ("tests/recall",),
    ),
    Target("fsread", ("memd/fsread.py",), ("tests/test_fsread.py",)),
    Target("locks", ("memd/locks.py",), ("tests/test_locks.py",)),
    Target(
        "consolidate",
        ("memd/kairos/consolidate.py",),
        ("tests/kairos/test_consolidate.py", "tests/kairos/test_dream_yaml.py"),
    ),
    Target("snapshot_store", ("memd/snapshot/store.py",), ("tests/snapshot",)),
    Target("agent", ("memd/claude_code/*",), ("tests/agent",)),
    Target("memory", ("memd/memory/*",), ("tests/memory",)),
    Target("lint", ("memd/lint/*",), ("tests/lint",)),
)
BY_NAME = {t.name: t for t in TARGETS}
KILLED = frozenset({"killed", "timeout"})
HEADER = (
    f"{'module':15} {'mutants':>7} {'killed':>7} {'survived':>8} {'score':>6} {'s':>6}"
)


def _toml_value(value: object) -> str:
    # JSON's strings, lists, numbers and booleans are valid TOML as written.
    return json.dumps(value)


def _pyproject(target: Target) -> str:
    """Return a pyproject.toml with the repo's mutmut and pytest settings, narrowed."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    mutmut = {
        **tool.get("mutmut", {}),
        "only_mutate": list(target.sources),
        "pytest_add_cli_args_test_selection": list(target.tests),
    }
    lines = ["[tool.mutmut]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in mutmut.items()]
    lines += ["", "[tool.pytest.ini_options]"]
    pytest_ini = tool["pytest"]["ini_options"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in pytest_ini.items()]
    return "\n".join(lines) + "\n"


def _prepare(target: Target) -> Path:
    """Copy memd/ and tests/ into a fresh work dir for this target."""
    work = OUT / target.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for folder in ("memd", "tests"):
        shutil.copytree(ROOT / folder, work / folder, ignore=ignore, symlinks=True)
    (work / "pyproject.toml").write_text(_pyproject(target))
    return work


def _mutmut() -> str:
    found = shutil.which("mutmut", path=os.path.dirname(sys.executable))
    if found is None:
        sys.exit(
            "bench/mutation.py: mutmut not installed: pip install -e '.[mutation]'"
        )
    return found


def _env() -> dict[str, str]:
    return {**os.environ, "CI": "true", "MEMD_HYPOTHESIS_PROFILE": "mutation"}


def _statuses(work: Path) -> dict[str, str]:
    done = subprocess.run(
        [_mutmut(), "results", "--all", "true"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    statuses = {}
    for line in done.stdout.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name:
            statuses[name] = status
    return statuses


def run_target(
    target: Target, *, children: int, show: bool, rerun: bool = True
) -> dict[str, object]:
    """Mutate one target (or, `rerun` False, read its last run); return its score."""
    work = OUT / target.name
    started = time.monotonic()
    returncode = 0
    if rerun:
        work = _prepare(target)
        with (work / "run.log").open("w") as log:
            returncode = subprocess.run(
                ["nice", "-n", "19", _mutmut(), "run", "--max-children", str(children)],
                cwd=work,
                env=_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                check=False,
            ).returncode
    seconds = time.monotonic() - started
    statuses = _statuses(work)
    counts = Counter(statuses.values())
    killed = sum(n for status, n in counts.items() if status in KILLED)
    judged = sum(counts.values())
    survivors = sorted(n for n, s in statuses.items() if s == "survived")
    if returncode != 0 and not killed:
        print(f"{target.name}: mutmut failed (exit {returncode}); see {work}/run.log")
        judged = 0
    if show:
        for name in survivors:
            diff = subprocess.run(
                [_mutmut(), "show", name], cwd=work, capture_output=True, text=True
            ).stdout
            changed = [
                line
                for line in diff.splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))
            ]
            print(f"  {name} ({statuses[name]})")
            for line in changed:
                print(f"      {line}")
    unreached = counts.get("no tests", 0) if judged else 0
    return {
        "module": target.name,
        "mutants": judged,
        "killed": killed,
        "survived": judged - killed - unreached,
        "no_tests": unreached,
        "statuses": dict(counts),
        "score": round(killed / judged, 3) if judged else None,
        "reached": round(killed / (judged - unreached), 3)
        if judged > unreached
        else None,
        "seconds": round(seconds, 1),
        "exit": returncode,
        "log": str(work / "run.log"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help="names from --list (default: all)")
    parser.add_argument("--list", action="store_true", help="print the targets")
    parser.add_argument("--children", type=int, default=2, help="mutmut workers")
    parser.add_argument(
        "--survivors", action="store_true", help="print each surviving mutant's diff"
    )
    parser.add_argument(
        "--report", action="store_true", help="print the last run's scores, run nothing"
    )
    args = parser.parse_args(argv)
    if args.list:
        for t in TARGETS:
            print(f"{t.name:15} {' '.join(t.sources)}  <-  {' '.join(t.tests)}")
        return 0
    unknown = [n for n in args.targets if n not in BY_NAME]
    if unknown:
        parser.error(f"unknown target(s): {', '.join(unknown)}; see --list")
    chosen = [BY_NAME[n] for n in args.targets] if args.targets else list(TARGETS)
    results = []
    print(HEADER)
    for target in chosen:
        result = run_target(
            target, children=args.children, show=args.survivors, rerun=not args.report
        )
        results.append(result)
        print(
            f"{target.name:15} {result['mutants']:>7} {result['killed']:>7} "
            f"{result['survived']:>8} {result['no_tests']:>8} {result['score']!s:>6} "
            f"{result['reached']!s:>7} {result['seconds']:>6}",
            flush=True,
        )
    if not args.report:
        (OUT / "scores.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
