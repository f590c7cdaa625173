"""`memd recall QUERY`: the memories that answer a question, ranked offline.

`memd/cli/main.py` builds only this command's parser, and a project whose
resolution record (`memd.snapshot.serve`) is fresh is answered without
reading settings or config: this command is timed against a bare `python -c`.
Directories no live daemon keeps current are refreshed by `stat` first
(`memd.recall.index.recall`).
"""

from __future__ import annotations

import os
import sys

from memd.claude_code.terms import MEMORY_TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from memd.recall.query import Hit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from memd.cli.commands._options import add_project_argument  # argparse's path only

    parser.add_argument("query", nargs="+", metavar="QUERY", help="what to recall")
    where = parser.add_mutually_exclusive_group()
    add_project_argument(where, "whose memory to search")
    where.add_argument(
        "--all", action="store_true", help="search every project's memory"
    )
    parser.add_argument(
        "--limit", type=_positive, default=5, metavar="N", help="results (default: 5)"
    )
    parser.add_argument(
        "--type", choices=MEMORY_TYPES, default=None, help="only this type"
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (default: text)",
    )


_VALUE_OPTIONS = {"--project": "project", "--limit": "limit", "--type": "type"}


def parse_simple(argv: list[str]) -> object | None:
    """Parse the plain argv shapes without argparse; None sends them to argparse.

    Plain means: words, `--all`, and `--project`, `--limit`, `--type`, `--format`
    each with a valid value. Help, unknown options and every mistake go the
    long way, so their messages and exit codes are argparse's.
    """
    values: dict[str, object] = {
        "query": [],
        "all": False,
        "project": None,
        "limit": 5,
        "type": None,
        "format": "text",
        "command": "recall",
        "_module": "memd.cli.commands.recall",
        "debug": False,
    }
    words: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "--all":
            values["all"] = True
        elif arg in _VALUE_OPTIONS or arg == "--format":
            value = next(rest, None)
            if value is None or value.startswith("-"):
                return None
            values[_VALUE_OPTIONS.get(arg, "format")] = value
        elif arg == "--":
            words.extend(rest)
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
    limit = str(values["limit"])
    if (
        not words
        or (values["all"] and values["project"] is not None)
        or not limit.isdigit()
        or int(limit) < 1
        or values["type"] not in (None, *MEMORY_TYPES)
        or values["format"] not in ("text", "json")
    ):
        return None
    values["query"], values["limit"] = words, int(limit)
    return _Parsed(values)


class _Parsed:
    """What `parse_simple` returns: an argparse-shaped namespace, without `types`."""

    def __init__(self, values: dict[str, object]) -> None:
        self.__dict__.update(values)


