"""KAIROS daily logs: `memd log` appends, midnight rotation, optional retention.

A log is `logs/YYYY/MM/YYYY-MM-DD.md` under the memory directory, by local
date (REFERENCE.md §2, getAutoMemDailyLogPath). Appends are the one place memd
writes without `write_atomic`: many processes append to the same file, so
each entry is a single `write(2)` on an `O_APPEND` descriptor while holding
`flock(LOCK_EX)`; POSIX makes an `O_APPEND` write land at the end as a unit,
and the lock keeps the "does the file need a heading" check and the write
together. Every directory on the way is opened with `O_NOFOLLOW` relative to
its parent, so a symlinked `logs/` can never redirect a write out of the
memory directory.

Rotation never rewrites a log: it creates today's file with its heading and
records yesterday's as closed (memd appends only to today's file, so a
closed log receives nothing more from memd) in the dream state.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from dataclasses import dataclass

from memd.agent.paths import daily_log_path
from memd.atomic import crash_point
from memd.errors import UsageError
from memd.kairos.consolidate import parse_log_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Callable, Mapping

    from memd.kairos.consolidate import LogEntry

DREAMS_STATE = "dreams.json"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class UnsafeFileError(OSError):
    """A file memd would read or write is a symlink or not a regular file."""


@dataclass(frozen=True, slots=True)
class RetentionAction:
    """One log retention archived or removed (relpaths in the memory dir)."""

    relpath: str
    action: str  # "archive" | "remove"
    destination: str | None


def log_relpath(day: datetime.date) -> str:
    """Return `logs/YYYY/MM/YYYY-MM-DD.md` for `day`, relative to the memory dir."""
    return f"logs/{day.year}/{day.month:02}/{day.year}-{day.month:02}-{day.day:02}.md"


def format_entry(text: str, now: datetime.datetime) -> bytes:
    """Return `- HH:MM text` with continuation lines indented two spaces, as UTF-8."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    if not lines or not lines[0]:
        raise UsageError("nothing to log: the entry is empty")
    first, rest = lines[0], lines[1:]
    body = [f"- {now:%H:%M} {first}"] + [f"  {line}" if line else "  " for line in rest]
    return ("\n".join(body) + "\n").encode("utf-8")


def heading(day: datetime.date) -> bytes:
    """Return the date heading a fresh log starts with."""
    return f"# {day.isoformat()}\n\n".encode()


def _open_log_dir(memory_dir: str, parts: tuple[str, ...], *, create: bool) -> int:
    """Open `memory_dir/parts…` as a directory fd, refusing symlinks at every step."""
    try:
        fd = os.open(memory_dir, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        if not create:
            raise
        os.makedirs(memory_dir, exist_ok=True)
        fd = os.open(memory_dir, os.O_RDONLY | os.O_DIRECTORY)
    for part in parts:
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UsageError(
                    f"refusing to write the daily log: {part!r} in {memory_dir} "
                    "is a symlink or not a directory"
                ) from None
            raise
        os.close(fd)
        fd = child
    return fd


def _append(memory_dir: str, day: datetime.date, entry: bytes) -> str:
    """Append `entry` (maybe empty) to `day`'s log under flock; return the log path."""
    path = daily_log_path(memory_dir, day)
    _directory, name = os.path.split(path)
    parts = ("logs", str(day.year), f"{day.month:02}")
    dir_fd = _open_log_dir(memory_dir, parts, create=True)
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise UsageError(
                    f"refusing to write the daily log: {path} is a symlink"
                ) from None
            raise
    finally:
        os.close(dir_fd)
    try:
        crash_point()  # created, still empty
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        prefix = b""
        if size == 0:
            prefix = heading(day)
        elif os.pread(fd, 1, size - 1) != b"\n":
            prefix = b"\n"  # someone left a partial line; never glue onto it
        data = prefix + entry
        if data:
            written = os.write(
                fd, data
            )  # one write: never interleaved with another appender
            if written != len(data):
                raise OSError(f"short write to {path}: {written} of {len(data)} bytes")
            crash_point()
    finally:
        os.close(fd)  # closing releases the flock
    return path


def append_entry(memory_dir: str, text: str, *, now: datetime.datetime) -> str:
    """Append `text` as one bullet to the log of `now`'s date; return its path.

    Raises `UsageError` for empty text or a symlink on the way.
    """
    return _append(memory_dir, now.date(), format_entry(text, now))


def ensure_today(memory_dir: str, today: datetime.date) -> bool:
    """Create today's log with its heading if missing; return True if created."""
    path = daily_log_path(memory_dir, today)
    existed = os.path.lexists(path)
    _append(memory_dir, today, b"")
    return not existed


def list_logs(memory_dir: str) -> tuple[str, ...]:
    """Return the relpath of every `logs/YYYY/MM/YYYY-MM-DD.md` file, oldest first.

    Symlinks and oddly named files are skipped (lint reports them).
    """
    found: list[str] = []
    logs = os.path.join(memory_dir, "logs")
    for year in _subdirs(logs):
        if not (year.isdigit() and len(year) == 4):
            continue
        for month in _subdirs(os.path.join(logs, year)):
            if not (month.isdigit() and len(month) == 2):
                continue
            month_dir = os.path.join(logs, year, month)
            try:
                names = os.listdir(month_dir)
            except OSError:
                continue
            for name in names:
                if not _is_log_name(name, year, month):
                    continue
                full = os.path.join(month_dir, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    found.append(f"logs/{year}/{month}/{name}")
    return tuple(sorted(found))


def _subdirs(path: str) -> list[str]:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return []
    return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))


