"""`memd lint [PATH…|--all]`: check memory dirs, project roots or single topic files.

No PATH: the current directory's project; `--all`: every project.

Exit status: 0 clean, 1 errors (or warnings with `--strict`), 2 usage or I/O.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_paths_argument, chosen_targets

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from memd.diagnostics import Diagnostic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json", "sarif", "github"),
        default="text",
        help="output format (default: text)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (default: auto, on a terminal)",
    )


def exit_code(diagnostics: Sequence[Diagnostic], *, strict: bool) -> int:
    """Return 1 when there are errors (or warnings with `strict`), else 0."""
    from memd.diagnostics import Severity

    failing = {Severity.ERROR, Severity.WARNING} if strict else {Severity.ERROR}
    return 1 if any(d.severity in failing for d in diagnostics) else 0


def run(args: argparse.Namespace) -> int:
    from memd.agent.choice import in_force
    from memd.config import load_config
    from memd.lint.formats import render
    from memd.lint.targets import lint_targets

    config = load_config()
    profile = in_force(config).profile
    targets, none = chosen_targets(args, profile)
    if none and args.format == "text":
        # Not "no problems found": there was nothing to look at.
        print(none)
        return 0
    diagnostics = lint_targets(targets, config=config, profile=profile)
    color = args.color == "always" or (
        args.color == "auto" and _is_tty() and "NO_COLOR" not in os.environ
    )
    sys.stdout.write(render(diagnostics, args.format, color=color))
    return exit_code(diagnostics, strict=args.strict)


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except ValueError:
        return False
