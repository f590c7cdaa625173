"""`memd lint [PATH…|--all|--project DIR]`: check memory dirs, projects or topic files.

No PATH: the current directory's project; `--all`: every project. A memory
dir whose project memd knows is also checked against that project's git
repository (memd.truth): `--project DIR`, a PATH that is a project, the
current directory's project, or the roots memd remembers.

Exit status: 0 clean, 1 errors (or warnings with `--strict`), 2 usage or I/O.
"""

from __future__ import annotations

import contextlib
import os
import sys

from memd.cli.commands._options import (
    add_paths_argument,
    add_project_argument,
    chosen_targets,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from memd.config import Config
    from memd.diagnostics import Diagnostic
    from memd.lint.targets import Target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    add_project_argument(parser, "whose memory to lint, against its repository")
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
    from memd.claude_code.choice import in_force
    from memd.cli.commands._options import project_dir
    from memd.config import load_config
    from memd.lint.formats import render
    from memd.lint.targets import lint_targets

    config = load_config()
    profile = in_force(config).profile
    if args.project is not None:
        if args.paths or args.all_projects:
            from memd.errors import UsageError

            raise UsageError("give --project DIR, PATHs or --all, not two of them")
        args.paths = [project_dir(args)]
        from memd.state import remember_project

        # --project is how a person tells memd a root: later runs know it too.
        with contextlib.suppress(OSError):
            remember_project(config.state_dir, os.path.realpath(args.paths[0]))
    targets, none = chosen_targets(args, profile)
    if none and args.format == "text":
        # Not "no problems found": there was nothing to look at.
        print(none)
        return 0
    diagnostics = lint_targets(targets, config=config, profile=profile)
    diagnostics = _with_truth(diagnostics, targets, args, config, profile)
    color = args.color == "always" or (
        args.color == "auto" and _is_tty() and "NO_COLOR" not in os.environ
    )
    heading = None
    if args.format == "text" and diagnostics:
        from memd.projects.roots import load_project_names

        dirs = [t.path if t.is_dir else os.path.dirname(t.path) for t in targets]
        heading = load_project_names(dirs, config=config).file
    sys.stdout.write(render(diagnostics, args.format, color=color, heading=heading))
    return exit_code(diagnostics, strict=args.strict)


def _with_truth(
    diagnostics: tuple[Diagnostic, ...],
    targets: Sequence[Target],
    args: argparse.Namespace,
    config: Config,
    profile: object,
) -> tuple[Diagnostic, ...]:
    """`diagnostics` plus what memory names that its project no longer has."""
    from memd.lint.engine import display_path, sort_key
    from memd.lint.targets import infer_memory_dir
    from memd.projects.roots import roots_by_memory_dir
    from memd.truth.check import check_targets

    # memory dir -> None (all its findings) or the lone files asked about,
    # which get exactly what their directory's lint gives them.
    wanted: dict[str, set[str] | None] = {}
    for target in targets:
        if target.error is not None:
            continue
        if target.is_dir:
            wanted[target.path.rstrip(os.sep)] = None
            continue
        memory_dir, relpath = infer_memory_dir(target.path)
        key = memory_dir.rstrip(os.sep)
        if key not in wanted:
            wanted[key] = set()
        files = wanted[key]
        if files is not None:
            files.add(display_path(key, relpath))
    dirs = list(wanted)
    if not dirs:
        return diagnostics
    remembered = roots_by_memory_dir(
        dirs,
        state_dir=config.state_dir,
        extra_roots=config.watch_projects,
        profile=profile,  # type: ignore[arg-type]
    )
    explicit = [os.path.abspath(p) for p in args.paths] or [os.getcwd()]
    chosen = {}
    for memory_dir in dirs:
        root = _root_of(memory_dir, explicit, remembered, args, profile)
        chosen[memory_dir] = (root, remembered.get(memory_dir, ()))
    kept: list[Diagnostic] = []
    for memory_dir, files in wanted.items():
        found = check_targets(
            {memory_dir: chosen[memory_dir]},
            cache_dir=config.cache_dir,
            severities=config.lint_severities,
            max_file_bytes=config.max_topic_file_bytes,
            profile=profile,
        )
        kept.extend(d for d in found if files is None or d.path in files)
    return tuple(sorted(dict.fromkeys([*diagnostics, *kept]), key=sort_key))


def _root_of(
    memory_dir: str,
    explicit: list[str],
    remembered: dict[str, tuple[str, ...]],
    args: argparse.Namespace,
    profile: object,
) -> str | None:
    """The project root to check `memory_dir` against: named, current, or remembered."""
    from memd.claude_code.gitroot import find_git_root
    from memd.claude_code.paths import resolve_memory_location

    if not args.all_projects:
        for path in explicit:
            if not os.path.isdir(path) or path.rstrip(os.sep) == memory_dir:
                continue
            location = resolve_memory_location(path, None, profile=profile)  # type: ignore[arg-type]
            if location.memory_dir.rstrip(os.sep) == memory_dir:
                return find_git_root(path) or path
    roots = remembered.get(memory_dir, ())
    return roots[0] if roots else None


def _is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except ValueError:
        return False
