"""`memd doctor`: one verdict line per part memd needs, each failure with its fix.

The checks, in order: the daemon answers a ping within its deadline (not a
pid: memd.daemon.liveness); memd's hooks and MCP server are in each agent's
settings and run this memd (`memd.agents`: the agents setup wired and those
on PATH, each named); the Claude Code release on PATH (`claude --version`,
bounded) against the profile in use; a configured dream agent can be
confined (memd.kairos.confine); each team and personal remote answers
`git ls-remote` within `REMOTE_SECONDS`; every index is within the agent's
budget; no two project roots share a memory dir and no older agent release
left memory in a dir the one in force no longer reads (memd.truth.sharing);
the state and cache dirs are writable; there is disk space. Exit 0
when no check fails (a warning is not a failure), else 1; `--format json`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator

    from memd.config import Config

OK, WARN, FAIL = "ok", "warn", "fail"
REMOTE_SECONDS = 10.0
MIN_FREE_BYTES = 100 * 1024 * 1024
INDEX_BUDGET_CODES = ("I002", "I003")


@dataclass(frozen=True, slots=True)
class Check:
    """One verdict: what was checked, what was found, and the fix if it is not ok."""

    name: str
    verdict: str  # OK | WARN | FAIL
    message: str
    fix: str = ""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format"
    )


def run(args: argparse.Namespace) -> int:
    import json

    from memd.config import load_config

    checks = list(run_checks(load_config()))
    failed = any(check.verdict == FAIL for check in checks)
    if args.format == "json":
        out = {"ok": not failed, "checks": [asdict(check) for check in checks]}
        print(json.dumps(out, indent=2))
    else:
        for check in checks:
            print(f"{check.verdict.upper():<4}  {check.name}: {check.message}")
            if check.fix and check.verdict != OK:
                print(f"      fix: {check.fix}")
    return 1 if failed else 0


def run_checks(config: Config) -> Iterator[Check]:
    """Every check, in the order `memd doctor` prints them."""
    yield _daemon(config)
    yield from _settings(config)
    yield _agent(config)
    yield _dream_confinement(config)
    yield from _remotes(config)
    yield _index_budgets(config)
    yield from _memory_dirs(config)
    yield from _writable(config)
    yield _disk_space(config)


def _daemon(config: Config) -> Check:
    from memd.daemon.liveness import (
        NOT_RUNNING,
        START_HINT,
        check_liveness,
        describe_since,
    )

    alive = check_liveness(config.state_dir, os.environ)
    if alive.ok:
        return Check("daemon", OK, f"running and answering ({alive.detail})")
    if alive.state == NOT_RUNNING:
        return Check(
            "daemon", FAIL, "not running", START_HINT.replace("start it with ", "")
        )
    return Check(
        "daemon",
        FAIL,
        f"not responding since {describe_since(alive.since)} ({alive.detail})",
        f"`systemctl --user restart memd`, or kill pid {alive.pid} and start it again",
    )


def _settings(config: Config) -> Iterator[Check]:
    """memd's entries in each agent's config files run this memd.

    The agents `memd setup` wired, and any other on PATH; with no setup on
    record, Claude Code always (memd keeps its memory).
    """
    from memd.agents import all_agents
    from memd.cli.commands.hook import memd_executable
    from memd.cli.commands.setup import RECORD
    from memd.state import read_state

    executable = memd_executable()
    wired = read_state(config.state_dir, RECORD).get("agents")
    wired = set(wired) if isinstance(wired, list) else {"claude-code"}
    for agent in all_agents():
        if agent.name not in wired and not agent.on_path(os.environ):
            continue
        for verdict in agent.checks(os.environ, executable):
            yield Check(verdict.name, verdict.verdict, verdict.message, verdict.fix)


def _agent(config: Config) -> Check:
    """`claude --version` (bounded) against the profile memd uses."""
    import shutil

    from memd.claude_code.choice import in_force, probe_version
    from memd.claude_code.profile import fit_version, parse_version

    choice = in_force(config)
    launcher = shutil.which("claude", path=os.environ.get("PATH", os.defpath))
    if launcher is None:
        return Check(
            "agent",
            WARN,
            f"no claude on PATH; memd uses profile {choice.profile.version}",
            "put Claude Code's `claude` on PATH (or pin [agent] version)",
        )
    output = probe_version(os.path.realpath(launcher))
    version = parse_version(output) if output else None
    if version is None:
        return Check(
            "agent",
            WARN,
            f"`{launcher} --version` gave no version within its timeout;"
            f" memd uses profile {choice.profile.version}",
            f"run `{launcher} --version` by hand",
        )
    release = ".".join(map(str, version))
    fitting, _, warning = fit_version(version)
    if fitting.version != choice.profile.version:
        return Check(
            "agent",
            WARN,
            f"Claude Code {release} on PATH, but memd uses profile"
            f" {choice.profile.version} ({choice.reason})",
            f"set [agent] version to auto (or {fitting.version})",
        )
    if warning:
        return Check("agent", WARN, warning, "upgrade memd, or pin [agent] version")
    return Check(
        "agent", OK, f"Claude Code {release}, profile {choice.profile.version}"
    )


def _dream_confinement(config: Config) -> Check:
    """Whether the dream's agent, if one is configured, runs confined here."""
    from memd.kairos.confine import NEEDED_ABI, unsupported

    if not (config.dream_agent or config.dream_command):
        return Check("dream agent", OK, "none configured (memd files the entries)")
    if not config.dream_confine:
        return Check(
            "dream agent",
            WARN,
            "runs unconfined ([dream] confine = false): it can read memd's files,"
            " reach the viewer and change the live memory",
            "remove [dream] confine = false",
        )
    why = unsupported()
    if why:
        return Check(
            "dream agent",
            FAIL,
            f"cannot be confined: {why}; every agent dream is refused",
            f"a kernel with Landlock ABI {NEEDED_ABI}+, or [dream] confine = false"
            " to run the agent unconfined",
        )
    return Check(
        "dream agent",
        OK,
        "confined: it reads the system, its install and its copy; TCP only to"
        " its model; no unix socket, no device but null, zero, full, random",
    )


