"""Git objects and the tree rule: what memd reads from a commit and writes as one.

`read_tree` is the tree rule next to `memd.relpath`'s one path rule: every
entry of a commit is either a safe file (a plain path, a regular file mode)
or *odd* (a link, a gitlink, a `.gitattributes`, an unsafe or undecodable
name, a duplicate, a file where the tree has a folder), which is never
written, merged or put in git's index, only skipped and reported.
The rest writes objects from bytes memd read (`store_blobs` through
``fast-import``), trees through a private index (`write_tree`) and commits
whose message goes on stdin (`commit_tree`), so no argument list grows with
the number of files.
"""

from __future__ import annotations

import contextlib
import os

from memd.errors import MemdError
from memd.gitsync.git import Git, GitError
from memd.relpath import names_git_dir, relpath_refusal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


ZERO_OID = "0" * 40


REMOTE = "origin"


MEMD_DIR = "memd"  # inside .git: marker, lock, journal, private index


MAX_MESSAGE_LINES = 200  # a commit message names this many paths, then a count


# The trailer of a commit whose deletions a person agreed to (`--allow-deletes`):
# another machine takes those deletions in without asking again.
AGREED_TRAILER = "Memd-Allow-Deletes: yes"


# Files git itself reads from a working tree: they would steer the next git run.
_GIT_CONTROL_FILES = frozenset({".gitattributes", ".gitmodules"})


_FILE_MODES = frozenset({"100644", "100755"})


def tree_of(git: Git, commit: str | None) -> dict[str, tuple[str, str]]:
    """Return relpath -> (mode, blob) of each safe file in `commit` ({} for None)."""
    return read_tree(git, commit)[0]


def read_tree(
    git: Git, commit: str | None
) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str, str]]]:
    """Return (safe files, odd entries) of `commit`: relpath -> (mode, blob[, why]).

    Every path passes `memd.relpath.relpath_refusal` before it is a safe
    file, so nothing a remote names reaches the disk or a merge unchecked.
    An odd entry (a symlink, a gitlink or submodule, a `.gitattributes` or
    `.gitmodules`, an undecodable or unsafe name, a duplicate, a file where
    the tree also has a folder) is never written, merged or put in git's
    index; it is skipped and reported, and the rest of the tree is used.
    """
    if commit is None:
        return {}, {}
    out = git.run("ls-tree", "-r", "-z", "--full-tree", commit).stdout
    files: dict[str, tuple[str, str]] = {}
    odd: dict[str, tuple[str, str, str]] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, _, relpath = record.partition("\t")
            mode, _kind, oid = meta.split(" ")
            why = _entry_refusal(relpath, mode, files)
            if why is not None:
                odd.setdefault(relpath, (mode, oid, why))
            else:
                files[relpath] = (mode, oid)
    folders = {p.rsplit("/", 1)[0] for p in files if "/" in p}
    folders |= {f.rsplit("/", i)[0] for f in folders for i in range(f.count("/") + 1)}
    for clash in sorted(folders & files.keys()):
        mode, oid = files.pop(clash)
        odd[clash] = (mode, oid, "a file and a folder of one name")
    return files, odd


def _entry_refusal(
    relpath: str, mode: str, seen: Mapping[str, tuple[str, str]]
) -> str | None:
    why = relpath_refusal(relpath)
    if why is not None:
        return why
    if mode == "120000":
        return "a symlink, which memd never makes"
    if mode == "160000":
        return "a submodule (gitlink), which memd never checks out"
    if mode not in _FILE_MODES:
        return f"an entry of mode {mode}"
    if relpath.rsplit("/", 1)[-1].casefold() in _GIT_CONTROL_FILES:
        return "a file git reads its own settings from"
    if relpath in seen:
        return "listed twice"
    return None


def printable(relpath: str) -> str:
    """Return a tree path as text any output takes (a byte that is not UTF-8: \\xff)."""
    return relpath.encode("utf-8", "surrogateescape").decode(
        "utf-8", "backslashreplace"
    )


_NOT_CARRIED = ("listed twice", "a file and a folder of one name")


def carried_entries(
    odd: Mapping[str, tuple[str, str, str]],
) -> dict[str, tuple[str, str]]:
    """Return the odd entries a tree keeps: every one git's index can hold.

    What a sync does not take, it carries through unchanged: a teammate's
    link, `.gitattributes`, or file whose name this machine refuses (not
    UTF-8, a control character, a backslash, too long) is never written
    here, but stays in every commit memd builds, so a push never deletes it.
    Only what git itself will not index goes: a path climbing with ``..``
    or naming ``.git`` (git drops it), a second entry of one path, a file
    where the tree also has a folder.
    """
    return {
        p: (mode, oid)
        for p, (mode, oid, why) in odd.items()
        if why not in _NOT_CARRIED and git_indexes(p)
    }


def git_indexes(relpath: str) -> bool:
    """Whether git's index holds `relpath` (its ``verify_path``), odd or not."""
    return not relpath.startswith("/") and not any(
        part in ("", ".", "..") or names_git_dir(part) for part in relpath.split("/")
    )


def index_info(entries: Mapping[str, tuple[str, str]]) -> bytes:
    """Return `entries` as ``update-index -z --index-info`` reads them."""
    return "".join(f"{mode} {oid}\t{p}\0" for p, (mode, oid) in entries.items()).encode(
        "utf-8", "surrogateescape"
    )


