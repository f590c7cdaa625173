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
    sub = parser.add_subparsers(dest="sync_command", metavar="ACTION")
    init = sub.add_parser("init", help="turn personal sync on with a remote, then sync")
    init.add_argument(
        "--remote",
        metavar="URL",
        default=None,
        help="your private git remote (default: sync.remote in config.toml)",
    )
    sub.add_parser(
        "status", help="show the remote, projects, last sync, left-out files"
    )
    now = sub.add_parser("now", help="sync now (the same as `memd sync`)")
    from memd.cli.commands._options import add_verbose_argument

    for command in (parser, init, now):
        add_verbose_argument(command)


def run(args: argparse.Namespace) -> int:
    from memd.cli.commands._options import configure_command_logs
    from memd.config import load_config

    config = load_config()
    configure_command_logs(config, args)
    if args.sync_command == "init":
        return _init(args, config)
    if args.sync_command == "status":
        for line in status_lines(config):
            print(line)
        return 0
    return _sync(config)


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
    return _sync(config)


def _sync(config: Config) -> int:
    from memd.logconfig import get_logger
    from memd.sync.schedule import run_sync

    result = run_sync(config, log=get_logger(component="sync"))
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
    lines += [f"  not synced {where}: {why}" for where, why in result.not_synced]
    return tuple(lines)


def status_lines(config: Config) -> tuple[str, ...]:
    """Return the lines of `memd sync status`."""
    import datetime

    from memd.sync.engine import is_enabled, remote_of
    from memd.sync.schedule import project_roots, resolve_projects, sync_record

    if not is_enabled(config.state_dir):
        return ("personal sync: off (run `memd sync init --remote URL`)",)
    record = sync_record(config.state_dir)

    def when(key: str) -> str:
        stamp = record.get(key)
        if not isinstance(stamp, int | float):
            return "never"
        moment = datetime.datetime.fromtimestamp(stamp).astimezone()
        return moment.isoformat(timespec="seconds")

    url = remote_of(config.state_dir, config.team_git_timeout_seconds)
    lines = [
        "personal sync: on",
        f"  remote: {url or 'none'}",
        f"  branch: {config.sync_branch}",
        f"  last sync: {when('last_sync')} ({record.get('state', 'never run')})",
    ]
    if record.get("error"):
        lines.append(f"  last error: {record.get('error')}")
    projects, skipped = resolve_projects(config, project_roots(config))
    for project in projects:
        lines.append(f"  project {project.identity}: {project.memory_dir}")
    lines += [f"  not synced {where}: {why}" for where, why in skipped]
    left_out = record.get("left_out")
    for item in left_out if isinstance(left_out, list) else ():
        if isinstance(item, list) and len(item) == 2:
            lines.append(f"  left out {item[0]}: {item[1]}")
    return tuple(lines)
