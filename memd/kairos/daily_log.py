"""KAIROS daily logs: `memd log` appends, midnight rotation, optional retention.

A log is `logs/YYYY/MM/YYYY-MM-DD.md` under the memory directory, by local
date (REFERENCE.md §2, getAutoMemDailyLogPath). Appends are the one place memd
writes without `write_atomic`: many processes append to the same file, so
each entry is a single `write(2)` on an `O_APPEND` descriptor while holding
`flock(LOCK_EX)`; POSIX makes an `O_APPEND` write land at the end as a unit,
and the lock keeps the "does the file need a heading" check and the write
together. An append is all or nothing: after a short write (a full disk)
the file is truncated back to its old length before the lock is released.
Every directory on the way is opened with `O_NOFOLLOW` relative to
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

from memd.atomic import crash_point
from memd.claude_code.paths import daily_log_path
from memd.diagnostics import escape_surrogates
from memd.errors import UsageError
from memd.fsread import (
    UnsafeFileError,
    list_dir,
    open_dir,
    open_regular,
    read_bytes,
)
from memd.kairos.consolidate import parse_log_entries
from memd.kairos.dates import parse_day
from memd.lint.checks_files import CONTROL_CHARACTERS

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Callable, Iterator, Mapping

    from memd.kairos.consolidate import LogEntry

DREAMS_STATE = "dreams.json"
MAX_LOG_BYTES = 16 * 1024 * 1024  # a day's log; a bigger one fails its dream clearly


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
    """Return `- HH:MM text` with continuation lines indented two spaces, as UTF-8.

    Every way into a log (`memd log`, `memory_log`, `memd.append_log`) comes
    here, so this is where text becomes safe to keep: see `sanitize_log_text`.
    """
    lines = [line.rstrip() for line in sanitize_log_text(text).strip().split("\n")]
    if not lines or not lines[0]:
        raise UsageError("nothing to log: the entry is empty")
    first, rest = lines[0], lines[1:]
    body = [f"- {now:%H:%M} {first}"] + [f"  {line}" if line else "  " for line in rest]
    return ("\n".join(body) + "\n").encode("utf-8")


def sanitize_log_text(text: str) -> str:
    """Return `text` with line breaks as `\\n` and nothing else a terminal acts on.

    Any line break Python knows (CR, CRLF, VT, FF, NEL, U+2028…) becomes a
    newline; control characters (NUL, ESC, DEL, C1, bidi overrides: lint's
    F010 set) and the undecodable bytes of a command line (lone surrogates)
    are written as visible escapes (`\\x1b`, `\\u202e`), so a log stays
    printable text that lints clean and says what was sent.
    """
    text = "\n".join(text.splitlines())
    if CONTROL_CHARACTERS.search(text) is None and _is_encodable(text):
        return text
    return "".join(_visible(c) for c in text)


def _is_encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _visible(char: str) -> str:
    if char != "\n" and CONTROL_CHARACTERS.match(char) is not None:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return escape_surrogates(char)


def heading(day: datetime.date) -> bytes:
    """Return the date heading a fresh log starts with."""
    return f"# {day.isoformat()}\n\n".encode()


def _open_log_dir(memory_dir: str, parts: tuple[str, ...], *, create: bool) -> int:
    """Open `memory_dir/parts…` as a directory fd, refusing symlinks at every step.

    Raises `UsageError` when a part is a symlink or not a directory.
    """
    try:
        fd = open_dir(memory_dir, follow=True)
    except FileNotFoundError:
        if not create:
            raise
        os.makedirs(memory_dir, exist_ok=True)
        fd = open_dir(memory_dir, follow=True)
    for part in parts:
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            child = open_dir(part, dir_fd=fd)
        except UnsafeFileError:
            os.close(fd)
            raise UsageError(
                f"refusing to use the daily log: {part!r} in {memory_dir} "
                "is a symlink or not a directory"
            ) from None
        except OSError:
            os.close(fd)
            raise
        os.close(fd)
        fd = child
    return fd


def _log_parts(relpath: str) -> tuple[tuple[str, ...], str]:
    """Split `logs/YYYY/MM/name` into its directory parts and its name."""
    *parts, name = relpath.split("/")
    return tuple(parts), name


def _append(memory_dir: str, day: datetime.date, entry: bytes) -> str:
    """Append `entry` (maybe empty) to `day`'s log under flock; return the log path.

    All or nothing: after a short or failed write the file is truncated back
    to its old length under the same lock, so no half entry is ever left for
    the dream to file.
    """
    path = daily_log_path(memory_dir, day)
    parts, name = _log_parts(log_relpath(day))
    dir_fd = _open_log_dir(memory_dir, parts, create=True)
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT
        try:
            fd = open_regular(name, flags, 0o644, dir_fd=dir_fd)
        except UnsafeFileError as error:
            raise UsageError(
                f"refusing to write the daily log: {path} {error.strerror}"
            ) from None
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
            _write_whole(fd, data, size, path)
            crash_point()
    finally:
        os.close(fd)  # closing releases the flock
    return path


def _write_whole(fd: int, data: bytes, size: int, path: str) -> None:
    """Write `data` in one `write(2)`, or truncate back to `size` and raise."""
    try:
        written = os.write(fd, data)  # one write: never interleaved with another
    except OSError:
        written = -1
        _truncate_back(fd, size)
        raise
    if written != len(data):
        _truncate_back(fd, size)
        raise OSError(
            errno.ENOSPC,
            f"short write ({written} of {len(data)} bytes); the entry was not logged",
            path,
        )


def _truncate_back(fd: int, size: int) -> None:
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)


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

    Walked with directory descriptors: a symlinked `logs/`, year or month dir,
    a symlinked log and anything not a regular file are skipped (lint reports
    them), so nothing outside the memory directory is ever listed.
    """
    found: list[str] = []
    try:
        logs_fd = _open_log_dir(memory_dir, ("logs",), create=False)
    except (OSError, UsageError):
        return ()
    try:
        for year, year_fd in _subdirs(logs_fd, 4):
            try:
                for month, month_fd in _subdirs(year_fd, 2):
                    try:
                        for entry in _entries(month_fd):
                            if _is_log_name(entry.name, year, month) and entry.is_file(
                                follow_symlinks=False
                            ):
                                found.append(f"logs/{year}/{month}/{entry.name}")
                    finally:
                        os.close(month_fd)
            finally:
                os.close(year_fd)
    finally:
        os.close(logs_fd)
    return tuple(sorted(found))


