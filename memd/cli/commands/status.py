"""`memd status`: is the daemon running, what it watches, how healthy it is.

Works with the daemon up or down: the lock says whether a daemon process
exists, a ping over its socket (with a deadline) and its heartbeat whether it
answers (memd.daemon.liveness), and `daemon.json` in the state directory what
it last saw. Exit status: 0 when the daemon runs and answers, `EXIT_NO_DAEMON`
when none runs or it does not answer (the text names how to start one).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.config import Config
    from memd.projects.naming import ProjectNames


EXIT_NO_DAEMON = 3  # as `systemctl status` for a unit that is not active


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add `--format text|json`."""
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format"
    )


def collect_status(now: float | None = None) -> dict[str, object]:
    """Return running, pid, uptime, directories, counters and dreams."""
    import os
    import time

    from memd.claude_code.choice import in_force
    from memd.config import load_config
    from memd.daemon.liveness import check_liveness
    from memd.state import read_state

    config = load_config()
    now = time.time() if now is None else now
    choice = in_force(config)
    liveness = check_liveness(config.state_dir, os.environ)
    running = liveness.state != "not running"
    saved = read_state(config.state_dir, "daemon.json")
    pid = liveness.pid if running else saved.get("pid")
    started = saved.get("started")
    dirs_in = saved.get("dirs")
    dirs: dict[str, object] = {}
    dreams = _dream_status(config.state_dir)
    names = _project_names(dirs_in, config)
    for path, info in dirs_in.items() if isinstance(dirs_in, dict) else ():
        entry = dict(info) if isinstance(info, dict) else {}
        entry["project"] = names.label(path)
        entry["project_roots"] = list(names.roots_of(path))
        snapshots = entry.get("snapshots")
        if isinstance(snapshots, dict) and snapshots:
            newest = max(float(t) for t in snapshots.values())
            entry["snapshot_age_seconds"] = round(max(0.0, now - newest), 1)
        entry["last_dream"] = dreams.get(os.path.realpath(path)) or dreams.get(path)
        dirs[path] = entry
    return {
        "running": running,
        "responding": liveness.ok,
        "liveness": liveness.state,
        "not_responding_since": liveness.since,
        "liveness_detail": liveness.detail,
        "pid": pid,
        "uptime_seconds": (
            round(now - started, 1)
            if running and isinstance(started, int | float)
            else None
        ),
        "state_dir": config.state_dir,
        "status_updated": saved.get("updated"),
        "dirs": dirs,
        "disabled": saved.get("disabled", []),
        "rescans": saved.get("rescans", 0),
        "queue_overflows": saved.get("queue_overflows", 0),
        "fallbacks": saved.get("fallbacks", 0),
        "watch": saved.get("watch", {"state": "ok", "deaf": []}),
        "sweep_catches": saved.get("sweep_catches", 0),
        "hook_lint": saved.get("hook_lint"),
        "telemetry_dropped": saved.get("telemetry_dropped", 0),
        "watched_roots": saved.get("watched_roots", []),
        "next_dream": saved.get("next_dream"),
        "agent_profile": choice.profile.version,
        "agent_profile_reason": choice.reason,
        "agent_profile_warning": choice.warning,
        "team": _team_status(config.state_dir),
        "personal_sync": _personal_sync_status(config.state_dir),
        "needs_review": _review(config, names, dirs),
    }


def _review(
    config: Config, names: ProjectNames, dirs: dict[str, object]
) -> dict[str, object]:
    """Per memory dir (watched or found), what its last truth check asks to review."""
    from memd.lint.targets import discover_memory_dirs

    found: dict[str, object] = {}
    for path in dict.fromkeys([*dirs, *discover_memory_dirs()]):
        review = _needs_review(config.cache_dir, path)
        if review["gone_files"] or review["notices"]:
            label = names.label(path) if path in dirs else _label_of(path, config)
            found[path] = {"project": label, **review}
    return found


def _label_of(path: str, config: Config) -> str:
    return _project_names({path: {}}, config).label(path)


def _needs_review(cache_dir: str, memory_dir: str) -> dict[str, object]:
    """What the last truth check found (memd.truth.notice): gone names, shared dirs."""
    from memd.truth.notice import read_report

    report = read_report(cache_dir, memory_dir) or {}
    once = report.get("once")
    return {
        "gone_files": list(report.get("gone_files") or ()),  # type: ignore[call-overload]
        "notices": [
            str(item.get("text"))
            for item in (once if isinstance(once, list) else ())
            if isinstance(item, dict)
        ],
    }


