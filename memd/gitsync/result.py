"""What one sync did (`SyncResult`), and what a merge changed on the way (`Merged`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memd.gitsync.git import GitError, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from structlog.typing import FilteringBoundLogger


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncResult:
    """What one sync did; `state` is synced, offline, skipped or failed."""

    team_dir: str
    state: str
    committed: tuple[str, ...] = ()
    left_out: tuple[tuple[str, str], ...] = ()  # (relpath, why)
    conflicts: tuple[str, ...] = ()  # conflict copies written by this sync
    kept: tuple[str, ...] = ()  # delete/modify: the changed side was kept
    deleted: tuple[str, ...] = ()  # local files removed because the remote removed them
    not_seen: tuple[str, ...] = ()  # kept on the remote: the scan did not reach them
    skipped: tuple[tuple[str, str], ...] = ()  # remote entries never written here
    pushed: bool = False
    push_retries: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.state in ("synced", "skipped")

    def to_dict(self) -> dict[str, object]:
        return {
            "state": self.state,
            "committed": list(self.committed),
            "left_out": [list(item) for item in self.left_out],
            "conflicts": list(self.conflicts),
            "kept": list(self.kept),
            "deleted": list(self.deleted),
            "not_seen": list(self.not_seen),
            "skipped": [list(item) for item in self.skipped],
            "pushed": self.pushed,
            "push_retries": self.push_retries,
            "error": self.error,
        }


@dataclass(slots=True)
class Merged:
    """What merging the remote into HEAD changed (accumulated across push retries)."""

    conflicts: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    not_seen: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # remote relpath -> why
    allow_deletes: bool = False  # `--allow-deletes`: no stop before many deletions


def sync_outcome(
    where: str,
    merged: Merged,
    *,
    committed: tuple[str, ...],
    left_out: tuple[tuple[str, str], ...],
    log: FilteringBoundLogger,
    event: str,
    error: Exception | None = None,
    retries: int = 0,
    **fields: object,
) -> SyncResult:
    """Return the result of a sync of `where` that finished or stopped on `error`.

    It is logged once, with `fields`. An unreachable remote is ``offline``
    (the commit is kept, the next try backs off), any other error ``failed``;
    `event` prefixes the log events (``team_synced``, ``team_sync_offline``,
    ``team_sync_failed``).
    """
    if error is not None:
        is_network = isinstance(error, GitError) and error.is_network
        state = "offline" if is_network else "failed"
        log.warning(f"{event}_sync_{state}", **fields, error=redact(str(error)))
        return SyncResult(
            team_dir=where,
            state=state,
            committed=committed,
            left_out=left_out,
            **merged_fields(merged),
            error=redact(str(error)),
        )
    log.info(
        f"{event}_synced",
        **fields,
        committed=len(committed),
        left_out=[p for p, _ in left_out],
        conflicts=list(merged.conflicts),
        deleted=len(merged.deleted),
        not_seen=len(merged.not_seen),
        skipped=sorted(merged.skipped),
        push_retries=retries,
    )
    return SyncResult(
        team_dir=where,
        state="synced",
        committed=committed,
        left_out=left_out,
        **merged_fields(merged),
        pushed=True,
        push_retries=retries,
    )


def merged_fields(merged: Merged) -> dict[str, Any]:
    return {
        "conflicts": tuple(merged.conflicts),
        "kept": tuple(merged.kept),
        "deleted": tuple(dict.fromkeys(merged.deleted)),
        "not_seen": tuple(dict.fromkeys(merged.not_seen)),
        "skipped": tuple(sorted(merged.skipped.items())),
    }
