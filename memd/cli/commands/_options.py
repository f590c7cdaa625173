"""Options several commands share: `--project DIR` and the PATH list of lint and fix."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.agent.paths import MemoryLocation

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
    """Add the PATH list: memory dirs, project roots or topic files."""
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="memory directory, project root or .md file "
        "(default: every <base>/projects/*/memory)",
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