def truth_lines(status: dict[str, object]) -> list[str]:
    """The "needs review" lines: per project, memories naming what went, shared dirs."""
    lines = []
    review = status.get("needs_review")
    for entry in review.values() if isinstance(review, dict) else ():
        if not isinstance(entry, dict):
            continue
        gone = entry.get("gone_files") or []
        notices = entry.get("notices") or []
        lines.append(f"needs review: {entry.get('project')}")
        if gone:
            noun = "memory names" if len(gone) == 1 else "memories name"
            shown = ", ".join(str(g) for g in gone[:5])
            lines.append(
                f"  {len(gone)} {noun} something the code no longer has ({shown})"
            )
        lines.extend(f"  {notice}" for notice in notices)
    return lines


def _project_names(dirs: object, config: Config) -> ProjectNames:
    """What each watched directory is called: its project's folder (memd.projects)."""
    from memd.projects.roots import load_project_names

    return load_project_names(
        list(dirs) if isinstance(dirs, dict) else [], config=config
    )


def _personal_sync_status(state_dir: str) -> dict[str, object]:
    """Personal sync: on or off, the last result, its error (the sync's record)."""
    from memd.sync.engine import is_enabled
    from memd.sync.schedule import sync_record

    if not is_enabled(state_dir):
        return {"enabled": False}
    record = sync_record(state_dir)
    keep = ("state", "last_sync", "error", "failures", "next_attempt")
    return {"enabled": True, **{key: record.get(key) for key in keep}}


def _team_status(state_dir: str) -> dict[str, object]:
    from memd.team.schedule import team_summary

    return dict(team_summary(state_dir))


def _dream_status(state_dir: str) -> dict[str, object]:
    from memd.kairos.dream import dream_status

    return dict(dream_status(state_dir))


def format_text(status: dict[str, object]) -> str:
    """Render the status for a person."""
    from memd.daemon.liveness import START_HINT, describe_since

    lines = []
    if status["responding"]:
        lines.append(
            f"memd is running (pid {status['pid']},"
            f" up {_duration(status['uptime_seconds'])})"
        )
    elif status["running"]:
        since = status.get("not_responding_since")
        lines.append(
            f"memd is not responding since"
            f" {describe_since(since if isinstance(since, int | float) else None)}"
            f" ({status.get('liveness_detail')})"
        )
        lines.append(
            f"  restart it: `systemctl --user restart memd`, or kill pid"
            f" {status['pid']} and {START_HINT.removeprefix('start it with ')}"
        )
    else:
        lines.append(
            "memd is not running" + (" (last status shown)" if status["dirs"] else "")
        )
        lines.append(f"  {START_HINT}")
    counters = ("rescans", "queue_overflows", "fallbacks", "telemetry_dropped")
    if any(status[name] for name in counters):  # a healthy watcher says nothing
        lines.append(
            f"rescans: {status['rescans']}"
            f"  queue overflows: {status['queue_overflows']}"
            f"  polling fallbacks: {status['fallbacks']}"
            f"  telemetry dropped: {status['telemetry_dropped']}"
        )
    lines.append(f"next dream: {_local_time(status['next_dream'], 'not scheduled')}")
    watch = status.get("watch")
    deaf = watch.get("deaf") if isinstance(watch, dict) else None
    if isinstance(deaf, list) and deaf:
        lines.append(f"watching degraded: {len(deaf)} roots swept by stat instead")
        for problem in deaf:
            if isinstance(problem, dict):
                lines.append(f"  {problem.get('root')}: {problem.get('reason')}")
    hook_lint = status.get("hook_lint")
    if status["running"] and isinstance(hook_lint, dict):
        lines.append(
            # the socket's path is in --format json: a person reads what it does
            "the agent's saves are linted by this daemon (fast)"
            if hook_lint.get("listening")
            else "the agent's saves are linted without the daemon (slower):"
            " it could not listen for them"
        )
        crashes = hook_lint.get("crashes")
        if isinstance(crashes, int) and crashes:
            lines.append(
                f"  the hooks' lint server crashed {crashes} time(s); "
                "see hook_lint_crashed in the log"
            )
    if status.get("agent_profile"):
        lines.append(
            f"agent profile: {status['agent_profile']}"
            f" ({status['agent_profile_reason']})"
        )
    if status.get("agent_profile_warning"):
        lines.append(f"  warning: {status['agent_profile_warning']}")
    dirs = status["dirs"]
    assert isinstance(dirs, dict)  # noqa: S101 -- built above
    from memd.projects.naming import tilde

    lines.append(f"watched projects: {len(dirs)}")
    home = _home()
    for path, entry in sorted(dirs.items(), key=lambda item: _label(*item)):
        detail = f"    memory: {tilde(path, home)}"
        if entry.get("missing"):
            lines += [f"  {_label(path, entry)}  (memory directory missing)", detail]
            continue
        age = entry.get("snapshot_age_seconds")
        modes = [m for m in entry.get("modes", []) if m != "standard"]
        lines.append(
            f"  {_label(path, entry)}  errors {entry.get('lint_errors', '?')}"
            f"  warnings {entry.get('lint_warnings', '?')}"
            f"  prompt{' (' + ', '.join(modes) + ')' if modes else ''}"
            f" rebuilt {_duration(age)} ago"
            + (f"  ERROR {entry['error']}" if entry.get("error") else "")
            + ("  SLOW (rebuild running past its budget)" if entry.get("slow") else "")
            + (
                f"  slow: last rebuild {entry['slow_seconds']} s"
                if entry.get("slow_seconds") and not entry.get("slow")
                else ""
            )
        )
        lines.append(detail)
        dream = entry.get("last_dream")
        if isinstance(dream, dict) and dream.get("last_run"):
            result = dream.get("last_result")
            undone = isinstance(result, dict) and result.get("undone_at")
            lines.append(
                f"    last dream {_local_time(undone or dream.get('last_run'))}:"
                f" {_dream_result(result)}"
            )
        elif isinstance(dream, dict) and dream:
            lines.append("    last dream: never")
    lines.extend(_team_lines(status.get("team")))
    lines.extend(_personal_sync_lines(status.get("personal_sync")))
    return "\n".join(lines)