def _is_log_name(name: str, year: str, month: str) -> bool:
    import datetime as _dt

    if not (
        name.startswith(f"{year}-{month}-") and name.endswith(".md") and len(name) == 13
    ):
        return False
    try:
        _dt.date.fromisoformat(name[:10])
    except ValueError:
        return False
    return True


def log_date(relpath: str) -> datetime.date:
    """Return the date a log relpath names."""
    import datetime as _dt

    return _dt.date.fromisoformat(relpath.rsplit("/", 1)[-1][:10])


def update_dream_record(
    state_dir: str, memory_dir: str, update: Callable[[dict[str, object]], None]
) -> dict[str, object]:
    """Apply `update` to one directory's dreams.json record under a lock."""
    from memd.state import read_state, write_state

    os.makedirs(state_dir, exist_ok=True)
    lock_fd = os.open(
        os.path.join(state_dir, ".dreams.lock"), os.O_RDWR | os.O_CREAT, 0o600
    )
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        data = read_state(state_dir, DREAMS_STATE)
        key = memory_key(memory_dir)
        record = data.get(key)
        if not isinstance(record, dict):
            record = {}
        update(record)
        data[key] = record
        write_state(state_dir, DREAMS_STATE, data)
        return record
    finally:
        os.close(lock_fd)


def memory_key(memory_dir: str) -> str:
    """Return a memory directory's key in dreams.json: its realpath."""
    return os.path.realpath(memory_dir)


def rotate(memory_dir: str, state_dir: str, *, today: datetime.date) -> tuple[str, ...]:
    """Create today's log, queue closed ones for the dream; return newly queued."""
    ensure_today(memory_dir, today)
    closed = tuple(rel for rel in list_logs(memory_dir) if log_date(rel) < today)
    queued: list[str] = []

    def _queue(record: dict[str, object]) -> None:
        existing = record.get("closed_logs")
        known = [str(x) for x in existing] if isinstance(existing, list) else []
        for rel in closed:
            if rel not in known:
                known.append(rel)
                queued.append(rel)
        record["closed_logs"] = sorted(known)

    update_dream_record(state_dir, memory_dir, _queue)
    return tuple(queued)


def apply_retention(
    memory_dir: str,
    watermarks: dict[str, int],
    *,
    today: datetime.date,
    days: int,
    action: str,
) -> tuple[RetentionAction, ...]:
    """Archive or remove logs older than `days` that the dream fully consolidated.

    A log counts as consolidated when its watermark equals its size.
    Archived logs move to `logs/archive/YYYY/MM/` (a rename: never a copy).
    """
    done: list[RetentionAction] = []
    for rel in list_logs(memory_dir):
        if (today - log_date(rel)).days <= days:
            continue
        full = os.path.join(memory_dir, rel)
        try:
            size = os.lstat(full).st_size
        except FileNotFoundError:
            continue
        if watermarks.get(rel) != size:
            continue
        crash_point()
        if action == "remove":
            os.unlink(full)
            crash_point()
            done.append(RetentionAction(rel, "remove", None))
            continue
        _, year, month, name = rel.split("/")
        dir_fd = _open_log_dir(
            memory_dir, ("logs", "archive", year, month), create=True
        )
        os.close(dir_fd)
        destination = f"logs/archive/{year}/{month}/{name}"
        crash_point()  # archive folders made, log not moved yet
        os.rename(full, os.path.join(memory_dir, destination))
        crash_point()
        done.append(RetentionAction(rel, "archive", destination))
    return tuple(done)


def read_regular_file(path: str, *, shared_lock: bool = False) -> bytes | None:
    """Return a regular file's bytes (None if missing); refuse symlinks."""
    import errno
    import fcntl
    import stat as stat_mod

    try:
        # O_NONBLOCK: opening a FIFO planted under the name must not hang.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeFileError(
                f"{path} is a symlink; the dream never follows one"
            ) from None
        raise
    try:
        if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeFileError(f"{path} is not a regular file")
        if shared_lock:
            fcntl.flock(fd, fcntl.LOCK_SH)  # never read half of an append
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def collect_entries(
    memory_dir: str, watermark: Mapping[str, object]
) -> tuple[tuple[LogEntry, ...], dict[str, int]]:
    """Return the log entries past `watermark` and the watermark that consumes them."""
    entries: list[LogEntry] = []
    marks: dict[str, int] = {}
    for rel in list_logs(memory_dir):
        data = read_regular_file(os.path.join(memory_dir, rel), shared_lock=True)
        if data is None:
            continue
        start = watermark.get(rel, 0)
        start = start if isinstance(start, int) and 0 <= start <= len(data) else 0
        found, cut = parse_log_entries(rel, data, start)
        entries.extend(found)
        marks[rel] = cut
    return tuple(entries), marks
