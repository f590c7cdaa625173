"""Where a project's auto memory lives, computed exactly as the reference does.

REFERENCE.md §2: sanitizePath (UTF-16 units, x31 hash past 200), the memory
base dir, validateMemoryPath (tilde rules, JS `path.normalize`), getAutoMemPath
(env override, then policy ?? local ?? user settings — never the checked-in
project settings — then `<base>/projects/<sanitized canonical root>/memory/`)
and the KAIROS daily-log path. Nothing is memoised: callers re-resolve when
`MemoryLocation.inputs` change.

Hot path: the warm `memd prompt` imports this module, so at import time it
loads only `os`, `posixpath` and `jscompat` (`unicodedata` only for a
non-ASCII path: `nfc`). That is also why
`MemoryLocation` is a hand-written frozen slotted class, not a dataclass
(importing `dataclasses` alone costs more than the whole warm-path budget).
"""

from __future__ import annotations

import os
import posixpath

from memd.claude_code.jscompat import java_string_hash, to_base36, utf16_len
from memd.claude_code.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Mapping

    from memd.claude_code.enablement import Enablement
    from memd.claude_code.profile import AgentProfile, ProfileSpec
    from memd.claude_code.settings import SettingsLayer
    from memd.claude_code.trust import Trust
    from memd.diagnostics import Diagnostic

MAX_SANITIZED_LENGTH = 200
ENV_PATH_OVERRIDE = "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


def nfc(path: str) -> str:
    """Return `path` in Unicode NFC, as the reference normalises paths.

    ASCII is NFC already; `unicodedata` (a shared library) loads only for the rest.
    """
    if path.isascii():
        return path
    import unicodedata

    return unicodedata.normalize("NFC", path)


def sanitize_path(name: str, *, profile: ProfileSpec = None) -> str:
    """Return `name` as a directory name: each non-alphanumeric UTF-16 unit is `-`.

    Past 200 units: the first 200, `-`, and the base-36 x31 hash of `name`.
    Every profile so far sanitizes alike; `profile` is checked, then unused.
    """
    if profile is not None:  # the default needs no import: snapshots key on this
        _profile(profile)
    sanitized = "".join(
        ch if ch in _ALNUM else ("--" if ord(ch) > 0xFFFF else "-") for ch in name
    )
    if len(sanitized) <= MAX_SANITIZED_LENGTH:
        return sanitized
    digest = to_base36(abs(java_string_hash(name)))
    return f"{sanitized[:MAX_SANITIZED_LENGTH]}-{digest}"


def js_normalize(path: str) -> str:
    """Return Node's POSIX `path.normalize` (keeps a trailing `/`, collapses `//`)."""
    if not path:
        return "."
    normalized = posixpath.normpath(path)
    if normalized.startswith("//"):
        normalized = normalized[1:]  # POSIX keeps a leading "//"; Node collapses it
    if path.endswith("/") and normalized != "/":
        normalized += "/"
    return normalized


def js_join(*parts: str) -> str:
    """Return Node's POSIX `path.join`: the non-empty parts joined, normalised."""
    joined = "/".join(part for part in parts if part)
    return js_normalize(joined) if joined else "."


def home_dir(env: Mapping[str, str] | None = None) -> str:
    """Return the home the reference would use: `$HOME`, else the passwd entry."""
    env = os.environ if env is None else env
    home = env.get("HOME")
    return home if home else os.path.expanduser("~")


def validate_memory_path(
    raw: str | None,
    expand_tilde: bool,
    home: str | None = None,
    *,
    profile: ProfileSpec = None,
) -> str | None:
    """Return `raw` as an absolute, NFC directory path ending in one separator, or None.

    Tilde expansion (`~/` or `~\\` only) is for settings values, never the env
    override; the profile says which remainders are rejected (2.1.112: `.` and
    `..`; 2.1.332: also any that climb out of home) and which network or
    device prefixes are refused on top of the shared rules.
    """
    if not raw:
        return None
    agent = _profile(profile)
    candidate = raw
    if expand_tilde and (candidate.startswith(("~/", "~\\"))):
        remainder = candidate[2:]
        # An empty remainder counts as "."; "./" (from "~/foo/../") is not ".".
        if agent.tilde_rest_rejected(js_normalize(remainder)):
            return None
        candidate = js_join(home if home is not None else home_dir(), remainder)
    normalized = js_normalize(candidate).rstrip("/\\")
    if (
        not normalized.startswith("/")
        or utf16_len(normalized) < 3
        or _is_bare_drive(normalized)
        or normalized.startswith(("\\\\", "//"))
        or "\0" in normalized
        or any(rejects(normalized) for rejects in agent.path_rejections)
    ):
        return None
    return nfc(normalized + os.sep)


