"""Which memory directories the daemon watches, and which files make it look again.

SPEC §3: every `<base>/projects/*/memory/`, the directory an env override or a
user/policy `autoMemoryDirectory` names (under 2.1.332 a trusted project's
local or project settings may, per project), the config's `watch_dirs` and
`watch_projects`, and the project roots `memd prompt --project` remembered in
the state directory.

`discover` reads only directory listings and settings files; it returns a
frozen `Discovery`. `plan_watch_roots` is pure: it turns the directories into
the fewest watches (one recursive watch on `<base>/projects/`, SPEC §7 fact 2)
and, for a path that does not exist yet, a non-recursive watch on its nearest
existing ancestor, so its creation is seen.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memd.diagnostics import Diagnostic
from memd.fsread import list_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from memd.claude_code.profile import ProfileSpec
    from memd.config import Config

PROJECTS_STATE_FILE = "projects.json"  # memd.state's PROJECTS_FILE, as a file name


@dataclass(frozen=True, slots=True)
class WatchRoot:
    """One watch to schedule: a directory, recursively or not."""

    path: str
    recursive: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Discovery:
    """What to watch, as found at one moment."""

    base_dir: str
    projects_root: str  # <base>/projects, existing or not
    memory_dirs: tuple[str, ...]  # absolute, no trailing separator, sorted, unique
    sources: Mapping[
        str, str
    ]  # memory dir -> why it is watched ("projects", "config", ...)
    watch_roots: tuple[WatchRoot, ...]
    files: frozenset[str]  # settings files and config.toml: a change re-runs discovery
    disabled: tuple[tuple[str, str], ...]  # (project root, deciding rule) left out
    diagnostics: tuple[Diagnostic, ...]
    # Other agents' own memory stores (memd.agents): directory -> the relpaths
    # kept (None: all), and -> the name a person reads. Kept in history only:
    # never rendered, linted as memory, or written.
    stores: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    store_labels: Mapping[str, str] = field(default_factory=dict)


def discover(
    config: Config,
    *,
    env: Mapping[str, str] | None = None,
    known_projects: Callable[[str], Iterable[str]] | None = None,
    config_file: str | None = None,
    profile: ProfileSpec = None,
) -> Discovery:
    """Find every memory directory to watch now; never raises for bad settings.

    Resolved under the agent `profile` in force (default the newest); its
    deciding files, the trust config among them, are in `files`.
    """
    from memd.claude_code.enablement import is_auto_memory_enabled
    from memd.claude_code.paths import (
        choose_memory_dir,
        memory_base_dir,
        resolve_memory_location,
    )
    from memd.claude_code.settings import (
        merged_settings,
        read_settings_file,
        settings_paths,
    )

    environ = os.environ if env is None else env
    base = memory_base_dir(environ)
    projects_root = _clean(os.path.join(os.path.abspath(base), "projects"))
    found: dict[str, str] = {}
    files: set[str] = set()
    disabled: list[tuple[str, str]] = []
    diagnostics: list[Diagnostic] = []

    # The directory the agent would use everywhere: env override, then the
    # user/policy settings (never the project's own files).
    home = environ.get("HOME") or os.path.expanduser("~")
    layers = tuple(
        read_settings_file(source, path)
        for source, path in settings_paths(home, environ)
        if source in ("user", "policy")
    )
    for layer in layers:
        files.add(layer.path)
        if layer.diagnostic is not None:
            diagnostics.append(layer.diagnostic)
    # Switched off for every project (env or user/policy setting): watch nothing.
    everywhere = is_auto_memory_enabled(
        environ, merged_settings(layers), profile=profile
    )
    if not everywhere.enabled:
        disabled.append(("*", everywhere.reason))
    else:
        for path in _project_memory_dirs(projects_root):
            found.setdefault(path, "projects")
        chosen, source, _ = choose_memory_dir(home, layers, environ, profile=profile)
        if source != "default":
            found.setdefault(_clean(chosen), source)

    for raw in config.watch_dirs if everywhere.enabled else ():
        found.setdefault(
            _clean(os.path.abspath(os.path.expanduser(raw))), "config:watch_dirs"
        )

    roots = [(raw, "config:watch_projects") for raw in config.watch_projects]
    if known_projects is not None:
        roots += [(raw, "state:projects") for raw in known_projects(config.state_dir)]
        # `memd prompt --project` adds to it: a new entry means look again.
        files.add(os.path.join(config.state_dir, PROJECTS_STATE_FILE))
    for raw, why in roots if everywhere.enabled else ():
        location = resolve_memory_location(
            os.path.expanduser(raw), environ, profile=profile
        )
        files.update(location.inputs)
        diagnostics.extend(location.diagnostics)
        if not location.enablement.enabled:
            disabled.append((location.project_root, location.enablement.reason))
            continue
        found.setdefault(_clean(location.memory_dir), why)

    if config_file:
        files.add(config_file)
    memory_dirs = tuple(sorted(found))
    stores, labels, awaited = agent_stores(environ, exclude=found)
    files.update(awaited)
    return Discovery(
        base_dir=base,
        projects_root=projects_root,
        memory_dirs=memory_dirs,
        sources=dict(sorted(found.items())),
        watch_roots=plan_watch_roots(
            memory_dirs,
            projects_root,
            files,
            flat_dirs=[p for p, only in stores.items() if only is not None],
            tree_dirs=[p for p, only in stores.items() if only is None],
        ),
        files=frozenset(files),
        disabled=tuple(disabled),
        diagnostics=tuple(diagnostics),
        stores=stores,
        store_labels=labels,
    )


def agent_stores(
    env: Mapping[str, str], *, exclude: Iterable[str] = ()
) -> tuple[dict[str, frozenset[str] | None], dict[str, str], set[str]]:
    """Other agents' stores: (dir -> relpaths kept or None, dir -> label, paths
    whose appearance means look again: a store not made yet)."""
    from memd.agents import all_agents

    stores: dict[str, frozenset[str] | None] = {}
    labels: dict[str, str] = {}
    awaited: set[str] = set()
    skip = set(exclude)
    for agent in all_agents():
        for store in agent.stores(env):
            if store.single_file:
                path = _clean(os.path.dirname(store.path))
                names = stores.get(path) or frozenset()
                stores[path] = names | {os.path.basename(store.path)}
            else:
                path = _clean(store.path)
                stores[path] = None
            labels.setdefault(path, store.label)
        awaited.update(_clean(p) for p in agent.awaited_stores(env))
    for path in skip:
        stores.pop(path, None)
    return stores, labels, awaited - set(stores)


def plan_watch_roots(
    memory_dirs: Iterable[str],
    projects_root: str,
    files: Iterable[str] = (),
    *,
    flat_dirs: Iterable[str] = (),
    tree_dirs: Iterable[str] = (),
) -> tuple[WatchRoot, ...]:
    """Return the watches covering `memory_dirs` and `files`, fewest first.

    A directory under `projects_root` needs no watch of its own. A path that
    does not exist is covered by a non-recursive watch on its nearest existing
    ancestor until it appears; a file is covered by its directory, non-recursively.
    `tree_dirs` are watched like memory dirs, `flat_dirs` without what lies
    below (another agent's one-file store in a busy directory).
    """
    recursive: set[str] = set()
    flat: set[str] = {_nearest_existing(p) for p in flat_dirs}
    memory_dirs = [*memory_dirs, *tree_dirs]
    if os.path.isdir(projects_root):
        recursive.add(projects_root)
    else:
        flat.add(_nearest_existing(projects_root))
    for path in memory_dirs:
        if _is_under(path, projects_root):
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            recursive.add(path)
        else:
            flat.add(_nearest_existing(path))
    for path in files:
        flat.add(_nearest_existing(os.path.dirname(path)))
    # A recursive watch already covers whatever lies below it.
    recursive = {
        p for p in recursive if not any(_is_under(p, q) and p != q for q in recursive)
    }
    flat = {
        p
        for p in flat
        if p not in recursive and not any(_is_under(p, q) for q in recursive)
    }
    return tuple(
        sorted(
            [WatchRoot(p, True) for p in recursive]
            + [WatchRoot(p, False) for p in flat],
            key=lambda root: (not root.recursive, root.path),
        )
    )


def memory_dir_of(path: str, memory_dirs: frozenset[str]) -> str | None:
    """Return the watched memory directory that is or contains `path`, if any."""
    current = path
    while True:
        if current in memory_dirs:
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _project_memory_dirs(projects_root: str) -> list[str]:
    """List `<projects>/*/memory` directories (real directories, not symlinks)."""
    try:
        entries = list_dir(projects_root)
    except OSError:
        return []
    found = []
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        memory = os.path.join(entry.path, "memory")
        if os.path.isdir(memory) and not os.path.islink(memory):
            found.append(memory)
    return found


def _nearest_existing(path: str) -> str:
    current = path
    while not os.path.isdir(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _clean(path: str) -> str:
    """Absolute, normalised, without a trailing separator (the daemon's key)."""
    return os.path.normpath(path)
