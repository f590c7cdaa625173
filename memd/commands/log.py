"""`memd log`: append one entry to today's KAIROS daily log of a project."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help="project whose memory to log to (default: the current directory)",
    )
    parser.add_argument(
        "text",
        nargs="*",
        metavar="TEXT",
        help="the entry; read from stdin when omitted (lines become one bullet)",
    )


def run(args: argparse.Namespace) -> int:
    import datetime
    import os
    import sys

    from memd.daily_log import append_entry
    from memd.errors import UsageError
    from memd.paths import resolve_memory_location

    project = args.project if args.project is not None else os.getcwd()
    if not os.path.isdir(project):
        raise UsageError(f"--project {project}: not a directory")
    location = resolve_memory_location(project)
    if not location.enablement.enabled:
        print(
            f"memd: auto memory is disabled for {location.project_root} "
            f"({location.enablement.reason}); nothing logged",
            file=sys.stderr,
        )
        return 1
    text = " ".join(args.text) if args.text else sys.stdin.read()
    if not text.strip():
        raise UsageError("nothing to log: give TEXT or pipe it on stdin")
    now = datetime.datetime.now().astimezone()
    append_entry(location.memory_dir, text, now=now)
    return 0
