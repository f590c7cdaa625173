"""Keep a merged MEMORY.md within what the agent loads: compact it in the merge.

Team and personal sync merge two versions of an index as an ordered union
(`memd.gitsync.merge.merge_index`); two indexes that each load whole can make
one that does not, and the lines past the cut would be pushed to everyone.
When the union would cross `memd.lint.compact.TRIGGER`, it is compacted
into hub files inside the merge itself (`memd.lint.compact.place_entries`,
the one way memd adds entries to an index), so the commit that is pushed,
and the tree written from it, load whole. The topic files are read from the
merge's blobs; their mtimes come from this machine's copies where they exist
(a file only the other side has counts as the newest).
"""

from __future__ import annotations

import os

from memd.claude_code.terms import INDEX_NAME
from memd.lint.compact import Topics, needs_compaction, place_entries
from memd.memory.index import is_hub
from memd.memory.memfile import parse_memory_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


def fit_merged_index(
    text: str,
    folder: str,
    result: dict[str, tuple[str, str]],
    *,
    read_blobs: Callable[[set[str]], dict[str, bytes]],
    store_blob: Callable[[bytes], str],
    local_root: str | None,
) -> str:
    """Return the merged index `text` of `folder`, compacted when it would not fit.

    `result` (repository path -> (mode, blob id)) is the merge's tree: the
    hubs a compaction writes are added to it and the hubs it no longer needs
    removed. `local_root` is where the folder lives on this machine (None:
    nowhere), for the topic files' mtimes.
    """
    if not needs_compaction(text):
        return text
    index_path = folder + INDEX_NAME
    paths = {
        path[len(folder) :]: oid
        for path, (_, oid) in result.items()
        if path.startswith(folder)
        and path.endswith(".md")
        and path != index_path
        and not path[len(folder) :].startswith("logs/")
    }
    blobs = read_blobs(set(paths.values()))
    files = tuple(
        parse_memory_file(rel, blobs[oid]) for rel, oid in sorted(paths.items())
    )
    mtimes: dict[str, int] = {}
    for rel in paths if local_root is not None else ():
        try:
            mtimes[rel] = os.lstat(os.path.join(str(local_root), rel)).st_mtime_ns
        except OSError:
            continue  # only the other side has it: the newest
    topics = Topics(
        files=files,
        mtimes_ns=mtimes,
        raw={f.relpath: blobs[paths[f.relpath]] for f in files if is_hub(f.body)},
        taken=frozenset(paths),
    )
    compaction = place_entries(text, [], topics).compaction
    if compaction is None:
        return text  # it cannot be compacted: lint reports it as before
    for hub in compaction.hubs:
        result[folder + hub.relpath] = ("100644", store_blob(hub.new))
    for rel in compaction.deletes:
        result.pop(folder + rel, None)
    return compaction.index
