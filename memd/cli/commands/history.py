"""`memd history`: list the recorded changes of memory, show one as a diff, or purge.

    memd history [FILE] [--project DIR | --all] [--since WHEN] [--no-patch]
                 [--format text|json]
    memd history show REV [FILE]
    memd history purge FILE
    memd history purge --secret FINGERPRINT
    memd history dismiss REV

`dismiss REV` says the loss REV (as `memd status` names it) was meant: it is
shown as dismissed and no longer told at SessionStart.

FILE as the agent names it (`feedback_tests.md`, in the project's memory
directory) or as a path. `memd history FILE` shows that file's versions with
their diffs, as `git log -p FILE`. The history is local (docs/history.md);
WHEN is any form `memd.history.when` reads.
"""

from __future__ import annotations

import contextlib
import os
import sys

from memd.cli.commands._options import add_project_argument

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterable, Iterator

    from memd.config import Config
    from memd.history.copies import Place
    from memd.history.store import Change, History
    from memd.projects.naming import ProjectNames

_FILES_SHOWN = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="*",
        metavar="[show REV | purge | dismiss REV] [PATH]",
        help="PATH: a memory file (or one that was); `show REV [PATH]` prints change "
        "REV as a unified diff; `purge PATH` removes every version of a file; "
        "`dismiss REV` marks the loss REV as meant (no longer told)",
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
        "--no-patch",
        "-s",
        action="store_true",
        help="with FILE: list its changes without their diffs",
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
    actions = ("show", "purge", "dismiss")
    action = words.pop(0) if words and words[0] in actions else "list"
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
    with history_errors(config.state_dir), History.open(config.state_dir) as history:
        _finish_restore(config.state_dir, history)
        if action == "show":
            return _show(args, words, config, history)
        if action == "purge":
            return _purge(args, words, config, history)
        if action == "dismiss":
            return _dismiss(words, config.state_dir, history)
        if len(words) > 1:
            raise UsageError(f"one FILE at most, got {len(words)}")
        return _list(args, words[0] if words else None, config, history)


@contextlib.contextmanager
def history_errors(state_dir: str) -> Iterator[None]:
    """Turn SQLite's failures of the store into one line with the way out."""
    import sqlite3

    from memd.errors import UsageError
    from memd.history.codec import DamagedBlobError
    from memd.history.store import DB_NAME, damaged, history_dir

    try:
        yield
    except sqlite3.OperationalError as error:
        if "locked" in str(error) or "busy" in str(error):
            raise UsageError(
                "the history store is busy (another memd is writing it); try again"
            ) from None
        raise damaged(os.path.join(history_dir(state_dir), DB_NAME), error) from None
    except (sqlite3.DatabaseError, DamagedBlobError) as error:
        raise damaged(os.path.join(history_dir(state_dir), DB_NAME), error) from None


def parse_rev(text: str, option: str) -> int:
    """A revision number as typed: ASCII digits within SQLite's range, or one line."""
    from memd.errors import UsageError
    from memd.history.store import valid_rev

    if not (text.isascii() and text.isdigit() and len(text) <= 19) or not valid_rev(
        int(text)
    ):
        raise UsageError(
            f"{option} {text[:40]}: not a revision (a number `memd history` lists)"
        )
    return int(text)


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
    from memd.history.scan import disk_name
    from memd.history.store import normalize_dir

    known = history.memory_dirs()
    if path is not None and project is None:
        full = normalize_dir(disk_name(path))
        for memory_dir in sorted(known, key=len, reverse=True):
            if full.startswith(memory_dir + os.sep):
                return memory_dir, _kept(path, full[len(memory_dir) + 1 :])
    memory_dir = _project_memory_dir(project, config, known)
    if path is None:
        return memory_dir, None
    if os.path.isabs(path):
        full = normalize_dir(disk_name(path))
        if not full.startswith(memory_dir + os.sep):
            raise UsageError(f"{path}: not in a memory directory with a history")
        return memory_dir, _kept(path, full[len(memory_dir) + 1 :])
    # as the agent names it: relative to the memory directory ("./a.md" too)
    return memory_dir, _kept(path, os.path.normpath(disk_name(path)))


