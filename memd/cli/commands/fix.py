"""`memd fix [PATH…] [--dry-run | --undo]`: apply the safe fixes lint knows, atomically.

With `--dry-run` it prints a unified diff and writes nothing. The fixes of
one directory (a compaction's hubs and MEMORY.md among them) are one change:
all written or none, and none when a file changed since it was planned.
`--undo` takes the last one back byte for byte, unless its files changed since.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_paths_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from memd.config import Config
    from memd.lint.fixes import FileEdit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the diff; write nothing"
    )
    parser.add_argument(
        "--undo",
        action="store_true",
        help="take back the last memd fix of each directory, byte for byte",
    )
    parser.add_argument(
        "--renames",
        action="store_true",
        help="also name the paths git renamed, where a memory names the old path "
        "(--dry-run shows them; never done without this flag)",
    )
    parser.add_argument(
        "--dialect",
        choices=("classic", "nested"),
        default=None,
        help="also rewrite topic-file frontmatter into this dialect "
        "(only where it reads back the same)",
    )


def run(args: argparse.Namespace) -> int:
    from memd.claude_code.choice import in_force
    from memd.cli.commands._options import chosen_targets
    from memd.config import load_config
    from memd.history.record import memory_dir_holding, recording
    from memd.lint.fix_files import (
        apply_edits,
        plan_directory,
        plan_single_file,
        recover_fix,
        shown,
    )

    config = load_config()
    max_file_bytes = config.max_topic_file_bytes
    changed = skipped = unreadable = 0
    planned: list[FileEdit] = []
    planned_dirs = 0
    findings: list[str] = []  # what leaves an index past the agent's cut
    profile = in_force(config).profile
    if args.undo and args.dry_run:
        print("memd: --undo and --dry-run do not go together", file=sys.stderr)
        return 2
    targets, none = chosen_targets(args, profile)
    if none:
        print(none)
        return 0
    for target in targets:
        if target.error is not None:
            unreadable += 1
            print(f"memd: cannot read {target.path}: {target.error}", file=sys.stderr)
            continue
        if args.undo:
            root = target.path if target.is_dir else os.path.dirname(target.path)
            with recording(
                config.state_dir,
                memory_dir_holding(root),
                cause="fix-undo",
                config=config,
            ):
                failed = _undo(root, config)
            skipped += failed
            continue
        if not args.dry_run:
            recover_fix(
                target.path if target.is_dir else os.path.dirname(target.path),
                config.state_dir,
            )
        if target.is_dir:
            root, edits = (
                target.path,
                plan_directory(
                    target.path,
                    max_file_bytes=max_file_bytes,
                    dialect=args.dialect,
                    warn=_warn,
                    error=findings.append,
                ),
            )
        else:
            root, edits = os.path.dirname(target.path), plan_single_file(target.path)
        offered = (
            _renames(target.path, edits, config)
            if target.is_dir and (args.renames or args.dry_run)
            else []
        )
        if args.renames:
            edits = (*edits, *offered)
        if args.dry_run:
            for edit in edits:
                sys.stdout.write(unified_diff(os.path.join(root, edit.relpath), edit))
            if offered and not args.renames:
                print("# memd fix --renames would also name what git renamed:")
                for edit in offered:
                    sys.stdout.write(
                        unified_diff(os.path.join(root, edit.relpath), edit)
                    )
            planned += edits
            planned_dirs += bool(edits)
            continue
        if not edits:
            continue
        try:
            memory_dir = target.path if target.is_dir else memory_dir_holding(root)
            with recording(
                config.state_dir, memory_dir, cause="fix", config=config
            ) as recorder:
                for edit in edits:
                    recorder.wrote(os.path.abspath(os.path.join(root, edit.relpath)))
                wrote = apply_edits(root, edits, config.state_dir)
        except (
            OSError,
            UnicodeError,
        ) as error:  # one bad directory never stops the rest
            skipped += len(edits)
            why = getattr(error, "strerror", None) or str(error)
            print(
                f"memd: skipped {shown(root)}: {why}; nothing written", file=sys.stderr
            )
            continue
        if not wrote:
            skipped += len(edits)
            print(
                f"memd: skipped {shown(root)}: a file changed while fixing; "
                "nothing written, run memd fix again",
                file=sys.stderr,
            )
            continue
        project = _project_name(memory_dir, config)
        for edit in edits:
            changed += 1
            verb = "removed" if edit.is_removal else "fixed"
            name = os.path.relpath(os.path.join(root, edit.relpath), memory_dir)
            print(f"{verb} {shown(name)} in {project}: {edit.reason}")
    for message in findings:
        print(f"memd: error: {message}", file=sys.stderr)
    if args.undo:
        return 1 if skipped else 0
    if args.dry_run:
        print(plan_summary(planned, planned_dirs))
    else:
        files = f"{changed} file{'' if changed == 1 else 's'} fixed"
        print(files + (f", {skipped} skipped" if skipped else ""))
    if unreadable:
        return 2  # an I/O error: what could not be read is unfixed
    return 1 if findings else 0  # an index left past the agent's cut


def plan_summary(edits: Sequence[FileEdit], directories: int) -> str:
    """The one line a dry run ends with: what `memd fix` would do, and how."""
    if not edits:
        return "nothing to fix"
    created = sum(edit.old is None and not edit.is_removal for edit in edits)
    removed = sum(edit.is_removal for edit in edits)
    steps = [
        f"{verb} {count} file{'s' if count != 1 else ''}"
        for verb, count in (
            ("change", len(edits) - created - removed),
            ("create", created),
            ("remove", removed),
        )
        if count
    ]
    said = ", ".join(steps[:-1]) + (" and " if len(steps) > 1 else "") + steps[-1]
    where = f" in {directories} memory directories" if directories > 1 else ""
    return f"memd fix would {said}{where}; nothing is written until you run `memd fix`"


def _project_name(memory_dir: str, config: Config) -> str:
    """What a person calls `memory_dir`: its project's folder (memd.projects)."""
    from memd.projects.roots import load_project_names

    return load_project_names([memory_dir], config=config).label(memory_dir)