def write_tree(git: Git, start: str, update: tuple[str, ...], data: bytes) -> str:
    """Return the tree of `start` after ``git update-index UPDATE`` fed `data`.

    A private index file is used, so git's own index (and whatever a person
    staged in it) plays no part.
    """
    index = os.path.join(git.git_dir, MEMD_DIR, "commit-index")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(index)
    git.run("read-tree", start, index_file=index)
    git.run("update-index", *update, input_bytes=data, index_file=index)
    tree = git.text("write-tree", index_file=index)
    os.unlink(index)
    return tree


def read_blob(git: Git, oid: str) -> bytes:
    return git.run("cat-file", "blob", oid).stdout


def read_blobs(git: Git, oids: set[str]) -> dict[str, bytes]:
    """Return oid -> bytes of every blob in `oids`, read by one ``cat-file --batch``."""
    if not oids:
        return {}
    ordered = sorted(oids)
    out = git.run(
        "cat-file", "--batch", input_bytes="".join(o + "\n" for o in ordered).encode()
    ).stdout
    found: dict[str, bytes] = {}
    at = 0
    for oid in ordered:
        end = out.index(b"\n", at)
        header = out[at:end].split(b" ")
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":
            raise GitError(f"git cat-file: {oid} is not a blob")
        size = int(header[2])
        found[oid] = out[at : at + size]
        at += size + 1
    return found


def store_blob(git: Git, data: bytes) -> str:
    return git.text("hash-object", "-w", "--stdin", input_bytes=data)


def blob_oid(data: bytes, algorithm: str = "sha1") -> str:
    """Return the id git gives `data` as a blob."""
    import hashlib

    digest = hashlib.new(algorithm, b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def store_blobs(git: Git, blobs: Mapping[str, bytes]) -> None:
    """Write `blobs` (oid -> bytes, as read) into the object store in one git call.

    ``git fast-import`` takes the bytes memd read (never a path, so nothing
    is opened by name behind memd's back); `git cat-file --batch-check`
    then confirms every oid exists before a tree names it.

    Raises:
        MemdError: an object is missing afterwards.
    """
    if not blobs:
        return
    stream = b"".join(
        b"blob\ndata %d\n%s\n" % (len(data), data) for data in blobs.values()
    )
    git.run("fast-import", "--quiet", "--done", input_bytes=stream + b"done\n")
    check = git.run(
        "cat-file",
        "--batch-check",
        input_bytes="".join(oid + "\n" for oid in blobs).encode("ascii"),
    ).stdout.decode("ascii", "replace")
    if "missing" in check:
        raise MemdError("git did not store every object memd read; nothing committed")


def object_format(git: Git) -> str:
    return git.text("rev-parse", "--show-object-format") or "sha1"  # or sha256


def identity_args(git: Git) -> tuple[str, ...]:
    """Return `-c user.*` options when git has no identity (a fresh machine)."""
    if git.run("config", "user.name", check=False).returncode == 0 or os.environ.get(
        "GIT_AUTHOR_NAME"
    ):
        return ()
    import getpass
    import socket

    user = getpass.getuser()
    return (
        "-c",
        f"user.name={user}",
        "-c",
        f"user.email={user}@{socket.gethostname()}",
    )


def commit_message(title: str, lines: list[str], *, agreed: bool = False) -> bytes:
    """Return a commit message: `title`, then at most `MAX_MESSAGE_LINES` lines.

    `agreed` adds `AGREED_TRAILER`: its deletions were allowed by a person.
    """
    shown = lines[:MAX_MESSAGE_LINES]
    if len(lines) > len(shown):
        shown.append(f"- and {len(lines) - len(shown)} more")
    trailer = f"\n{AGREED_TRAILER}\n" if agreed else ""
    text = title + "\n\n" + "\n".join(shown) + "\n" + trailer
    return text.encode("utf-8", "surrogateescape")


def commit_tree(git: Git, tree: str, parents: tuple[str, ...], message: bytes) -> str:
    """Write a commit of `tree`; its message goes on stdin, never in argv."""
    parent_args = [item for parent in parents for item in ("-p", parent)]
    return git.text(
        *identity_args(git),
        "commit-tree",
        tree,
        *parent_args,
        "-F",
        "-",
        input_bytes=message,
    )


def author_of(git: Git, commit: str, relpath: str) -> str:
    name = git.text("log", "-1", "--format=%an", commit, "--", relpath, check=False)
    return name or "them"


def is_ancestor(git: Git, older: str, newer: str) -> bool:
    return (
        git.run("merge-base", "--is-ancestor", older, newer, check=False).returncode
        == 0
    )


def reset_index(git: Git, ref: str) -> None:
    """Make git's index hold HEAD's safe entries only; the tree is left alone.

    A remote entry memd never writes (a ``.gitattributes``, a link) never
    reaches the index either, so no git run reads attributes from it.
    """
    head = git.rev(ref)
    if head is None:
        return
    clean, odd = read_tree(git, head)
    tree = f"{head}^{{tree}}"
    if odd:
        tree = write_tree(git, EMPTY_TREE, ("-z", "--index-info"), index_info(clean))
    git.run("read-tree", "--reset", tree)
