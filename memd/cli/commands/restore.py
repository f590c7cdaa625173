"""`memd restore`: bring back a memory file, or a whole memory directory, from history.

    memd restore PATH --at WHEN | --rev REV [--dry-run]
    memd restore --all [--project DIR] --at WHEN | --rev REV [--dry-run]
    memd restore --loss REV [--dry-run]

`--loss REV` brings back exactly what the loss REV (as `memd status` names
it) took, each file as it was just before, and nothing else.

Byte for byte; a restore is itself recorded, so it can be undone the same way.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


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
    when.add_argument(
        "--loss",
        metavar="REV",
        help="exactly what the loss REV took (`memd status` names it), nothing else",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the unified diff the restore would apply and write nothing",
    )


def run(args: argparse.Namespace) -> int:
    import time

    from memd.cli.commands.history import (
        loss_revision,
        parse_when_arg,
        resolve_target,
    )
    from memd.config import load_config
    from memd.errors import UsageError
    from memd.history.restore import RestoreError, restore_all, restore_file
    from memd.history.store import History

    config = load_config()
    if args.loss is not None:
        if args.all or args.path is not None or args.project is not None:
            raise UsageError("--loss REV restores what that loss took; give it alone")
        rev = loss_revision(args.loss)
        return _restore_loss(config.state_dir, rev, dry_run=args.dry_run)
    if args.all == (args.path is not None):
        raise UsageError("give a PATH or --all (not both)")
    if args.at is None and args.rev is None:
        raise UsageError(
            "say which version: --at WHEN or --rev REV (--loss REV: what a loss took)"
        )
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
                stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
                raise UsageError(f"no history of {memory_dir} at or before {stamp}")
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
    if not plan.steps:
        print(
            f"nothing to restore: {memory_dir} is already as it was at revision {rev}"
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
            f"; undo with `memd restore --all --project {memory_dir}"
            f" --rev {plan.before_rev}`"
        )
    print(f"restored {len(plan.steps)} file(s) to revision {rev}{undo}")
    return 0


def _restore_loss(state_dir: str, rev: int, *, dry_run: bool) -> int:
    from memd.errors import UsageError
    from memd.history.restore import RestoreError, restore_loss

    if not os.path.exists(os.path.join(state_dir, "history")):
        raise UsageError("no history recorded yet")
    try:
        plan = restore_loss(state_dir, rev, dry_run=dry_run)
    except RestoreError as error:
        raise UsageError(str(error)) from None
    for relpath, why in plan.left_alone:
        print(f"memd: {relpath}: {why}", file=sys.stderr)
    if dry_run:
        sys.stdout.write(plan.diff or "nothing to restore: it is already back\n")
        return 0
    if not plan.steps:
        print(f"nothing to restore: what loss {rev} took is already back")
        return 0
    for relpath_done, action in plan.steps:
        print(f"{action:<7} {relpath_done}")
    print(f"restored {len(plan.steps)} file(s) that loss {rev} took")
    return 0
