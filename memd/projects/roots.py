"""Which project roots each memory directory serves: what memd learned, read back.

A root counts for a memory dir only when it resolves to that directory as the
agent resolves it (`memd.claude_code.paths.resolve_memory_location`), so a stale or
foreign root names nothing. The root named is the canonical git root of the
folder (or the folder itself): the one the agent keys the directory by.

Where roots come from, in order:
1. the state's projects.json: `memd prompt`, `--project`, the hooks and sync
   remember each root they serve (`memd.state.remember_project`);
2. `extra_roots` (a caller passes the config's `watch_projects`);
3. the agent's transcripts, `<config home>/projects/<sanitized cwd>/*.jsonl`,
   whose lines record each session's `cwd`: read bounded (the newest
   `TRANSCRIPTS_PER_FOLDER` files of a folder, `TRANSCRIPT_HEAD_BYTES` of
   each, `MAX_TRANSCRIPTS` in all; folders whose name starts with a wanted
   directory's name first, since a cwd inside a root sanitizes to a longer
   name with the root's as its prefix);
4. for a default directory still unnamed, the folder its name spells
   (`-home-u-code-webshop` -> `/home/u/code/webshop`): from `/`, each next
   piece of the name looked up in an index of the folder's listing (each
   listing read once per call, at most `MAX_SPELL_LISTINGS` a name), never
   through a symlink.
"""

from __future__ import annotations

import contextlib
import os

from memd.fsread import list_dir, read_prefix
from memd.projects.naming import ProjectNames, memory_dir_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.claude_code.profile import ProfileSpec
    from memd.config import Config

TRANSCRIPT_SUFFIX = ".jsonl"
TRANSCRIPT_HEAD_BYTES = 32 * 1024  # a session's first lines carry its cwd
TRANSCRIPTS_PER_FOLDER = 2  # the newest: a folder is one cwd, mostly
MAX_TRANSCRIPTS = 200  # files read per call, all folders together
MAX_TRANSCRIPT_FOLDERS = 2000  # folders looked at (a stat each)
MAX_CWDS = 200  # distinct cwds taken from transcripts per call
MAX_CANDIDATES = 1000  # folders resolved per call, every source together
MAX_LINE_DEPTH = 64  # a transcript line nested deeper is skipped, not parsed
MAX_SPELL_LISTINGS = 64  # directories listed to spell one folder name back
MAX_LISTED_ENTRIES = 100_000  # entries looked at in one listing (/tmp holds thousands)


def roots_by_memory_dir(
    memory_dirs: Iterable[str],
    *,
    env: Mapping[str, str] | None = None,
    state_dir: str | None = None,
    extra_roots: Iterable[str] = (),
    transcripts: bool = True,
    profile: ProfileSpec = None,
) -> dict[str, tuple[str, ...]]:
    """Return {memory dir: its project roots, sorted} for each of `memory_dirs`.

    Keys are the memory dirs without a trailing separator; a dir with no
    known root maps to `()`. Never raises: an unreadable state, transcript or
    folder only means fewer roots.
    """
    from memd.state import known_projects

    environ = os.environ if env is None else env
    wanted = {memory_dir_key(d): set[str]() for d in memory_dirs}
    if not wanted:
        return {}
    if state_dir is None:
        from memd.dirs import default_state_dir

        state_dir = default_state_dir(environ)
    resolver = _Resolver(wanted, environ, profile)
    for root in (*known_projects(state_dir), *extra_roots):
        resolver.add(root)
    if transcripts:
        for cwd in transcript_cwds(environ, prefer=_folder_names(wanted, environ)):
            resolver.add(cwd)
    listings: dict[str, dict[str, list[str]]] = {}  # shared by every walk below
    for memory_dir, found in wanted.items():
        if not found:
            for root in _spelled_roots(memory_dir, environ, listings):
                resolver.add(root)
    return {key: tuple(sorted(found)) for key, found in wanted.items()}


def load_project_names(
    memory_dirs: Iterable[str],
    *,
    config: Config | None = None,
    env: Mapping[str, str] | None = None,
    state_dir: str | None = None,
    extra_roots: Iterable[str] = (),
    transcripts: bool = True,
    profile: ProfileSpec = None,
) -> ProjectNames:
    """Return the `ProjectNames` of `memory_dirs`: roots as above, home from `env`.

    `config` gives `state_dir` and `extra_roots` (its `watch_projects`) when
    those are not passed.
    """
    from memd.claude_code.paths import home_dir

    if config is not None:
        state_dir = config.state_dir if state_dir is None else state_dir
        extra_roots = (*extra_roots, *config.watch_projects)
    environ = os.environ if env is None else env
    roots = roots_by_memory_dir(
        memory_dirs,
        env=environ,
        state_dir=state_dir,
        extra_roots=extra_roots,
        transcripts=transcripts,
        profile=profile,
    )
    return ProjectNames(roots, home_dir(environ))


