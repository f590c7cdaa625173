"""Every sentence the loss alarm says, in one place (pure, `time` only).

What a loss was (`loss_sentence`), the command that brings back exactly
what it took (`restore_command`) and the one that dismisses it
(`dismiss_command`), what SessionStart tells once (`notice_sentence`),
and the line `memd status` and the viewer show for each loss, open,
restored or dismissed (`status_line`). The warm SessionStart imports this
module through `memd.history.notice`: nothing heavy here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

OPEN, RESTORED, DISMISSED, MERGED = "open", "restored", "dismissed", "merged"
# Why `memd restore --loss` left one of the loss's files as it is.
CHANGED_SINCE = "changed since the loss: left as it is"
NOT_KEPT = "its version is no longer in the history (purged or pruned)"


def loss_sentence(
    *,
    deleted: int,
    emptied: int,
    unreached: int,
    reached: int,
    whole: tuple[tuple[str, str], ...] = (),
) -> str:
    """What a loss took: "23 memory files were deleted", "MEMORY.md no longer
    reaches 60 of its 213 memory files"; files first when both; a file another
    agent loads whole first of all ("GEMINI.md, all Gemini CLI loads, ...")."""
    if whole:
        agent, relpath = whole[0]
        return f"{relpath}, all {agent} loads, was deleted or emptied"
    if deleted and emptied:
        return f"{_files(deleted)} were deleted and {emptied} emptied"
    if deleted:
        return f"{_files(deleted)} {'was' if deleted == 1 else 'were'} deleted"
    if emptied:
        return f"{_files(emptied)} {'was' if emptied == 1 else 'were'} emptied"
    return f"MEMORY.md no longer reaches {unreached} of its {reached} memory files"


# Why a change happened, as a person says it: after a time in a history
# row, in parentheses after a loss (memd.history.store.CAUSES are the keys).
CAUSE_WORDS = {
    "edit": "by an edit",
    "stopped": "while memd was stopped",
    "fix": "by memd fix",
    "fix-undo": "by memd fix --undo",
    "dream": "by the dream",
    "dream-undo": "by memd dream undo",
    "mcp": "by the agent over MCP",
    "team-sync": "by team sync",
    "sync": "by sync",
    "restore": "by memd restore",
}


def cause_words(cause: object) -> str:
    """Why a change happened, in words: "by memd fix", "while memd was stopped"."""
    return CAUSE_WORDS.get(str(cause), str(cause))


def _files(count: int) -> str:
    return f"{count} memory file" + ("" if count == 1 else "s")


def restore_command(rev: object) -> str:
    """The command that restores exactly what loss `rev` took, nothing after it."""
    return f"memd restore --loss {rev}"


def dismiss_command(rev: object) -> str:
    """The command that says a loss was meant: it is no longer shown or told."""
    return f"memd history dismiss {rev}"


def when(at: object, now: float) -> str:
    """A loss's time, local and short: "03:12" today, "2026-12-06 03:12" before."""
    import time

    if not isinstance(at, int | float):
        return "?"
    same_day = time.strftime("%Y-%m-%d", time.localtime(at)) == time.strftime(
        "%Y-%m-%d", time.localtime(now)
    )
    return time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", time.localtime(at))


def notice_sentence(notice: Mapping[str, object], now: float) -> str:
    """What SessionStart says once, e.g. "memd: 23 memory files were deleted at
    03:12 (by an edit); `memd restore --loss 57` brings them back." """
    return (
        f"memd: {notice.get('sentence')} at {when(notice.get('at'), now)}"
        f" ({cause_words(notice.get('cause'))}); `{restore_command(notice.get('rev'))}`"
        " brings them back."
    )


def status_line(loss: Mapping[str, object], now: float) -> str:
    """One loss as `memd status` and the viewer show it, in its state."""
    head = (
        f"{loss.get('sentence')} at {when(loss.get('at'), now)}"
        f" ({cause_words(loss.get('cause'))})"
    )
    state = loss.get("state")
    if state == RESTORED:
        return f"{head}: restored at {when(loss.get('settled_at'), now)}"
    if state == DISMISSED:
        return f"{head}: dismissed at {when(loss.get('settled_at'), now)}"
    rev = loss.get("rev")
    return (
        f"{head}; `{restore_command(rev)}` brings them back"
        f" (`{dismiss_command(rev)}` if it was meant)"
    )
