"""Which agent profile is in force, and why: pinned in config, or probed.

`auto` runs `claude --version` once, bounded by a timeout, and caches the
answer in memd's cache dir keyed by the binary's stat (path, size, mtime,
inode, after following the launcher symlink), so an upgrade re-probes and
nothing else does. With no `claude` on PATH, or no version in its output, the
newest profile applies. This module runs a process and writes the cache: it is
an edge, and the warm `memd prompt` path never imports it (the resolution
record carries the profile and the binary's stat instead).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

from memd.claude_code.profile import (
    NEWEST,
    AgentProfile,
    fit_version,
    get_profile,
    parse_version,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.claude_code.paths import MemoryLocation
    from memd.config import Config

PROBE_TIMEOUT_SECONDS = 5.0
CACHE_NAME = "agent-version.txt"
_CACHE_MAGIC = "memd-agent-version 1"
_MAX_OUTPUT_BYTES = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileChoice:
    """The profile in force, the reason in one line, and the binary it came from."""

    profile: AgentProfile
    reason: str
    binary: str | None  # the resolved `claude` whose stat keys the cache
    launcher: str | None = None  # `claude` as found on PATH, often a symlink
    release: str | None = None  # the version `claude --version` gave, if any
    warning: str | None = None  # a release outside what the profiles cover

    @property
    def inputs(self) -> tuple[str, ...]:
        """Files whose change can change the choice (stat them, symlinks followed).

        The launcher, not only the binary: an upgrade often re-points a
        `~/.local/bin/claude` symlink at a new version and leaves the old one.
        """
        return tuple(dict.fromkeys(p for p in (self.launcher, self.binary) if p))


def choose_profile(
    pinned: str, env: Mapping[str, str], cache_dir: str
) -> ProfileChoice:
    """Return the pinned profile, or under `auto` the one the installed agent needs."""
    if pinned != "auto":
        return ProfileChoice(
            profile=get_profile(pinned),
            reason="pinned by [agent] version in config.toml",
            binary=None,
        )
    launcher = shutil.which("claude", path=env.get("PATH", os.defpath))
    binary = os.path.realpath(launcher) if launcher else None
    if binary is None:
        return ProfileChoice(
            profile=NEWEST,
            reason="auto: no claude on PATH, so the newest profile",
            binary=None,
        )
    output = agent_version_output(binary, cache_dir)
    version = parse_version(output) if output is not None else None
    profile, why, warning = fit_version(version)
    if version is None:
        reason = f"auto: {binary} gave no version, so the newest profile"
        release = None
    else:
        release = ".".join(map(str, version))
        reason = f"auto: {binary} is {release}; {why}"
    return ProfileChoice(
        profile=profile,
        reason=reason,
        binary=binary,
        launcher=launcher,
        release=release,
        warning=warning,
    )


def in_force(config: Config, env: Mapping[str, str] | None = None) -> ProfileChoice:
    """The profile `config` puts in force: its `[agent] version` pin, or the probe."""
    environ = os.environ if env is None else env
    return choose_profile(config.agent_version, environ, config.cache_dir)


def resolve_in_force(
    project_root: str, config: Config, env: Mapping[str, str] | None = None
) -> MemoryLocation:
    """Resolve `project_root`'s memory as the agent release in force would."""
    from memd.claude_code.paths import resolve_memory_location

    profile = in_force(config, env).profile
    return resolve_memory_location(project_root, env, profile=profile)


def binary_key(binary: str) -> str | None:
    """Return the stat key of `binary` (size, mtime_ns, inode), or None if gone."""
    try:
        st = os.stat(binary)
    except OSError:
        return None
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ino} {binary}"


def agent_version_output(binary: str, cache_dir: str) -> str | None:
    """Return `binary --version`'s first line, from the cache when its stat matches."""
    key = binary_key(binary)
    if key is None:
        return None
    path = os.path.join(cache_dir, CACHE_NAME)
    cached = _read_cache(path, key)
    if cached is not None:
        return cached
    output = _probe(binary)
    if output is not None and "\n" not in output:
        _write_cache(path, key, output)
    return output


def probe_version(binary: str) -> str | None:
    """Run `binary --version` now (no cache), bounded by `PROBE_TIMEOUT_SECONDS`."""
    return _probe(binary)


def _probe(binary: str) -> str | None:
    try:
        result = subprocess.run(
            [binary, "--version"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = result.stdout[:_MAX_OUTPUT_BYTES].decode("utf-8", "replace").strip()
    return text.split("\n", 1)[0].strip() if result.returncode == 0 and text else None


def _read_cache(path: str, key: str) -> str | None:
    from memd.fsread import read_prefix

    try:
        data = read_prefix(path, _MAX_OUTPUT_BYTES * 2)
    except OSError:
        return None
    lines = data.decode("utf-8", "replace").split("\n")
    if len(lines) >= 3 and lines[0] == _CACHE_MAGIC and lines[1] == key:
        return lines[2]
    return None


def _write_cache(path: str, key: str, output: str) -> None:
    from memd.atomic import write_atomic

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, f"{_CACHE_MAGIC}\n{key}\n{output}\n".encode())
    except OSError:
        return  # a read-only cache only costs a probe next time