def _label(path: str, entry: object) -> str:
    from memd.projects.naming import tilde

    label = entry.get("project") if isinstance(entry, dict) else None
    return label if isinstance(label, str) and label else tilde(path, _home())


def _home() -> str:
    from memd.claude_code.paths import home_dir

    return home_dir()


def _personal_sync_lines(sync: object) -> list[str]:
    """The personal sync section: off (and how to turn it on), or its last result."""
    if not isinstance(sync, dict) or not sync.get("enabled"):
        return ["personal sync: off (turn it on with `memd sync init --remote URL`)"]
    lines = [
        f"personal sync: {sync.get('state') or 'never run'}"
        f"  last sync {_local_time(sync.get('last_sync'))}"
    ]
    if sync.get("error"):
        lines.append(f"  last error: {sync.get('error')}")
    return lines


def _local_time(stamp: object, never: str = "never") -> str:
    """An epoch or ISO time as a person reads it (`today 23:08:13`), else `never`."""
    import time

    from memd.times import clock, to_epoch

    epoch = to_epoch(stamp)
    return never if epoch is None else clock(epoch, now=time.time())


def _team_lines(team: object) -> list[str]:
    """Lines for each shared team dir: last sync, an unreachable remote, conflicts."""
    if not isinstance(team, dict) or not team:
        return []
    from memd.projects.naming import tilde

    lines = [f"shared team memory: {len(team)}"]
    home = _home()
    for team_dir, entry in team.items():
        when = _local_time(entry.get("last_sync"))
        conflicts = entry.get("conflicts") or []
        lines.append(
            f"  {tilde(team_dir, home)}  {entry.get('state')}  last sync {when}"
            f"  conflicts {len(conflicts)}"
        )
        if entry.get("state") == "offline":
            lines.append(
                f"    remote unreachable ({entry.get('failures')} failure(s)):"
                f" {entry.get('error')}"
            )
        lines.extend(f"    conflict waiting: team/{copy}" for copy in conflicts)
    return lines


def _dream_result(result: object) -> str:
    """One line for a dreams.json result: status, entries, and why if it failed."""
    if not isinstance(result, dict):
        return str(result)
    from memd.kairos.dream import describe_summary

    entries = result.get("entries")  # an undone dream of unknown size has none
    text = str(result.get("status", "?"))
    text += f", {entries} entries" if isinstance(entries, int) else ""
    summary = describe_summary(result.get("summary"))
    text += f" ({summary})" if summary else ""
    return f"{text}: {result['message']}" if result.get("message") else text


