"""What a person calls a memory directory: its project's folder, `~` for home.

Pure: roots in, words out, `os.path` only (the hooks' warm path may import
it). `roots.load_project_names` finds the roots.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

MAX_NAMED_ROOTS = 3  # past this, "and N more": a shared directory stays one line


def tilde(path: str, home: str) -> str:
    """Return `path` with `home` written `~` (`/home/u/code/x` -> `~/code/x`)."""
    home = home.rstrip(os.sep)
    if not home or not os.path.isabs(home):
        return path
    if path == home:
        return "~"
    if path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def memory_dir_key(memory_dir: str) -> str:
    """Return the one spelling of a memory dir used as a key: no trailing separator."""
    stripped = memory_dir.rstrip(os.sep)
    return stripped or memory_dir


def project_label(memory_dir: str, roots: Iterable[str], home: str) -> str:
    """Return what a person calls `memory_dir`: its roots' folders, else its path.

    One root: `~/code/webshop`. Two: `~/code/webshop and ~/code/shop-2`.
    More than `MAX_NAMED_ROOTS`: the first ones, then `and N more`.
    No root: the memory dir itself, `~` for home.
    """
    named = [tilde(root, home) for root in dict.fromkeys(roots)]
    if not named:
        return tilde(memory_dir_key(memory_dir), home)
    if len(named) > MAX_NAMED_ROOTS:
        shown = named[:MAX_NAMED_ROOTS]
        return ", ".join(shown) + f" and {len(named) - len(shown)} more"
    if len(named) == 1:
        return named[0]
    return ", ".join(named[:-1]) + " and " + named[-1]


def root_in(memory_dir: str, start: str) -> str:
    """The folder of `start` (or above) that a default memory dir is named after.

    `<base>/projects/<name>/memory` is named for the sanitized git root (or
    project root): the first of `start` and its parents that sanitizes to
    `<name>` is the folder a person calls the project. Pure: strings only, no
    git lookup (the warm recall path). `start` itself when none matches.
    """
    from memd.claude_code.paths import sanitize_path

    name = os.path.basename(os.path.dirname(memory_dir_key(memory_dir)))
    current = start
    while True:
        if sanitize_path(current) == name:
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def placed(sentence: str, label: str) -> str:
    """`sentence` said of the project `label`: "memd: in ~/code/webshop, 23 ...".

    For the loss alarm's sentences (memd.history's words, which name no
    project): the place goes after their "memd: ", else in front.
    """
    if not label:
        return sentence
    if sentence.startswith("memd: "):
        return f"memd: in {label}, {sentence.removeprefix('memd: ')}"
    return f"in {label}: {sentence}"


_SHELL_SAFE = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-~"
)


def project_arg(memory_dir: str, roots: Iterable[str], home: str) -> str:
    """Return what to write after `--project` in a command a person copies.

    The first root, `~` for home (a shell expands `~/code/x`); else the
    memory dir. Quoted for a POSIX shell when it holds anything else.
    """
    first = next(iter(roots), None)
    path = memory_dir_key(memory_dir) if first is None else first
    short = tilde(path, home)
    if all(ch in _SHELL_SAFE for ch in short) and not short.startswith("-"):
        return short
    return "'" + path.replace("'", "'\\''") + "'"


class ProjectNames:
    """The roots of a set of memory dirs and the home they are named against.

    `label(dir)` is the name to print; `detail(dir)` the memory dir, `~` for
    home, to print beside it; `both(dir)` is "name (detail)" for one-line
    text where the detail matters. A directory it was not built for is named
    by its path: never an error. (A plain class: the hooks' warm path
    imports this module, and `dataclasses` costs it `inspect`.)
    """

    __slots__ = ("home", "roots")

    def __init__(
        self, roots: Mapping[str, tuple[str, ...]] | None = None, home: str = ""
    ) -> None:
        self.roots: Mapping[str, tuple[str, ...]] = roots or {}
        self.home = home

    def __repr__(self) -> str:
        return f"ProjectNames({dict(self.roots)!r}, {self.home!r})"

    def roots_of(self, memory_dir: str) -> tuple[str, ...]:
        return self.roots.get(memory_dir_key(memory_dir), ())

    def label(self, memory_dir: str) -> str:
        return project_label(memory_dir, self.roots_of(memory_dir), self.home)

    def detail(self, memory_dir: str) -> str:
        return tilde(memory_dir_key(memory_dir), self.home)

    def both(self, memory_dir: str) -> str:
        label = self.label(memory_dir)
        detail = self.detail(memory_dir)
        return label if label == detail else f"{label} ({detail})"

    def file(self, path: str) -> str:
        """A memory file as a person names it: `MEMORY.md in ~/code/webshop`.

        Found by walking up `path` to a memory dir this was built for (linear
        in its depth); any other path is said as it is, `~` for home.
        """
        parent = os.path.dirname(path)
        while parent and memory_dir_key(parent) not in self.roots:
            above = os.path.dirname(parent)
            parent = "" if above == parent else above
        if not parent:
            return tilde(path, self.home)
        return f"{os.path.relpath(path, parent)} in {self.label(parent)}"

    def known(self, memory_dir: str) -> bool:
        return bool(self.roots_of(memory_dir))

    def project_arg(self, memory_dir: str) -> str:
        return project_arg(memory_dir, self.roots_of(memory_dir), self.home)
