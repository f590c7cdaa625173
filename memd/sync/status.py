"""Personal sync's state as data: what `memd sync status` and `memd status` show.

`summary(config)` reads the last result (``sync.json``), the remote's URL
(redacted) and resolves every known project, as the next sync would; it
never reaches the network.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.config import Config

HOW_TO_ADD = (
    "run `memd sync` inside a project, or pin it under [sync.projects] in config.toml"
)


def summary(config: Config) -> dict[str, object]:
    """Return personal sync's state: on/off, remote, last result, projects.

    Keys: ``enabled``; and when enabled ``remote``, ``branch``, ``state``
    (the last result's, or None before the first), ``last_sync``,
    ``last_attempt``, ``next_attempt`` (epoch seconds or None), ``error``,
    ``projects`` (a list of ``{"identity", "memory_dir", "root"}``),
    ``not_synced`` and ``left_out`` (``[where, why]`` pairs), ``not_seen``,
    ``skipped`` and ``how_to_add``.
    """
    from memd.sync.engine import is_enabled, remote_of
    from memd.sync.schedule import project_roots, resolve_projects, sync_record

    if not is_enabled(config.state_dir):
        return {"enabled": False, "how_to_enable": "memd sync init --remote URL"}
    record = sync_record(config.state_dir)
    projects, skipped = resolve_projects(config, project_roots(config))

    def stamp(key: str) -> float | None:
        value = record.get(key)
        return float(value) if isinstance(value, int | float) else None

    def pairs(key: str) -> list[list[str]]:
        value = record.get(key)
        return [
            [str(item[0]), str(item[1])]
            for item in (value if isinstance(value, list) else ())
            if isinstance(item, list) and len(item) == 2
        ]

    def names(key: str) -> list[str]:
        value = record.get(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    state = record.get("state")
    error = record.get("error")
    return {
        "enabled": True,
        "remote": remote_of(config.state_dir, config.team_git_timeout_seconds),
        "branch": config.sync_branch,
        "state": state if isinstance(state, str) else None,
        "last_sync": stamp("last_sync"),
        "last_attempt": stamp("last_attempt"),
        "next_attempt": stamp("next_attempt"),
        "error": error if isinstance(error, str) else None,
        "projects": [
            {"identity": p.identity, "memory_dir": p.memory_dir, "root": p.project_root}
            for p in projects
        ],
        "not_synced": [[where, why] for where, why in skipped],
        "left_out": pairs("left_out"),
        "not_seen": names("not_seen"),
        "skipped": pairs("skipped"),
        "how_to_add": HOW_TO_ADD,
    }


def summary_lines(data: dict[str, object]) -> tuple[str, ...]:
    """Return `summary`'s data as the lines of `memd sync status`.

    Projects by their folder (`~/code/webshop`), times local and short.
    """
    import time

    from memd.claude_code.paths import home_dir
    from memd.projects.naming import tilde
    from memd.times import clock

    if not data.get("enabled"):
        return ("personal sync: off (run `memd sync init --remote URL`)",)

    def when(key: str) -> str:
        value = data.get(key)
        if not isinstance(value, float):
            return "never"
        return clock(value, now=time.time())  # local, as `--at` reads it (#42)

    lines = [
        "personal sync: on",
        f"  remote: {data.get('remote') or 'none'}",
        f"  branch: {data.get('branch')}",
        f"  last sync: {when('last_sync')} ({data.get('state') or 'never run'})",
    ]
    if data.get("error"):
        lines.append(f"  last error: {data.get('error')}")
    projects = data.get("projects")
    projects = projects if isinstance(projects, list) else []
    lines.append(f"  projects: {len(projects)} known")
    for project in projects:
        where = project.get("root") or project["memory_dir"]
        lines.append(
            f"  project {project['identity']}: {tilde(str(where), home_dir())}"
        )
    for key, label in (
        ("not_synced", "not synced"),
        ("left_out", "left out"),
        ("skipped", "skipped from the remote"),
    ):
        items = data.get(key)
        for where, why in items if isinstance(items, list) else ():
            lines.append(f"  {label} {where}: {why}")
    not_seen = data.get("not_seen")
    for path in not_seen if isinstance(not_seen, list) else ():
        lines.append(f"  not seen {path}: kept (past the scan's limits here)")
    lines.append(f"  to add a project: {HOW_TO_ADD}")
    return tuple(lines)
