"""`memd fix [PATH…] [--dry-run]`: apply the safe fixes lint knows, atomically.

With `--dry-run` it prints a unified diff and writes nothing. A file that
changed between planning and writing is skipped, not overwritten.
"""

from __future__ import annotations

import errno
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
    from memd.config import load_config
    from memd.lint.targets import resolve_targets

    config = load_config()
    max_file_bytes = config.max_topic_file_bytes
    changed = skipped = unreadable = 0
    profile = in_force(config).profile
    for target in resolve_targets(args.paths, profile=profile):
        if target.error is not None:
            unreadable += 1
            print(f"memd: cannot read {target.path}: {target.error}", file=sys.stderr)
            continue
        if target.is_dir:
            root, edits = (
                target.path,
                plan_directory(
                    target.path, max_file_bytes=max_file_bytes, dialect=args.dialect
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


def plan_directory(
    memory_dir: str, *, max_file_bytes: int = 256 * 1024, dialect: str | None = None
) -> tuple[FileEdit, ...]:
    """Load `memory_dir`, read its index and topic files, and plan the safe fixes."""
    from memd.lint.fixes import is_utf8_name, plan_fixes
    from memd.memory.reader import load_memdir

    memdir = load_memdir(memory_dir, max_file_bytes=max_file_bytes)
    for relpath in memdir.unreadable_paths:  # FIFOs, directories, unreadable files
        print(
            f"memd: skipped {shown(os.path.join(memory_dir, relpath))}: "
            "it cannot be read as a file (see memd lint)",
            file=sys.stderr,
        )
    for f in memdir.files:
        if not is_utf8_name(f.relpath):
            print(
                f"memd: not indexing {shown(os.path.join(memory_dir, f.relpath))}: "
                "its name is not valid UTF-8; rename it",
                file=sys.stderr,
            )
    raw: dict[str, bytes] = {}
    index_is_file = True
    for relpath in ("MEMORY.md", *(f.relpath for f in memdir.files)):
        path = os.path.join(memdir.path, relpath)
        data = _read(path, max_file_bytes)
        if data is not None:
            raw[relpath] = data
        elif relpath == "MEMORY.md" and os.path.lexists(path):
            print(
                f"memd: skipped {shown(path)}: not a regular file; the index is "
                "left alone",
                file=sys.stderr,
            )
            index_is_file = False
    return plan_fixes(memdir, raw, dialect=dialect, index=index_is_file)


def plan_single_file(path: str) -> tuple[FileEdit, ...]:
    """Plan the encoding fixes for one topic file outside a memory directory."""
    from memd.lint.fixes import FileEdit, is_safe_to_rewrite, normalise_bytes
    from memd.memory.memfile import parse_memory_file

    data = _read(path, 256 * 1024)
    if data is None:
        return ()
    new = normalise_bytes(data)
    if new == data or not is_safe_to_rewrite(
        parse_memory_file(os.path.basename(path), data)
    ):
        return ()
    return (
        FileEdit(
            relpath=os.path.basename(path),
            old=data,
            new=new,
            reason="normalise CRLF/BOM",
        ),
    )


def shown(path: str) -> str:
    """Return `path` printable on any terminal: undecodable bytes as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _read(path: str, limit: int) -> bytes | None:
    """Return the file's bytes; None if missing, not a regular file or too big."""
    from memd.fsread import read_bytes

    try:
        return read_bytes(path, limit)
    except OSError:
        return None


def apply_edit(root: str, edit: FileEdit) -> bool:
    """Write `edit` below `root` atomically unless the file no longer holds `edit.old`.

    The file is re-read and replaced relative to `root`'s descriptor, each
    folder on the way opened with `O_NOFOLLOW` (`memd.atomic.write_atomic_beneath`):
    a folder swapped for a symlink since the plan was made fails the edit
    instead of carrying the write out of the memory directory.
    Returns whether it wrote.
    """
    from memd.atomic import write_atomic_beneath
    from memd.fsread import open_dir, read_beneath

    root_fd = open_dir(root or ".", follow=True)  # the memory dir may be a link
    try:
        try:
            current: bytes | None = read_beneath(
                root_fd, edit.relpath, max(len(edit.old or b""), 1) + 1
            )
        except FileNotFoundError:
            current = None
        except OSError as error:
            if error.errno != errno.EFBIG:
                raise
            current = None  # grown past the planned bytes: it changed
        if current != edit.old:
            return False
        write_atomic_beneath(root_fd, edit.relpath, edit.new)
    finally:
        os.close(root_fd)
    return True


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
