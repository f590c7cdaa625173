"""`memd team`: share a project's team memory through a git remote.

``init --remote URL`` makes `memory/team/` a working tree of the remote and
syncs once; ``sync`` commits what lints, merges and pushes; ``status`` shows
the remote, the branch, ahead/behind, the last sync and waiting conflicts.
A sync (or an init) that cannot reach the remote exits 1 with one line; usage
errors and a refused URL exit 2. A failed init leaves the team dir as it was.
"""

from __future__ import annotations

from memd.cli.commands._options import (
    add_project_argument,
    add_verbose_argument,
    configure_command_logs,
    project_dir,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.config import Config
    from memd.gitsync.result import SyncResult


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    init = sub.add_parser(
        "init", help="make the team dir a working tree of a remote, then sync"
    )
    init.add_argument(
        "--remote",
        metavar="URL",
        default=None,
        help="git remote (default: [team.remotes] in config.toml for the project)",
    )
    add_project_argument(init, "whose team memory to share")
    status = sub.add_parser("status", help="show remote, branch, last sync, conflicts")
    add_project_argument(status, "whose team memory to show")
    sync = sub.add_parser("sync", help="commit, fetch, merge and push now")
    add_project_argument(sync, "whose team memory to sync")
    add_allow_deletes(sync)
    for command in (parser, init, status, sync):
        add_verbose_argument(command)


def add_allow_deletes(parser: argparse.ArgumentParser) -> None:
    """The flag a sync that would delete many files asks for."""
    parser.add_argument(
        "--allow-deletes",
        action="store_true",
        help="let this sync delete more than 3 files, or most of a project's",
    )


def run(args: argparse.Namespace) -> int:
    from memd.config import load_config

    config = load_config()
    configure_command_logs(config, args)
    project = project_dir(args)
    if args.team_command == "init":
        return _init(args, config, project)
    if args.team_command == "sync":
        return _sync(config, project, allow_deletes=args.allow_deletes)
    return _status(config, project)


def team_dir_of(config: Config, project: str) -> str:
    """Return the team directory of the project at `project`, as the agent in force."""
    import os

    from memd.claude_code.choice import resolve_in_force
    from memd.claude_code.paths import project_root_of

    location = resolve_in_force(project_root_of(project), config)
    return os.path.join(location.memory_dir, "team")


def _configured_remote(config: Config, project: str) -> str | None:
    import os

    from memd.claude_code.choice import in_force
    from memd.claude_code.gitroot import find_canonical_git_root
    from memd.claude_code.paths import project_root_of

    root = project_root_of(project)
    canonical = find_canonical_git_root(root, profile=in_force(config).profile)
    for candidate in (os.path.abspath(project), root, canonical):
        if candidate and candidate in config.team_remotes:
            return config.team_remotes[candidate]
    return None


def _init(args: argparse.Namespace, config: Config, project: str) -> int:
    import sys

    from memd.errors import UsageError
    from memd.gitsync.git import GitError
    from memd.gitsync.repo import init_repo
    from memd.logconfig import get_logger

    remote = args.remote or _configured_remote(config, project)
    if not remote:
        raise UsageError(
            "no remote: pass --remote URL or set [team.remotes] for this project"
        )
    _refuse_the_personal_remote(config, remote)
    team_dir = team_dir_of(config, project)
    try:
        init_repo(
            team_dir,
            remote,
            branch=config.team_branch,
            timeout_seconds=config.team_git_timeout_seconds,
            log=get_logger(component="team"),
        )
    except GitError as error:
        if not error.is_network:
            raise
        # Nothing was set up (init_repo leaves no .git): say so, exit as offline.
        print(f"memd: {error}; {team_dir} was left as it was", file=sys.stderr)
        return 1
    return _sync(config, project)


def _refuse_the_personal_remote(config: Config, remote: str) -> None:
    """A private remote is never a team remote, however either is spelled."""
    from memd.errors import UsageError
    from memd.gitsync.git import is_same_remote, redact
    from memd.sync.engine import remote_of

    personal = remote_of(config.state_dir, config.team_git_timeout_seconds)
    if personal and is_same_remote(remote, [personal]):
        raise UsageError(
            f"{redact(remote)} is your personal sync remote; team memory never "
            "goes there (use the team's repository)"
        )


def _sync(config: Config, project: str, *, allow_deletes: bool = False) -> int:
    import time

    from memd.logconfig import get_logger
    from memd.team.state import record_result
    from memd.team.sync import sync_team

    team_dir = team_dir_of(config, project)
    log = get_logger(component="team")
    from memd.gitsync.lintgate import lint_errors_for

    result = sync_team(
        team_dir,
        branch=config.team_branch,
        timeout_seconds=config.team_git_timeout_seconds,
        log=log,
        lint_errors=lint_errors_for(config),
        secret_allow=frozenset(config.sync_allow),
        allow_deletes=allow_deletes,
    )
    record_result(
        config.state_dir,
        result,
        now=time.time(),
        interval_seconds=config.team_interval_seconds,
    )
    for line in describe_result(result):
        print(line)
    return 0 if result.ok else 1


def describe_result(result: SyncResult) -> tuple[str, ...]:
    """Return the lines `memd team sync` prints for `result`."""
    lines = [f"{result.team_dir}: {result.state}" + _detail(result)]
    lines += [f"  committed {path}" for path in result.committed]
    lines += [f"  left out {path}: {why}" for path, why in result.left_out]
    lines += [f"  conflict: theirs written as {copy}" for copy in result.conflicts]
    lines += [f"  kept {path} (deleted on one side)" for path in result.kept]
    lines += [f"  deleted {path} (deleted on the remote)" for path in result.deleted]
    lines += [
        f"  not seen {path}: kept (past the scan's limits here)"
        for path in result.not_seen
    ]
    lines += [
        f"  skipped from the remote {path!r}: {why}" for path, why in result.skipped
    ]
    return tuple(lines)


def _detail(result: SyncResult) -> str:
    if result.error:
        return f" ({result.error})"
    if result.push_retries:
        return f" (pushed after {result.push_retries} re-merge(s))"
    return ""


def _status(config: Config, project: str) -> int:
    for line in status_lines(config, team_dir_of(config, project)):
        print(line)
    return 0


def status_lines(config: Config, team_dir: str) -> tuple[str, ...]:
    """Return the lines describing one team dir's sync (for `memd status` too)."""
    import time

    from memd.gitsync.git import GitError
    from memd.gitsync.repo import ahead_behind, is_repo, remote_url
    from memd.team.conflicts import conflict_messages
    from memd.team.state import sync_record
    from memd.times import clock

    if not is_repo(team_dir):
        return (f"{team_dir}: not shared (run `memd team init --remote URL`)",)
    timeout = config.team_git_timeout_seconds
    record = sync_record(config.state_dir, team_dir)
    try:
        counts = ahead_behind(team_dir, config.team_branch, timeout)
        url = remote_url(team_dir, timeout)
    except GitError as error:
        counts, url = None, f"unknown ({error})"
    lines = [
        f"{team_dir}:",
        f"  remote: {url or 'none'}",
        f"  branch: {config.team_branch}",
        "  ahead/behind: "
        + (f"{counts[0]}/{counts[1]}" if counts else "unknown (not synced yet)"),
    ]

    def when(key: str) -> str:
        stamp = record.get(key)
        if not isinstance(stamp, int | float):
            return "never"
        return clock(stamp, now=time.time())  # local, as `--at` reads it (#42)

    lines.append(f"  last sync: {when('last_sync')}")
    state = record.get("state")
    if state in ("offline", "failed"):
        lines.append(
            f"  remote unreachable: {record.get('error')} "
            f"({record.get('failures')} failure(s); next try {when('next_attempt')})"
            if state == "offline"
            else f"  last sync failed: {record.get('error')}"
        )
    left_out = record.get("left_out")
    if isinstance(left_out, list):
        lines += [
            f"  left out: {item[0]}: {item[1]}" for item in left_out if len(item) == 2
        ]
    conflicts = conflict_messages(team_dir)
    lines.append(f"  conflicts waiting: {len(conflicts)}")
    lines += [f"    {message}" for message in conflicts]
    return tuple(lines)
