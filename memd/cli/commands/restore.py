"""`memd restore`: bring back a memory file, or a whole memory directory, from history.

    memd restore PATH --at WHEN | --rev REV [--dry-run]
    memd restore --all [--project DIR] --at WHEN | --rev REV [--dry-run]

Byte for byte; a restore is itself recorded, so it can be undone the same way.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.config import Config
    from memd.projects.naming import ProjectNames


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        metavar="PATH",
        help="the memory file to bring back (it may be deleted now)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="bring back the whole memory directory as it was (all or nothing)",
    )
    add_project_argument(parser, "or memory directory to restore")
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--at",
        metavar="WHEN",
        help="as it was at WHEN: '10 minutes ago', 'yesterday 18:00', HH:MM, "
        "or an ISO time",
    )
    when.add_argument(
        "--rev", metavar="REV", type=int, help="as it was after change REV"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the unified diff the restore would apply and write nothing",
    )


def _names(memory_dir: str, config: Config) -> ProjectNames:
    """What `memory_dir` is called: its project's folder (memd.projects)."""
    from memd.projects.roots import load_project_names

    return load_project_names([memory_dir], config=config)


def run(args: argparse.Namespace) -> int:
    import time

    from memd.cli.commands.history import parse_when_arg, resolve_target
    from memd.config import load_config
    from memd.errors import UsageError
    from memd.history.restore import RestoreError, restore_all, restore_file
    from memd.history.store import History

    if args.all == (args.path is not None):
        raise UsageError("give a PATH or --all (not both)")
    if args.at is None and args.rev is None:
        raise UsageError("say which version: --at WHEN or --rev REV")
    config = load_config()
    if not os.path.exists(os.path.join(config.state_dir, "history")):
        raise UsageError("no history recorded yet")
    with History.open(config.state_dir) as history:
        memory_dir, relpath = resolve_target(args.path, args.project, config, history)
        if args.rev is not None:
            rev = args.rev
        else:
            when = parse_when_arg(args.at, "--at")
            found = history.rev_at(memory_dir, when)
            if found is None:
                from memd.times import clock

                stamp = clock(when, now=time.time())
                label = _names(memory_dir, config).both(memory_dir)
                raise UsageError(f"no history of {label} at or before {stamp}")
            rev = found
    try:
        if relpath is None:
            plan = restore_all(
                config.state_dir, memory_dir, rev=rev, dry_run=args.dry_run
            )
        else:
            plan = restore_file(
                config.state_dir, memory_dir, relpath, rev=rev, dry_run=args.dry_run
            )
    except RestoreError as error:
        raise UsageError(str(error)) from None
    if args.dry_run:
        sys.stdout.write(plan.diff or "nothing to restore: it is already as it was\n")
        return 0
    names = _names(memory_dir, config)
    if not plan.steps:
        print(
            f"nothing to restore: {names.label(memory_dir)} is already as it was"
            f" at revision {rev}"
        )
        return 0
    for relpath_done, action in plan.steps:
        print(f"{action:<7} {relpath_done}")
    note = plan.change.note if plan.change is not None else None
    if note and "; not restored: " in note:  # a folder swapped for a link meanwhile
        print(f"memd: {note.split('; ', 1)[1]}", file=sys.stderr)
    undo = ""
    if plan.change is not None:
        undo = (
            f"; undo with `memd restore --all --project {names.project_arg(memory_dir)}"
            f" --rev {plan.before_rev}`"
        )
    print(f"restored {len(plan.steps)} file(s) to revision {rev}{undo}")
    return 0
