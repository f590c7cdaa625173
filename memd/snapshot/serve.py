"""Serving a project's memory prompt: fresh from its snapshot, or rendered and saved.

Two ways in, each going one way down: resolve, read the snapshot, check its
freshness, and render only when it is stale.

- `serve_warm` answers from the *resolution record*: a small text file in the
  cache, keyed by the project root, that says which memory directory the
  project resolved to, which snapshot store holds it, and the stat of every
  file that decided it (settings files, each `.git` looked at, config.toml),
  plus a fingerprint of the environment that matters (CLAUDE_*, MEMD_*, HOME,
  XDG_*, PATH). It also names the agent profile in force and, under `auto`,
  records the stat of the `claude` binary that chose it, so an agent upgrade
  sends the next call the long way, which re-probes and re-renders; the warm
  path never runs `claude --version`. Nothing is parsed but `str.split`; None
  sends the caller the long way.
- `serve` is the long way, and the one place that resolves, renders, saves the
  snapshot and the record, emits telemetry and remembers the project for the
  daemon. `memd prompt`, the hooks and the Python API all call it.

Only `os` is imported at the top: the warm path runs before anything else loads.
"""

from __future__ import annotations

import os

from memd._version import __version__
from memd.claude_code.terms import INDEX_NAME
from memd.dirs import default_cache_dir
from memd.snapshot.store import MODES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from memd.claude_code.paths import MemoryLocation
    from memd.config import Config
    from memd.diagnostics import Diagnostic
    from memd.errors import SnapshotError
    from memd.snapshot.build import Snapshot

EXTRA_GUIDELINES_ENV = "CLAUDE_COWORK_MEMORY_EXTRA_GUIDELINES"
RECORD_MAGIC = f"memd-resolve 1 {__version__}"  # another release resolves anew
# PATH decides which `claude` the profile probe finds.
_ENV_NAMES = ("HOME", "PATH", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
_ENV_PREFIXES = ("CLAUDE_", "MEMD_")


def env_fingerprint(env: Mapping[str, str]) -> str:
    """Return a fingerprint of the environment variables a resolution depends on."""
    from memd.snapshot.store import fingerprint

    names = sorted(n for n in env if n.startswith(_ENV_PREFIXES) or n in _ENV_NAMES)
    return fingerprint("\0".join(f"{n}={env[n]}" for n in names))


def record_path(project_root: str, env: Mapping[str, str]) -> str:
    """Return where the resolution record for `project_root` lives."""
    from memd.snapshot.store import fingerprint

    return os.path.join(
        default_cache_dir(env), "resolve", fingerprint(project_root) + ".txt"
    )


def read_record(
    project_root: str, env: Mapping[str, str]
) -> tuple[str, str, str, str] | None:
    """Return (memory_dir, cache_dir, default_mode, profile) if the record is fresh."""
    from memd.fsread import read_bytes
    from memd.snapshot.store import META_MAGIC, inputs_unchanged, parse_meta

    try:
        raw = read_bytes(record_path(project_root, env))
    except OSError:
        return None
    text = raw.decode("utf-8", "surrogateescape")
    record = parse_meta(text.replace(RECORD_MAGIC, META_MAGIC, 1))
    if record is None:
        return None
    if record.get("project_root") != project_root or record.get(
        "env"
    ) != env_fingerprint(env):
        return None
    memory_dir, cache_dir = record.get("memory_dir"), record.get("cache_dir")
    mode = record.get("default_mode")
    profile = record.get("profile")
    inputs, built_ns = record["inputs"], record["built_ns"]
    if not (
        isinstance(memory_dir, str)
        and isinstance(cache_dir, str)
        and isinstance(profile, str)
        and isinstance(mode, str)
        and mode in MODES
        and isinstance(inputs, list)
        and isinstance(built_ns, int)
    ):
        return None
    if not inputs_unchanged(inputs, built_ns):
        return None
    return memory_dir, cache_dir, mode, profile


def write_record(
    location: MemoryLocation,
    *,
    config: Config,
    built_ns: int,
    env: Mapping[str, str],
    agent_inputs: tuple[str, ...] = (),
) -> None:
    """Record how `location` was resolved, with the stat of every deciding file.

    `agent_inputs` are the `claude` launcher and binary whose version chose the
    profile (`auto`; `ProfileChoice.inputs`).
    """
    from memd.atomic import write_atomic
    from memd.dirs import config_path
    from memd.statkey import stat_key

    paths = (*location.inputs, config_path(env), *agent_inputs)
    lines = [
        RECORD_MAGIC,
        f"built_ns {built_ns}",
        "prompt_bytes 0",
        f"env {env_fingerprint(env)}",
        f"project_root {location.project_root}",
        f"memory_dir {location.memory_dir}",
        f"cache_dir {config.cache_dir}",
        f"default_mode {default_mode(config)}",
        f"profile {location.profile}",
    ]
    for path in dict.fromkeys(paths):
        size, mtime_ns, inode = stat_key(path)
        lines.append(f"input {size} {mtime_ns} {inode} {path}")
    if any("\n" in line or "\r" in line for line in lines):
        return  # cannot be recorded faithfully; this project is simply never warm
    path = record_path(location.project_root, env)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))


