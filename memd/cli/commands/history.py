"""`memd history`: list the recorded changes of memory, show one as a diff, or purge.

    memd history [PATH] [--project DIR | --all] [--since WHEN] [--format text|json]
    memd history show REV [PATH]
    memd history purge PATH
    memd history purge --secret FINGERPRINT

The history is local (docs/history.md); WHEN is any form `memd.history.when` reads.
"""

from __future__ import annotations

import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable

    from memd.config import Config
    from memd.history.store import Change, History
    from memd.projects.naming import ProjectNames

_FILES_SHOWN = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="*",
        metavar="[show REV | purge] [PATH]",
        help="PATH: a memory file (or one that was); `show REV [PATH]` prints change "
        "REV as a unified diff; `purge PATH` removes every version of a file",
    )
    where = parser.add_mutually_exclusive_group()
    add_project_argument(where, "or memory directory whose history to show")
    where.add_argument(
        "--all", action="store_true", help="every memory directory with a history"
    )
    parser.add_argument(
        "--since",
        metavar="WHEN",
        help="only changes since WHEN: '10 minutes ago', 'yesterday 18:00', "
        "HH:MM, or an ISO time",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format"
    )
    parser.add_argument(
        "--secret",
        metavar="FINGERPRINT",
        help="with purge: remove every version holding this S001 secret "
        "(the fingerprint `memd lint` prints)",
    )


def run(args: argparse.Namespace) -> int:
    from memd.config import load_config
    from memd.errors import UsageError
    from memd.history.store import History

    config = load_config()
    words = list(args.words)
    action = words.pop(0) if words and words[0] in ("show", "purge") else "list"
    if action != "purge" and args.secret is not None:
        raise UsageError("--secret goes with `memd history purge`")
    if not os.path.exists(os.path.join(config.state_dir, "history")):
        if action == "list" and args.format == "json":
            sys.stdout.write("[]\n")
        elif action == "list":
            print("memd: no history recorded yet (is `memd run` running?)")
        else:
            raise UsageError("no history recorded yet")
        return 0
    with History.open(config.state_dir) as history:
        _finish_restore(config.state_dir, history)
        if action == "show":
            return _show(args, words, config, history)
        if action == "purge":
            return _purge(args, words, config, history)
        if len(words) > 1:
            raise UsageError(f"one PATH at most, got {len(words)}")
        return _list(args, words[0] if words else None, config, history)


def _finish_restore(state_dir: str, history: History) -> None:
    """Roll forward a restore a kill interrupted, before reading (docs/history.md)."""
    from memd.history.store import RESTORE_JOURNAL, history_dir

    if os.path.exists(os.path.join(history_dir(state_dir), RESTORE_JOURNAL)):
        from memd.history.lock import write_lock
        from memd.history.restore import recover

        with write_lock(state_dir):
            recover(state_dir, history)


def resolve_target(
    path: str | None, project: str | None, config: Config, history: History
) -> tuple[str, str | None]:
    """(memory dir, relpath or None) for a PATH and/or `--project DIR`.

    PATH may be a file inside a memory directory with a history (present or
    deleted), or a relpath inside the project's memory directory. DIR may be
    a project or a memory directory itself.

    Raises:
        UsageError: nothing with a history matches.
    """
    from memd.errors import UsageError
    from memd.history.store import normalize_dir
    from memd.relpath import relpath_refusal

    known = history.memory_dirs()
    if path is not None and project is None:
        full = normalize_dir(path)
        for memory_dir in sorted(known, key=len, reverse=True):
            if full.startswith(memory_dir + os.sep):
                return memory_dir, full[len(memory_dir) + 1 :].replace(os.sep, "/")
    memory_dir = _project_memory_dir(project, config, known)
    if path is None:
        return memory_dir, None
    relpath = path.replace(os.sep, "/")
    if os.path.isabs(path):
        full = normalize_dir(path)
        if not full.startswith(memory_dir + os.sep):
            raise UsageError(f"{path}: not in a memory directory with a history")
        relpath = full[len(memory_dir) + 1 :].replace(os.sep, "/")
    refusal = relpath_refusal(relpath)
    if refusal is not None:
        raise UsageError(f"{path}: {refusal}")
    return memory_dir, relpath


def _project_memory_dir(project: str | None, config: Config, known: list[str]) -> str:
    from memd.agent.choice import resolve_in_force
    from memd.errors import UsageError
    from memd.history.store import normalize_dir

    where = project if project is not None else os.getcwd()
    if normalize_dir(where) in known:
        return normalize_dir(where)
    if not os.path.isdir(where):
        raise UsageError(f"--project {where}: not a directory")
    memory_dir = normalize_dir(resolve_in_force(where, config).memory_dir)
    if memory_dir not in known:
        label = _names([memory_dir], config).both(memory_dir)
        raise UsageError(f"no history of {label} (is `memd run` watching it?)")
    return memory_dir


def _names(memory_dirs: Iterable[str], config: Config) -> ProjectNames:
    from memd.projects.roots import load_project_names

    return load_project_names(memory_dirs, config=config)


def parse_when_arg(text: str, option: str) -> float:
    import time

    from memd.errors import UsageError
    from memd.history.when import parse_when

    try:
        # --at covers the whole second or minute it names: a pasted printed time
        # selects the change printed with it (memd.history.when)
        return parse_when(text, now=time.time(), through=option == "--at")
    except ValueError as error:
        raise UsageError(f"{option}: {error}") from None


