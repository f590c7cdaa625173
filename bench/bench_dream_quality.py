"""How well the built-in dream consolidates: generated months of logs, known facts.

Each night logs 6 entries drawn from a fixed set of facts, in varying case,
punctuation and spacing, with a time and tags; four facts change value at
night 15 (a number, a version, a name, a date), two are stated with relative
dates ("tomorrow", "next Monday"), resolved from the log's date. After each
night the dream runs (`run_dream`, the real thing on real files). Reported:

- facts retained: the share of facts whose current value (relative dates
  resolved) is somewhere in the memory (target 100 %);
- duplicate current facts: extra current statements of a fact (target 0);
- superseded values presented as current: an old value on a line that is
  not history (`previously:`) (target 0);
- memory size (bytes of every memory file but the logs) after 30 and 60
  nights of the same facts (target: 60 nights <= 1.2x 30 nights).

A second run logs near-miss pairs: distinct facts that share a template
(other tickets, PRs, hosts, racks, builds, accounts, codes, replica and
primary, EU and US, staging and production) and true updates (a duration, a
percentage, a version, a count, a date), half of them untagged. Reported:

- distinct facts kept as current: each fact of each pair stated on a line
  that is not history (target 100 %);
- true updates recognised: the new value current and the old one only as
  history (target 100 %);
- texts findable: every text logged, in the topic files or the archive;
- descriptions that name their facts: index lines whose description shares
  a content word with the facts of the file they link.

`--baseline DIR` runs the same nights against another checkout's memd (for
example `git archive main | tar -x -C DIR`) in a subprocess and prints its
row first, so before and after come from one run.

    .venv/bin/python bench/bench_dream_quality.py [--baseline DIR] [--nights 60]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable

START = dt.date(2026, 10, 5)  # a Monday
CHANGE_NIGHT = 15


def _next_monday(day: dt.date) -> dt.date:
    return day + dt.timedelta(days=7 - day.weekday())


# (tag, text before the change, text after, expected current text after the change)
# `{d}` in an expected text is the log's date resolved by the rule given.
FACTS: list[tuple[str, str, str | None]] = [
    ("#infra", "the gateway timeout is 30 s", "the gateway timeout was raised to 60 s"),
    ("#infra", "staging is Postgres 15", "staging is Postgres 16"),
    (
        "#infra",
        "we deploy with helm chart version 1.4.2",
        "we deploy with helm chart version 1.5.0",
    ),
    ("#team", "the on-call lead is Alice", "the on-call lead is Bob"),
    (
        "[feedback] #testing",
        "use a real database in integration tests, never mocks",
        None,
    ),
    ("[user]", "senior Go developer, new to the React frontend", None),
    ("#docs", "the runbook lives in the ops wiki under Gateways", None),
    ("", "deploys happen on Tuesdays after the standup", None),
    ("#infra", "the build cache lives in the S3 bucket ci-cache", None),
    ("#team", "code review needs two approvals for the payments service", None),
]
RELATIVE = [
    (
        "#release",
        "the release is tomorrow",
        lambda d: f"the release is {d + dt.timedelta(days=1)}",
    ),
    (
        "#release",
        "the deploy freeze starts next Monday",
        lambda d: f"the deploy freeze starts on {_next_monday(d)}",
    ),
]
VARIANTS = [
    lambda t: t,
    lambda t: t[:1].upper() + t[1:] + ".",
    lambda t: "  ".join(t.split(" ")),
    lambda t: t.upper(),
    lambda t: t.replace(" s", "s") + "!",
]


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[0-9]+(?:[.:][0-9]+)*|[^\W\d_]+", text.casefold()))


def _night_entries(night: int) -> list[tuple[str, str]]:
    """Return (tagged text, expected key) for one night's 6 entries."""
    day = START + dt.timedelta(days=night)
    pool = [
        (tag, before if night < CHANGE_NIGHT or after is None else after)
        for tag, before, after in FACTS
    ]
    pool += [(tag, text) for tag, text, _ in RELATIVE]
    out = []
    for i in range(6):
        tag, text = pool[(night * 5 + i * 3) % len(pool)]
        variant = VARIANTS[(night + i) % len(VARIANTS)](text)
        out.append((f"{tag} {variant}".strip(), text))
    del day
    return out


def expected_state(nights: int) -> tuple[list[str], list[str]]:
    """Return (current texts, superseded texts) after `nights` nights."""
    current, old = [], []
    for _, before, after in FACTS:
        if after is not None and nights > CHANGE_NIGHT:
            current.append(after)
            old.append(before)
        else:
            current.append(before)
    for tag, text, resolve in RELATIVE:
        days = [
            START + dt.timedelta(days=n)
            for n in range(nights)
            if any(key == text for _, key in _night_entries(n))
        ]
        current.append(resolve(days[-1]))
        old += sorted({resolve(d) for d in days[:-1]} - {resolve(days[-1])})
        del tag
    return current, old


