"""structlog's configuration, set once by the process that runs (`memd run`, a command).

This is the only process-wide setting memd has. It follows structlog's
performance advice: a filtering bound logger (a call below the level is a no-op
method), loggers cached on first use, and a `WriteLoggerFactory` writing
straight to the stream instead of routing through stdlib `logging`.

Off a TTY (journald, launchd, a pipe) every event is one JSON line; on a TTY
it is readable key=value text. Timestamps are ISO 8601 in UTC either way.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from structlog.typing import FilteringBoundLogger

FORMATS = ("auto", "json", "console")
# A log file memd rotates itself (a unit's `StandardOutput=append:` target) is
# renamed to `<name>.1` past this size (checked every 64 KiB written), so the
# two stay within about twice this.
LOG_FILE_MAX_BYTES = 10 * 1024 * 1024
LEVELS = ("debug", "info", "warning", "error", "critical")


def choose_format(fmt: str, stream: TextIO) -> str:
    """Return "json" or "console": `fmt`, or for "auto" whether `stream` is a TTY."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt != "auto":
        return fmt
    return "console" if _is_tty(stream) else "json"


def configure_logging(
    fmt: str = "auto",
    level: str = "info",
    stream: TextIO | None = None,
    *,
    rotate_file: str | None = None,
) -> None:
    """Configure structlog for this process: `fmt` auto|json|console, `level` and up.

    `rotate_file`: when `stream` writes to this very file (the service's log
    file), memd rotates it by size (see `rotate_log_file`).

    Raises:
        ValueError: `fmt` or `level` is not one memd knows.
    """
    import structlog

    level = level.lower()
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, got {level!r}")
    stream = sys.stderr if stream is None else stream
    chosen = choose_format(fmt, stream)
    renderer: Any
    shared: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if chosen == "json":
        # Locals in a traceback could carry memory contents into the journal.
        transformer = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
        shared.append(structlog.processors.ExceptionRenderer(transformer))
        renderer = structlog.processors.JSONRenderer(sort_keys=False)
    else:
        colors = _is_tty(stream) and not os.environ.get("NO_COLOR")
        renderer = structlog.dev.ConsoleRenderer(colors=colors)
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(
            file=_rotating(stream, rotate_file) if rotate_file else stream
        ),
        context_class=dict,
        cache_logger_on_first_use=True,
    )


class _RotatingStream:
    """`stream`, whose file is checked against `path`'s size limit as it grows.

    The check (two stats) runs after every CHECK_EVERY bytes, on the flush
    structlog makes after each line, so the file overshoots by at most that.
    """

    CHECK_EVERY = 64 * 1024

    def __init__(self, stream: TextIO, path: str, max_bytes: int) -> None:
        self.stream, self.path, self.max_bytes = stream, path, max_bytes
        self.unchecked = 0

    def write(self, text: str) -> int:
        self.unchecked += len(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()
        if self.unchecked >= self.CHECK_EVERY:
            self.unchecked = 0
            rotate_log_file(self.stream.fileno(), self.path, self.max_bytes)


def _rotating(stream: TextIO, path: str) -> TextIO:
    """Return `stream`, rotating `path` when `stream` is that file; else `stream`."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream
    if not _same_file(fd, path):
        return stream
    rotating: Any = _RotatingStream(stream, path, LOG_FILE_MAX_BYTES)
    return rotating  # type: ignore[no-any-return]


def _same_file(fd: int, path: str) -> bool:
    """Return True when `fd` is the regular file at `path` itself (no link)."""
    import stat

    try:
        opened, named = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(named.st_mode) and (opened.st_dev, opened.st_ino) == (
        named.st_dev,
        named.st_ino,
    )


def rotate_log_file(fd: int, path: str, max_bytes: int) -> bool:
    """Rotate `path` when `fd` writes to it and it grew past `max_bytes`.

    The file becomes `<path>.1` (replacing the previous one) and a fresh
    `path` takes its place on every one of stdout and stderr that wrote to the
    old one, so memd, its children and a crash traceback all follow. Nothing is
    copied or lost. Returns True when it rotated.
    """
    try:
        if os.fstat(fd).st_size <= max_bytes or not _same_file(fd, path):
            return False
        os.replace(path, path + ".1")
        from memd.fsread import open_regular

        fresh = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:  # a read-only or vanished file: keep writing where we are
        return False
    try:
        old = os.fstat(fd)
        for target in {fd, 1, 2}:
            if _same_inode(target, old):
                os.dup2(fresh, target, inheritable=target in (1, 2))
    finally:
        os.close(fresh)
    return True


def _same_inode(fd: int, reference: os.stat_result) -> bool:
    try:
        found = os.fstat(fd)
    except OSError:
        return False
    return (found.st_dev, found.st_ino) == (reference.st_dev, reference.st_ino)


def _is_tty(stream: TextIO) -> bool:
    try:  # a closed or fake stream counts as "not a TTY"
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def get_logger(**context: object) -> FilteringBoundLogger:
    """Return a logger bound to `context` (e.g. ``component="daemon"``)."""
    import structlog

    logger: FilteringBoundLogger = structlog.get_logger(**context)
    return logger
