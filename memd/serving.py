"""Serving a project's memory prompt: fresh from its snapshot, or rendered and saved.

The *resolution record* is a small text file in the cache, keyed by the project
root, that says which memory directory the project resolved to, which snapshot
store holds it, and the stat of every file that decided it (settings files,
each `.git` looked at, config.toml), plus a fingerprint of the environment
that matters (CLAUDE_*, MEMD_*, HOME, XDG_*). With it, the warm path of
`memd prompt` finds a fresh snapshot without parsing JSON, TOML or YAML.

`fresh_prompt` is the one place that resolves, renders, saves the snapshot and
the record, and remembers the project for the daemon; `memd prompt`, the hooks
and the Python API all call it. Only `os` is imported at the top: the record
readers are on the warm path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from memd.config import Config
    from memd.errors import SnapshotError
    from memd.paths import MemoryLocation
    from memd.pipeline import Snapshot

MODES = ("standard", "team", "kairos")
EXTRA_GUIDELINES_ENV = "CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"
RECORD_MAGIC = "memd-resolve 1"
_ENV_NAMES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
_ENV_PREFIXES = ("CLAUDE_", "MEMD_")


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


class FreshPrompt:
    """A prompt known to match its inputs, and how it was obtained.

    A plain slotted class, not a dataclass: this module is on the warm path,
    where importing `dataclasses` alone costs more than serving the prompt.
    """

    __slots__ = ("data", "location", "mode", "snapshot", "write_error")

    def __init__(
        self,
        *,
        location: MemoryLocation,
        mode: str,
        data: bytes,
        snapshot: Snapshot | None,
        write_error: SnapshotError | None,
    ) -> None:
        self.location = location
        self.mode = mode
        self.data = data  # the prompt's exact bytes
        self.snapshot = snapshot  # rendered now; None when served from the cache
        self.write_error = write_error  # not saved (the prompt itself is still right)


def fresh_prompt(
    location: MemoryLocation,
    mode: str,
    config: Config,
    env: Mapping[str, str],
    *,
    resolved_ns: int,
) -> FreshPrompt:
    """Return the prompt for an enabled `location`, rendering and saving it when stale.

    Creates the memory directory (and the team directory in team mode) if it is
    missing, as the agent does. `resolved_ns` is the clock read before
    `location` was resolved (the racy rule for the resolution record).
    """
    from memd.errors import SnapshotError
    from memd.snapshots import SnapshotStore

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
    return FreshPrompt(
        location=location,
        mode=mode,
        data=data,
        snapshot=snapshot,
        write_error=write_error,
    )


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


def emit_events(config: Config, events: list[dict[str, object]]) -> None:
    """Write `events` through the sink API; a short-lived caller closes it at once."""
    if config.telemetry == "off" or not events:
        return
    from memd.telemetry_sink import TelemetrySink, default_path

    sink = TelemetrySink(
        default_path(config.state_dir), max_bytes=config.telemetry_max_bytes
    )
    for event in events:
        sink.emit(event)
    sink.close()


def loaded_events(fresh: FreshPrompt) -> list[dict[str, object]]:
    """The memdir_loaded events a render owes (none when served from the cache)."""
    if fresh.snapshot is None:
        return []
    from memd.telemetry import memdir_loaded_event

    types = ("auto", "team") if fresh.mode == "team" else ("auto",)
    return [memdir_loaded_event(fresh.snapshot, t) for t in types]


def disabled_event(
    location: MemoryLocation, env: Mapping[str, str]
) -> dict[str, object]:
    """The memdir_disabled event for a project whose memory is off."""
    from memd.claude_settings import load_settings, merged_settings
    from memd.telemetry import memdir_disabled_event

    settings = merged_settings(load_settings(location.project_root, env))
    return memdir_disabled_event(
        location.enablement, location.project_root, env=env, settings=settings
    )


def _remember(state_dir: str, project_root: str) -> None:
    from memd.state import remember_project

    remember_project(state_dir, project_root)


def _best_effort(action: Callable[[], object]) -> None:
    """Run a cache or state write that must not fail the caller (read-only HOME)."""
    import contextlib

    with contextlib.suppress(OSError):
        action()
