"""`memd log`: append one entry to today's KAIROS daily log of a project."""

from __future__ import annotations

from memd.cli.commands._options import (
    add_project_argument,
    project_dir,
    report_memory_off,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser, "whose memory to log to")
    parser.add_argument(
        "text",
        nargs="*",
        metavar="TEXT",
        help="the entry; read from stdin when omitted (lines become one bullet)",
    )


def run(args: argparse.Namespace) -> int:
    import datetime
    import sys

    from memd.claude_code.choice import resolve_in_force
    from memd.config import load_config
    from memd.errors import UsageError
    from memd.kairos.daily_log import append_entry

    location = resolve_in_force(project_dir(args), load_config())
    if not location.enablement.enabled:
        return report_memory_off(location, nothing="nothing logged", as_json=False)
    if not args.text and _is_terminal(sys.stdin):
        # Otherwise a person sees a silent, hung command.
        print(
            "memd log: type the entry, then Ctrl-D on a line of its own (or pass TEXT)",
            file=sys.stderr,
        )
    text = " ".join(args.text) if args.text else sys.stdin.read()
    if not text.strip():
        raise UsageError("nothing to log: give TEXT or pipe it on stdin")
    now = datetime.datetime.now().astimezone()
    append_entry(location.memory_dir, text, now=now)
    return 0


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False
