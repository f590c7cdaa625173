"""Exceptions: memd cannot do what it was asked.

One convention. An outcome the caller expects and acts on is a *value*: bad
memory content is a `Diagnostic`, a sync's or a dream's outcome is its result's
`state` / `status`, a file that is not there is `None`. A *failure* (the
request cannot be done) is a `MemdError`, and each prints as one line. Every
subclass in the package is drawn here; tests/test_errors.py checks the tree::

    MemdError
    ├── UsageError              bad arguments, or a path that is not what was asked
    ├── ConfigError             config.toml or a MEMD_* variable is invalid (path, key)
    ├── LockHeldError           another process holds a lock memd needs (pid)
    ├── SnapshotError           the cache could not be written (path)
    ├── ServiceError            the service manager refused or is unreachable
    │   ├── ServiceStartFailed      the unit is written but did not start
    │   └── UserManagerUnreachable  no user service manager to talk to
    ├── DreamError              a dream could not finish; its edits are rolled back
    │   ├── DreamCommandFailed      the external dream command failed (kairos)
    │   ├── _DreamFailed            a built-in dream step failed (kairos.dream)
    │   └── GenerationError         a dream's apply or undo cannot go ahead
    ├── GitError                team memory: git failed, timed out or is missing
    │   └── _OutputTooLarge         git printed more than the caller's bound (gitsync)
    ├── DeletionRefusedError    a sync would delete more than it may unasked (gitsync)
    ├── FixUndoError            `memd fix --undo` cannot take the last fix back (lint)
    ├── RestoreError            a restore cannot be made: no such revision (history)
    ├── HistoryUnusableError    the history store is damaged or a link (history)
    ├── DamagedBlobError        a stored version cannot be read back (history)
    ├── RecallUnavailableError  this Python's SQLite has no FTS5
    ├── WriteRefusedError       a memory_write would not lint clean (mcp_server)
    ├── NotFoundError           the viewer shows no such project or file (ui)
    │   └── TooLargeError           the file is there but over the viewer's cap
    ├── Refused                 the viewer's gate turns a request away (ui, HTTP status)
    ├── ConflictError           a viewer action cannot go ahead as asked (ui, a 409)
    ├── Unreadable              memd will not or cannot read a project's repo (truth)
    └── ToolFailedError         an MCP tool could not do what the model asked

Four refusals are deliberately not MemdErrors: `memd.fsread.UnsafeFileError` is
an `OSError`, so every caller that already survives a vanished or unreadable
file survives a link or an oversized file the same way; `memd.config_keys.
BadValue` is a `ValueError` that `memd.config` turns into a `ConfigError` with
the file and key; `memd.jsonedit.JsonEditError` is the `ValueError` of a
settings file memd cannot parse, which setup turns into the line that leaves
it alone; and `memd.kairos.confine.Unconfinable` is raised in the dream
agent's supervisor, a standard-library-only script that imports nothing of
memd's.
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


class DreamError(MemdError):
    """A dream could not finish; the directory's lock and edits are rolled back."""
