"""`memd restore`: bring back a memory file, or a whole memory directory, from history.

    memd restore FILE [--at WHEN | --rev REV] [--dry-run]
    memd restore --all [--project DIR] --at WHEN | --rev REV [--dry-run]
    memd restore --loss REV [--dry-run]

`--loss REV` brings back exactly what the loss REV (as `memd status` names
it) took, each file as it was just before, and nothing else.

FILE as the agent names it (`feedback_tests.md`, in the project's memory
directory) or as a path. Without `--at` or `--rev`, FILE comes back as it was
before its newest change (git's habit), and the command says which version.
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
    from memd.history.restore import RestorePlan
    from memd.history.store import History
    from memd.projects.naming import ProjectNames


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        metavar="FILE",
        help="the memory file to bring back, as the agent names it "
        "(feedback_tests.md) or a path; it may be deleted now. Alone: its "
        "version before its newest change",
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
    when.add_argument("--rev", metavar="REV", help="as it was after change REV")
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


def _names(memory_dir: str, config: Config) -> ProjectNames:
    """What `memory_dir` is called: its project's folder (memd.projects)."""
    from memd.projects.roots import load_project_names

    return load_project_names([memory_dir], config=config)


def run(args: argparse.Namespace) -> int:
    from memd.cli.commands.history import (
        history_errors,
        loss_revision,
        parse_rev,
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
        return _restore_loss(
            config.state_dir, loss_revision(args.loss), dry_run=args.dry_run
        )
    if args.all == (args.path is not None):
        raise UsageError("give a FILE or --all (not both)")
    if args.all and args.at is None and args.rev is None:
        raise UsageError(
            "say which version: --at WHEN or --rev REV (--loss REV: what a loss took)"
        )
    rev = None if args.rev is None else parse_rev(args.rev, "--rev")
    if not os.path.exists(os.path.join(config.state_dir, "history")):
        raise UsageError("no history recorded yet")
    with history_errors(config.state_dir), History.open(config.state_dir) as history:
        memory_dir, relpath = resolve_target(args.path, args.project, config, history)
        if args.at is not None:
            when = parse_when_arg(args.at, "--at")
            rev = _rev_at(history, memory_dir, when, _names(memory_dir, config))
    with history_errors(config.state_dir):
        try:
            if relpath is None:
                plan = restore_all(
                    config.state_dir,
                    memory_dir,
                    rev=rev,  # type: ignore[arg-type]  # --all has --at or --rev
                    dry_run=args.dry_run,
                )
            else:
                plan = restore_file(
                    config.state_dir,
                    memory_dir,
                    relpath,
                    rev=rev,
                    dry_run=args.dry_run,
                )
        except RestoreError as error:
            raise UsageError(str(error)) from None
        if rev is None:  # say which version "before its newest change" is
            with History.open(config.state_dir) as history:
                print(_which(history, plan))
    return _report(plan, args.dry_run, _names(memory_dir, config))


def _rev_at(history: History, memory_dir: str, when: float, names: ProjectNames) -> int:
    import time

    from memd.errors import UsageError
    from memd.times import clock

    found = history.rev_at(memory_dir, when)
    if found is None:
        stamp = clock(when, now=time.time())
        label = names.both(memory_dir)
        raise UsageError(f"no history of {label} at or before {stamp}")
    return found


def _which(history: History, plan: RestorePlan) -> str:
    """ "a.md: the version of revision 41 (today 00:14:03), before its newest
    change (revision 42)"."""
    import time

    from memd.times import clock

    change = history.change(plan.rev)
    stamp = "" if change is None else f" ({clock(change.at, now=time.time())})"
    newest = history.changes(plan.memory_dir, relpath=plan.relpath, limit=3)
    after = [c.rev for c in newest if plan.rev < c.rev <= plan.before_rev]
    tail = f", before its newest change (revision {after[0]})" if after else ""
    return f"{plan.relpath}: the version of revision {plan.rev}{stamp}{tail}"


def _report(plan: RestorePlan, dry_run: bool, names: ProjectNames) -> int:
    import shlex

    if dry_run:
        sys.stdout.write(plan.diff or "nothing to restore: it is already as it was\n")
        return 0
    if not plan.steps:
        what = plan.relpath or names.label(plan.memory_dir)
        print(f"nothing to restore: {what} is already as it was at revision {plan.rev}")
        return 0
    done = plan.done
    for relpath_done, action in done:
        print(f"{action:<7} {relpath_done}")
    for relpath_left, why in plan.left:
        print(f"memd: not restored: {relpath_left}: {why}", file=sys.stderr)
    undo = ""
    if plan.change is not None and done:
        if plan.relpath is not None:  # that file alone
            undo = (
                f"; undo with `memd restore {shlex.quote(plan.relpath)} --project "
                f"{names.project_arg(plan.memory_dir)} --rev {plan.before_rev}`"
            )
        else:
            undo = (
                f"; undo with `memd restore --all --project "
                f"{names.project_arg(plan.memory_dir)} --rev {plan.before_rev}`"
            )
    count = f"{len(done)} of {len(plan.steps)}" if plan.left else str(len(done))
    files = "file" if len(plan.steps) == 1 else "files"
    print(f"restored {count} {files} to revision {plan.rev}{undo}")
    return 1 if plan.left else 0


def _restore_loss(state_dir: str, rev: int, *, dry_run: bool) -> int:
    from memd.cli.commands.history import history_errors
    from memd.errors import UsageError
    from memd.history.restore import RestoreError, restore_loss

    if not os.path.exists(os.path.join(state_dir, "history")):
        raise UsageError("no history recorded yet")
    with history_errors(state_dir):
        try:
            plan = restore_loss(state_dir, rev, dry_run=dry_run)
        except RestoreError as error:
            raise UsageError(str(error)) from None
    for relpath, why in plan.left:
        print(f"memd: {relpath}: {why}", file=sys.stderr)
    if dry_run:
        sys.stdout.write(plan.diff or "nothing to restore: it is already back\n")
        return 0
    if not plan.steps:
        print(f"nothing to restore: what loss {rev} took is already back")
        return 0
    for relpath_done, action in plan.done:
        print(f"{action:<7} {relpath_done}")
    files = "file" if len(plan.done) == 1 else "files"
    print(f"restored {len(plan.done)} {files} that loss {rev} took")
    return 0