def _remotes(config: Config) -> Iterator[Check]:
    """`git ls-remote` each team and the personal remote, within `REMOTE_SECONDS`."""
    from memd.gitsync.git import Git, GitError
    from memd.gitsync.objects import REMOTE
    from memd.gitsync.repo import remote_url
    from memd.sync.engine import is_enabled, repo_dir
    from memd.team.schedule import team_summary

    teams = list(team_summary(config.state_dir))
    labels = _projects_of([t.rstrip(os.sep) for t in teams], config)  # its memory dir
    repos = [
        (f"team memory of {label}", team_dir)
        for label, team_dir in zip(labels, teams, strict=True)
    ]
    if is_enabled(config.state_dir):
        repos.append(("personal sync", repo_dir(config.state_dir)))
    if not repos:
        yield Check("remotes", OK, "no team or personal remote set up")
        return
    for name, repo in repos:
        seconds = min(REMOTE_SECONDS, config.team_git_timeout_seconds)
        try:
            url = remote_url(repo, seconds) or "(no URL)"
            Git(repo, seconds).run(
                "ls-remote", "--heads", "--", REMOTE, is_network=True
            )
        except GitError as error:
            yield Check(
                name,
                FAIL,
                f"remote not reachable: {error}",
                f"check the network and credentials: git -C {repo} ls-remote {REMOTE}",
            )
            continue
        yield Check(name, OK, f"{url} answered")


def _projects_of(paths: list[str], config: Config) -> list[str]:
    """Each memory file's project by its folder (`~/code/webshop`, memd.projects)."""
    from memd.projects.roots import load_project_names

    dirs = [os.path.dirname(path) for path in paths]
    names = load_project_names(dirs, config=config)
    return [names.label(directory) for directory in dirs]


def _index_budgets(config: Config) -> Check:
    """Every known memory dir's MEMORY.md within the lines and size the agent loads."""
    from memd.claude_code.choice import in_force
    from memd.lint.targets import discover_targets, lint_targets

    targets = discover_targets()
    found = lint_targets(targets, config=config, profile=in_force(config).profile)
    over = sorted({d.path for d in found if d.code in INDEX_BUDGET_CODES})
    over = _projects_of(over, config)  # each index by its project's folder
    if over:
        return Check(
            "index budgets",
            FAIL,
            f"{len(over)} {'index' if len(over) == 1 else 'indexes'} over budget:"
            " the agent drops the rest"
            f" ({', '.join(over[:3])})",
            "run `memd fix` (it moves entries into hub files the index links;"
            " `memd fix --dry-run` shows how first)",
        )
    dirs = "memory directory" if len(targets) == 1 else "memory directories"
    return Check("index budgets", OK, f"{len(targets)} {dirs} within budget")


def _memory_dirs(config: Config) -> Iterator[Check]:
    """No two project roots share a memory dir; no release left memory behind."""
    from memd.claude_code.choice import in_force
    from memd.truth.sharing import describe_moved, describe_shared, moved_fix, survey

    home = os.environ.get("HOME", "")
    found = survey(
        state_dir=config.state_dir,
        extra_roots=config.watch_projects,
        profile=in_force(config).profile,
    )
    for shared in found.shared:
        yield Check(
            "shared memory dir", FAIL, describe_shared(shared, home), shared.fix
        )
    for moved in found.moved:
        yield Check(
            "moved memory dir",
            FAIL,
            describe_moved(moved, home),
            moved_fix(moved, home),
        )
    if not found.shared and not found.moved:
        known = sum(1 for roots in found.roots.values() if roots)
        yield Check(
            "memory dirs",
            OK,
            "the one known project has a memory dir of its own"
            if known == 1
            else f"each of {known} known projects has a memory dir of its own",
        )


def _writable(config: Config) -> Iterator[Check]:
    import tempfile

    dirs = (("state dir", config.state_dir), ("cache dir", config.cache_dir))
    for name, directory in dirs:
        existing = _nearest_existing(directory)
        try:
            if not os.path.isdir(existing):
                raise NotADirectoryError(f"{existing} is a file, in the way")
            with tempfile.TemporaryFile(dir=existing):
                pass
        except OSError as error:
            yield Check(
                name,
                FAIL,
                f"{directory} is not writable ({error.strerror or error})",
                f"fix its owner or mode, or set paths.{name.split()[0]}_dir",
            )
            continue
        yield Check(name, OK, f"{directory} is writable")


def _nearest_existing(directory: str) -> str:
    """`directory`, or the nearest parent that exists (memd makes the rest)."""
    path = os.path.abspath(directory)
    while not os.path.lexists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _disk_space(config: Config) -> Check:
    import shutil

    from memd.claude_code.paths import memory_base_dir

    lowest: tuple[int, str] | None = None
    for directory in (config.state_dir, config.cache_dir, memory_base_dir()):
        try:
            free = shutil.disk_usage(_nearest_existing(directory)).free
        except OSError:
            continue
        if lowest is None or free < lowest[0]:
            lowest = (free, directory)
    if lowest is None:
        return Check("disk space", WARN, "could not measure free space")
    free, directory = lowest
    shown = f"{free / (1024 * 1024):.0f} MiB free for {directory}"
    if free < MIN_FREE_BYTES:
        return Check("disk space", FAIL, shown, "free some space on that disk")
    return Check("disk space", OK, shown)
