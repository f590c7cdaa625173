"""`memd sync`: your own memory, for every project, through your own git remote.

``init --remote URL`` turns personal sync on (it is off until then) and
syncs once; ``memd sync`` syncs now; ``status`` shows the remote, each
project's identity and memory dir, the last result, and every file left out
with why (a likely secret with its file, line and fingerprint). A sync that
cannot reach the remote exits 1 with one line; usage errors exit 2.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.config import Config
    from memd.sync.engine import PersonalResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from memd.cli.commands.team import add_allow_deletes

    add_allow_deletes(parser)
    sub = parser.add_subparsers(dest="sync_command", metavar="ACTION")
    init = sub.add_parser("init", help="turn personal sync on with a remote, then sync")
    init.add_argument(
        "--remote",
        metavar="URL",
        default=None,
        help="your private git remote (default: sync.remote in config.toml)",
    )
    add_allow_deletes(init)
    sub.add_parser(
        "status", help="show the remote, projects, last sync, left-out files"
    )
    now = sub.add_parser("now", help="sync now (the same as `memd sync`)")
    add_allow_deletes(now)
    from memd.cli.commands._options import add_verbose_argument

    for command in (parser, init, now):
        add_verbose_argument(command)


def run(args: argparse.Namespace) -> int:
    from memd.cli.commands._options import configure_command_logs
    from memd.config import load_config

    config = load_config()
    configure_command_logs(config, args)
    if args.sync_command == "status":
        for line in status_lines(config):
            print(line)
        return 0
    _stop_on_sigterm()
    _remember_here(config)
    if args.sync_command == "init":
        return _init(args, config)
    return _sync(config, allow_deletes=args.allow_deletes)


def _stop_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so each running git's group is killed first.

    The SessionStart hook stops a slow `memd sync` this way; `memd.gitsync.git`
    kills git's whole process group on any exception.
    """
    import signal
    import sys

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def _remember_here(config: Config) -> None:
    """Make the project `memd sync` runs inside known, so it is synced from now on."""
    import os

    from memd.claude_code.paths import project_root_of
    from memd.state import remember_project
    from memd.sync.schedule import resolve_projects

    try:
        root = project_root_of(os.getcwd())
    except OSError:
        return
    projects, _ = resolve_projects(config, [root])
    if projects:  # a project with an identity; never a stray directory
        remember_project(config.state_dir, root)


def _init(args: argparse.Namespace, config: Config) -> int:
    from memd.errors import UsageError
    from memd.logconfig import get_logger
    from memd.sync.engine import init_personal
    from memd.sync.schedule import project_roots, resolve_projects, team_urls

    remote = args.remote or config.sync_remote
    if not remote:
        raise UsageError("no remote: pass --remote URL or set sync.remote")
    projects, _ = resolve_projects(config, project_roots(config))
    init_personal(
        config.state_dir,
        remote,
        branch=config.sync_branch,
        timeout_seconds=config.team_git_timeout_seconds,
        log=get_logger(component="sync"),
        team_urls=team_urls(config, [p.memory_dir for p in projects]),
    )
    return _sync(config, allow_deletes=args.allow_deletes)


def _sync(config: Config, *, allow_deletes: bool = False) -> int:
    from memd.logconfig import get_logger
    from memd.sync.schedule import run_sync

    result = run_sync(
        config, log=get_logger(component="sync"), allow_deletes=allow_deletes
    )
    for line in describe_result(result):
        print(line)
    return 0 if result.sync.ok else 1


def describe_result(result: PersonalResult) -> tuple[str, ...]:
    """Return the lines `memd sync` prints for `result`."""
    from memd.cli.commands.team import describe_result as describe_team

    lines = list(describe_team(result.sync))
    lines += [
        f"  received {identity} (first sync here)" for identity in result.attached
    ]
    lines += [
        f"  shared {identity} (the first machine to sync it)"
        for identity in result.shared
    ]
    lines += [f"  not synced {where}: {why}" for where, why in result.not_synced]
    return tuple(lines)


def status_lines(config: Config) -> tuple[str, ...]:
    """Return the lines of `memd sync status` (`memd.sync.status.summary`)."""
    from memd.sync.status import summary, summary_lines

    return summary_lines(summary(config))
