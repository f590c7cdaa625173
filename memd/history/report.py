"""What `memd status` and the viewer say about losses: recent ones, in their state.

`loss_report` lists the losses of the last `days` days from the store, each
open one with the `memd restore --loss REV` that brings back exactly what it
took, each restored or dismissed one as such; the words are
`memd.history.wording`'s. SessionStart's side, the notice told once, is
`memd.history.notice.take_sentence`.
"""

from __future__ import annotations

import os
import sqlite3
import time

from memd.history.store import DB_NAME, History, damaged, history_dir
from memd.history.wording import status_line

REPORT_DAYS = 7.0


def loss_report(
    state_dir: str, *, days: float = REPORT_DAYS
) -> list[dict[str, object]]:
    """The losses of the last `days` days, newest first, each with its state's line.

    Raises:
        HistoryUnusableError: the store is damaged or a link (one line).
    """
    path = os.path.join(history_dir(state_dir), DB_NAME)
    if not os.path.lexists(history_dir(state_dir)):
        return []
    try:
        return _losses(state_dir, days)
    except sqlite3.DatabaseError as error:
        raise damaged(path, error) from None


def _losses(state_dir: str, days: float) -> list[dict[str, object]]:
    now = time.time()
    with History.open(state_dir) as history:
        losses = history.losses(since=now - days * 86400.0)
    found = []
    for loss in losses:
        entry = loss.to_dict()
        entry["loss"] = loss.sentence
        entry["files"] = len(loss.taken)
        entry["message"] = status_line(entry, now)
        found.append(entry)
    return found


def loss_lines(report: list[dict[str, object]]) -> list[str]:
    """`memd status`'s section: one line per recent loss (none: no section)."""
    if not report:
        return []
    lines = ["memory losses (last 7 days):"]
    for entry in report:
        lines.append(f"  {entry['memory_dir']}:")
        lines.append(f"    {entry['message']}")
    return lines