class _Resolver:
    """Resolves candidate folders once each and files the roots that map back."""

    def __init__(
        self,
        wanted: dict[str, set[str]],
        env: Mapping[str, str],
        profile: ProfileSpec,
    ) -> None:
        self.wanted = wanted
        self.env = env
        self.profile = profile
        self.seen: set[str] = set()
        # When every wanted dir is a default `<base>/projects/<name>/memory`
        # (and no env renames it), a folder can only map to one whose <name>
        # its own sanitized path starts with (the git root is an ancestor):
        # the others need no resolving.
        from memd.claude_code.path_rules import PROJECT_DIR_NAME_ENV
        from memd.claude_code.paths import MAX_SANITIZED_LENGTH

        names = _folder_names(wanted, env)
        default = (
            len(names) == len(wanted)
            and not env.get(PROJECT_DIR_NAME_ENV)
            and all(len(name) <= MAX_SANITIZED_LENGTH for name in names)  # no hash
        )
        self.prefixes = frozenset(names) if default else None

    def add(self, folder: object) -> None:
        from memd.claude_code.gitroot import find_canonical_git_root
        from memd.claude_code.paths import resolve_memory_location

        if not isinstance(folder, str):
            return
        folder = os.path.expanduser(folder)  # a config's watch_projects may say ~/
        if not os.path.isabs(folder):
            return
        if folder in self.seen or len(self.seen) >= MAX_CANDIDATES:
            return
        self.seen.add(folder)
        if self.prefixes is not None and not self._may_map(folder):
            return
        try:
            location = resolve_memory_location(folder, self.env, profile=self.profile)
        except (OSError, ValueError):
            return
        found = self.wanted.get(memory_dir_key(location.memory_dir))
        if found is None:
            return
        root = location.project_root
        with contextlib.suppress(OSError, ValueError):
            root = find_canonical_git_root(root, profile=self.profile) or root
        found.add(root)

    def _may_map(self, folder: str) -> bool:
        from memd.claude_code.paths import sanitize_path

        prefixes = self.prefixes or frozenset()
        spelled = sanitize_path(os.path.realpath(folder))
        ends = [k for k, ch in enumerate(spelled) if ch == "-" and k]
        return any(spelled[:k] in prefixes for k in (*ends, len(spelled)))


def _folder_names(
    wanted: Mapping[str, object], env: Mapping[str, str]
) -> tuple[str, ...]:
    """Return the `<name>` of each `<base>/projects/<name>/memory` among `wanted`."""
    from memd.claude_code.paths import memory_base_dir

    projects = os.path.join(os.path.abspath(memory_base_dir(env)), "projects")
    names = []
    for memory_dir in wanted:
        parent, leaf = os.path.split(memory_dir)
        if os.path.dirname(parent) == projects and leaf.endswith("memory"):
            names.append(os.path.basename(parent))
    return tuple(names)


def transcript_cwds(
    env: Mapping[str, str] | None = None, *, prefer: Iterable[str] = ()
) -> list[str]:
    """Return the distinct `cwd`s the agent's transcripts record, bounded.

    Folders named `prefer` (or a longer name starting with one and `-`) are
    read first; then the rest, newest first, until `MAX_TRANSCRIPTS` files.
    """
    from memd.claude_code.settings import claude_config_home

    environ = os.environ if env is None else env
    projects = os.path.join(claude_config_home(environ), "projects")
    try:
        entries = list_dir(projects)[:MAX_TRANSCRIPT_FOLDERS]
    except OSError:
        return []
    preferred = tuple(prefer)

    def rank(entry: os.DirEntry[str]) -> tuple[int, float]:
        name = entry.name
        close = any(name == p or name.startswith(p + "-") for p in preferred)
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            mtime = 0.0
        return (0 if close else 1, -mtime)

    folders = [e for e in entries if is_dir_entry(e)]
    folders.sort(key=rank)
    cwds: dict[str, None] = {}
    budget = MAX_TRANSCRIPTS
    for folder in folders:
        if budget <= 0 or len(cwds) >= MAX_CWDS:
            break
        for path in _newest_transcripts(folder.path)[
            : min(budget, TRANSCRIPTS_PER_FOLDER)
        ]:
            budget -= 1
            for cwd in cwds_in_head(path):
                cwds.setdefault(cwd, None)
    return list(cwds)[:MAX_CWDS]


