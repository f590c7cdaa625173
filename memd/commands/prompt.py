"""`memd prompt`: print a project's memory prompt, warm from a snapshot when fresh.

Two paths. `serve_warm` runs before argparse (memd/cli.py) and answers the
plain argv shapes from a *resolution record*: a small text file in the cache,
keyed by the project root, that says which memory directory the project
resolved to, which snapshot store holds it, and the stat of every file that
decided it (settings files, each `.git` looked at, config.toml) plus a
fingerprint of the environment that matters (CLAUDE_*, MEMD_*, HOME, XDG_*).
If the record and the snapshot both stat fresh, the prompt bytes are copied to
stdout; nothing is parsed but `str.split`. Anything else returns None and the
full parser runs `run`, which resolves, renders, writes the snapshot and the
record, emits telemetry and remembers the project for the daemon.

Only `os` and `sys` are imported at the top; the warm path adds
`memd.snapshots` (and through it `memd.paths`, `memd.jscompat`, `unicodedata`).
"""

from __future__ import annotations

import os
import sys

from memd.commands._options import add_project_argument, project_dir
from memd.serving import EXTRA_GUIDELINES_ENV, MODES, read_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from memd.serving import FreshPrompt
    from memd.snapshots import SnapshotStore


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_project_argument(parser, "directory")
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="prompt mode (default: team when team memory is on, else standard)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text prints the prompt; json adds its metadata (default: text)",
    )
    parser.add_argument(
        "--path",
        action="store_true",
        help="print the path of the fresh snapshot's prompt file instead of the prompt",
    )


# -- the warm path -------------------------------------------------------------


def serve_warm(argv: list[str]) -> int | None:
    """Print a fresh snapshot for the simple argv shapes and return 0; else None."""
    parsed = _parse_simple(argv)
    if parsed is None:
        return None
    project, mode, want_path = parsed
    try:
        return _serve(project, mode, want_path, os.environ)
    except (OSError, ValueError):  # anything odd: let the full path decide and report
        return None


def _parse_simple(argv: list[str]) -> tuple[str | None, str | None, bool] | None:
    project: str | None = None
    mode: str | None = None
    want_path = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in ("--project", "--mode", "--format"):
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if name == "--project":
                project = value
            elif name == "--mode":
                if value not in MODES:
                    return None
                mode = value
            elif value != "text":
                return None
        elif arg == "--path":
            want_path = True
        else:
            return None
        i += 1
    return project, mode, want_path


def _serve(
    project: str | None, mode: str | None, want_path: bool, env: Mapping[str, str]
) -> int | None:
    from memd.paths import project_root_of
    from memd.snapshots import SnapshotStore

    root = project_root_of(project if project is not None else os.getcwd())
    record = read_record(root, env)
    if record is None:
        return None
    memory_dir, cache_dir, default_mode = record
    mode = mode or default_mode
    store = SnapshotStore(cache_dir)
    data = store.read_fresh_bytes(
        memory_dir, mode, extra_guidelines=env.get(EXTRA_GUIDELINES_ENV)
    )
    if data is None:
        return None
    if want_path:
        data = (store.prompt_path(memory_dir, mode) + "\n").encode(
            "utf-8", "surrogateescape"
        )
    _write_stdout(data)
    return 0


def _write_stdout(data: bytes) -> None:
    """Write exact bytes to stdout (through the text layer when there is no buffer)."""
    stream = sys.stdout
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is None:
            stream.write(data.decode("utf-8", "replace"))
        else:
            buffer.write(data)
        stream.flush()
    except BrokenPipeError:
        # The reader went away (`memd prompt | head`): not an error. Point stdout
        # at /dev/null so the interpreter's flush at exit stays quiet.
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, sys.stdout.fileno())
            os.close(fd)
        except (OSError, ValueError):
            pass


# -- the full path ---------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    import time

    from memd.config import load_config
    from memd.paths import resolve_memory_location
    from memd.serving import (
        default_mode,
        disabled_event,
        emit_events,
        fresh_prompt,
        loaded_events,
    )
    from memd.snapshots import SnapshotStore

    project = project_dir(args)
    env = os.environ
    config = load_config(env)
    resolved_ns = time.time_ns()  # before any deciding file is read (racy rule)
    location = resolve_memory_location(project, env)
    if not location.enablement.enabled:
        emit_events(config, [disabled_event(location, env)])
        return 0
    fresh = fresh_prompt(
        location,
        args.mode or default_mode(config),
        config,
        env,
        resolved_ns=resolved_ns,
    )
    store = SnapshotStore(config.cache_dir)
    prompt_path = store.prompt_path(location.memory_dir, fresh.mode)
    if args.path:
        if fresh.write_error is not None:
            raise fresh.write_error
        _write_stdout((prompt_path + "\n").encode("utf-8", "surrogateescape"))
    elif args.format == "json":
        _write_stdout(_json_output(fresh, store).encode("utf-8"))
    else:
        _write_stdout(fresh.data)
    if fresh.write_error is not None:
        print(
            f"memd: warning: snapshot not saved: {fresh.write_error}", file=sys.stderr
        )
    emit_events(config, loaded_events(fresh))
    return 0


def _json_output(fresh: FreshPrompt, store: SnapshotStore) -> str:
    import json

    from memd.snapshot_writer import snapshot_metadata

    memory_dir = fresh.location.memory_dir
    metadata = (
        snapshot_metadata(fresh.snapshot)
        if fresh.snapshot is not None
        else store.read_meta(memory_dir, fresh.mode)
    )
    out = {
        "project_root": fresh.location.project_root,
        "memory_dir": memory_dir,
        "mode": fresh.mode,
        "prompt_path": store.prompt_path(memory_dir, fresh.mode),
        "served_from": "render" if fresh.snapshot is not None else "snapshot",
        "metadata": metadata,
        "prompt": fresh.data.decode("utf-8"),
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
