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

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping

    from memd.config import Config
    from memd.paths import MemoryLocation
    from memd.pipeline import Snapshot
    from memd.snapshots import SnapshotStore

MODES = ("standard", "team", "kairos")
EXTRA_GUIDELINES_ENV = "CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"
RECORD_MAGIC = "memd-resolve 1"
_ENV_NAMES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
_ENV_PREFIXES = ("CLAUDE_", "MEMD_")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="DIR",
        default=None,
        help="project directory (default: the current directory)",
    )
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


# -- the resolution record -----------------------------------------------------


def env_fingerprint(env: Mapping[str, str]) -> str:
    """Return a fingerprint of the environment variables a resolution depends on."""
    from memd.snapshots import fingerprint

    names = sorted(n for n in env if n.startswith(_ENV_PREFIXES) or n in _ENV_NAMES)
    return fingerprint("\0".join(f"{n}={env[n]}" for n in names))


def default_cache_dir(env: Mapping[str, str]) -> str:
    """Return `$XDG_CACHE_HOME/memd` as memd.config does, without importing it."""
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(home, ".cache")
    return os.path.join(base, "memd")


def record_path(project_root: str, env: Mapping[str, str]) -> str:
    """Return where the resolution record for `project_root` lives."""
    from memd.snapshots import fingerprint

    return os.path.join(
        default_cache_dir(env), "resolve", fingerprint(project_root) + ".txt"
    )


def read_record(
    project_root: str, env: Mapping[str, str]
) -> tuple[str, str, str] | None:
    """Return (memory_dir, cache_dir, default_mode) if the record is fresh."""
    from memd.snapshots import inputs_unchanged, parse_meta

    try:
        with open(
            record_path(project_root, env), encoding="utf-8", errors="surrogateescape"
        ) as f:
            text = f.read()
    except OSError:
        return None
    record = parse_meta(text.replace(RECORD_MAGIC, "memd-snapshot 1", 1))
    if record is None:
        return None
    if record.get("project_root") != project_root or record.get(
        "env"
    ) != env_fingerprint(env):
        return None
    memory_dir, cache_dir = record.get("memory_dir"), record.get("cache_dir")
    mode = record.get("default_mode")
    inputs, built_ns = record["inputs"], record["built_ns"]
    if not (
        isinstance(memory_dir, str)
        and isinstance(cache_dir, str)
        and isinstance(mode, str)
        and mode in MODES
        and isinstance(inputs, list)
        and isinstance(built_ns, int)
    ):
        return None
    if not inputs_unchanged(inputs, built_ns):
        return None
    return memory_dir, cache_dir, mode


def write_record(
    location: MemoryLocation,
    *,
    config: Config,
    built_ns: int,
    env: Mapping[str, str],
) -> None:
    """Record how `location` was resolved, with the stat of every deciding file."""
    from memd.atomic import write_atomic
    from memd.config import config_path
    from memd.snapshots import stat_input

    paths = (*location.inputs, config_path(env))
    lines = [
        RECORD_MAGIC,
        f"built_ns {built_ns}",
        "prompt_bytes 0",
        f"env {env_fingerprint(env)}",
        f"project_root {location.project_root}",
        f"memory_dir {location.memory_dir}",
        f"cache_dir {config.cache_dir}",
        f"default_mode {default_mode(config)}",
    ]
    for path in dict.fromkeys(paths):
        size, mtime_ns, inode = stat_input(path)
        lines.append(f"input {size} {mtime_ns} {inode} {path}")
    if any("\n" in line or "\r" in line for line in lines):
        return  # cannot be recorded faithfully; this project is simply never warm
    path = record_path(location.project_root, env)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))


def default_mode(config: Config) -> str:
    """Return the mode `memd prompt` renders without `--mode`."""
    return "team" if config.team_memory else "standard"


