"""`memd paths`: where a project's memory lives, whether it is on, and why.

Also the project's identity for personal sync and where it came from
(`memd.claude_code.identity`).

Also which agent profile resolved it and why, and what workspace trust did
when it changed the answer.
"""

from __future__ import annotations

from memd.cli.commands._options import add_project_argument, project_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser, "directory to resolve")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (default: text)",
    )


def run(args: argparse.Namespace) -> int:
    import datetime
    import sys

    from memd.claude_code.choice import in_force
    from memd.claude_code.paths import daily_log_path, resolve_memory_location
    from memd.config import load_config

    project = project_dir(args)
    config = load_config()
    choice = in_force(config)
    location = resolve_memory_location(project, profile=choice.profile)
    today_log = daily_log_path(location.memory_dir, datetime.date.today())
    from memd.sync.identity import project_identity

    identity = project_identity(location.project_root, config.sync_projects)
    if args.format == "json":
        import json

        extra = {
            "today_log_path": today_log,
            "profile_reason": choice.reason,
            "profile_warning": choice.warning,
            "identity": identity.identity if identity else None,
            "identity_source": identity.source if identity else None,
            "identity_from": identity.detail if identity else None,
        }
        print(json.dumps({**location.to_dict(), **extra}, indent=2))
        return 0
    state = "enabled" if location.enablement.enabled else "disabled"
    source = location.source
    if location.source_path is not None:
        source = f"{source} ({location.source_path})"
    rows: tuple[tuple[str, str], ...] = (
        ("project", location.project_root),
        ("auto memory", f"{state} ({location.enablement.reason})"),
        ("base dir", location.base_dir),
        ("memory dir", location.memory_dir),
        ("source", source),
        ("index", location.index_path),
        ("today's log", today_log),
        ("team dir", location.team_dir),
        (
            "identity",
            f"{identity.identity} ({identity.source}: {identity.detail})"
            if identity
            else "none (no remote, no commit, no [sync.projects] entry)",
        ),
        ("profile", f"{location.profile} ({choice.reason})"),
    )
    if location.trust is not None:
        rows += (("trust", location.trust),)
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label + ':':<{width + 1}} {value}")
    if choice.warning:
        print(f"memd: warning: {choice.warning}", file=sys.stderr)
    for diagnostic in location.diagnostics:
        where = diagnostic.path
        if diagnostic.line is not None:
            where = f"{where}:{diagnostic.line}:{diagnostic.column}"
        print(
            f"{where}: {diagnostic.severity} {diagnostic.code} {diagnostic.name}: "
            f"{diagnostic.message}",
            file=sys.stderr,
        )
    return 0
