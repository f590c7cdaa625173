"""Projects sharing one memory dir; memory a new agent release no longer reads (edge).

The agent names a project's memory dir after its path with every character
outside ``[A-Za-z0-9]`` turned into ``-`` (`memd.claude_code.paths.sanitize_path`),
so ``/work/a-b/c`` and ``/work/a/b-c`` get the same dir, as do two paths that
differ only in non-ASCII letters of the same length. Each then reads and
overwrites the other's memory. `shared_dirs` finds the memory dirs that two
or more different roots resolve to by the agent's default rule (a dir a
setting or `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` chose for several projects
is the person's choice, not a collision); the roots come from
`memd.projects.roots`, which knows them from memd's state, `--project`, the
hooks and the agent's transcripts.

`moved_dirs` finds a root whose memory dir under an older release in
`memd.claude_code.profile.PROFILES` is not the one the release in force uses,
while that old dir still holds memory the agent no longer loads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.claude_code.profile import ProfileSpec

SHARED = "D005"
MOVED = "D006"


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedDir:
    """A memory dir that several project roots resolve to, and how to part them."""

    memory_dir: str  # no trailing separator
    roots: tuple[str, ...]
    fix: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MovedDir:
    """A project whose memory an older release kept in `old_dir`, still there."""

    root: str
    old_dir: str  # no trailing separator
    new_dir: str
    old_release: str
    memory_files: int


def shared_dirs(
    roots: Mapping[str, tuple[str, ...]],
    *,
    env: Mapping[str, str] | None = None,
    profile: ProfileSpec = None,
) -> list[SharedDir]:
    """The memory dirs in `roots` (memory dir -> roots) that different roots share."""
    from memd.claude_code.paths import resolve_memory_location

    found = []
    for memory_dir, its_roots in sorted(roots.items()):
        distinct = sorted(set(its_roots))
        if len(distinct) < 2:
            continue
        by_default = [
            root
            for root in distinct
            if resolve_memory_location(root, env, profile=profile).source == "default"
        ]
        if len(by_default) < 2:
            continue
        found.append(
            SharedDir(
                memory_dir=memory_dir,
                roots=tuple(by_default),
                fix=fix_text(memory_dir, by_default, env=env, profile=profile),
            )
        )
    return found


def fix_text(
    memory_dir: str,
    roots: Iterable[str],
    *,
    env: Mapping[str, str] | None = None,
    profile: ProfileSpec = None,
) -> str:
    """How to give one of `roots` a memory dir of its own, as the release allows."""
    from memd.claude_code.profile import get_profile
    from memd.projects.naming import tilde

    home = (env or os.environ).get("HOME", "")
    last = sorted(roots)[-1]
    own = memory_dir.rstrip(os.sep)
    parent = os.path.dirname(os.path.dirname(own))
    suggested = os.path.join(parent, _own_name(last), "memory")
    text = (
        f'give {tilde(last, home)} its own: set "autoMemoryDirectory": '
        f'"{tilde(suggested, home)}" in {tilde(last, home)}/.claude/settings.local.json'
    )
    agent = get_profile(profile)
    if "local" in agent.trust_gated_sources:
        text += " (read once the folder is trusted)"
    probe = {"CLAUDE_CONFIG_DIR": "/x", "CLAUDE_CODE_PROJECT_DIR_NAME": "x"}
    if agent.project_dir_name(probe):
        text += (
            f", or start its sessions with CLAUDE_CODE_PROJECT_DIR_NAME="
            f"{_own_name(last)} (with CLAUDE_CONFIG_DIR set)"
        )
    return text


def _own_name(root: str) -> str:
    """A folder name for `root` from its path (`_` keeps it apart from sanitized)."""
    name = "".join(
        char if char.isascii() and char.isalnum() else "_" for char in root.strip("/")
    )
    return name[-64:] or "project"


def moved_dirs(
    roots: Iterable[str],
    *,
    env: Mapping[str, str] | None = None,
    profile: ProfileSpec = None,
) -> list[MovedDir]:
    """Roots whose memory an older release kept elsewhere, still holding memory."""
    from memd.claude_code.paths import resolve_memory_location
    from memd.claude_code.profile import PROFILES, get_profile

    agent = get_profile(profile)
    found = []
    for root in dict.fromkeys(roots):
        current = resolve_memory_location(root, env, profile=agent)
        if current.source != "default":
            continue
        new_dir = current.memory_dir.rstrip(os.sep)
        for older in PROFILES:
            if older.version == agent.version:
                break
            old = resolve_memory_location(root, env, profile=older)
            old_dir = old.memory_dir.rstrip(os.sep)
            if old.source != "default" or old_dir == new_dir:
                continue
            count = _memory_files(old_dir)
            if count:
                found.append(
                    MovedDir(
                        root=root,
                        old_dir=old_dir,
                        new_dir=new_dir,
                        old_release=older.version,
                        memory_files=count,
                    )
                )
                break
    return found


def _memory_files(directory: str) -> int:
    from memd.fsread import list_names

    try:
        return sum(1 for name in list_names(directory) if name.endswith(".md"))
    except OSError:
        return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Survey:
    """Every known memory dir's sharing problems, for doctor, status and the viewer."""

    shared: tuple[SharedDir, ...]
    moved: tuple[MovedDir, ...]
    roots: Mapping[str, tuple[str, ...]]


def survey(
    *,
    env: Mapping[str, str] | None = None,
    state_dir: str | None = None,
    extra_roots: Iterable[str] = (),
    profile: ProfileSpec = None,
    memory_dirs: Iterable[str] | None = None,
) -> Survey:
    """Find shared and moved memory dirs among every `<base>/projects/*/memory`."""
    from memd.lint.targets import discover_memory_dirs
    from memd.projects.roots import roots_by_memory_dir

    dirs = (
        list(memory_dirs)
        if memory_dirs is not None
        else list(discover_memory_dirs(env))
    )
    roots = roots_by_memory_dir(
        dirs, env=env, state_dir=state_dir, extra_roots=extra_roots, profile=profile
    )
    every_root = sorted({root for its in roots.values() for root in its})
    return Survey(
        shared=tuple(shared_dirs(roots, env=env, profile=profile)),
        moved=tuple(moved_dirs(every_root, env=env, profile=profile)),
        roots=roots,
    )


def describe_shared(shared: SharedDir, home: str) -> str:
    """One line for a person: both roots and the dir they share."""
    from memd.projects.naming import tilde

    named = " and ".join(tilde(root, home) for root in shared.roots)
    return (
        f"{named} share one memory dir ({tilde(shared.memory_dir, home)}): "
        "each project reads and overwrites the other's memory"
    )


def describe_moved(moved: MovedDir, home: str) -> str:
    """One line for a person: the project, the old dir and what is in it."""
    from memd.projects.naming import tilde

    return (
        f"{tilde(moved.root, home)}'s memory from agent {moved.old_release} is still "
        "in "
        f"{tilde(moved.old_dir, home)} ({moved.memory_files} files), which the release "
        "in force no longer loads"
    )


def moved_fix(moved: MovedDir, home: str) -> str:
    """What to do about a moved dir."""
    from memd.projects.naming import tilde

    return (
        f"move what is still true into {tilde(moved.new_dir, home)}, then remove "
        f"{tilde(moved.old_dir, home)}"
    )