# -- the full path ---------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    import time

    from memd.config import load_config
    from memd.errors import SnapshotError, UsageError
    from memd.paths import resolve_memory_location
    from memd.snapshots import SnapshotStore

    project = args.project if args.project is not None else os.getcwd()
    if not os.path.isdir(project):
        raise UsageError(f"--project {project}: not a directory")
    env = os.environ
    config = load_config(env)
    resolved_ns = time.time_ns()  # before any deciding file is read (racy rule)
    location = resolve_memory_location(project, env)
    if not location.enablement.enabled:
        _emit(config, [_disabled_event(location, env)])
        return 0
    mode = args.mode or default_mode(config)
    memory_dir = location.memory_dir
    os.makedirs(memory_dir, exist_ok=True)
    if mode == "team":
        os.makedirs(location.team_dir, exist_ok=True)
    store = SnapshotStore(config.cache_dir)
    guidelines = env.get(EXTRA_GUIDELINES_ENV)
    data = store.read_fresh_bytes(memory_dir, mode, extra_guidelines=guidelines)
    snapshot: Snapshot | None = None
    write_error: SnapshotError | None = None
    if data is None:
        snapshot, data = _render(memory_dir, mode, config, guidelines)
        try:
            store.write(snapshot)
        except SnapshotError as error:
            write_error = error
    if write_error is None:
        _best_effort(
            lambda: write_record(location, config=config, built_ns=resolved_ns, env=env)
        )
    _best_effort(lambda: _remember(config.state_dir, location.project_root))

    if args.path:
        if write_error is not None:
            raise write_error
        _write_stdout(
            (store.prompt_path(memory_dir, mode) + "\n").encode(
                "utf-8", "surrogateescape"
            )
        )
    elif args.format == "json":
        _write_stdout(
            _json_output(data, location, mode, store, snapshot).encode("utf-8")
        )
    else:
        _write_stdout(data)
    if write_error is not None:
        print(f"memd: warning: snapshot not saved: {write_error}", file=sys.stderr)
    if snapshot is not None:
        from memd.telemetry import memdir_loaded_event

        types = ("auto", "team") if mode == "team" else ("auto",)
        _emit(config, [memdir_loaded_event(snapshot, t) for t in types])
    return 0


def _render(
    memory_dir: str, mode: str, config: Config, guidelines: str | None
) -> tuple[Snapshot, bytes]:
    from memd.pipeline import load_and_build
    from memd.snapshots import encode_prompt

    snapshot = load_and_build(
        memory_dir,
        mode,
        max_file_bytes=config.max_topic_file_bytes,
        extra_guidelines=guidelines,
        severities=config.lint_severities,
    )
    return snapshot, encode_prompt(snapshot.text)


def _json_output(
    data: bytes,
    location: MemoryLocation,
    mode: str,
    store: SnapshotStore,
    snapshot: Snapshot | None,
) -> str:
    import json

    from memd.snapshots import snapshot_metadata

    memory_dir = location.memory_dir
    metadata = (
        snapshot_metadata(snapshot)
        if snapshot is not None
        else store.read_meta(memory_dir, mode)
    )
    out = {
        "project_root": location.project_root,
        "memory_dir": memory_dir,
        "mode": mode,
        "prompt_path": store.prompt_path(memory_dir, mode),
        "served_from": "render" if snapshot is not None else "snapshot",
        "metadata": metadata,
        "prompt": data.decode("utf-8"),
    }
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def _disabled_event(
    location: MemoryLocation, env: Mapping[str, str]
) -> dict[str, object]:
    from memd.claude_settings import load_settings, merged_settings
    from memd.telemetry import memdir_disabled_event

    settings = merged_settings(load_settings(location.project_root, env))
    return memdir_disabled_event(
        location.enablement, location.project_root, env=env, settings=settings
    )


def _emit(config: Config, events: list[dict[str, object]]) -> None:
    """Write `events` through the sink API; the CLI is short-lived, so close at once."""
    if config.telemetry == "off":
        return
    from memd.telemetry_sink import TelemetrySink, default_path

    sink = TelemetrySink(
        default_path(config.state_dir), max_bytes=config.telemetry_max_bytes
    )
    for event in events:
        sink.emit(event)
    sink.close()


def _remember(state_dir: str, project_root: str) -> None:
    from memd.state import remember_project

    remember_project(state_dir, project_root)


def _best_effort(action: Callable[[], object]) -> None:
    """Run a cache or state write that must not fail the command (read-only HOME)."""
    import contextlib

    with contextlib.suppress(OSError):
        action()
