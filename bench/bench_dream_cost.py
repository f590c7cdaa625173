"""What a built-in dream costs: one dream over 1,500 and 4,000 entries, and 60 nights.

Issue 32 measured 11 s for a dream over 1,500 entries and 60 s over 4,000
(archive paging rendered the YAML head again for every fact it placed). Each
case here runs the real dream (`run_dream`, real files in a temp dir) and, in
the same run, a baseline: parsing the same logs' bytes into entries
(`parse_log_entries`), the least any dream must do. The ratio dream/baseline
should stay flat from 1,500 to 4,000 entries (linear), and the 60 nights of
`bench_dream_quality.py` should take under 1 s in all.

    .venv/bin/python bench/bench_dream_cost.py
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _word(n: int) -> str:
    syllables = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "tu", "va", "ze"]
    return "".join(syllables[int(d)] for d in str(n)) + "x"


def _write_logs(memory: str, entries: int) -> list[str]:
    """Write `entries` entries over 30 days of logs, mostly distinct facts."""
    start = dt.date(2026, 10, 1)
    per_day = -(-entries // 30)
    paths = []
    written = 0
    for day_index in range(30):
        day = start + dt.timedelta(days=day_index)
        rel = f"logs/{day:%Y}/{day:%m}/{day}.md"
        os.makedirs(os.path.join(memory, os.path.dirname(rel)), exist_ok=True)
        lines = [f"# {day}\n\n"]
        for i in range(per_day):
            if written == entries:
                break
            n = written
            kind = n % 4
            if kind == 0:  # a value that changes: supersedes, history grows
                text = f"#ops the {_word(n % 50)} queue depth limit is {n} messages"
            elif kind == 1:  # a ticket: an identifier, a fact of its own
                text = (
                    f"#tickets ticket {4000 + n} is blocked by the {_word(n % 7)} bug"
                )
            else:  # distinct facts, most of them archived
                text = f"#ops the {_word(n)} service logs to graylog"
            lines.append(f"- 09:{i % 60:02} {text}\n")
            written += 1
        with open(os.path.join(memory, rel), "w", encoding="utf-8") as handle:
            handle.write("".join(lines))
        paths.append(rel)
    return paths


def _baseline(memory: str, paths: list[str]) -> float:
    from memd.kairos.consolidate import parse_log_entries

    started = time.perf_counter()
    for rel in paths:
        with open(os.path.join(memory, rel), "rb") as handle:
            parse_log_entries(rel, handle.read())
    return time.perf_counter() - started


def one_dream(entries: int) -> tuple[float, float]:
    """Return (dream seconds, baseline seconds) for one dream over `entries`."""
    import structlog

    from memd.config import Config
    from memd.kairos.dream import run_dream

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    with tempfile.TemporaryDirectory() as tmp:
        memory = os.path.join(tmp, "memory")
        os.mkdir(memory)
        paths = _write_logs(memory, entries)
        config = Config(
            cache_dir=os.path.join(tmp, "cache"), state_dir=os.path.join(tmp, "state")
        )
        base = min(_baseline(memory, paths) for _ in range(3))
        now = dt.datetime(2026, 10, 31, 23, 0).astimezone()
        started = time.perf_counter()
        result = run_dream(memory, config, now=now, log=structlog.get_logger())
        took = time.perf_counter() - started
        if result.status != "ok":
            raise SystemExit(f"{entries} entries: {result.status} {result.message}")
    return took, base


def sixty_nights() -> tuple[float, float, float]:
    """Return (seconds in the 60 dreams, in their planning, baseline) for 60 nights.

    The planning (`plan_builtin`: read, consolidate, render) is timed on its
    own, just before each dream, to tell memd's work from the durable writes
    (each generation fsyncs its copies and files) and the lint and snapshots.
    """
    import bench_dream_quality as quality
    import structlog

    from memd.config import Config
    from memd.kairos.daily_log import append_entry, collect_entries
    from memd.kairos.dream import _watermark, plan_builtin, run_dream

    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    log = structlog.get_logger()
    dreaming = planning = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        memory = os.path.join(tmp, "memory")
        os.mkdir(memory)
        config = Config(
            cache_dir=os.path.join(tmp, "cache"), state_dir=os.path.join(tmp, "state")
        )
        for night in range(60):
            day = quality.START + dt.timedelta(days=night)
            for i, (text, _) in enumerate(quality._night_entries(night)):
                when = dt.datetime.combine(day, dt.time(9, 0))
                append_entry(
                    memory, text, now=(when + dt.timedelta(minutes=i)).astimezone()
                )
            at = dt.datetime.combine(day, dt.time(23, 0)).astimezone()
            entries, _ = collect_entries(memory, _watermark(config, memory))
            started = time.perf_counter()
            plan_builtin(memory, entries, at.date().isoformat())
            planning += time.perf_counter() - started
            started = time.perf_counter()
            run_dream(memory, config, now=at, log=log)
            dreaming += time.perf_counter() - started
        from memd.kairos.daily_log import list_logs

        base = _baseline(memory, list(list_logs(memory)))
    return dreaming, planning, base


def main() -> None:
    print("| case | dream (s) | baseline: parse the logs (s) | ratio |")
    print("|---|---|---|---|")
    for entries in (1500, 4000):
        took, base = one_dream(entries)
        print(
            f"| one dream, {entries:,} entries | {took:.3f} | {base:.4f} | "
            f"{took / base:,.0f}x |"
        )
    took, planned, base = sixty_nights()
    print(
        f"| 60 nights of bench_dream_quality | {took:.3f} | {base:.4f} | "
        f"{took / base:,.0f}x |"
    )
    print(
        f"| 60 nights, planning only (plan_builtin) | {planned:.3f} | {base:.4f} | "
        f"{planned / base:,.0f}x |"
    )


if __name__ == "__main__":
    main()