def default_mode(config: Config) -> str:
    """Return the mode `memd prompt` renders without `--mode`."""
    return "team" if config.team_memory else "standard"


def index_warning(
    memory_dir: str, findings: Iterable[tuple[object, object, object]]
) -> str | None:
    """The stderr line for an index that exists but cannot be read, else None.

    `findings` are (code, path, message) of the prompt's lint. The prompt
    shows such an index as empty, as the agent does when its read fails; only
    this line tells the person, on the warm path as on the long one.
    """
    for code, path, message in findings:
        if code == "F005" and path == INDEX_NAME and isinstance(message, str):
            index = os.path.join(memory_dir, INDEX_NAME)
            why = message.partition(": ")[2] or message
            return (
                f"memd: warning: cannot read {index}: {why}; the prompt shows the "
                "index as empty, as the agent does"
            )
    return None


def serve_warm(
    project: str | None, mode: str | None, env: Mapping[str, str], *, path: bool = False
) -> tuple[bytes, str | None] | None:
    """Return the prompt bytes (or, with `path`, its file's path and a newline),
    and the warning to print with them (`index_warning`).

    Only when record and snapshot stat fresh; None means "take the long way":
    no record, a stale one, or a stale snapshot.
    """
    from memd.claude_code.paths import project_root_of
    from memd.snapshot.store import SnapshotReader

    root = project_root_of(project if project is not None else os.getcwd())
    record = read_record(root, env)
    if record is None:
        return None
    memory_dir, cache_dir, default, profile = record
    mode = mode or default
    store = SnapshotReader(cache_dir)
    data = store.read_fresh_bytes(
        memory_dir,
        mode,
        extra_guidelines=env.get(EXTRA_GUIDELINES_ENV),
        profile=profile,
    )
    if data is None:
        return None
    findings = store.read_diagnostic_dicts(memory_dir, mode) or ()
    warning = index_warning(
        memory_dir, ((d.get("code"), d.get("path"), d.get("message")) for d in findings)
    )
    if path:
        data = (store.prompt_path(memory_dir, mode) + "\n").encode(
            "utf-8", "surrogateescape"
        )
    return data, warning


class Served:
    """What `serve` found: a prompt known to match its inputs, or memory switched off.

    A plain slotted class, not a dataclass: this module is on the warm path,
    where importing `dataclasses` alone costs more than serving the prompt.
    """

    __slots__ = (
        "cache_dir",
        "data",
        "location",
        "mode",
        "profile_reason",
        "prompt_path",
        "snapshot",
        "write_error",
    )

    def __init__(
        self,
        *,
        location: MemoryLocation,
        mode: str,
        cache_dir: str,
        data: bytes = b"",
        snapshot: Snapshot | None = None,
        write_error: SnapshotError | None = None,
        profile_reason: str = "",
    ) -> None:
        from memd.snapshot.store import SnapshotReader

        self.location = location
        self.profile_reason = profile_reason  # why `location.profile` is in force
        self.mode = mode
        self.cache_dir = cache_dir
        self.data = data  # the prompt's exact bytes (empty when memory is off)
        self.snapshot = snapshot  # rendered now; None when served from the cache
        self.write_error = write_error  # not saved (the prompt itself is still right)
        self.prompt_path = SnapshotReader(cache_dir).prompt_path(
            location.memory_dir, mode
        )

    @property
    def enabled(self) -> bool:
        return self.location.enablement.enabled

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """The lint findings behind this prompt."""
        if self.snapshot is not None:
            return self.snapshot.diagnostics
        from memd.snapshot.store import SnapshotReader

        reader = SnapshotReader(self.cache_dir)
        return reader.read_diagnostics(self.location.memory_dir, self.mode)

    def metadata(self) -> dict[str, object] | None:
        """The snapshot's JSON metadata: sha, times, inputs, truncation, lint counts."""
        if self.snapshot is not None:
            from memd.snapshot.publish import snapshot_metadata

            return snapshot_metadata(self.snapshot)
        from memd.snapshot.store import SnapshotReader

        return SnapshotReader(self.cache_dir).read_meta(
            self.location.memory_dir, self.mode
        )