def _profile(spec: ProfileSpec) -> AgentProfile:
    from memd.claude_code.profile import get_profile

    return get_profile(spec)


def _is_bare_drive(path: str) -> bool:
    return len(path) == 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha()


def memory_base_dir(env: Mapping[str, str] | None = None) -> str:
    """Return `CLAUDE_CODE_REMOTE_MEMORY_DIR` if non-empty, else the config home, NFC.

    The config home is `CLAUDE_CONFIG_DIR ?? ~/.claude`: an empty but set
    `CLAUDE_CONFIG_DIR` is used as is (making the result relative), like `??`.
    """
    env = os.environ if env is None else env
    remote = env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    if remote:
        return remote
    configured = env.get("CLAUDE_CONFIG_DIR")
    config_home = (
        configured if configured is not None else js_join(home_dir(env), ".claude")
    )
    return nfc(config_home)


def project_root_of(path: str) -> str:
    """Return the project root the reference would fix at startup: realpath, NFC."""
    try:
        real = os.path.realpath(path)
    except ValueError:  # NUL in the path: nothing to resolve, keep it lexical
        real = os.path.abspath(path)
    return nfc(real)


def default_memory_dir(
    project_root: str,
    env: Mapping[str, str] | None = None,
    *,
    profile: ProfileSpec = None,
) -> str:
    """Return `<base>/projects/<name>/memory/`, NFC.

    The name is the sanitized canonical git root (or the root itself), unless
    the profile honours `CLAUDE_CODE_PROJECT_DIR_NAME` and the value passes.
    """
    from memd.claude_code.gitroot import find_canonical_git_root

    env = os.environ if env is None else env
    agent = _profile(profile)
    name = agent.project_dir_name(env)
    if name is None:
        git_root = find_canonical_git_root(project_root, profile=agent)
        name = sanitize_path(git_root or project_root)
    joined = js_join(memory_base_dir(env), "projects", name, "memory")
    return nfc(joined + os.sep)


def auto_mem_path(
    project_root: str,
    env: Mapping[str, str] | None = None,
    *,
    profile: ProfileSpec = None,
) -> str:
    """Return the project's auto-memory directory, ending with `os.sep`."""
    return resolve_memory_location(project_root, env, profile=profile).memory_dir


def daily_log_path(memory_dir: str, date: datetime.date) -> str:
    """Return `<memory_dir>/logs/YYYY/MM/YYYY-MM-DD.md`; the year is not padded."""
    year, month, day = date.year, date.month, date.day
    return js_join(
        memory_dir, "logs", str(year), f"{month:02}", f"{year}-{month:02}-{day:02}.md"
    )


def choose_memory_dir(
    project_root: str,
    layers: tuple[SettingsLayer, ...],
    env: Mapping[str, str] | None = None,
    *,
    profile: ProfileSpec = None,
    is_trusted: bool = False,
) -> tuple[str, str, str | None]:
    """Return (memory_dir, source, source_path) for a realpath'd root and its layers.

    The profile orders the settings sources; those it gates behind workspace
    trust are read only when `is_trusted` (the gate's answer) is True.
    """
    env = os.environ if env is None else env
    agent = _profile(profile)
    override = validate_memory_path(
        env.get(ENV_PATH_OVERRIDE), expand_tilde=False, profile=agent
    )
    if override is not None:
        return override, f"env:{ENV_PATH_OVERRIDE}", None
    by_source = {layer.source: layer for layer in layers}
    for source in agent.directory_sources:
        if source in agent.trust_gated_sources and not is_trusted:
            continue
        layer = by_source.get(source)
        if layer is None or layer.data is None:
            continue
        raw = layer.data.get("autoMemoryDirectory")
        if raw is None:
            continue  # `??` passes over null and undefined only
        # Set, even to "" or garbage: it hides the lower layers (`??`), valid or not.
        chosen = (
            validate_memory_path(
                raw, expand_tilde=True, home=home_dir(env), profile=agent
            )
            if isinstance(raw, str)
            else None
        )
        if chosen is not None:
            return chosen, f"settings:{source}", layer.path
        break
    return default_memory_dir(project_root, env, profile=agent), "default", None