def _list(
    args: argparse.Namespace, path: str | None, config: Config, history: History
) -> int:
    since = None if args.since is None else parse_when_arg(args.since, "--since")
    if args.all:
        if path is not None:
            from memd.errors import UsageError

            raise UsageError("--all lists every directory; give no PATH with it")
        changes = history.changes(since=since)
    else:
        memory_dir, relpath = resolve_target(path, args.project, config, history)
        changes = history.changes(memory_dir, relpath=relpath, since=since)
    from memd.projects.roots import load_project_names
    from memd.times import iso, zone_note

    if args.all:
        names = load_project_names({c.memory_dir for c in changes}, config=config)
        out = []
    else:
        names = load_project_names([memory_dir], config=config)
        out = [f"history of {names.both(memory_dir)}"]
    if args.format == "json":
        from memd.fastjson import dumps

        shown = [
            # `at` stays epoch seconds; `time` is ISO 8601 with the offset (#42)
            {**c.to_dict(), "time": iso(c.at), "project": names.label(c.memory_dir)}
            for c in changes
        ]
        sys.stdout.write(dumps(shown) + "\n")
        return 0
    stamps: dict[int, str] = {}
    out += [
        line
        for change in changes
        for line in format_change(change, with_dir=args.all, stamps=stamps, names=names)
    ]
    if not changes:
        out.append("no recorded changes")
    else:
        out.append(zone_note())
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def format_change(
    change: Change,
    *,
    with_dir: bool = False,
    stamps: dict[int, str] | None = None,
    names: ProjectNames | None = None,
) -> list[str]:
    """A change as text: a heading line, then one line per file.

    The time is local and short (`today 23:08:13`, memd.times), one `--at`
    takes back. `stamps` caches each minute's words (zone offsets change on
    whole minutes), so 10,000 changes cost few `localtime` calls. `with_dir`
    names the project (`names`, memd.projects), else the directory's path.
    """
    import time

    from memd.diagnostics import escape_surrogates
    from memd.times import clock

    minute, second = divmod(int(change.at), 60)
    cache = {} if stamps is None else stamps
    prefix = cache.get(minute)
    if prefix is None:
        prefix = cache[minute] = clock(minute * 60, now=time.time(), seconds=False)
    stamp = f"{prefix}:{second:02d}"
    head = f"rev {change.rev}  {stamp}  {change.cause}"
    if change.session:
        head += f"  session {change.session}"
    head += f"  +{change.bytes_added} -{change.bytes_removed} bytes"
    if with_dir:
        where = change.memory_dir if names is None else names.label(change.memory_dir)
        head += f"  {escape_surrogates(where)}"
    lines = [head]
    if change.loss:
        lines.append(f"    LOSS: {change.loss}")
    for file in change.files[:_FILES_SHOWN]:
        # relpaths are what memd.relpath accepts (no lone surrogate): printable
        name = file.relpath
        if file.old_relpath is not None:
            name = f"{file.old_relpath} -> {name}"
        lines.append(f"    {file.kind:<8} {name}")
    if len(change.files) > _FILES_SHOWN:
        lines.append(f"    ... and {len(change.files) - _FILES_SHOWN} more")
    return lines


def _show(
    args: argparse.Namespace, words: list[str], config: Config, history: History
) -> int:
    import difflib

    from memd.errors import UsageError

    if not words or not words[0].isdigit() or len(words) > 2:
        raise UsageError("usage: memd history show REV [PATH]")
    change = history.change(int(words[0]))
    if change is None:
        raise UsageError(f"no change {words[0]} in the history")
    relpath = None
    if len(words) == 2:
        _, relpath = resolve_target(words[1], change.memory_dir, config, history)
    out = format_change(change)
    for file in change.files:
        if relpath is not None and relpath not in (file.relpath, file.old_relpath):
            continue
        before_name = file.old_relpath or file.relpath
        before = history.file_at(change.memory_dir, before_name, change.rev - 1)
        after = history.file_at(change.memory_dir, file.relpath, change.rev)
        out += [
            line.rstrip("\n")
            for line in difflib.unified_diff(
                _lines(before),
                _lines(after),
                fromfile="/dev/null" if before is None else f"a/{before_name}",
                tofile="/dev/null" if after is None else f"b/{file.relpath}",
            )
        ]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines(True)


def _purge(
    args: argparse.Namespace, words: list[str], config: Config, history: History
) -> int:
    from memd.errors import UsageError
    from memd.history.lock import write_lock

    if args.secret is not None:
        if words:
            raise UsageError("purge takes PATH or --secret FINGERPRINT, not both")
        fingerprint = args.secret.strip().lower()
        if len(fingerprint) != 16 or not all(
            c in "0123456789abcdef" for c in fingerprint
        ):
            raise UsageError(
                f"--secret {args.secret}: expected 16 hex digits (S001's fingerprint)"
            )
        with write_lock(config.state_dir):
            hits = history.purge_secret(fingerprint)
        names = _names({memory_dir for memory_dir, _, _ in hits}, config)
        for memory_dir, relpath, count in hits:
            print(f"purged {count} version(s) of {relpath} in {names.both(memory_dir)}")
        if not hits:
            print(f"no recorded version holds the secret {fingerprint}")
        return 0
    if len(words) != 1:
        raise UsageError("usage: memd history purge PATH | --secret FINGERPRINT")
    memory_dir, named = resolve_target(words[0], args.project, config, history)
    if named is None:
        raise UsageError(f"{words[0]}: name a file to purge, not a directory")
    relpath = named
    with write_lock(config.state_dir):
        count = history.purge_path(memory_dir, relpath)
    label = _names([memory_dir], config).both(memory_dir)
    print(f"purged {count} version(s) of {relpath} in {label}")
    return 0
