"""Find a project's git root the way the reference does (REFERENCE.md §2).

`find_git_root` is a lexical walk up from `path.resolve(start)` (no realpath,
so a symlinked start is returned as given) looking for a `.git` directory or
regular file. `find_canonical_git_root` then follows a worktree's `.git` file
back to the main repository, with the reference's two security checks, so all
worktrees of one repository share one memory directory; submodules and forged
back-links keep their own root.

Unlike the reference there is no LRU cache: the daemon re-resolves when one of
`git_root_inputs(start)` changes. Read-only; hot path (stdlib `os` only).
"""

from __future__ import annotations

import os
import stat
import unicodedata

from memd.agent.jscompat import js_trim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.agent.profile import ProfileSpec

_GITDIR_PREFIX = "gitdir:"
# Far longer than any real path; a bigger file cannot name a usable directory anyway.
_MAX_READ_BYTES = 1 << 20


def find_git_root(start: str, *, profile: ProfileSpec = None) -> str | None:
    """Return the nearest directory at or above `start` holding a `.git` dir or file.

    Every profile so far finds the same roots; `profile` is checked, then unused.
    """
    _check_profile(profile)
    root, _ = _walk(start)
    return root


def find_canonical_git_root(start: str, *, profile: ProfileSpec = None) -> str | None:
    """Return the main working tree for a worktree, else `find_git_root(start)`."""
    _check_profile(profile)
    root, _ = _canonical(start)
    return root


def _check_profile(spec: ProfileSpec) -> None:
    if spec is not None:  # the default needs no import: this module is on the hot path
        from memd.agent.profile import get_profile

        get_profile(spec)


def git_root_inputs(start: str) -> tuple[str, ...]:
    """Return every path the canonical answer was read from, existing or not.

    That is each `<dir>/.git` the walk looked at, plus the worktree's
    `commondir` and `gitdir` files when a `.git` file was followed.
    """
    _, inputs = _canonical(start)
    return inputs


def _js_resolve(*parts: str) -> str:
    """Return Node's `path.resolve(...)` on POSIX: absolute, normalised, no realpath."""
    path = os.path.abspath(os.path.join(*parts)) if parts else os.getcwd()
    # posixpath keeps a leading "//" (POSIX allows it to mean something); Node does not.
    return path[1:] if path.startswith("//") else path


def _is_git_marker(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


def _walk(start: str) -> tuple[str | None, tuple[str, ...]]:
    try:
        current = _js_resolve(start)
    except (OSError, ValueError):  # cwd gone, or NUL in the path
        return None, ()
    looked: list[str] = []
    while True:
        marker = os.path.join(current, ".git")
        looked.append(marker)
        if _is_git_marker(marker):
            return unicodedata.normalize("NFC", current), tuple(looked)
        parent = os.path.dirname(current)
        if parent == current:
            return None, tuple(looked)
        current = parent


def _read_text(path: str) -> str:
    """Read a regular file as readFileSync(path, "utf-8") would (bad bytes: U+FFFD).

    Non-blocking open and a regular-file check, so a hostile repository's FIFO
    cannot hang the daemon; anything but a regular file reads as an error.
    """
    from memd.fsread import open_regular, read_fd

    fd = open_regular(path, follow=True)  # `.git` may be a link, as git allows
    try:
        data = read_fd(fd, _MAX_READ_BYTES)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def _canonical(start: str) -> tuple[str | None, tuple[str, ...]]:
    root, looked = _walk(start)
    if root is None:
        return None, looked
    inputs = list(looked)
    try:
        content = js_trim(_read_text(os.path.join(root, ".git")))
        if not content.startswith(_GITDIR_PREFIX):
            return root, tuple(inputs)
        worktree_dir = _js_resolve(root, js_trim(content[len(_GITDIR_PREFIX) :]))
        commondir_file = os.path.join(worktree_dir, "commondir")
        gitdir_file = os.path.join(worktree_dir, "gitdir")
        inputs += [commondir_file, gitdir_file]
        # A submodule's gitdir (.git/modules/X) has no commondir: it is its own root.
        common = _js_resolve(worktree_dir, js_trim(_read_text(commondir_file)))
        expected_parent = os.path.join(common, "worktrees")
        if _js_resolve(os.path.dirname(worktree_dir)) != expected_parent:
            return root, tuple(inputs)
        # The back-link stops a forged .git file borrowing another repo's worktree.
        back_link = os.path.realpath(js_trim(_read_text(gitdir_file)), strict=True)
        if back_link != os.path.join(os.path.realpath(root, strict=True), ".git"):
            return root, tuple(inputs)
    except (OSError, ValueError):  # a .git directory, a missing file, NUL bytes
        return root, tuple(inputs)
    if os.path.basename(common) != ".git":  # a worktree of a bare repository
        return unicodedata.normalize("NFC", common), tuple(inputs)
    return unicodedata.normalize("NFC", os.path.dirname(common)), tuple(inputs)