def _kept(typed: str, relpath: str) -> str:
    """The relpath history keeps for a name typed or found on disk, or one line."""
    from memd.errors import UsageError
    from memd.history.scan import kept_name
    from memd.relpath import relpath_refusal

    kept = kept_name(relpath.replace(os.sep, "/"))
    if kept is None:
        why = relpath_refusal(relpath.replace(os.sep, "/")) or "not a memory file"
        raise UsageError(f"{typed}: {why}")
    return kept


def _project_memory_dir(project: str | None, config: Config, known: list[str]) -> str:
    from memd.claude_code.choice import resolve_in_force
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


def loss_revision(text: str) -> int:
    """A loss's revision as typed (`memd status` names it), or one usage line."""
    from memd.errors import UsageError

    try:
        return parse_rev(text, "--loss")
    except UsageError:
        raise UsageError(
            f"{text[:40]}: not a loss revision (`memd status` lists them)"
        ) from None


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
    relpath = None
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
    if not args.all and relpath is not None and not args.no_patch:
        out += _file_log(history, changes, relpath, stamps)
    else:
        out += [
            line
            for change in changes
            for line in format_change(
                change, with_dir=args.all, stamps=stamps, only=relpath, names=names
            )
        ]
    if not changes:
        out.append("no recorded changes")
    else:
        out.append(zone_note())
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _file_log(
    history: History, changes: list[Change], relpath: str, stamps: dict[int, str]
) -> list[str]:
    """`git log -p FILE`: each change of the file, newest first, with its diff.

    Read oldest first, so each version inflates once against the one before
    it (the store keeps recent ones decoded).
    """
    blocks: list[list[str]] = []
    last: bytes | None = None  # the version the previous change left: this one's base
    for at, change in enumerate(reversed(changes)):
        block = format_change(change, stamps=stamps, only=relpath)
        for file in change.files:
            if file.relpath == relpath:
                known = at > 0 and file.old_relpath is None
                block += _file_diff(
                    history, change, file.relpath, file.old_relpath, last, known
                )
                last = history.file_at(change.memory_dir, relpath, change.rev)
        blocks.append(block)
    return [line for block in reversed(blocks) for line in block]


def _file_diff(
    history: History,
    change: Change,
    relpath: str,
    old_relpath: str | None,
    base: bytes | None = None,
    known: bool = False,
) -> list[str]:
    """One file's unified diff within `change` (from its old name, if renamed);
    `known`: `base` is its version before (so it is not read again)."""
    import difflib

    before_name = old_relpath or relpath
    before = (
        base
        if known
        else history.file_at(change.memory_dir, before_name, change.rev - 1)
    )
    after = history.file_at(change.memory_dir, relpath, change.rev)
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            _lines(before),
            _lines(after),
            fromfile="/dev/null" if before is None else f"a/{before_name}",
            tofile="/dev/null" if after is None else f"b/{relpath}",
        )
    ]


def format_change(
    change: Change,
    *,
    with_dir: bool = False,
    stamps: dict[int, str] | None = None,
    only: str | None = None,
    names: ProjectNames | None = None,
) -> list[str]:
    """A change as text: a heading line, then one line per file (`only`: that one).

    The time is local and short (`today 23:08:13`, memd.times), one `--at`
    takes back. `stamps` caches each minute's words (zone offsets change on
    whole minutes), so 10,000 changes cost few `localtime` calls. `with_dir`
    names the project (`names`, memd.projects), else the directory's path.
    """
    import time

    from memd.diagnostics import escape_surrogates
    from memd.history.wording import cause_words
    from memd.times import clock

    minute, second = divmod(int(change.at), 60)
    cache = {} if stamps is None else stamps
    prefix = cache.get(minute)
    if prefix is None:
        prefix = cache[minute] = clock(minute * 60, now=time.time(), seconds=False)
    stamp = f"{prefix}:{second:02d}"
    head = f"rev {change.rev}  {stamp}  {cause_words(change.cause)}"
    if change.session:
        head += f"  session {change.session}"
    head += f"  +{change.bytes_added} -{change.bytes_removed} bytes"
    if with_dir:
        where = change.memory_dir if names is None else names.label(change.memory_dir)
        head += f"  {escape_surrogates(where)}"
    lines = [head]
    if change.loss:
        lines.append(f"    LOSS: {change.loss}")
    files = change.files
    if only is not None:
        files = tuple(f for f in files if only in (f.relpath, f.old_relpath))
    others = len(change.files) - len(files)
    for file in files[:_FILES_SHOWN]:
        # relpaths are kept names (memd.history.scan.kept_name): printable
        name = file.relpath
        if file.old_relpath is not None:
            name = f"{file.old_relpath} -> {name}"
        lines.append(f"    {file.kind:<8} {name}")
    if len(files) > _FILES_SHOWN:
        lines.append(f"    ... and {len(files) - _FILES_SHOWN} more")
    if only is not None and others:
        noun = "file" if others == 1 else "files"
        lines.append(f"    (and {others} other {noun} in this change)")
    return lines