def serve(
    project_root: str,
    mode: str | None,
    config: Config,
    env: Mapping[str, str],
    *,
    create: bool = True,
) -> Served:
    """Resolve `project_root`, then return its prompt, rendering and saving if stale.

    When memory is off, emits `memdir_disabled` and returns a `Served` that is
    not `enabled`. Otherwise, with `create`, makes the memory directory (and
    the team directory in team mode) if it is missing, as the agent does at a
    session's start; `memd prompt`, which only shows the prompt, passes False
    (a missing directory renders as an empty one). Emits `memdir_loaded` when
    it rendered.

    Raises:
        ValueError: `mode` is not a known mode.
    """
    import time

    from memd.claude_code.choice import in_force
    from memd.claude_code.paths import resolve_memory_location
    from memd.errors import SnapshotError
    from memd.snapshot.publish import SnapshotStore

    mode = mode or default_mode(config)
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    resolved_ns = time.time_ns()  # before any deciding file is read (racy rule)
    choice = in_force(config, env)
    profile = choice.profile
    location = resolve_memory_location(project_root, env, profile=profile)
    if not location.enablement.enabled:
        _emit(config, [_disabled_event(location, env)])
        return Served(
            location=location,
            mode=mode,
            cache_dir=config.cache_dir,
            profile_reason=choice.reason,
        )
    memory_dir = location.memory_dir
    if create:
        os.makedirs(memory_dir, exist_ok=True)
        if mode == "team":
            os.makedirs(location.team_dir, exist_ok=True)
    store = SnapshotStore(config.cache_dir)
    guidelines = env.get(EXTRA_GUIDELINES_ENV)
    data = store.read_fresh_bytes(
        memory_dir, mode, extra_guidelines=guidelines, profile=profile.version
    )
    snapshot: Snapshot | None = None
    write_error: SnapshotError | None = None
    if data is None:
        snapshot, data = _render(memory_dir, mode, config, guidelines, profile.version)
        try:
            store.write(snapshot)
        except SnapshotError as error:
            write_error = error
    if write_error is None:
        _best_effort(
            lambda: write_record(
                location,
                config=config,
                built_ns=resolved_ns,
                env=env,
                agent_inputs=choice.inputs,
            )
        )
    _best_effort(lambda: _remember(config.state_dir, location.project_root))
    if snapshot is not None:
        from memd.snapshot.telemetry import memdir_loaded_event

        types = ("auto", "team") if mode == "team" else ("auto",)
        _emit(config, [memdir_loaded_event(snapshot, t) for t in types])
    return Served(
        location=location,
        mode=mode,
        cache_dir=config.cache_dir,
        data=data,
        snapshot=snapshot,
        write_error=write_error,
        profile_reason=choice.reason,
    )


def _render(
    memory_dir: str, mode: str, config: Config, guidelines: str | None, profile: str
) -> tuple[Snapshot, bytes]:
    from memd.snapshot.build import load_and_build
    from memd.snapshot.store import encode_prompt

    snapshot = load_and_build(
        memory_dir,
        mode,
        max_file_bytes=config.max_topic_file_bytes,
        extra_guidelines=guidelines,
        severities=config.lint_severities,
        why_labels=config.why_labels,
        how_labels=config.how_labels,
        profile=profile,
    )
    return snapshot, encode_prompt(snapshot.text)


def _emit(config: Config, events: list[dict[str, object]]) -> None:
    """Write `events` through the sink; a short-lived caller closes it at once."""
    if config.telemetry == "off" or not events:
        return
    from memd.snapshot.telemetry_sink import TelemetrySink, default_path

    sink = TelemetrySink(
        default_path(config.state_dir), max_bytes=config.telemetry_max_bytes
    )
    for event in events:
        sink.emit(event)
    sink.close()


def _disabled_event(
    location: MemoryLocation, env: Mapping[str, str]
) -> dict[str, object]:
    from memd.claude_code.settings import load_settings, merged_settings
    from memd.snapshot.telemetry import memdir_disabled_event

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
