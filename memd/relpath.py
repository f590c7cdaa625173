"""The one path rule for every relpath that arrives from outside memd.

A git tree a teammate pushed, a name an MCP client sends: either may spell a
path that leaves the directory it is meant for (``../x.md``), writes into
git's own control directory (``.git/hooks/post-checkout``, at any depth), or
only *looks* harmless on this machine while another filesystem or tool reads
it otherwise. `relpath_refusal` says which, before anything touches the disk.

What it refuses, and why each:

- empty, absolute (``/x``), or with an empty, ``.`` or ``..`` component: a
  relpath is spelled one way only, so two spellings never name one file;
- a ``.git`` component at any depth in any case, and the spellings git itself
  guards (``verify_path`` in git's ``read-cache.c``): NTFS drops trailing dots
  and spaces and reads ``name:stream`` and the 8.3 short name ``GIT~1``; HFS+
  ignores the code points in `_HFS_IGNORABLE` when it compares names;
- NUL, a backslash, a drive letter (``C:``), and the characters that look
  like a slash (`_LOOKALIKE_SEPARATORS`) or fold to one (NFKC): each is a
  separator to some tool, or a name a person misreads as a path;
- control characters (Cc), lone surrogates (Cs: a name that was not UTF-8)
  and the HFS-ignorable format characters anywhere, so what a person sees is
  what is written;
- a component over 255 bytes in UTF-8, a path over 4,096 bytes or 64
  components: the kernel would refuse them later, with a worse message.

Pure: standard library `unicodedata` only. Callers decide what a refusal
means (the MCP server answers it, team sync refuses the whole tree); the
beneath-opener in `memd.fsread` then makes sure no symlink on the way leads
out either.
"""

from __future__ import annotations

import unicodedata

__all__ = ["names_git_dir", "relpath_refusal"]

MAX_COMPONENT_BYTES = 255  # NAME_MAX
MAX_RELPATH_BYTES = 4096  # PATH_MAX
MAX_COMPONENTS = 64
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

# HFS+ skips these when it compares names, so ".g\u200cit" is ".git" there
# (git's utf8.c, next_hfs_char).
_HFS_IGNORABLE = frozenset(
    "\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e"
    "\u206a\u206b\u206c\u206d\u206e\u206f"
    "\ufeff"
)
# Slashes and backslashes in other clothes; NFKC folds some (U+FF0F) but not
# these, and a person or a converting tool reads each as a separator.
_LOOKALIKE_SEPARATORS = frozenset(
    "\u2044"  # FRACTION SLASH
    "\u2215"  # DIVISION SLASH
    "\u2216"  # SET MINUS
    "\u2571"  # BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
    "\u2572"  # BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
    "\u27cb"  # MATHEMATICAL RISING DIAGONAL
    "\u27cd"  # MATHEMATICAL FALLING DIAGONAL
    "\u29f5"  # REVERSE SOLIDUS OPERATOR
    "\u29f8"  # BIG SOLIDUS
    "\u29f9"  # BIG REVERSE SOLIDUS
    "\u3033"  # VERTICAL KANA REPEAT MARK UPPER HALF
    "\ufe68"  # SMALL REVERSE SOLIDUS
    "\uff0f"  # FULLWIDTH SOLIDUS
    "\uff3c"  # FULLWIDTH REVERSE SOLIDUS
    "\U0001d23a"  # GREEK INSTRUMENTAL NOTATION SYMBOL-47
)


def relpath_refusal(relpath: str) -> str | None:
    """Return why `relpath` is refused, or None when it is a safe relpath.

    A safe relpath is POSIX (``/`` separates), relative, and every component
    is a plain name that no filesystem or tool reads as another path or as
    git's control directory. The reason is a short phrase for a message
    ("a '..' component", "names git's control directory").
    """
    if not relpath:
        return "an empty path"
    if "\0" in relpath:
        return "a NUL byte"
    if relpath.startswith("/"):
        return "an absolute path"
    if len(relpath.encode("utf-8", "surrogatepass")) > MAX_RELPATH_BYTES:
        return f"longer than {MAX_RELPATH_BYTES} bytes"
    parts = relpath.split("/")
    if len(parts) > MAX_COMPONENTS:
        return f"more than {MAX_COMPONENTS} components"
    first = parts[0]
    if len(first) >= 2 and first[1] == ":" and first[0] in _ASCII_LETTERS:
        return "a drive letter"
    for part in parts:
        why = _component_refusal(part)
        if why is not None:
            return why
    return None


def _component_refusal(part: str) -> str | None:
    if part == "":
        return "an empty component"
    if part in (".", ".."):
        return f"a '{part}' component"
    if "\\" in part:
        return "a backslash"
    if len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
        return f"a component longer than {MAX_COMPONENT_BYTES} bytes"
    for char in part:
        if char in _LOOKALIKE_SEPARATORS:
            return f"a character that looks like a slash (U+{ord(char):04X})"
        if char in _HFS_IGNORABLE:
            return f"an invisible character (U+{ord(char):04X})"
        category = unicodedata.category(char)
        if category == "Cc":
            return f"a control character (U+{ord(char):04X})"
        if category == "Cs":
            return "a name that is not UTF-8"
    folded = unicodedata.normalize("NFKC", part)
    if folded in (".", "..") or "/" in folded or "\\" in folded:
        return "a component that reads as a path separator or '..' once normalised"
    if _is_dotgit(folded) or _is_dotgit(part):
        return "a component that names git's control directory (.git)"
    return None


def names_git_dir(part: str) -> bool:
    """Return True when the component `part` is `.git` to git or any filesystem.

    The part of the rule git's own index applies (``verify_path``): a path
    with such a component is one git will not index, whatever else it holds.
    """
    stripped = "".join(char for char in part if char not in _HFS_IGNORABLE)
    folded = unicodedata.normalize("NFKC", stripped)
    return _is_dotgit(part) or _is_dotgit(stripped) or _is_dotgit(folded)


def _is_dotgit(part: str) -> bool:
    """Return True for `.git` as any of NTFS, HFS+ and git's own checks read it."""
    name = part.split(":", 1)[0]  # NTFS: ".git::$INDEX_ALLOCATION" is ".git"
    name = name.rstrip(". ").casefold()  # NTFS: ".git. " is ".git"
    return name == ".git" or (
        name.startswith("git~") and name[4:].isdigit()  # the 8.3 short name
    )
