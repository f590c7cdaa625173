"""Which versions retention removes: a plan over (relpath, rev, time) rows. Pure.

Every version younger than `keep_all_seconds`; older ones down to the last
of each (UTC) day for a further `keep_daily_seconds`; none after that. Then,
while the directory's stored bytes pass `max_bytes`, the oldest versions go
first. The newest version of a file that exists is never removed, and a
deletion is removed only with (or after) the versions before it, so no
pruned history brings back a deleted file.
"""

from __future__ import annotations

DAY = 86400.0


def plan_prune(
    rows: list[tuple[str, int, float, bool]],
    *,
    existing: set[str],
    sizes: dict[tuple[str, int], int],
    now: float,
    keep_all_seconds: float,
    keep_daily_seconds: float,
    max_bytes: int,
) -> list[tuple[str, int]]:
    """Return the (relpath, rev) rows to delete.

    `rows`: (relpath, rev, at, is_deletion), ordered by rev.
    """
    by_file: dict[str, list[tuple[int, float, bool]]] = {}
    for rel, rev, at, gone in rows:
        by_file.setdefault(rel, []).append((rev, at, gone))
    protected = {
        (rel, versions[-1][0]) for rel, versions in by_file.items() if rel in existing
    }
    doomed: set[tuple[str, int]] = set()
    daily_from = now - keep_all_seconds
    none_from = daily_from - keep_daily_seconds
    for rel, versions in by_file.items():
        for index, (rev, at, _) in enumerate(versions):
            if (rel, rev) in protected or at >= daily_from:
                continue
            if at < none_from:
                doomed.add((rel, rev))
                continue
            later = versions[index + 1] if index + 1 < len(versions) else None
            if later is not None and int(later[1] // DAY) == int(at // DAY):
                doomed.add((rel, rev))  # not the day's last
    total = sum(size for key, size in sizes.items() if key not in doomed)
    if total > max_bytes:
        for rel, rev, _, _ in rows:  # oldest first
            if total <= max_bytes:
                break
            key = (rel, rev)
            if key in protected or key in doomed:
                continue
            doomed.add(key)
            total -= sizes.get(key, 0)
    # A file's surviving rows must not start with a deletion, nor may a deletion
    # outlive a kept version before it (oldest first keeps this true; the daily
    # rule can leave a lone deletion first).
    for rel, versions in by_file.items():
        for rev, _, gone in versions:
            if (rel, rev) in doomed:
                continue
            if gone:
                doomed.add((rel, rev))
                continue
            break
    return sorted(doomed, key=lambda key: key[1])
