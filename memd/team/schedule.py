"""What the daemon calls to sync team memory: `sync_teams` over its memory dirs.

The scheduler (`memd.kairos.scheduler`) calls it on an interval and a few
seconds after a change under a ``team/`` folder settles. A directory is
synced when its next attempt is due: on the interval after a good sync, and
after an exponential backoff while the remote is unreachable (a settled
change does not shorten a backoff, so a dead remote is not hammered).
"""

from __future__ import annotations

import os
import time

from memd.gitsync.backoff import should_sync
from memd.gitsync.lintgate import lint_errors_for
from memd.gitsync.repo import is_repo
from memd.team.state import record_result, sync_record
from memd.team.sync import sync_team

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.gitsync.result import SyncResult

REASONS = ("interval", "settled", "startup")


def team_dirs(memory_dirs: Iterable[str]) -> tuple[str, ...]:
    """Return the team dirs under `memory_dirs` that `memd team init` set up."""
    found = (os.path.join(memory_dir, "team") for memory_dir in memory_dirs)
    return tuple(team_dir for team_dir in found if is_repo(team_dir))


def is_team_change(relpath: str) -> bool:
    """Return True for a change (relpath in a memory dir) a team sync should follow.

    Files under ``team/`` count; git's own writes (``team/.git/...``) and other
    hidden files do not, so a sync never triggers the next one.
    """
    parts = relpath.split("/")
    return (
        len(parts) > 1
        and parts[0] == "team"
        and not any(part.startswith(".") for part in parts[1:])
    )


def sync_teams(
    memory_dirs: Iterable[str],
    config: Config,
    *,
    log: FilteringBoundLogger,
    reason: str = "interval",
    now: float | None = None,
) -> tuple[SyncResult, ...]:
    """Sync every shared team dir under `memory_dirs` that is due; return the results.

    A dream holding a directory's `.consolidate-lock` makes that sync a
    "skipped" result; the next trigger tries again.
    """
    results = []
    for team_dir in team_dirs(memory_dirs):
        started = time.time() if now is None else now
        if not should_sync(sync_record(config.state_dir, team_dir), started, reason):
            continue
        result = sync_team(
            team_dir,
            branch=config.team_branch,
            timeout_seconds=config.team_git_timeout_seconds,
            log=log.bind(reason=reason),
            lint_errors=lint_errors_for(config),
            secret_allow=frozenset(config.sync_allow),
        )
        if result.state != "skipped":
            record_result(
                config.state_dir,
                result,
                now=started,
                interval_seconds=config.team_interval_seconds,
            )
        results.append(result)
    return tuple(results)


def team_summary(state_dir: str) -> dict[str, dict[str, object]]:
    """Return each synced team dir's last result and the conflicts still waiting.

    For `memd status`: state, last sync, error, failures, next attempt, the
    files left out of the last commit and the conflict copies that still exist.
    """
    from memd.state import read_state
    from memd.team.conflicts import pending_conflicts
    from memd.team.state import STATE_FILE

    summary: dict[str, dict[str, object]] = {}
    for team_dir, record in read_state(state_dir, STATE_FILE).items():
        if not isinstance(record, dict) or not is_repo(team_dir):
            continue
        keep = ("state", "last_sync", "error", "failures", "next_attempt", "left_out")
        entry: dict[str, object] = {key: record.get(key) for key in keep}
        entry["conflicts"] = list(pending_conflicts(team_dir))
        summary[team_dir] = entry
    return summary