def _renames(
    memory_dir: str, planned: tuple[FileEdit, ...] | list[FileEdit], config: Config
) -> list[FileEdit]:
    """What git renamed, named anew (memd.truth), in files no other fix edits."""
    from memd.claude_code.gitroot import find_git_root
    from memd.projects.roots import roots_by_memory_dir
    from memd.truth.check import rename_edits

    key = memory_dir.rstrip(os.sep)
    roots = roots_by_memory_dir(
        [key], state_dir=config.state_dir, extra_roots=config.watch_projects
    ).get(key, ())
    if not roots:
        return []
    busy = {edit.relpath for edit in planned}
    return [
        edit
        for edit in rename_edits(
            key,
            find_git_root(roots[0]) or roots[0],
            cache_dir=config.cache_dir,
            max_file_bytes=config.max_topic_file_bytes,
        )
        if edit.relpath not in busy  # one fix per file at a time: the next run has it
    ]


def _undo(root: str, config: Config) -> int:
    """Undo the last fix of `root`; return 1 when it could not (said on stderr)."""
    from memd.lint.fix_files import FixUndoError, shown, undo_fix
    from memd.projects.naming import placed

    project = shown(_project_name(root, config))
    try:
        restored = undo_fix(root, config.state_dir)
    except FixUndoError as error:
        print(placed(f"memd: {error}", project), file=sys.stderr)
        return 1
    except OSError as error:
        why = error.strerror or str(error)
        print(f"memd: cannot undo in {project}: {why}", file=sys.stderr)
        return 1
    files = "file" if len(restored) == 1 else "files"
    print(f"undid memd fix in {project}: {len(restored)} {files} restored")
    return 0


def _warn(message: str) -> None:
    print(f"memd: {message}", file=sys.stderr)


def unified_diff(path: str, edit: FileEdit) -> str:
    """Return a unified diff of `edit`; CR shows as `\\r` so line-ending fixes show."""
    import difflib

    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        text = (
            data.decode("utf-8", "replace")
            .replace("\r", "\\r")
            .replace("\ufeff", "<BOM>")
        )
        return text.splitlines(keepends=True)

    from memd.lint.engine import display_path
    from memd.lint.fix_files import shown

    shown_path = shown(display_path("", path))
    old_name, new_name = (
        (shown_path, shown_path)
        if os.path.isabs(shown_path)
        else (f"a/{shown_path}", f"b/{shown_path}")
    )
    if edit.old is None:
        old_name = "/dev/null"
    if edit.is_removal:
        new_name = "/dev/null"
    new = [] if edit.is_removal else lines(edit.new)
    diff = difflib.unified_diff(lines(edit.old), new, old_name, new_name)
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in diff
    )
    return out