def _show(
    args: argparse.Namespace, words: list[str], config: Config, history: History
) -> int:
    from memd.errors import UsageError

    if not words or len(words) > 2:
        raise UsageError("usage: memd history show REV [FILE]")
    if not words[0].isdigit():
        raise UsageError(f"usage: memd history show REV [FILE] (REV: {words[0][:40]}?)")
    rev = parse_rev(words[0], "show")
    change = history.change(rev)
    if change is None:
        raise UsageError(f"no change {rev} in the history")
    relpath = None
    if len(words) == 2:
        _, relpath = resolve_target(words[1], change.memory_dir, config, history)
    out = format_change(change)
    for file in change.files:
        if relpath is not None and relpath not in (file.relpath, file.old_relpath):
            continue
        out += _file_diff(history, change, file.relpath, file.old_relpath)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines(True)


def _purge(
    args: argparse.Namespace, words: list[str], config: Config, history: History
) -> int:
    """Purge the history, then every other copy memd keeps (memd.history.copies)."""
    from memd.errors import UsageError
    from memd.history.lock import write_lock

    if args.secret is not None:
        if words:
            raise UsageError("purge takes FILE or --secret FINGERPRINT, not both")
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
                where = names.both(memory_dir)
                print(f"purged {count} version(s) of {relpath} in {where}")
            if not hits:
                print(f"no recorded version holds the secret {fingerprint}")
            _purge_copies(config, history, None, _holds_secret(fingerprint))
        return 0
    if len(words) != 1:
        raise UsageError("usage: memd history purge FILE | --secret FINGERPRINT")
    memory_dir, named = resolve_target(words[0], args.project, config, history)
    if named is None:
        raise UsageError(f"{words[0]}: name a file to purge, not a directory")
    relpath = named
    with write_lock(config.state_dir):
        doomed = _is_version_of(history, memory_dir, relpath)
        kept_as = sorted({rel for rel, _ in history.lineage(memory_dir, relpath)})
        count = history.purge_path(memory_dir, relpath)
        olds = [name for name in kept_as if name != relpath]
        also = f" (with its versions named {', '.join(olds)})" if olds else ""
        label = _names([memory_dir], config).both(memory_dir)
        print(f"purged {count} version(s) of {relpath} in {label}{also}")
        for newer in history.renamed_to(memory_dir, relpath):
            print(
                f"memd: {relpath} was renamed to {newer}, whose versions are kept;"
                f" `memd history purge {newer}` removes them too",
                file=sys.stderr,
            )
        _purge_copies(config, history, memory_dir, doomed)
    return 0


def _holds_secret(fingerprint: str) -> Callable[[str, bytes], bool]:
    from memd.lint.secrets import find_secrets_in_bytes

    def holds(_relpath: str, data: bytes) -> bool:
        return any(f.fingerprint == fingerprint for f in find_secrets_in_bytes(data))

    return holds


def _is_version_of(
    history: History, memory_dir: str, relpath: str
) -> Callable[[str, bytes], bool]:
    """Whether a copy is a version of `relpath` (its bytes, or its name, any name)."""
    import hashlib

    names: set[str] = set()
    shas: set[bytes] = set()
    for name, rev in history.lineage(memory_dir, relpath):
        names.add(name)
        data = history.file_at(memory_dir, name, rev)
        if data:  # an empty file is no one's content
            shas.add(hashlib.sha256(data).digest())

    def doomed(copy_relpath: str, data: bytes) -> bool:
        return hashlib.sha256(data).digest() in shas or any(
            copy_relpath == name or copy_relpath.endswith("/" + name) for name in names
        )

    return doomed


def _purge_copies(
    config: Config,
    history: History,
    memory_dir: str | None,
    doomed: Callable[[str, bytes], bool],
) -> None:
    """Every place but the history (docs/history.md): removed, or named."""
    from memd.history.copies import purge_copies

    for label, path in purge_copies(_places(config, memory_dir), doomed):
        print(f"removed {label} {path}")
    for line in _repositories_holding(config, history, memory_dir, doomed):
        print(line, file=sys.stderr)


