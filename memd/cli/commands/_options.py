"""Options several commands share: `--project DIR` and the PATH list of lint and fix."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, MutableMapping
    from typing import Any

    from memd.claude_code.paths import MemoryLocation
    from memd.claude_code.profile import ProfileSpec
    from memd.config import Config
    from memd.lint.targets import Target

# Memory switched off is the person's choice, not a failure: prompt, log and
# dream all exit with this status (README, "When auto memory is off").
MEMORY_OFF_EXIT = 0


def add_project_argument(
    parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, purpose: str
) -> None:
    """Add `--project DIR`; `purpose` completes "project …" in the help text."""
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help=f"project {purpose} (default: the current directory)",
    )


def add_paths_argument(parser: argparse.ArgumentParser) -> None:
    """Add the PATH list (memory dirs, project roots or topic files) and `--all`."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="memory directory, project root or .md file "
        "(default: the current directory's project)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        dest="all_projects",
        help="every project's memory directory",
    )


def chosen_targets(
    args: argparse.Namespace, profile: ProfileSpec
) -> tuple[tuple[Target, ...], str]:
    """The lint targets of `args` (PATHs, `--all`, or the current project), and,
    when there are none, the line that says why (else "")."""
    from memd.claude_code.paths import memory_base_dir
    from memd.errors import UsageError
    from memd.lint.targets import current_memory_dir, resolve_targets

    if args.paths and args.all_projects:
        raise UsageError("give PATHs or --all, not both")
    targets = resolve_targets(args.paths, profile=profile, every=args.all_projects)
    if targets:
        return targets, ""
    if args.all_projects:
        base = os.path.join(memory_base_dir(), "projects")
        return (), f"no memory yet: no project has a memory directory under {base}"
    here = current_memory_dir(os.getcwd(), None, profile)
    return (), (
        f"no memory for this project yet ({here} does not exist);"
        " `--all` acts on every project"
    )


def project_dir(args: argparse.Namespace) -> str:
    """Return the project directory the command acts on.

    Raises:
        UsageError: `--project` does not name a directory.
    """
    from memd.errors import UsageError

    project: str = args.project if args.project is not None else os.getcwd()
    if not os.path.isdir(project):
        raise UsageError(f"--project {project}: not a directory")
    return project


def report_memory_off(location: MemoryLocation, *, nothing: str, as_json: bool) -> int:
    """Say on stderr which rule switched memory off; JSON on stdout if asked.

    `nothing` completes the line ("no prompt", "nothing logged"). Returns the
    exit status every command uses for this case.
    """
    import sys

    print(
        f"memd: auto memory is off for {location.project_root} "
        f"({location.enablement.reason}); {nothing}",
        file=sys.stderr,
    )
    if as_json:
        import json

        out = {
            "enabled": False,
            "reason": location.enablement.reason,
            "project_root": location.project_root,
            "memory_dir": location.memory_dir,
        }
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return MEMORY_OFF_EXIT


def add_verbose_argument(parser: argparse.ArgumentParser) -> None:
    """Add `-v`/`--verbose`: show the log records on stderr, on a terminal too."""
    import argparse

    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,  # so a subcommand's -v does not undo the parent's
        help="show log records on stderr (on a terminal they go to memd's log file)",
    )


def configure_command_logs(
    config: Config,
    args: argparse.Namespace,
    show: Callable[[str, MutableMapping[str, Any]], str | None] | None = None,
) -> None:
    """Log as a command people run: off the terminal unless `-v` (memd.logconfig)."""
    from memd.logconfig import configure_command_logging
    from memd.service.units import log_file_path

    configure_command_logging(
        config.log_format,
        config.log_level,
        log_file=log_file_path(config.state_dir),
        verbose=bool(getattr(args, "verbose", False)),
        show=show,
    )