def is_dir_entry(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _newest_transcripts(folder: str) -> list[str]:
    return [path for _, path in dated_transcripts(folder)]


def dated_transcripts(folder: str) -> list[tuple[float, str]]:
    """(mtime, path) of a folder's transcripts, newest first, links left out."""
    try:
        entries = list_dir(folder)
    except OSError:
        return []
    dated = []
    for entry in entries[:MAX_LISTED_ENTRIES]:
        if not entry.name.endswith(TRANSCRIPT_SUFFIX):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            dated.append((entry.stat(follow_symlinks=False).st_mtime, entry.path))
        except OSError:
            continue
    dated.sort(reverse=True)
    return dated


def cwds_in_head(path: str) -> list[str]:
    """Return the top-level `cwd` of each whole line in the file's bounded head."""
    from memd.fastjson import loads

    try:
        head = read_prefix(path, TRANSCRIPT_HEAD_BYTES)
    except OSError:
        return []
    lines = head.split(b"\n")
    if len(head) >= TRANSCRIPT_HEAD_BYTES:
        lines.pop()  # cut at the cap: not a whole line
    found: list[str] = []
    for line in lines:
        if b'"cwd"' not in line:
            continue
        try:
            record = loads(line, max_depth=MAX_LINE_DEPTH)
        except (ValueError, RecursionError):
            continue
        cwd = record.get("cwd") if isinstance(record, dict) else None
        if not isinstance(cwd, str) or not os.path.isabs(cwd) or "\0" in cwd:
            continue
        if cwd not in found:
            found.append(cwd)
    return found


def _spelled_roots(
    memory_dir: str,
    env: Mapping[str, str],
    listings: dict[str, dict[str, list[str]]] | None = None,
) -> list[str]:
    """Return the existing folders whose sanitized path is this dir's project name.

    Only for `<base>/projects/<name>/memory`: `<name>` is the sanitized root,
    each non-alphanumeric character a `-`, so from `/` each step looks up the
    subfolders whose sanitized name is the next piece of `<name>` up to one
    of its `-`s (each listing indexed once per call, in `listings`). A name
    cut at 200 characters and hashed is compared whole past the cut.
    """
    from memd.claude_code.paths import MAX_SANITIZED_LENGTH, sanitize_path

    names = _folder_names({memory_dir: None}, env)
    if not names or not names[0].startswith("-"):
        return []
    name = names[0]
    hashed = len(name) > MAX_SANITIZED_LENGTH
    cut = name[:MAX_SANITIZED_LENGTH] if hashed else name
    found: list[str] = []
    stack = [(os.sep, "")]
    cache = {} if listings is None else listings
    listed = 0
    while stack and listed < MAX_SPELL_LISTINGS:
        folder, spelled = stack.pop()
        listed += 1
        subdirs = cache.get(folder)
        if subdirs is None:
            subdirs = cache[folder] = _sanitized_subdirs(folder)
        rest = cut[len(spelled) + 1 :]  # what the next folders must spell
        if hashed and len(spelled) >= len(cut):
            rest = ""  # below the cut: every subfolder may be the one
        ends = [k for k, ch in enumerate(rest) if ch == "-" and k] + [len(rest)]
        for end in ends:
            for entry_name in subdirs.get(rest[:end], ()):
                path = os.path.join(folder, entry_name)
                if end < len(rest) or hashed:  # hashed: the root may lie deeper
                    stack.append((path, f"{spelled}-{rest[:end]}"))
                if end == len(rest) and (not hashed or sanitize_path(path) == name):
                    found.append(path)
        if hashed:  # the cut may fall inside a folder's name: past it, the hash
            for key, entries in subdirs.items():  # decides, at any depth below
                if len(key) > len(rest) and key.startswith(rest):
                    for entry_name in entries:
                        path = os.path.join(folder, entry_name)
                        if sanitize_path(path) == name:
                            found.append(path)
                        stack.append((path, f"{spelled}-{key}"))
    return found


def _sanitized_subdirs(folder: str) -> dict[str, list[str]]:
    """A folder's subfolders by sanitized name (links left out)."""
    from memd.claude_code.paths import MAX_SANITIZED_LENGTH, sanitize_path

    try:
        entries = list_dir(folder)[:MAX_LISTED_ENTRIES]
    except OSError:
        return {}
    found: dict[str, list[str]] = {}
    for entry in entries:
        if len(entry.name) <= MAX_SANITIZED_LENGTH and is_dir_entry(entry):
            found.setdefault(sanitize_path(entry.name), []).append(entry.name)
    return found
