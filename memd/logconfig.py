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
LEVELS = ("debug", "info", "warning", "error", "critical")


def choose_format(fmt: str, stream: TextIO) -> str:
    """Return "json" or "console": `fmt`, or for "auto" whether `stream` is a TTY."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt != "auto":
        return fmt
    return "console" if _is_tty(stream) else "json"


def configure_logging(
    fmt: str = "auto", level: str = "info", stream: TextIO | None = None
) -> None:
    """Configure structlog for this process: `fmt` auto|json|console, `level` and up.

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
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        context_class=dict,
        cache_logger_on_first_use=True,
    )


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
