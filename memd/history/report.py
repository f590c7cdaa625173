"""What `memd status` and SessionStart say about losses: recent ones, and the notice.

`loss_report` lists the losses of the last `days` days from the store, each
with the `memd restore` command that undoes it; SessionStart's side, the
notice told once, is `memd.history.notice.take_sentence`.
"""

from __future__ import annotations

import os
import time

from memd.history.notice import notice_sentence
from memd.history.store import DB_NAME, History, history_dir

REPORT_DAYS = 7.0


def loss_report(
    state_dir: str, *, days: float = REPORT_DAYS
) -> list[dict[str, object]]:
    """The losses of the last `days` days, newest first, each with its restore."""
    if not os.path.exists(os.path.join(history_dir(state_dir), DB_NAME)):
        return []
    now = time.time()
    found: list[dict[str, object]] = []
    with History.open(state_dir) as history:
        for change in history.changes(since=now - days * 86400.0, losses_only=True):
            first_at, before_rev, before_at = history.burst_start(
                change.memory_dir, change
            )
            notice = {
                "sentence": change.loss,
                "at": change.at,
                "cause": change.cause,
                "first_at": first_at,
                "before_rev": before_rev,
                "before_at": before_at,
            }
            found.append(
                {
                    "memory_dir": change.memory_dir,
                    "rev": change.rev,
                    "at": change.at,
                    "cause": change.cause,
                    "loss": change.loss,
                    "restore_rev": before_rev,
                    "message": notice_sentence(
                        notice, now, where=f" --project {change.memory_dir}"
                    ),
                }
            )
    return found


def loss_lines(report: list[dict[str, object]]) -> list[str]:
    """`memd status`'s section: one line per recent loss (none: no section)."""
    if not report:
        return []
    return [
        "memory losses (last 7 days):",
        *(f"  {entry['message']}" for entry in report),
    ]