def _positive(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    from memd.recall.index import open_index, recall

    env = os.environ
    if args.all:
        cache_dir, max_bytes = _cache_dir(env)
        index = open_index(cache_dir)
        memory_dirs = _every_memory_dir(env, index.memory_dirs())
    else:
        found = _project_memory_dir(args.project, env)
        if found is None:
            return 1
        memory_dir, cache_dir, max_bytes = found
        index = open_index(cache_dir)
        memory_dirs = (memory_dir,)
    with index:
        hits = recall(
            index,
            " ".join(args.query),
            memory_dirs,
            limit=args.limit,
            memory_type=args.type,
            max_file_bytes=max_bytes,
        )
    if index.unusable is not None:
        # Still an answer (exit 0): the directories were read afresh.
        print(
            f"memd recall: index not used ({index.unusable}); searched the memory "
            "directly",
            file=sys.stderr,
        )
    if args.format == "json":
        import json

        from memd.lint.secrets import mask_fields

        shown = [
            mask_fields(h.to_dict(), ("name", "description", "snippet")) for h in hits
        ]
        text = json.dumps(shown, ensure_ascii=False, indent=2)
        print(_printable(text, json_escape=True))
    else:
        _print_text(hits, len(memory_dirs) > 1, None if args.all else _root(args))
    # Here, where main turns a closed pipe or a full disk into an exit code:
    # the installed script then leaves without the interpreter's teardown.
    sys.stdout.flush()
    return 0


def _print_text(
    hits: tuple[Hit, ...], show_dir: bool, project: str | None = None
) -> None:
    """The hits as text; `project` (a root) names the one directory searched.

    Light on purpose: the warm recall imports no JSON or regex module, so the
    name comes from the root the command was run for (memd.projects.naming),
    not from every root memd knows.
    """
    if not hits:
        print("no matching memories", file=sys.stderr)
        return
    from memd.claude_code.paths import home_dir
    from memd.projects.naming import project_label, root_in, tilde

    home = home_dir()
    lines = []
    for number, hit in enumerate(hits, start=1):
        tag = f"[{hit.type}] " if hit.type else ""
        where = (
            tilde(os.path.join(hit.memory_dir, hit.relpath), home)
            if show_dir
            else hit.relpath
        )
        lines.append(f"{number}. {tag}{hit.name or hit.relpath}  ({where})")
        if hit.description:
            lines.append(f"   {hit.description}")
        if hit.snippet:
            lines.append(f"   > {hit.snippet}")
    if not show_dir:  # the project by its folder, its memory dir as detail
        memory_dir = hits[0].memory_dir
        roots = [root_in(memory_dir, project)] if project else []
        label = project_label(memory_dir, roots, home)
        detail = tilde(memory_dir.rstrip(os.sep), home)
        lines.append(f"in {label} ({detail})" if label != detail else f"in {label}")
    from memd.lint.secrets import mask_secrets

    print(_printable(mask_secrets("\n".join(lines))))


def _printable(text: str, *, json_escape: bool = False) -> str:
    """`text` with a file name's undecodable bytes (lone surrogates) made visible.

    In JSON a surrogate is written as its `\\udcXX` escape, which Python reads
    back as the same name; in text as the byte it stands for (`\\xff`).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        if json_escape:
            return "".join(
                f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text
            )
        from memd.diagnostics import escape_surrogates

        return escape_surrogates(text)
    return text


def _root(args: argparse.Namespace) -> str:
    """The folder recall ran for (`--project`, else here), as the agent fixes it."""
    from memd.claude_code.paths import project_root_of

    return project_root_of(args.project if args.project is not None else os.getcwd())


def _project_memory_dir(
    project: str | None, env: Mapping[str, str]
) -> tuple[str, str, int | None] | None:
    """Return (memory dir, cache dir, topic-file cap) for the project, or None if off.

    The resolution record `memd prompt` keeps answers without reading any
    settings; otherwise the project is resolved as the agent does, and the
    record written so the next call is fast.
    """
    from memd.claude_code.paths import project_root_of
    from memd.errors import UsageError
    from memd.snapshot.serve import read_record

    start = project if project is not None else os.getcwd()
    if not os.path.isdir(start):
        raise UsageError(f"--project {start}: not a directory")
    root = project_root_of(start)
    record = read_record(root, env)
    if record is not None:
        return record[0], record[1], None
    import time

    from memd.claude_code.paths import resolve_memory_location
    from memd.config import load_config
    from memd.snapshot.serve import write_record

    resolved_ns = time.time_ns()
    config = load_config(env)
    location = resolve_memory_location(root, env)
    if not location.enablement.enabled:
        print(
            f"memd: auto memory is disabled for {location.project_root} "
            f"({location.enablement.reason}); nothing to recall",
            file=sys.stderr,
        )
        return None
    import contextlib

    with contextlib.suppress(OSError):  # a read-only cache only costs speed
        write_record(location, config=config, built_ns=resolved_ns, env=env)
    return location.memory_dir, config.cache_dir, config.max_topic_file_bytes


_CONFIG_VARIABLES = ("MEMD_CONFIG", "MEMD_CACHE_DIR", "MEMD_MAX_TOPIC_FILE_BYTES")


def _cache_dir(env: Mapping[str, str]) -> tuple[str, int | None]:
    """memd's cache dir and topic-file cap (None: the default), as config gives them.

    With no config.toml and none of the variables that set these, both are
    the defaults, and `memd.config` (which costs more to import than this
    whole command) is not needed.
    """
    from memd.dirs import config_path, default_cache_dir

    if any(env.get(v) for v in _CONFIG_VARIABLES) or os.path.exists(config_path(env)):
        from memd.config import load_config

        config = load_config(env)
        return config.cache_dir, config.max_topic_file_bytes
    return default_cache_dir(env), None


def _every_memory_dir(
    env: Mapping[str, str], indexed: tuple[str, ...]
) -> tuple[str, ...]:
    """Every `<base>/projects/*/memory` plus every directory the index holds."""
    from memd.claude_code.paths import memory_base_dir

    projects = os.path.join(memory_base_dir(env), "projects")
    found = set(indexed)
    from memd.fsread import list_dir

    try:
        for entry in list_dir(projects):
            candidate = os.path.join(entry.path, "memory")
            if candidate in found:
                continue  # indexed: the refresh stats it (or trusts its daemon)
            if entry.is_dir(follow_symlinks=False) and os.path.isdir(candidate):
                found.add(candidate)
    except OSError:
        pass
    return tuple(sorted(found))
