"""The layout of a personal repository, and the rule its tree must keep.

```
manifest.json                 {"projects": [identity, ...]}: every project synced
projects/<identity>/...       one project's memory: MEMORY.md, topic files, logs/
dreams/<identity>/<night>.json  a dream claim naming a machine
```

`path_refusal` is the path rule of this tree; `refuse_hostile_tree` refuses a
fetched tree that breaks it, whole (only memd writes a personal remote).
JSON from the remote goes through `remote_json`: bounded in depth, never
raising. Folders compare as whole path components (`deepest_folder`).
"""

from __future__ import annotations

from memd.errors import MemdError
from memd.gitsync.layout import Layout, deepest_folder
from memd.gitsync.objects import printable, read_blob, read_tree, tree_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.gitsync.git import Git


PROJECTS = "projects/"
MANIFEST = "manifest.json"
DREAMS = "dreams/"
MAX_JSON_DEPTH = 16  # a manifest nests 2 deep, a claim 1: deeper is not one of ours
LABEL = "memd sync"


def folder_of(identity: str) -> str:
    return f"{PROJECTS}{identity}/"


# -- the path rule of a personal tree --------------------------------------------


_CONTROL = frozenset(chr(c) for c in (*range(32), 127))


def _component_refusal(parts: list[str]) -> str | None:
    if any(
        not part
        or part.startswith(".")
        or "\\" in part
        or not _CONTROL.isdisjoint(part)
        for part in parts
    ):
        return "an empty, hidden, '..' or control-character component"
    return None


def local_refusal(rest: str) -> str | None:
    """Return why a path inside a project's folder may not travel, or None."""
    why = _component_refusal(rest.split("/"))
    if why is not None:
        return why
    if not rest.endswith(".md"):
        return "not a Markdown file"
    if rest.split("/")[0] == "team":
        return "team memory in a personal remote"
    return None


def path_refusal(relpath: str, folders: frozenset[str]) -> str | None:
    """Return why `relpath` may not be in a personal tree, or None when it may.

    `folders` are the project folders (`folder_of` of each identity).
    """
    from memd.relpath import relpath_refusal

    why = relpath_refusal(relpath)
    return why if why is not None else _layout_refusal(relpath, folders)


def _layout_refusal(relpath: str, folders: frozenset[str]) -> str | None:
    """`path_refusal` for a relpath that already passed `relpath_refusal`."""
    if relpath == MANIFEST:
        return None
    why = _component_refusal(relpath.split("/"))
    if why is not None:
        return why
    if relpath.startswith(DREAMS):
        return None if relpath.endswith(".json") else "not a dream claim"
    if not relpath.startswith(PROJECTS):
        return "outside projects/"
    folder = deepest_folder(relpath, folders)
    if folder is None:
        return "in no project the manifest names"
    return local_refusal(relpath[len(folder) :])


def remote_json(data: bytes) -> object:
    """Parse a JSON file that came from the remote: bounded in depth, never raising.

    Returns None for one that is not valid (too deep, not UTF-8, not JSON).
    """
    from memd.fastjson import loads

    try:
        return loads(data, max_depth=MAX_JSON_DEPTH, strict_text=True)
    except (ValueError, RecursionError):
        return None


def manifest_identities(data: bytes) -> frozenset[str]:
    from memd.claude_code.identity import is_identity

    parsed = remote_json(data)
    listed = parsed.get("projects") if isinstance(parsed, dict) else None
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(i for i in listed if isinstance(i, str) and is_identity(i))


def manifest_refusal(data: bytes) -> str | None:
    """Return why a manifest is not valid, or None for one memd can read."""
    parsed = remote_json(data)
    if not isinstance(parsed, dict) or not isinstance(parsed.get("projects"), list):
        return (
            "manifest.json is not valid (not JSON, nested deeper than "
            f'{MAX_JSON_DEPTH} levels, or no "projects" list)'
        )
    return None


def manifest_bytes(identities: Iterable[str]) -> bytes:
    """Return the manifest naming `identities` (sorted, one per line)."""
    from memd.fastjson import dumps

    rows = ",\n".join(f"    {dumps(i)}" for i in sorted(set(identities)))
    return ('{\n  "projects": [\n' + rows + "\n  ]\n}\n").encode("utf-8")


def merge_manifests(ours: bytes, theirs: bytes) -> bytes:
    """Return the union of two manifests (a project is never dropped by a merge)."""
    return manifest_bytes(manifest_identities(ours) | manifest_identities(theirs))


def folders_with_files(git: Git, commit: str | None) -> frozenset[str]:
    """Return the project folders that hold at least one file in `commit`."""
    tree = tree_of(git, commit)
    entry = tree.get(MANIFEST)
    identities = manifest_identities(read_blob(git, entry[1])) if entry else frozenset()
    folders = frozenset(folder_of(i) for i in identities)
    return frozenset(
        found for p in tree if (found := deepest_folder(p, folders)) is not None
    )


def identities_in(git: Git, commit: str | None) -> frozenset[str]:
    tree = tree_of(git, commit)
    entry = tree.get(MANIFEST)
    return manifest_identities(read_blob(git, entry[1])) if entry else frozenset()


def personal_layout(places: Mapping[str, str], identities: Iterable[str]) -> Layout:
    known = set(identities) | set(places)
    return Layout(
        roots={folder_of(i): places[i] for i in places},
        prefixes=tuple(sorted({folder_of(i) for i in known}, key=len, reverse=True)),
        unions={MANIFEST: merge_manifests},
        first_wins=(DREAMS,),
        label=LABEL,
        check_tree=refuse_hostile_tree,
    )


def refuse_hostile_tree(git: Git, commit: str) -> None:
    """Raise `MemdError` when any path of `commit` breaks `path_refusal`: refused whole.

    Nothing has been written when it raises.
    """
    tree, odd = read_tree(git, commit)
    # Only memd writes a personal remote: an odd entry means it was tampered
    # with, so nothing of it is taken (team sync skips the entry instead).
    for relpath, (_, _, odd_why) in sorted(odd.items()):
        raise MemdError(
            f"the remote's tree is refused whole: {printable(relpath)!r}: {odd_why}"
        )
    manifest = tree.get(MANIFEST)
    data = read_blob(git, manifest[1]) if manifest else b""
    bad_manifest = manifest_refusal(data) if manifest is not None else None
    if bad_manifest is not None:
        raise MemdError(f"the remote's tree is refused whole: {bad_manifest}")
    folders = frozenset(folder_of(i) for i in manifest_identities(data))
    for relpath in tree:
        why = _layout_refusal(relpath, folders)  # each passed relpath_refusal
        if why is not None:
            raise MemdError(f"the remote's tree is refused whole: {relpath!r}: {why}")
