"""Find a project's git root the way the reference does (REFERENCE.md §2).

`find_git_root` is a lexical walk up from `path.resolve(start)` (no realpath,
so a symlinked start is returned as given) looking for a `.git` directory or
regular file. `find_canonical_git_root` then follows a worktree's `.git` file
back to the main repository, with the reference's two security checks, so all
worktrees of one repository share one memory directory; submodules and forged
back-links keep their own root.

From 2.1.332 the profile's `GitRootRules` add stricter checks ("Git roots:
stricter checks"): a `.git` link must stay inside its folder, `gitdir:` and
`commondir` targets may not be network or device paths, leave their place
through a link, or hold `\\` on POSIX; a bare common dir holding a `.git` of
its own is not followed; Linux autofs map roots are never probed. A diskless
session finds no root at all, but REFERENCE.md names no signal for one and
memd resolves on-disk sessions only, so that rule has no counterpart here.

Unlike the reference there is no LRU cache: the daemon re-resolves when one of
`git_root_inputs(start)` changes. Read-only; stdlib `os` only at import time.
"""

from __future__ import annotations

import os
import stat
import sys
import unicodedata

from memd.claude_code.jscompat import js_trim

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.claude_code.profile import GitRootRules, ProfileSpec

_GITDIR_PREFIX = "gitdir:"
# Far longer than any real path; a bigger file cannot name a usable directory anyway.
_MAX_READ_BYTES = 1 << 20
_MOUNTS = "/proc/self/mounts"
# A few hundred bytes per mount: thousands of mounts still fit. Past it, no skips.
_MAX_MOUNTS_BYTES = 4 << 20
# How the kernel escapes a mount point in /proc/self/mounts; `\134` goes last so
# an escaped backslash followed by digits is not read as a second escape.
_MOUNT_ESCAPES = (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\"))


def find_git_root(start: str, *, profile: ProfileSpec = None) -> str | None:
    """Return the nearest directory at or above `start` holding a `.git` dir or file."""
    root, _ = _walk(start, _rules(profile))
    return root


def find_canonical_git_root(start: str, *, profile: ProfileSpec = None) -> str | None:
    """Return the main working tree for a worktree, else `find_git_root(start)`."""
    root, _ = _canonical(start, _rules(profile))
    return root


def git_root_inputs(start: str, *, profile: ProfileSpec = None) -> tuple[str, ...]:
    """Return every path the canonical answer was read from, existing or not.

    That is each `<dir>/.git` the walk looked at, plus the worktree's
    `commondir` and `gitdir` files when a `.git` file was followed.
    """
    _, inputs = _canonical(start, _rules(profile))
    return inputs


def autofs_mount_points(mounts: str) -> frozenset[str]:
    """Return the mount points of type `autofs` in `/proc/self/mounts` text."""
    points = set()
    for line in mounts.split("\n"):
        fields = line.split(" ", 3)
        if len(fields) >= 3 and fields[2] == "autofs":
            point = fields[1]
            for escaped, char in _MOUNT_ESCAPES:
                point = point.replace(escaped, char)
            points.add(point)
    return frozenset(points)


def _rules(spec: ProfileSpec) -> GitRootRules:
    from memd.claude_code.profile import get_profile

    return get_profile(spec).git_roots


def _skipped_folders(rules: GitRootRules) -> frozenset[str]:
    """Return the folders the walk must not probe: Linux autofs map roots.

    Looking up `<map root>/.git` asks the automounter to mount a key named
    `.git`, which on a network map can stall. One bounded read per walk.
    """
    if not rules.skip_autofs_roots or not sys.platform.startswith("linux"):
        return frozenset()
    from memd.fsread import read_bytes

    try:
        data = read_bytes(_MOUNTS, _MAX_MOUNTS_BYTES)
    except OSError:  # no /proc, or a mount table past the cap: probe everything
        return frozenset()
    return autofs_mount_points(data.decode("utf-8", errors="surrogateescape"))


def _js_resolve(*parts: str) -> str:
    """Return Node's `path.resolve(...)` on POSIX: absolute, normalised, no realpath."""
    path = os.path.abspath(os.path.join(*parts)) if parts else os.getcwd()
    # posixpath keeps a leading "//" (POSIX allows it to mean something); Node does not.
    return path[1:] if path.startswith("//") else path


def _stays_inside(path: str, folder: str) -> bool:
    """Return True if `path`, all links followed, is `folder` or lies under it."""
    try:
        real = os.path.realpath(path, strict=True)
        base = os.path.realpath(folder, strict=True)
    except (OSError, ValueError):
        return False
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _is_network_or_device(text: str, resolved: str, rules: GitRootRules) -> bool:
    """Check a link or gitdir target as written (if rooted) and as resolved.

    A relative `net/x` is a folder named net, not a network mount: only a
    target that starts with a separator is checked as written.
    """
    candidates = (text, resolved) if text.startswith(("/", "\\")) else (resolved,)
    return any(rejects(path) for path in candidates for rejects in rules.unsafe_targets)


def _is_git_marker(marker: str, folder: str, rules: GitRootRules) -> bool:
    try:
        if rules.confine_links and stat.S_ISLNK(os.lstat(marker).st_mode):
            target = os.readlink(marker)
            resolved = _js_resolve(folder, target)
            if _is_network_or_device(target, resolved, rules) or not _stays_inside(
                marker, folder
            ):
                return False
        mode = os.stat(marker).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


def _walk(
    start: str, rules: GitRootRules, skipped: frozenset[str] | None = None
) -> tuple[str | None, tuple[str, ...]]:
    """Walk up from `start`; `skipped` defaults to the autofs roots (tests pass one)."""
    try:
        current = _js_resolve(start)
    except (OSError, ValueError):  # cwd gone, or NUL in the path
        return None, ()
    if skipped is None:
        skipped = _skipped_folders(rules)
    looked: list[str] = []
    while True:
        if current not in skipped:
            marker = os.path.join(current, ".git")
            looked.append(marker)
            if _is_git_marker(marker, current, rules):
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


def _refused_target(text: str, resolved: str, rules: GitRootRules) -> bool:
    """A `gitdir:` or `commondir` target the profile will not follow."""
    return (
        rules.refuse_backslash and os.sep == "/" and "\\" in text
    ) or _is_network_or_device(text, resolved, rules)


def _canonical(start: str, rules: GitRootRules) -> tuple[str | None, tuple[str, ...]]:
    root, looked = _walk(start, rules)
    if root is None:
        return None, looked
    inputs = list(looked)
    try:
        content = js_trim(_read_text(os.path.join(root, ".git")))
        if not content.startswith(_GITDIR_PREFIX):
            return root, tuple(inputs)
        target = js_trim(content[len(_GITDIR_PREFIX) :])
        worktree_dir = _js_resolve(root, target)
        if _refused_target(target, worktree_dir, rules):
            return root, tuple(inputs)
        commondir_file = os.path.join(worktree_dir, "commondir")
        gitdir_file = os.path.join(worktree_dir, "gitdir")
        inputs += [commondir_file, gitdir_file]
        # A submodule's gitdir (.git/modules/X) has no commondir: it is its own root.
        target = js_trim(_read_text(commondir_file))
        common = _js_resolve(worktree_dir, target)
        if _refused_target(target, common, rules):
            return root, tuple(inputs)
        expected_parent = os.path.join(common, "worktrees")
        if _js_resolve(os.path.dirname(worktree_dir)) != expected_parent:
            return root, tuple(inputs)
        # Lexically the entry sits in <common>/worktrees and common in its parent;
        # a link must not move either somewhere else.
        if rules.confine_links and not (
            _stays_inside(worktree_dir, common)
            and _stays_inside(common, os.path.dirname(common))
        ):
            return root, tuple(inputs)
        # The back-link stops a forged .git file borrowing another repo's worktree.
        back_link = os.path.realpath(js_trim(_read_text(gitdir_file)), strict=True)
        if back_link != os.path.join(os.path.realpath(root, strict=True), ".git"):
            return root, tuple(inputs)
    except (OSError, ValueError):  # a .git directory, a missing file, NUL bytes
        return root, tuple(inputs)
    if os.path.basename(common) != ".git":  # a worktree of a bare repository
        if rules.bare_common_with_git_is_own_root and os.path.lexists(
            os.path.join(common, ".git")
        ):
            return root, tuple(inputs)
        return unicodedata.normalize("NFC", common), tuple(inputs)
    return unicodedata.normalize("NFC", os.path.dirname(common)), tuple(inputs)
