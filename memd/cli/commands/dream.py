"""`memd dream`: consolidate daily logs into topic files now, show the diff, or undo.

`memd dream undo` puts back the bytes the newest kept dream replaced
(memd.kairos.generations keeps the last five).
"""

from __future__ import annotations

from memd.cli.commands._options import (
    add_project_argument,
    add_verbose_argument,
    configure_command_logs,
    project_dir,
    report_memory_off,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import datetime

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.kairos.dream import DreamResult
    from memd.snapshot.telemetry_sink import TelemetrySink


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="?",
        choices=("undo",),
        help="undo: restore the memory as it was before the last dream",
    )
    where = parser.add_mutually_exclusive_group()
    add_project_argument(where, "whose memory to consolidate")
    where.add_argument(
        "--all",
        action="store_true",
        help="every memory directory the daemon would watch",
    )
    parser.add_argument(
        "--now",
        action="store_true",
        help="dream even if tonight's dream already ran (default: only when due)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the unified diff the dream would apply and write nothing",
    )
    add_verbose_argument(parser)


def run(args: argparse.Namespace) -> int:
    import datetime
    import sys

    from memd.config import load_config
    from memd.kairos.dream import run_dream
    from memd.kairos.scheduler import is_due
    from memd.logconfig import get_logger

    config = load_config()
    configure_command_logs(config, args)
    log = get_logger(component="dream")
    now = datetime.datetime.now().astimezone()
    if args.action == "undo":
        return _undo(args, config, now, log)
    failed = False
    if not args.all:
        from memd.claude_code.choice import resolve_in_force

        location = resolve_in_force(project_dir(args), config)
        if not location.enablement.enabled:
            return report_memory_off(
                location, nothing="nothing consolidated", as_json=False
            )
    sink = _telemetry(config)
    try:
        for memory_dir in _memory_dirs(args, config):
            if not (args.now or args.dry_run) and not is_due(config, memory_dir, now):
                reason = _not_due_reason(config, memory_dir, now)
                print(f"{_name(memory_dir, config)}: {reason}")
                continue
            result = run_dream(
                memory_dir,
                config,
                now=now,
                dry_run=args.dry_run,
                log=log,
                telemetry=sink,
            )
            if args.dry_run:
                sys.stdout.write(result.diff)
            print(
                _summary(result, dry_run=args.dry_run, config=config),
                file=sys.stderr if args.dry_run else sys.stdout,
            )
            failed = failed or not result.ok
    finally:
        if sink is not None:
            sink.close()
    return 1 if failed else 0


def _undo(
    args: argparse.Namespace,
    config: Config,
    now: datetime.datetime,
    log: FilteringBoundLogger,
) -> int:
    import sys

    from memd.errors import UsageError
    from memd.kairos.dream import undo_dream

    if args.all or args.dry_run:
        raise UsageError("memd dream undo takes one project (--project DIR), no more")
    (memory_dir,) = _memory_dirs(args, config)
    ok, message = undo_dream(memory_dir, config, now=now, log=log)
    print(
        f"{_name(memory_dir, config)}: {message}", file=sys.stdout if ok else sys.stderr
    )
    return 0 if ok else 1


def _memory_dirs(args: argparse.Namespace, config: Config) -> tuple[str, ...]:
    import os

    from memd.errors import UsageError

    if args.all:
        from memd.claude_code.choice import in_force
        from memd.daemon.discovery import discover
        from memd.state import known_projects

        profile = in_force(config).profile
        found = discover(config, known_projects=known_projects, profile=profile)
        return found.memory_dirs
    from memd.claude_code.choice import resolve_in_force

    location = resolve_in_force(project_dir(args), config)
    if not os.path.isdir(location.memory_dir):
        raise UsageError(f"{location.memory_dir}: no memory directory yet")
    return (location.memory_dir.rstrip(os.sep),)


def _telemetry(config: Config) -> TelemetrySink | None:
    if config.telemetry == "off":
        return None
    from memd.snapshot.telemetry_sink import TelemetrySink, default_path

    return TelemetrySink(
        default_path(config.state_dir), max_bytes=config.telemetry_max_bytes
    )


def _not_due_reason(config: Config, memory_dir: str, now: datetime.datetime) -> str:
    """Why `memory_dir` does not dream now, in words that are true for it."""
    import datetime as dt

    from memd.kairos.daily_log import memory_key
    from memd.kairos.dream import dream_status
    from memd.kairos.schedule import latest_slot, next_dream_time
    from memd.kairos.scheduler import dream_zone
    from memd.times import clock

    zone = dream_zone(config)

    def said(moment: datetime.datetime) -> str:
        return clock(moment.timestamp(), now=now.timestamp(), seconds=False)

    upcoming = said(next_dream_time(now, config.dream_time, zone))
    record = dream_status(config.state_dir).get(memory_key(memory_dir), {})
    raw = record.get("last_run")
    try:
        last = dt.datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        last = None
    slot = latest_slot(now, config.dream_time, zone)
    run_now = "`memd dream --now` runs it now"
    if last is not None and last >= slot:
        return f"the next dream runs {upcoming} (the last ran {said(last)}); {run_now}"
    never = "no dream has run here yet, and " if last is None else ""
    return (
        f"{never}the last night's dream is more than"
        f" {config.dream_grace_hours:g} h past; the next runs {upcoming}; {run_now}"
    )


def _summary(
    result: DreamResult, *, dry_run: bool = False, config: Config | None = None
) -> str:
    from memd.kairos.dream import describe_summary

    line = (
        f"{_name(result.memory_dir, config)}: {result.status}, {result.entries} entries"
    )
    summary = describe_summary(result.summary)
    if summary:
        line += f" ({summary})"
    if result.files_written:
        verb = "would write" if dry_run else "wrote"
        line += f", {verb} {', '.join(result.files_written)}"
    if result.message and result.message != summary:
        line += f" ({result.message})"
    return line


def _name(memory_dir: str, config: Config | None) -> str:
    """What a person calls `memory_dir`: its project's folder (memd.projects)."""
    if config is None:
        return memory_dir
    from memd.projects.roots import load_project_names

    return load_project_names([memory_dir], config=config).label(memory_dir)
