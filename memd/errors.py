"""Exceptions: memd cannot do what it was asked.

Bad memory *content* is never an exception; it is a `Diagnostic`. These mean
the request itself failed, and each prints as one line::

    MemdError
    ├── UsageError          bad arguments or a path that is not what was asked for
    ├── ConfigError         config.toml or a MEMD_* variable is invalid (path, key)
    ├── LockHeldError       another process holds a lock memd needs (pid)
    ├── SnapshotError       the cache could not be written (path)
    └── ServiceError        the service manager refused or is unreachable
"""

from __future__ import annotations


class MemdError(Exception):
    """Root of every error memd raises on purpose; `str()` is the one-line message."""

    exit_code = 2


class UsageError(MemdError):
    """The command line asked for something that cannot be done."""


class ConfigError(MemdError):
    """memd's configuration is invalid."""

    def __init__(
        self, message: str, *, path: str | None = None, key: str | None = None
    ):
        where = ":".join(part for part in (path, key) if part)
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.key = key


class LockHeldError(MemdError):
    """Another live process holds the lock."""

    exit_code = 1

    def __init__(self, message: str, *, pid: int | None = None):
        super().__init__(message)
        self.pid = pid


class SnapshotError(MemdError):
    """A snapshot could not be written; the previous one is still in place."""

    def __init__(self, message: str, *, path: str | None = None):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class ServiceError(MemdError):
    """The service manager could not be reached or refused the request."""
