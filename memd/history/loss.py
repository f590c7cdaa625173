"""The loss rule: when a change (or a minute's burst of them) lost memory.

A loss is a change that deletes or empties `MIN_FILES_LOST` or more memory
files, drops `MIN_ENTRY_DROP` or more of MEMORY.md's entries, or shrinks the
directory's memory bytes by `MIN_BYTES_DROP` or more. Memory files are the
`*.md` files outside `logs/` (the daily logs rotate and retire on their own);
MEMORY.md counts for bytes and entries, not as a lost file. Two floors keep
a tiny directory from crying wolf: the entry rule needs `ENTRY_FLOOR`
entries before, the byte rule `BYTES_FLOOR` bytes before. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.agent.terms import INDEX_NAME

MIN_FILES_LOST = 3
MIN_ENTRY_DROP = 0.20
MIN_BYTES_DROP = 0.30
ENTRY_FLOOR = 5
BYTES_FLOOR = 1024


def loads_whole(memory_dir: str, relpath: str) -> str | None:
    """The agent that loads this file whole at every session start, or None.

    Another agent's store (SPEC §17) may be one file the agent injects:
    Codex CLI's `memories/memory_summary.md`, Gemini CLI's `~/.gemini/GEMINI.md`
    and each project's `~/.gemini/tmp/<id>/memory/MEMORY.md`. Deleting or
    emptying it takes what that agent remembers at once: a loss on its own.
    """
    parts = memory_dir.rstrip("/").split("/")
    if relpath == "memory_summary.md" and parts[-1] == "memories":
        return "Codex CLI"
    if relpath == "GEMINI.md" and parts[-1] == ".gemini":
        return "Gemini CLI"
    gemini_project = len(parts) >= 4 and parts[-4] == ".gemini" and parts[-3] == "tmp"
    if relpath == INDEX_NAME and gemini_project and parts[-1] == "memory":
        return "Gemini CLI"
    return None


def is_memory_file(relpath: str) -> bool:
    """A `*.md` file outside `logs/` (MEMORY.md included)."""
    return relpath.endswith(".md") and not relpath.startswith("logs/")


@dataclass(frozen=True, slots=True, kw_only=True)
class Loss:
    """Why a change is a loss, in one sentence (without time or cause)."""

    sentence: str


def judge_loss(
    *,
    files_lost: int,
    files_deleted: int,
    entries: tuple[int, int] | None,
    bytes_before: int,
    bytes_after: int,
    whole_lost: tuple[tuple[str, str], ...] = (),
) -> Loss | None:
    """Return the loss these figures make, or None.

    `whole_lost`: (agent, relpath) of each file an agent loads whole that
    was deleted or emptied (`loads_whole`).
    """
    if whole_lost:
        agent, relpath = whole_lost[0]
        return Loss(sentence=f"{relpath}, all {agent} loads, was deleted or emptied")
    if files_lost >= MIN_FILES_LOST:
        what = "deleted" if files_deleted == files_lost else "deleted or emptied"
        return Loss(sentence=f"{files_lost} memory files were {what}")
    if entries is not None:
        before, after = entries
        if before >= ENTRY_FLOOR and before - after >= MIN_ENTRY_DROP * before:
            return Loss(
                sentence=f"{INDEX_NAME} lost {before - after} of its {before} entries"
            )
    if bytes_before >= BYTES_FLOOR and bytes_before - bytes_after >= (
        MIN_BYTES_DROP * bytes_before
    ):
        share = round(100 * (bytes_before - bytes_after) / bytes_before)
        return Loss(sentence=f"memory shrank by {share}%")
    return None
