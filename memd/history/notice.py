"""The loss notices SessionStart tells once, one small JSON file per memory directory.

`<state_dir>/history/losses/<key>.json` holds the last loss of a directory not
yet told: what was lost, when, by what cause, and the time to restore to.
`take_notice` claims it by renaming it away first, so two sessions starting
at once tell it once between them. Standard library `os` and memd's
`fastjson` only: the warm SessionStart path imports this module.
"""

from __future__ import annotations

import os

from memd import fastjson
from memd.fsread import list_dir, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

NOTICE_DIR = "losses"
MAX_NOTICE_BYTES = 64 * 1024


def notice_path(state_dir: str, memory_dir: str) -> str:
    """Where the pending notice of `memory_dir` (already normalized) lives."""
    import hashlib

    key = hashlib.sha256(memory_dir.rstrip(os.sep).encode("utf-8", "surrogateescape"))
    return os.path.join(
        state_dir, "history", NOTICE_DIR, key.hexdigest()[:32] + ".json"
    )


def leave_notice(state_dir: str, memory_dir: str, notice: Mapping[str, object]) -> None:
    """Write (or replace) the directory's pending notice."""
    from memd.atomic import write_atomic

    path = notice_path(state_dir, memory_dir)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    write_atomic(path, fastjson.dumps(dict(notice)).encode("utf-8"), mode=0o600)


def take_notice(state_dir: str, memory_dir: str) -> dict[str, object] | None:
    """Claim and remove the directory's pending notice; None when there is none."""
    try:  # no notice of any directory (the usual case): no `hashlib` import
        if not list_dir(os.path.join(state_dir, "history", NOTICE_DIR)):
            return None
    except OSError:
        return None
    path = notice_path(memory_dir=os.path.realpath(memory_dir), state_dir=state_dir)
    claimed = f"{path}.taken-{os.getpid()}"
    try:
        os.rename(path, claimed)
    except OSError:
        return None
    try:
        return _load(claimed)
    finally:
        try:  # noqa: SIM105 -- contextlib costs the warm path
            os.unlink(claimed)
        except OSError:
            pass


def _load(path: str) -> dict[str, object] | None:
    try:
        value = fastjson.loads(read_bytes(path, MAX_NOTICE_BYTES), max_depth=4)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def restore_hint(notice: Mapping[str, object], now: float) -> str:
    """The `--at` (or `--rev`) that brings a loss back, worded for `now`."""
    import time

    before = notice.get("before_at")
    first = notice.get("first_at")
    rev = notice.get("before_rev")
    if not isinstance(before, int | float) or not isinstance(first, int | float):
        return f"--rev {rev}"
    # `--at` reads a time through its end (memd.history.when): name a whole
    # minute, else a whole second, that ends before the loss and after `before`.
    minute = int(first // 60) * 60  # the start of the minute the loss began in
    if before < minute:
        at, form = float(minute - 60), "%H:%M"
    elif before < int(first):
        at, form = float(int(first) - 1), "%H:%M:%S"
    else:
        return f"--rev {rev}"
    day = time.strftime("%Y-%m-%d", time.localtime(at))
    if day != time.strftime("%Y-%m-%d", time.localtime(now)):
        form = "%Y-%m-%d " + form
        return "--at '" + time.strftime(form, time.localtime(at)) + "'"
    return "--at " + time.strftime(form, time.localtime(at))


def notice_sentence(
    notice: Mapping[str, object], now: float, *, where: str = ""
) -> str:
    """The sentence SessionStart says, e.g. "memd: 23 memory files were deleted at
    03:12 (edit); `memd restore --all --at 03:11` brings them back." """
    import time

    at = notice.get("at")
    stamp = ""
    if isinstance(at, int | float):
        same_day = time.strftime("%Y-%m-%d", time.localtime(at)) == time.strftime(
            "%Y-%m-%d", time.localtime(now)
        )
        stamp = time.strftime(
            "%H:%M" if same_day else "%Y-%m-%d %H:%M", time.localtime(at)
        )
    command = f"memd restore --all{where} {restore_hint(notice, now)}"
    return (
        f"memd: {notice.get('sentence')} at {stamp} ({notice.get('cause')});"
        f" `{command}` brings them back."
    )


def take_sentence(state_dir: str, memory_dir: str) -> str | None:
    """The loss notice of `memory_dir` not told yet, worded; told only once."""
    import time

    notice = take_notice(state_dir, memory_dir)
    return None if notice is None else notice_sentence(notice, time.time())