def _places(config: Config, memory_dir: str | None) -> list[Place]:
    """Where memd keeps memory bytes besides the history: `memory_dir`'s, or all."""
    from memd.history.copies import Place
    from memd.kairos.external import kept_root, staging_root
    from memd.kairos.generations import generations_root
    from memd.lint.fix_files import undo_dir
    from memd.recall.store import index_path

    state = config.state_dir
    journal, generations = "the fix undo journal", "the dream generation"
    kept, staging = "the dream's kept copy", "the dream's staging copy"
    if memory_dir is None:
        top = os.path.dirname
        places = [
            Place(journal, top(undo_dir(state, os.sep)), 1),
            Place(generations, top(generations_root(state, os.sep)), 2),
            Place(kept, top(kept_root(state, os.sep))),
            Place(staging, top(staging_root(state, os.sep)), 1),
        ]
    else:
        places = [
            Place(journal, undo_dir(state, memory_dir), 0),
            Place(generations, generations_root(state, memory_dir), 1),
            Place(kept, kept_root(state, memory_dir)),
            Place(staging, staging_root(state, memory_dir), 0),
        ]
    return [
        *places,
        Place(
            "the recall index (rebuilt from disk)",
            index_path(config.cache_dir),
            cache=True,
        ),
        Place(
            "the snapshots (rebuilt from disk)",
            os.path.join(config.cache_dir, "snapshots"),
            cache=True,
        ),
    ]


def _repositories_holding(
    config: Config,
    history: History,
    memory_dir: str | None,
    doomed: Callable[[str, bytes], bool],
) -> list[str]:
    """The sync repositories whose git objects still hold it: named, not rewritten.

    Their history is shared with a remote and every teammate, so a purge
    there is a rewrite and a force-push, which memd never does.
    """
    from memd.errors import MemdError
    from memd.gitsync.git import Git
    from memd.sync.engine import repo_dir

    trees = [repo_dir(config.state_dir)]
    dirs = [memory_dir] if memory_dir is not None else history.memory_dirs()
    trees += [os.path.join(directory, "team") for directory in dirs]
    lines = []
    for tree in trees:
        if not os.path.isdir(os.path.join(tree, ".git")):
            continue
        try:
            objects = (
                Git(tree)
                .run("cat-file", "--batch-all-objects", "--batch", check=False)
                .stdout
            )
        except MemdError:
            continue
        if _any_object(objects, doomed):
            lines.append(
                f"memd: the sync repository {tree} still holds it in its git"
                " history, shared with its remote, which memd does not rewrite;"
                " rotate the secret, or rewrite that history (git filter-repo)"
                " and force-push"
            )
    return lines


def _any_object(batch: bytes, doomed: Callable[[str, bytes], bool]) -> bool:
    """Whether an object of `git cat-file --batch` output is doomed."""
    at = 0
    while at < len(batch):
        end = batch.find(b"\n", at)
        if end < 0:
            return False
        header = batch[at:end].split()
        try:
            size = int(header[2])
        except (IndexError, ValueError):
            return False
        body = batch[end + 1 : end + 1 + size]
        if header[1] == b"blob" and doomed("", body):
            return True
        at = end + 1 + size + 1
    return False


def _dismiss(words: list[str], state_dir: str, history: History) -> int:
    """Mark a loss as meant: shown as dismissed, no longer told at SessionStart."""
    from memd.errors import UsageError
    from memd.history.lock import write_lock
    from memd.history.record import settle_notice
    from memd.history.wording import DISMISSED, OPEN

    if len(words) != 1:
        raise UsageError("usage: memd history dismiss REV (a loss `memd status` names)")
    rev = loss_revision(words[0])
    loss = history.loss(rev)
    if loss is None:
        raise UsageError(f"no loss {rev} in the history (`memd status` lists them)")
    if loss.state != OPEN:
        print(f"loss {rev} is already {loss.state}")
        return 0
    with write_lock(state_dir):
        history.settle_loss(rev, DISMISSED)
    settle_notice(state_dir, loss.memory_dir, [rev])
    print(f"dismissed loss {rev}: {loss.sentence}")
    return 0
