"""What `memd sync` and `memd run` call: the known projects, then one sync.

The projects are every project root memd knows on this machine: those
`memd prompt --project` and the hooks have been asked about (the state
dir's projects.json), ``watch.projects`` and the ``[sync.projects]`` keys.
Each is resolved as the agent in force resolves it, so memory is synced
with the directory the agent reads; one with auto memory off, or with no
identity, is reported and left alone.

The daemon syncs on an interval and `sync_settle_seconds` after a save in a
memory dir (`is_personal_change`), through the scheduler's git-sync jobs
(`job_interval_seconds` picks their period), with team sync's backoff
rules (`memd.gitsync.backoff.should_sync`). The last result is ``sync.json``
in the state dir.
"""

from __future__ import annotations

import os
import time

from memd.gitsync.backoff import backoff_seconds, should_sync
from memd.sync.engine import PersonalResult, Project, is_enabled, sync_personal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config

STATE_FILE = "sync"


def project_roots(config: Config) -> tuple[str, ...]:
    """Return every project root memd knows here, in a stable order."""
    from memd.state import known_projects

    roots = [*known_projects(config.state_dir), *config.watch_projects]
    roots += list(config.sync_projects)
    return tuple(dict.fromkeys(os.path.normpath(r) for r in roots if r))


def resolve_projects(
    config: Config, roots: Iterable[str]
) -> tuple[tuple[Project, ...], tuple[tuple[str, str], ...]]:
    """Return the syncable projects among `roots`, and (root, why) for the rest."""
    from memd.claude_code.choice import resolve_in_force
    from memd.claude_code.paths import project_root_of
    from memd.sync.identity import project_identity

    projects: list[Project] = []
    skipped: list[tuple[str, str]] = []
    for raw in roots:
        if not os.path.isdir(raw):
            skipped.append((raw, "no such directory"))
            continue
        root = project_root_of(raw)
        location = resolve_in_force(root, config)
        if not location.enablement.enabled:
            skipped.append((raw, f"auto memory is off ({location.enablement.reason})"))
            continue
        identity = project_identity(root, config.sync_projects)
        if identity is None:
            skipped.append(
                (raw, "no identity: no remote, no commit, no [sync.projects] entry")
            )
            continue
        memory_dir = location.memory_dir.rstrip(os.sep) or os.sep
        projects.append(Project(identity.identity, memory_dir, root))
    return tuple(projects), tuple(skipped)


def team_urls(config: Config, memory_dirs: Iterable[str]) -> tuple[str, ...]:
    """Return every team remote memd knows: config's and each team dir's origin."""
    from memd.gitsync.repo import is_repo, remote_url

    urls = list(config.team_remotes.values())
    for memory_dir in memory_dirs:
        team_dir = os.path.join(memory_dir, "team")
        if is_repo(team_dir):
            from memd.gitsync.git import GitError

            try:
                url = remote_url(team_dir, config.team_git_timeout_seconds)
            except GitError:
                continue
            if url:
                urls.append(url)
    return tuple(urls)


def run_sync(
    config: Config,
    *,
    log: FilteringBoundLogger,
    now: float | None = None,
    allow_deletes: bool = False,
) -> PersonalResult:
    """Sync every known project now and record the result; see `sync_personal`."""
    from memd.errors import UsageError
    from memd.gitsync.lintgate import lint_errors_for
    from memd.sync.engine import _same_remote, remote_of

    projects, skipped = resolve_projects(config, project_roots(config))
    remote = remote_of(config.state_dir, config.team_git_timeout_seconds)
    if remote and _same_remote(
        remote, team_urls(config, [p.memory_dir for p in projects])
    ):
        raise UsageError(
            "the personal remote is also a team remote; personal sync refuses "
            "to push there (run `memd sync init` with a private repository)"
        )
    started = time.time() if now is None else now
    result = sync_personal(
        config.state_dir,
        projects,
        branch=config.sync_branch,
        timeout_seconds=config.team_git_timeout_seconds,
        log=log,
        lint_errors=lint_errors_for(config),
        allow=frozenset(config.sync_allow),
        max_file_bytes=config.max_topic_file_bytes,
        allow_deletes=allow_deletes,
    )
    result = PersonalResult(
        sync=result.sync,
        projects=result.projects,
        attached=result.attached,
        shared=result.shared,
        not_synced=(*skipped, *result.not_synced),
    )
    if result.sync.state != "skipped":
        record_result(config, result, now=started)
    return result