def _memory_lines(memory: str) -> tuple[list[str], list[str], int]:
    """Return (current lines, history lines, bytes) of every memory file but logs."""
    current, history, size = [], [], 0
    for root, dirs, files in os.walk(memory):
        dirs[:] = [d for d in dirs if not (root == memory and d == "logs")]
        for name in files:
            if not name.endswith(".md"):
                continue
            with open(os.path.join(root, name), "rb") as handle:
                data = handle.read()
            size += len(data)
            for line in data.decode("utf-8", "replace").splitlines():
                (history if "previously:" in line else current).append(_norm(line))
    return current, history, size


def measure(memory: str, nights: int) -> dict[str, float]:
    current_lines, history_lines, size = _memory_lines(memory)
    current, old = expected_state(nights)
    everything = current_lines + history_lines

    def holds(line: str, text: str) -> bool:
        return (
            re.search(rf"(?<![\w.]){re.escape(_norm(text))}(?![\w.])", line) is not None
        )

    retained = sum(any(holds(line, t) for line in everything) for t in current)
    duplicates = sum(
        max(0, sum(holds(line, t) for line in current_lines) - 1) for t in current
    )
    stale = sum(any(holds(line, t) for line in current_lines) for t in old)
    return {
        "retained": 100.0 * retained / len(current),
        "duplicates": duplicates,
        "stale": stale,
        "bytes": size,
    }


def _dreamer(tmp: str) -> tuple[str, Callable[[int], None]]:
    """Return (memory dir, a `dream(at)` that runs the real dream there)."""
    import structlog

    from memd.config import Config
    from memd.kairos.dream import run_dream

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    log = structlog.get_logger()
    memory = os.path.join(tmp, "memory")
    os.mkdir(memory)
    config = Config(
        cache_dir=os.path.join(tmp, "cache"), state_dir=os.path.join(tmp, "state")
    )

    def dream(night: int) -> None:
        day = START + dt.timedelta(days=night)
        at = dt.datetime.combine(day, dt.time(23, 0)).astimezone()
        result = run_dream(memory, config, now=at, log=log)
        if result.status not in ("ok", "nothing"):
            raise SystemExit(f"night {night}: {result.status} {result.message}")

    return memory, dream


def run_nights(
    nights: int, checkpoints: tuple[int, ...]
) -> dict[int, dict[str, float]]:
    """Log and dream `nights` nights in a temp dir; measure at each checkpoint."""
    from memd.kairos.daily_log import append_entry

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        memory, dream = _dreamer(tmp)
        for night in range(nights):
            day = START + dt.timedelta(days=night)
            for i, (text, _) in enumerate(_night_entries(night)):
                when = dt.datetime.combine(day, dt.time(9, 0)) + dt.timedelta(
                    minutes=17 * i
                )
                append_entry(memory, text, now=when.astimezone())
            dream(night)
            if night + 1 in checkpoints:
                results[night + 1] = measure(memory, night + 1)
    return results


NEAR_MISSES = [
    (
        "Ticket 4411 is blocked by the auth bug",
        "Ticket 4502 is blocked by the auth bug",
    ),
    (
        "Port 5432 serves the orders database",
        "Port 5433 serves the orders replica database",
    ),
    ("PR 812 fixes the login redirect", "PR 815 fixes the login redirect"),
    ("host web-03 runs the nightly export", "host web-04 runs the nightly export"),
    (
        "the EU bucket keeps backups for 30 days",
        "the US bucket keeps backups for 30 days",
    ),
    (
        "the staging cluster runs Kubernetes 1.29",
        "the production cluster runs Kubernetes 1.29",
    ),
    ("rack 12 holds the db primary", "rack 14 holds the db primary"),
    ("build 9120 failed on arm64", "build 9121 failed on arm64"),
    (
        "account 7731 is on the enterprise plan",
        "account 7740 is on the enterprise plan",
    ),
    ("db-7 is the primary for payments", "db-9 is the primary for payments"),
    ("entry p3 n7 keep tests real", "entry p4 n8 keep tests real"),
]
UPDATES = [
    ("the gateway timeout is 30 s", "the gateway timeout was raised to 60 s"),
    ("the checkout-v2 rollout is at 25%", "the checkout-v2 rollout is at 50%"),
    ("staging runs Postgres 15", "staging runs Postgres 16"),
    ("the api has 3 replicas", "the api has 5 replicas"),
    ("the launch is 2026-11-20", "the launch is 2026-11-27"),
    ("the session cache TTL is 15 minutes", "the session cache TTL is 30 minutes"),
    (
        "we deploy with helm chart version 1.4.2",
        "we deploy with helm chart version 1.5.0",
    ),
]
_STOP_WORDS = (
    "a an the of to in on at for and or is are was were be by with from it this "
    "that daily log logs facts fact memd notes filed nightly kept"
)
_STOP = frozenset(_STOP_WORDS.split())


