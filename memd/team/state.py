"""What memd remembers about each team dir's syncs: ``team.json`` in the state dir.

One record per team dir: the last result (`SyncResult.to_dict`), when the
last attempt and the last good sync were, how many attempts in a row failed,
and when the next attempt is due (the interval after a good sync, an
exponential backoff after a failed one). `memd status`, `memd team status`
and the daemon's scheduler read it; a missing or corrupt file reads as {}.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.gitsync.result import SyncResult

STATE_FILE = "team"


def record_result(
    state_dir: str, result: SyncResult, *, now: float, interval_seconds: float
) -> dict[str, object]:
    """Store `result` and the next attempt in team.json; return the stored record."""
    from memd.gitsync.backoff import backoff_seconds
    from memd.state import read_state, write_state

    data = read_state(state_dir, STATE_FILE)
    previous = data.get(result.team_dir)
    failures = previous.get("failures", 0) if isinstance(previous, dict) else 0
    if not isinstance(failures, int):
        failures = 0
    record: dict[str, object] = dict(previous) if isinstance(previous, dict) else {}
    record.update(result.to_dict())
    record["last_attempt"] = now
    if result.state == "synced":
        record["last_sync"] = now
        record["failures"] = 0
        record["next_attempt"] = now + interval_seconds
    elif result.state in ("offline", "failed"):
        failures += 1
        record["failures"] = failures
        record["next_attempt"] = now + backoff_seconds(failures, interval_seconds)
    data[result.team_dir] = record
    write_state(state_dir, STATE_FILE, data)
    return record


def sync_record(state_dir: str, team_dir: str) -> dict[str, object]:
    """Return the stored record of `team_dir`'s last sync ({} before the first)."""
    from memd.state import read_state

    record = read_state(state_dir, STATE_FILE).get(team_dir)
    return record if isinstance(record, dict) else {}