def record_result(config: Config, result: PersonalResult, *, now: float) -> None:
    """Store `result` in sync.json with the next attempt (interval or backoff)."""
    from memd.state import read_state, write_state

    data = read_state(config.state_dir, STATE_FILE)
    failures = data.get("failures", 0)
    failures = failures if isinstance(failures, int) else 0
    data.update(result.to_dict())
    data["last_attempt"] = now
    if result.sync.state == "synced":
        data.update(last_sync=now, failures=0)
        data["next_attempt"] = now + config.sync_interval_seconds
    else:
        failures += 1
        data["failures"] = failures
        data["next_attempt"] = now + backoff_seconds(
            failures, config.sync_interval_seconds
        )
    write_state(config.state_dir, STATE_FILE, data)


def sync_record(state_dir: str) -> dict[str, object]:
    """Return the last personal sync's record ({} before the first)."""
    from memd.state import read_state

    return read_state(state_dir, STATE_FILE)


def is_personal_change(relpath: str) -> bool:
    """Return True for a save (relpath in a memory dir) personal sync should follow."""
    parts = relpath.split("/")
    return (
        parts[0] != "team"
        and relpath.endswith(".md")
        and not any(part.startswith(".") for part in parts)
    )


def job_interval_seconds(config: Config) -> float:
    """Return the period of the scheduler's git-sync job: the shorter of the two."""
    if not is_enabled(config.state_dir):
        return config.team_interval_seconds
    return min(config.team_interval_seconds, config.sync_interval_seconds)


def job_settle_seconds(config: Config) -> float:
    """Return how long after a save the git-sync job runs."""
    if not is_enabled(config.state_dir):
        return config.team_settle_seconds
    return min(config.team_settle_seconds, config.sync_settle_seconds)


def sync_if_due(
    config: Config,
    *,
    log: FilteringBoundLogger,
    reason: str = "interval",
    now: float | None = None,
) -> PersonalResult | None:
    """Run `run_sync` when personal sync is on and due; return its result or None.

    What the daemon's git-sync job calls. A failure of any kind is logged and
    returned as None: the next trigger tries again.
    """
    from memd.errors import MemdError

    if not is_enabled(config.state_dir):
        return None
    started = time.time() if now is None else now
    if not should_sync(sync_record(config.state_dir), started, reason):
        return None
    try:
        return run_sync(config, log=log.bind(reason=reason), now=started)
    except (MemdError, OSError) as error:
        log.warning("personal_sync_failed", error=str(error))
        return None


def dream_night(config: Config, now: object) -> str:
    """Return the night a dream at `now` belongs to: its local date, ISO."""
    import datetime as dt

    if not isinstance(now, dt.datetime):
        now = dt.datetime.now(dt.UTC)
    if config.dream_timezone:
        import zoneinfo

        now = now.astimezone(zoneinfo.ZoneInfo(config.dream_timezone))
    else:
        now = now.astimezone()
    return now.date().isoformat()


def may_dream_here(
    config: Config, memory_dir: str, now: object, *, log: FilteringBoundLogger
) -> bool:
    """What the dream scheduler asks before a dream: see `memd.sync.claims.may_dream`.

    Any failure answers True: a dream on two machines merges like any edit,
    a dream on none loses a night.
    """
    from memd.errors import MemdError
    from memd.sync.claims import may_dream

    if not is_enabled(config.state_dir):
        return True
    try:
        return may_dream(
            config.state_dir,
            memory_dir,
            dream_night(config, now),
            branch=config.sync_branch,
            timeout_seconds=config.team_git_timeout_seconds,
            sync=lambda: run_sync(config, log=log.bind(reason="dream-claim")),
        )
    except (MemdError, OSError) as error:
        log.warning("dream_claim_failed", memory_dir=memory_dir, error=str(error))
        return True
