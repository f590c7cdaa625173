"""`memd fix [PATH…] [--dry-run]`: apply the safe fixes lint knows, atomically.

With `--dry-run` it prints a unified diff and writes nothing. A file that
changed between planning and writing is skipped, not overwritten.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_paths_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from memd.lint.fixes import FileEdit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_paths_argument(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the diff; write nothing"
    )
    parser.add_argument(
        "--dialect",
        choices=("classic", "nested"),
        default=None,
        help="also rewrite topic-file frontmatter into this dialect "
        "(only where it reads back the same)",
    )


def run(args: argparse.Namespace) -> int:
    from memd.agent.choice import in_force
    from memd.cli.commands._options import chosen_targets
    from memd.config import load_config
    from memd.lint.fix_files import (
        apply_edit,
        plan_directory,
        plan_single_file,
        shown,
    )

    config = load_config()
    max_file_bytes = config.max_topic_file_bytes
    changed = skipped = unreadable = 0
    profile = in_force(config).profile
    targets, none = chosen_targets(args, profile)
    if none:
        print(none)
        return 0
    for target in targets:
        if target.error is not None:
            unreadable += 1
            print(f"memd: cannot read {target.path}: {target.error}", file=sys.stderr)
            continue
        if target.is_dir:
            root, edits = (
                target.path,
                plan_directory(
                    target.path,
                    max_file_bytes=max_file_bytes,
                    dialect=args.dialect,
                    warn=_warn,
                ),
            )
        else:
            root, edits = os.path.dirname(target.path), plan_single_file(target.path)
        for edit in edits:
            path = os.path.join(root, edit.relpath)
            if args.dry_run:
                sys.stdout.write(unified_diff(path, edit))
                continue
            try:
                wrote = apply_edit(root, edit)
            except (
                OSError,
                UnicodeError,
            ) as error:  # one bad file never stops the rest
                skipped += 1
                why = getattr(error, "strerror", None) or str(error)
                print(f"memd: skipped {shown(path)}: {why}", file=sys.stderr)
                continue
            if wrote:
                changed += 1
                print(f"fixed {shown(path)}: {edit.reason}")
            else:
                skipped += 1
                print(
                    f"memd: skipped {shown(path)}: it changed while fixing; "
                    "run memd fix again",
                    file=sys.stderr,
                )
    if not args.dry_run:
        print(f"{changed} file(s) fixed" + (f", {skipped} skipped" if skipped else ""))
    return 2 if unreadable else 0  # an I/O error: what could not be read is unfixed


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
    diff = difflib.unified_diff(lines(edit.old), lines(edit.new), old_name, new_name)
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in diff
    )
    return out
