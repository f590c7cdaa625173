"""structlog's configuration, set once by the process that runs (`memd run`, a command).

This is the only process-wide setting memd has. It follows structlog's
performance advice: a filtering bound logger (a call below the level is a no-op
method), loggers cached on first use, and a `WriteLoggerFactory` writing
straight to the stream instead of routing through stdlib `logging`.

Off a TTY (journald, launchd, a pipe) every event is one JSON line; on a TTY
it is readable key=value text. Timestamps are ISO 8601 in UTC either way.

Every line is bounded: a value that embeds user or library text (a path, a
message, an exception's text) is cut to `MAX_LOG_TEXT_CHARS`, a list or
mapping to `MAX_LOG_ITEMS`, a whole line to about `MAX_LOG_LINE_CHARS`
(`bound_event`). `routed_warnings` sends what
libraries say through the `warnings` module or stdlib `logging` into the same
log, one line per distinct category and location per `REPEAT_WINDOW_SECONDS`:
under systemd stderr is the journal, and one watchdog warning repeated with a
700 KB repr in it once made 300 MiB in 5 s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, TextIO

    from structlog.typing import EventDict, FilteringBoundLogger, WrappedLogger

FORMATS = ("auto", "json", "console")
# A log file memd rotates itself (a unit's `StandardOutput=append:` target) is
# renamed to `<name>.1` past this size (checked every 64 KiB written), so the
# two stay within about twice this.
LOG_FILE_MAX_BYTES = 10 * 1024 * 1024
LEVELS = ("debug", "info", "warning", "error", "critical")
MAX_LOG_TEXT_CHARS = 1000  # of one string in a log line
MAX_LOG_LINE_CHARS = 8000  # of all the strings in one log line together
MAX_TRACE_CHARS = 32_000  # of a rendered traceback or stack
_MIN_CUT_CHARS = 40  # a value past the line's budget still shows its head
MAX_LOG_ITEMS = 64  # of one list or mapping in a log line
MAX_LOG_DEPTH = 8  # nesting kept in a log line
_TRACE_KEYS = frozenset({"exception", "stack"})
_UNTOUCHED_KEYS = frozenset({"exc_info"})  # the renderer formats it (bounded there)
REPEAT_WINDOW_SECONDS = 60.0  # one line per warning source in this long
MAX_WARNING_SOURCES = 1024  # sources remembered; the oldest is forgotten past it


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
    show: Callable[[str, EventDict], str | None] | None = None,
) -> None:
    """Configure structlog for this process: `fmt` auto|json|console, `level` and up.

    `rotate_file`: when `stream` writes to this very file (the service's log
    file), memd rotates it by size (see `rotate_log_file`). `show`: turns an
    event (before it is cut to a log line's bounds) into a line for people
    on stdout, or None (see `configure_command_logging`).

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
    shown = [] if show is None else [_Shown(show)]
    structlog.configure(
        processors=[*shared, *shown, bound_event, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.WriteLoggerFactory(
            file=_rotating(stream, rotate_file) if rotate_file else stream
        ),
        context_class=dict,
        cache_logger_on_first_use=True,
    )


def configure_command_logging(
    fmt: str,
    level: str,
    *,
    log_file: str,
    verbose: bool = False,
    show: Callable[[str, EventDict], str | None] | None = None,
) -> None:
    """Configure logging for a command a person may run in a terminal.

    On a terminal, log records stay off it: they go, as JSON, to `log_file`
    (memd's log file, rotated like the service's), so nothing comes before or
    after the command's result; `show` may turn an event into one line for
    the person, printed on stdout. With `verbose`, or off a terminal (a pipe,
    journald), records go to stderr as `configure_logging` writes them (JSON
    off a TTY). A log file that cannot be opened falls back to stderr.
    """
    stream = sys.stderr
    if verbose or not _is_tty(stream):
        # Under a unit without journald, stderr is `log_file`: rotated by size.
        configure_logging(fmt, level, stream, rotate_file=log_file)
        return
    from memd.fsread import open_regular

    try:
        os.makedirs(os.path.dirname(log_file) or ".", mode=0o700, exist_ok=True)
        fd = open_regular(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        configure_logging(fmt, level, stream)
        return
    log_stream = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    configure_logging("json", level, log_stream, rotate_file=log_file, show=show)


class _Shown:
    """A processor: writes `show`'s line for an event to stdout, passes it on."""

    def __init__(self, show: Callable[[str, EventDict], str | None]) -> None:
        self.show = show

    def __call__(
        self, logger: WrappedLogger, method_name: str, event_dict: EventDict
    ) -> EventDict:
        try:
            line = self.show(method_name, event_dict)
        except Exception:  # noqa: BLE001 -- a line for people must never lose the record
            line = None
        if line is not None:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.write(line if line.endswith("\n") else line + "\n")
                sys.stdout.flush()
        return event_dict


def bound_event(
    logger: WrappedLogger, method_name: str, event_dict: EventDict
) -> EventDict:
    """Cut `event_dict` to the bounds of one log line (a processor).

    Each string is cut to `MAX_LOG_TEXT_CHARS`, and all of them together
    to `MAX_LOG_LINE_CHARS` (a rendered traceback or stack has a budget of
    its own), so many long values in one event are bounded too.
    """
    line, trace = _Budget(MAX_LOG_LINE_CHARS), _Budget(MAX_TRACE_CHARS)
    for key, value in event_dict.items():
        if key in _TRACE_KEYS:
            event_dict[key] = trace.bound(value, MAX_TRACE_CHARS)
        elif key not in _UNTOUCHED_KEYS:
            event_dict[key] = line.bound(value, MAX_LOG_TEXT_CHARS)
    return event_dict


class _Budget:
    """What is left of a line's characters, spent by the values `bound` returns."""

    __slots__ = ("remaining",)

    def __init__(self, chars: int) -> None:
        self.remaining = chars

    def bound(self, value: object, limit: int, depth: int = 0) -> Any:
        """Return `value` with strings cut and containers bounded, within budget.

        Numbers, booleans and None pass; any other object becomes its (cut)
        repr, which the JSON renderer would otherwise write whole.
        """
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if isinstance(value, str):
            text = cut_text(value, max(min(limit, self.remaining), _MIN_CUT_CHARS))
            self.remaining -= len(text)
            return text
        if depth >= MAX_LOG_DEPTH:
            return "…"
        if isinstance(value, dict):
            items = list(value.items())
            bounded: dict[str, object] = {}
            for k, v in items[:MAX_LOG_ITEMS]:
                if self.remaining <= 0:
                    break
                bounded[self.bound(str(k), limit, depth + 1)] = self.bound(
                    v, limit, depth + 1
                )
            if len(bounded) < len(items):
                bounded["…"] = f"{len(items) - len(bounded)} more"
            return bounded
        if isinstance(value, (list, tuple, set, frozenset)):
            listed = list(value)
            kept: list[object] = []
            for item in listed[:MAX_LOG_ITEMS]:
                if self.remaining <= 0:
                    break
                kept.append(self.bound(item, limit, depth + 1))
            if len(kept) < len(listed):
                kept.append(f"… {len(listed) - len(kept)} more")
            return kept
        return self.bound(repr(value), limit, depth)


def cut_text(text: str, limit: int = MAX_LOG_TEXT_CHARS) -> str:
    """Return `text`, or its first `limit` characters and how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more chars]"


class _Throttle:
    """Lets one message per source through per window; counts what it held back.

    A source is (category, file, line): a warning raised in a loop with a new
    text each time (a path, an id, a repr) is still one source. Thread-safe:
    warnings come from any thread.
    """

    def __init__(self, window_seconds: float, max_sources: int) -> None:
        self.window_seconds = window_seconds
        self.max_sources = max_sources
        self._lock = threading.Lock()
        self._sources: dict[tuple[str, str, int], list[float | int]] = {}

    def admit(self, source: tuple[str, str, int], now: float) -> int | None:
        """Return how many were held back since the last one let through, or None."""
        with self._lock:
            seen = self._sources.get(source)
            if seen is not None and now - seen[0] < self.window_seconds:
                seen[1] += 1
                return None
            held = 0 if seen is None else int(seen[1])
            self._sources.pop(source, None)
            if len(self._sources) >= self.max_sources:  # the oldest goes first
                del self._sources[next(iter(self._sources))]
            self._sources[source] = [now, 0]
            return held


class _WarningRouter:
    """`warnings.showwarning` and a stdlib `logging` handler that write to `log`."""

    def __init__(self, log: FilteringBoundLogger, throttle: _Throttle) -> None:
        self.log = log
        self.throttle = throttle

    def show_warning(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        held = self.throttle.admit(
            (category.__name__, filename, lineno), time.monotonic()
        )
        if held is None:
            return
        self.log.warning(
            "python_warning",
            category=category.__name__,
            message=cut_text(str(message)),
            location=cut_text(f"{filename}:{lineno}"),
            repeats_held_back=held,
        )

    def handle_record(self, record: logging.LogRecord) -> None:
        held = self.throttle.admit(
            (f"logging.{record.levelname}", record.pathname, record.lineno),
            time.monotonic(),
        )
        if held is None:
            return
        try:
            text = record.getMessage()
        except (TypeError, ValueError):  # a library's bad format string
            text = str(record.msg)
        log = self.log.error if record.levelno >= 40 else self.log.warning
        log(
            "library_logged",
            logger=cut_text(record.name),
            record_level=record.levelname.lower(),
            message=cut_text(text),
            location=cut_text(f"{record.pathname}:{record.lineno}"),
            repeats_held_back=held,
        )


@contextlib.contextmanager
def routed_warnings(
    log: FilteringBoundLogger,
    *,
    window_seconds: float = REPEAT_WINDOW_SECONDS,
    max_sources: int = MAX_WARNING_SOURCES,
) -> Iterator[None]:
    """Route `warnings` and stdlib `logging` (WARNING and up) to `log` while open.

    Each source (category or level, file, line) gets one line per
    `window_seconds`; the next one says how many were held back. What
    Python would show once per distinct text is shown "always" instead,
    so no registry keeps every text (the throttle dedups by source).
    Filters already set (ignored deprecations, `-W`) still apply first.
    """
    import warnings

    router = _WarningRouter(log, _Throttle(window_seconds, max_sources))
    handler = _RecordHandler(router)
    root = logging.getLogger()
    with warnings.catch_warnings():
        warnings.filterwarnings("always", append=True)
        warnings.showwarning = router.show_warning
        root.addHandler(handler)
        try:
            yield
        finally:
            root.removeHandler(handler)


class _RecordHandler(logging.Handler):
    """Hands each stdlib log record to the router (instead of `lastResort`)."""

    def __init__(self, router: _WarningRouter) -> None:
        super().__init__(level=logging.WARNING)
        self.router = router

    def emit(self, record: logging.LogRecord) -> None:
        self.router.handle_record(record)


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