def _duration(seconds: object) -> str:
    from memd.times import span

    return span(seconds) if isinstance(seconds, int | float) else "?"


def _named_loss(
    entry: dict[str, object], names: ProjectNames, labels: dict[str, str]
) -> dict[str, object]:
    """A loss as the text shows it: its project by its folder (memd.projects),
    another agent's store by its `labels` (agent and project).

    memd.history words the loss; the place is said here, so the sentence and
    any `--project` in it name the folder, not the memory dir.
    """
    from memd.projects.naming import placed

    memory_dir = str(entry.get("memory_dir"))
    label = labels.get(memory_dir) or names.label(memory_dir)
    message = str(entry.get("message", "")).replace(
        f"--project {memory_dir}", f"--project {names.project_arg(memory_dir)}"
    )
    if message.startswith("memd: "):  # a sentence of its own, not under a heading
        message = placed(message, label)
    return {**entry, "memory_dir": label, "message": message}


def _loss_names(status: dict[str, object]) -> ProjectNames:
    """The names status already found, for the loss lines."""
    from memd.claude_code.paths import home_dir
    from memd.projects.naming import ProjectNames, memory_dir_key

    dirs = status.get("dirs")
    roots = {
        memory_dir_key(path): tuple(entry.get("project_roots") or ())
        for path, entry in (dirs.items() if isinstance(dirs, dict) else ())
        if isinstance(entry, dict)
    }
    return ProjectNames(roots, home_dir())


def agent_stores() -> list[dict[str, object]]:
    """Each other agent's store (memd.agents): its name, files and problems."""
    import os

    from memd.agents import all_agents
    from memd.agents.store_check import check_store

    found: list[dict[str, object]] = []
    for agent in all_agents():
        for store in agent.stores(os.environ):
            path = os.path.dirname(store.path) if store.single_file else store.path
            found.append(
                {
                    "agent": agent.title,
                    "label": store.label,
                    "path": os.path.normpath(path),
                    "store": store.path,
                    "project": store.project,
                    "findings": [
                        {"path": f.path, "rule": f.rule, "message": f.message}
                        for f in check_store(store)
                    ],
                }
            )
    return found


def store_lines(stores: list[dict[str, object]]) -> list[str]:
    """`memd status`'s section on other agents' stores (none: no section)."""
    if not stores:
        return []
    lines = ["other agents' memory (kept in history; memd never writes it):"]
    for entry in stores:
        findings = entry["findings"]
        assert isinstance(findings, list)  # noqa: S101 -- built above
        lines.append(
            f"  {entry['label']}: {entry['store']}"
            + (f"  {len(findings)} problem(s)" if findings else "")
        )
        lines.extend(f"    {f['path']}: {f['message']}" for f in findings[:5])
    return lines


def run(args: argparse.Namespace) -> int:
    """Print the status; exit `EXIT_NO_DAEMON` unless the daemon runs and answers."""
    import json

    from memd.history.report import loss_lines, loss_report
    from memd.history.store import HistoryUnusableError
    from memd.times import zone_note

    status = collect_status()
    try:
        losses = loss_report(str(status["state_dir"]))
        trouble = []
    except HistoryUnusableError as error:  # status still tells the rest
        losses, trouble = [], [f"history: {error}"]
        status["history_error"] = str(error)
    stores = agent_stores()
    # another agent's store is named by agent and project, the rest by folder
    labels = {str(entry["path"]): str(entry["label"]) for entry in stores}
    names = _loss_names(status)
    for entry in losses:
        memory_dir = str(entry.get("memory_dir"))
        entry["project"] = labels.get(memory_dir) or names.label(memory_dir)
    status["losses"] = losses
    status["agent_stores"] = stores
    if args.format == "json":
        print(json.dumps(status, indent=2, sort_keys=True))
    else:
        shown = loss_lines([_named_loss(entry, names, labels) for entry in losses])
        print(
            "\n".join(
                [
                    format_text(status),
                    *store_lines(stores),
                    *shown,
                    *truth_lines(status),
                    *trouble,
                    zone_note(),
                ]
            )
        )
    return 0 if status["responding"] else EXIT_NO_DAEMON
