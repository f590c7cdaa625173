"""Where each repository path lives on this machine: `Layout`.

A folder is found one path component at a time (`deepest_folder`), so
``projects/a/`` never claims ``projects/a/b/`` when that is a folder too,
and the cost does not grow with the number of folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memd.claude_code.terms import INDEX_NAME
from memd.gitsync.git import Git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each repository path lives on this machine, and which MEMORY.md indexes it.

    A team repository is one memory folder (prefix ``""``) whose files live in
    the team dir. A personal repository holds one folder per project
    (``projects/<identity>/``), each placed in that project's memory dir on
    this machine, or nowhere when the project is not here; files outside
    every folder (the manifest, dream claims) live only in the repository.
    """

    roots: Mapping[str, str]  # folder prefix -> local directory
    prefixes: tuple[str, ...] = ("",)  # every memory folder, placed or not
    # repository-only files both sides changed, merged by a rule (the manifest)
    unions: Mapping[str, Callable[[bytes, bytes], bytes]] = field(default_factory=dict)
    first_wins: tuple[str, ...] = ()  # prefixes where the side pushed first wins
    label: str = "memd team sync"  # how commit messages begin
    # check_tree(git, commit) raises for a fetched tree this layout refuses
    # whole, before anything of it is written
    check_tree: Callable[[Git, str], None] | None = None
    _folders: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_folders", frozenset(self.prefixes))

    def folder_of(self, relpath: str) -> str | None:
        """Return the memory folder `relpath` is in (the deepest), or None."""
        return deepest_folder(relpath, self._folders)

    def is_index(self, relpath: str) -> bool:
        folder = self.folder_of(relpath)
        return folder is not None and relpath == folder + INDEX_NAME

    def place(self, relpath: str) -> tuple[str, str] | None:
        """Return (local directory, path inside it) of `relpath`, or None."""
        folder = self.folder_of(relpath)
        if folder is None or folder not in self.roots:
            return None
        return self.roots[folder], relpath[len(folder) :]


def deepest_folder(relpath: str, folders: frozenset[str]) -> str | None:
    """Return the deepest of `folders` (each ending in ``/``, or ``""``) holding it.

    Folders compare as whole path components: ``projects/a/`` holds
    ``projects/a/x.md`` and ``projects/a/b/x.md`` unless ``projects/a/b/``
    is a folder too, and never ``projects/ab/x.md``. One set lookup per
    component, so the cost does not grow with the number of folders.
    """
    at = len(relpath)
    while True:
        at = relpath.rfind("/", 0, at)
        if at < 0:
            return "" if "" in folders else None
        if relpath[: at + 1] in folders:
            return relpath[: at + 1]


def whole_tree(team_dir: str) -> Layout:
    """Return the layout of a team repository: the whole tree in `team_dir`."""
    return Layout(roots={"": team_dir})