def run_near_misses(nights: int = 6) -> dict[str, float]:
    """Log the pairs over `nights` nights (updates on the last), dream, measure."""
    from memd.kairos.daily_log import append_entry

    logged: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        memory, dream = _dreamer(tmp)
        for night in range(nights):
            day = START + dt.timedelta(days=night)
            texts = [t for pair in NEAR_MISSES for t in pair]
            texts += [new if night == nights - 1 else old for old, new in UPDATES]
            for i, text in enumerate(texts):
                tag = "#infra " if (i // 2) % 2 else ""  # a pair shares its file
                when = dt.datetime.combine(day, dt.time(9, 0)) + dt.timedelta(minutes=i)
                append_entry(memory, tag + text, now=when.astimezone())
                logged.append(text)
            dream(night)
        current, history, _ = _memory_lines(memory)
        described = _descriptions_naming_facts(memory)

    def holds(line: str, text: str) -> bool:
        return (
            re.search(rf"(?<![\w.]){re.escape(_norm(text))}(?![\w.])", line) is not None
        )

    distinct = [t for pair in NEAR_MISSES for t in pair]
    kept = sum(any(holds(line, t) for line in current) for t in distinct)
    updated = sum(
        any(holds(line, new) for line in current)
        and not any(holds(line, old) for line in current)
        and any(holds(line, old) for line in history)
        for old, new in UPDATES
    )
    everything = current + history
    found = sum(any(holds(line, t) for line in everything) for t in set(logged))
    return {
        "distinct": 100.0 * kept / len(distinct),
        "updates": 100.0 * updated / len(UPDATES),
        "findable": 100.0 * found / len(set(logged)),
        "described": described[0],
        "index_lines": described[1],
    }


def _descriptions_naming_facts(memory: str) -> tuple[int, int]:
    """Return (index lines whose description shares a word with their file, lines)."""
    with open(os.path.join(memory, "MEMORY.md"), encoding="utf-8") as handle:
        index = handle.read()
    naming = lines = 0
    for match in re.finditer(r"^- \[[^\]]*\]\(([^)]+\.md)\) — (.*)$", index, re.M):
        lines += 1
        path = os.path.join(memory, match.group(1))
        with open(path, encoding="utf-8") as handle:
            body = handle.read().split("<!-- memd:facts", 1)[-1]
        facts = set(_norm(body).split()) - _STOP
        words = set(_norm(match.group(2)).split()) - _STOP
        naming += bool(words & facts)
    return naming, lines


def _row(label: str, results: dict[int, dict[str, float]], nights: int) -> str:
    half, full = results[nights // 2], results[nights]
    ratio = full["bytes"] / max(1.0, half["bytes"])
    return (
        f"| {label} | {full['retained']:.0f} % | {full['duplicates']:.0f} | "
        f"{full['stale']:.0f} | {half['bytes']:.0f} | {full['bytes']:.0f} | "
        f"{ratio:.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--baseline", help="another checkout whose memd to measure first"
    )
    parser.add_argument("--nights", type=int, default=60)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--near-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.near_json:
        print(json.dumps(run_near_misses()))
        return
    checkpoints = (args.nights // 2, args.nights)
    if args.json:
        print(json.dumps(run_nights(args.nights, checkpoints)))
        return
    print(
        f"| code | facts retained | duplicate current facts | superseded shown as "
        f"current | bytes after {checkpoints[0]} nights | after {checkpoints[1]} "
        "| ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    if args.baseline:
        done = subprocess.run(
            [sys.executable, __file__, "--json", "--nights", str(args.nights)],
            env={**os.environ, "PYTHONPATH": os.path.abspath(args.baseline)},
            capture_output=True,
            text=True,
            check=True,
        )
        base = {int(k): v for k, v in json.loads(done.stdout).items()}
        print(_row("baseline", base, args.nights))
    print(_row("this checkout", run_nights(args.nights, checkpoints), args.nights))
    print()
    print(
        "| code | distinct facts kept as current | true updates recognised | "
        "texts logged findable | index descriptions naming their facts |"
    )
    print("|---|---|---|---|---|")
    if args.baseline:
        done = subprocess.run(
            [sys.executable, __file__, "--near-json"],
            env={**os.environ, "PYTHONPATH": os.path.abspath(args.baseline)},
            capture_output=True,
            text=True,
            check=True,
        )
        print(_near_row("baseline", json.loads(done.stdout)))
    print(_near_row("this checkout", run_near_misses()))


def _near_row(label: str, near: dict[str, float]) -> str:
    return (
        f"| {label} | {near['distinct']:.0f} % | {near['updates']:.0f} % | "
        f"{near['findable']:.0f} % | {near['described']:.0f} of "
        f"{near['index_lines']:.0f} |"
    )


if __name__ == "__main__":
    main()