class MemoryLocation:
    """Everything that decides where one project's memory lives, and why.

    Frozen and slotted like a dataclass; `inputs` lists the files (settings,
    `.git`, `commondir`, `gitdir`) whose change can change the answer.
    """

    __slots__ = (
        "base_dir",
        "diagnostics",
        "enablement",
        "index_path",
        "inputs",
        "memory_dir",
        "profile",
        "project_root",
        "source",
        "source_path",
        "team_dir",
        "trust",
    )

    project_root: str
    enablement: Enablement
    base_dir: str
    memory_dir: str
    source: str
    source_path: str | None
    index_path: str
    team_dir: str
    inputs: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    profile: str  # the agent release whose rules resolved it
    trust: str | None  # what workspace trust decided, when it changed the answer

    def __init__(
        self,
        *,
        project_root: str,
        enablement: Enablement,
        base_dir: str,
        memory_dir: str,
        source: str,
        source_path: str | None,
        index_path: str,
        team_dir: str,
        inputs: tuple[str, ...],
        diagnostics: tuple[Diagnostic, ...],
        profile: str,
        trust: str | None = None,
    ) -> None:
        values = {
            "project_root": project_root,
            "enablement": enablement,
            "base_dir": base_dir,
            "memory_dir": memory_dir,
            "source": source,
            "source_path": source_path,
            "index_path": index_path,
            "team_dir": team_dir,
            "inputs": inputs,
            "diagnostics": diagnostics,
            "profile": profile,
            "trust": trust,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"MemoryLocation is frozen; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"MemoryLocation is frozen; cannot delete {name!r}")

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MemoryLocation):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"MemoryLocation({fields})"

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-ready dict (enablement flattened, diagnostics as dicts)."""
        return {
            "project_root": self.project_root,
            "enabled": self.enablement.enabled,
            "enabled_reason": self.enablement.reason,
            "base_dir": self.base_dir,
            "memory_dir": self.memory_dir,
            "source": self.source,
            "source_path": self.source_path,
            "index_path": self.index_path,
            "team_dir": self.team_dir,
            "inputs": list(self.inputs),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "profile": self.profile,
            "trust": self.trust,
        }


def resolve_memory_location(
    project_root: str,
    env: Mapping[str, str] | None = None,
    *,
    profile: ProfileSpec = None,
) -> MemoryLocation:
    """Resolve a project's memory dir, enablement and inputs; never raises.

    Resolved as an interactive session of the `profile` release would (default
    the newest): where that release gates settings behind workspace trust, the
    agent's global config is read, and it becomes one of the inputs.
    """
    from memd.claude_code.enablement import is_auto_memory_enabled
    from memd.claude_code.gitroot import git_root_inputs
    from memd.claude_code.settings import (
        layer_diagnostics,
        load_settings,
        merged_settings,
    )

    env = os.environ if env is None else env
    agent = _profile(profile)
    root = project_root_of(project_root)
    layers = load_settings(root, env)
    inputs = tuple(layer.path for layer in layers) + git_root_inputs(
        root, profile=agent
    )
    trust = None
    if agent.trust_gated_sources:
        trust, trust_input = _workspace_trust(root, env)
        inputs += (trust_input,)
    is_trusted = trust is not None and trust.accepted
    memory_dir, source, source_path = choose_memory_dir(
        root, layers, env, profile=agent, is_trusted=is_trusted
    )
    return MemoryLocation(
        project_root=root,
        enablement=is_auto_memory_enabled(env, merged_settings(layers), profile=agent),
        base_dir=memory_base_dir(env),
        memory_dir=memory_dir,
        source=source,
        source_path=source_path,
        index_path=js_join(memory_dir, INDEX_NAME),
        team_dir=nfc(js_join(memory_dir, "team") + os.sep),
        inputs=inputs,
        diagnostics=layer_diagnostics(layers),
        profile=agent.version,
        trust=_trust_note(trust, layers, agent),
    )


def _workspace_trust(root: str, env: Mapping[str, str]) -> tuple[Trust, str]:
    from memd.claude_code.trust import (
        global_config_path,
        read_global_config,
        workspace_trust,
    )

    path = global_config_path(env)
    return workspace_trust(root, env, read_global_config(path)), path


def _trust_note(
    trust: Trust | None, layers: tuple[SettingsLayer, ...], agent: AgentProfile
) -> str | None:
    """Say what trust did, when a gated layer sets `autoMemoryDirectory`."""
    if trust is None:
        return None
    gated = [
        layer.source
        for layer in layers
        if layer.source in agent.trust_gated_sources
        and layer.data is not None
        and layer.data.get("autoMemoryDirectory") is not None
    ]
    if not gated:
        return None
    which = " and ".join(f"{source} settings" for source in gated)
    verdict = "read" if trust.accepted else "ignored"
    return f"{trust.reason}: {which} {verdict}"