def _entries(fd: int) -> list[os.DirEntry[str]]:
    try:
        return list_dir(fd)
    except OSError:
        return []


def _subdirs(fd: int, digits: int) -> Iterator[tuple[str, int]]:
    """Yield (name, fd) of each all-digit, `digits`-long real subdirectory."""
    for entry in sorted(_entries(fd), key=lambda e: e.name):
        name = entry.name
        if not (name.isdigit() and len(name) == digits):
            continue
        try:
            child = open_dir(name, dir_fd=fd)
        except OSError:
            continue  # a symlink or a file: skipped, lint reports it
        yield name, child


def _is_log_name(name: str, year: str, month: str) -> bool:
    return (
        name.startswith(f"{year}-{month}-")
        and name.endswith(".md")
        and len(name) == 13
        and parse_day(name[:10]) is not None
    )


def log_date(relpath: str) -> datetime.date:
    """Return the date a log relpath names (listed logs always name a real one).

    Raises `ValueError` for a name that is not a real date (memd.kairos.dates
    decides, like everywhere else in kairos).
    """
    day = parse_day(relpath.rsplit("/", 1)[-1][:10])
    if day is None:
        raise ValueError(f"{relpath} does not name a real date")
    return day


def update_dream_record(
    state_dir: str, memory_dir: str, update: Callable[[dict[str, object]], None]
) -> dict[str, object]:
    """Apply `update` to one directory's dreams.json record under a lock."""
    from memd.state import read_state, write_state

    os.makedirs(state_dir, exist_ok=True)
    lock_fd = open_regular(
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
    Every unlink and rename is relative to a descriptor of the log's own
    month directory, reached without following a symlink.
    """
    done: list[RetentionAction] = []
    for rel in list_logs(memory_dir):
        if (today - log_date(rel)).days <= days:
            continue
        parts, name = _log_parts(rel)
        month_fd = _open_log_dir(memory_dir, parts, create=False)
        try:
            try:
                size = os.stat(name, dir_fd=month_fd, follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
            if watermarks.get(rel) != size:
                continue
            crash_point()
            if action == "remove":
                os.unlink(name, dir_fd=month_fd)
                crash_point()
                done.append(RetentionAction(rel, "remove", None))
                continue
            _, year, month = parts
            archive_fd = _open_log_dir(
                memory_dir, ("logs", "archive", year, month), create=True
            )
            try:
                crash_point()  # archive folders made, log not moved yet
                os.rename(name, name, src_dir_fd=month_fd, dst_dir_fd=archive_fd)
            finally:
                os.close(archive_fd)
            crash_point()
            done.append(
                RetentionAction(rel, "archive", f"logs/archive/{year}/{month}/{name}")
            )
        finally:
            os.close(month_fd)
    return tuple(done)


def read_log(memory_dir: str, relpath: str) -> bytes | None:
    """Return a log's bytes under a shared lock (None if gone); never via a symlink."""
    parts, name = _log_parts(relpath)
    try:
        dir_fd = _open_log_dir(memory_dir, parts, create=False)
    except FileNotFoundError:
        return None
    except UsageError as error:
        raise UnsafeFileError(errno.ELOOP, str(error), relpath) from None
    try:
        return read_bytes(name, MAX_LOG_BYTES, dir_fd=dir_fd, shared_lock=True)
    except FileNotFoundError:
        return None
    finally:
        os.close(dir_fd)


def collect_entries(
    memory_dir: str, watermark: Mapping[str, object]
) -> tuple[tuple[LogEntry, ...], dict[str, int]]:
    """Return the log entries past `watermark` and the watermark that consumes them."""
    entries: list[LogEntry] = []
    marks: dict[str, int] = {}
    for rel in list_logs(memory_dir):
        data = read_log(memory_dir, rel)
        if data is None:
            continue
        start = watermark.get(rel, 0)
        start = start if isinstance(start, int) and 0 <= start <= len(data) else 0
        found, cut = parse_log_entries(rel, data, start)
        entries.extend(found)
        marks[rel] = cut
    return tuple(entries), marks
