"""Recording a change with its cause: the writers' wrapper, the daemon's call.

`recording(state_dir, memory_dir, cause="fix")` wraps one of memd's own writes:
it records whatever was pending as "edit" first, runs the block, then records
what the block wrote as `cause`. It holds `<state_dir>/history/write.lock`
(`flock`) throughout, and the daemon takes the same lock for its "edit"
records, so a write memd makes is never recorded as someone else's. A block
nested inside another in the same thread records nothing of its own.

`record_edit` is the daemon's call after a settled batch; `note_loss` logs a
loss and leaves the notice SessionStart tells once (`memd.history.notice`).
History never fails a write: a store that cannot be opened or written is
reported through `log` (when given) and the write goes ahead.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time

from memd.history.lock import write_lock
from memd.history.notice import leave_notice
from memd.history.store import Change, History, normalize_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from memd.config import Config

SESSION_FRESH_SECONDS = 3600.0  # a session record older than this is not "the" session
_SESSION_SCAN = 8  # newest session records looked at
_local = threading.local()


def is_enabled(config: Config | None) -> bool:
    if config is not None:
        return config.history_enabled
    from memd.errors import ConfigError

    try:
        return _load_config().history_enabled
    except ConfigError:
        return True


@contextlib.contextmanager
def recording(
    state_dir: str,
    memory_dir: str,
    *,
    cause: str,
    session: str | None = None,
    note: str | None = None,
    config: Config | None = None,
    log: object | None = None,
) -> Iterator[Recorder]:
    """Record the block's writes to `memory_dir` as one change with `cause`.

    A no-op when history is disabled (`[history] enabled = false`).
    """
    with recording_dirs(
        [memory_dir],
        cause=cause,
        state_dir=state_dir,
        session=session,
        note=note,
        config=config,
        log=log,
    ) as recorder:
        yield recorder


@contextlib.contextmanager
def recording_dirs(
    memory_dirs: Iterable[str],
    *,
    cause: str,
    state_dir: str | None = None,
    session: str | None = None,
    note: str | None = None,
    config: Config | None = None,
    log: object | None = None,
) -> Iterator[Recorder]:
    """`recording` for a writer that writes into several memory directories at once
    (personal sync); `state_dir` None: the configured one.

    Yields a `Recorder`: a writer that names what it wrote (`recorder.wrote`)
    has only those files recorded as `cause`; whatever else changed meanwhile
    (the agent writing at the same moment) is recorded first, as "edit".
    """
    recorder = Recorder()
    if getattr(_local, "depth", 0) or not is_enabled(config):
        yield recorder
        return
    if state_dir is None:
        state_dir = _state_dir(config)
    dirs = sorted({normalize_dir(memory_dir_holding(d)) for d in memory_dirs})
    recorder.dirs = dirs
    _local.depth = 1
    try:
        with contextlib.ExitStack() as held:
            try:  # a state dir memd cannot write never stops the write itself
                held.enter_context(write_lock(state_dir))
            except OSError as error:
                _warn(log, "history_lock_failed", state_dir=state_dir, error=str(error))
                yield recorder
                return
            history = _open(state_dir, log)
            if history is not None:
                held.callback(history.close)
                _recover(state_dir, history, log)
                for memory_dir in dirs:
                    found = _session(state_dir, memory_dir)
                    _record(history, state_dir, memory_dir, "edit", found, None, log)
            yield recorder
            for memory_dir in dirs if history is not None else ():
                _record_named(
                    history,  # type: ignore[arg-type]  # not None in this loop
                    state_dir,
                    memory_dir,
                    cause,
                    session,
                    note,
                    log,
                    recorder.named(memory_dir),
                )
    finally:
        _local.depth = 0


class Recorder:
    """What a `recording` block says it wrote: relpaths, or folders (`team/`)."""

    def __init__(self) -> None:
        self.dirs: list[str] = []
        self._paths: dict[str, set[str]] = {}
        self._folders: dict[str, list[str]] = {}

    def wrote(self, path: str, *, memory_dir: str | None = None) -> None:
        """Name a file the block wrote or deleted: an absolute path, or a relpath
        of `memory_dir` (default: the only directory); ending in `/`, a folder."""
        if os.path.isabs(path):
            full = normalize_dir(path) + ("/" if path.endswith(os.sep) else "")
            for directory in sorted(self.dirs, key=len, reverse=True):
                if full.startswith(directory + os.sep):
                    self._add(
                        directory, full[len(directory) + 1 :].replace(os.sep, "/")
                    )
                    return
            return
        if memory_dir is None:
            if len(self.dirs) != 1:
                return
            directory = self.dirs[0]
        else:
            directory = normalize_dir(memory_dir_holding(memory_dir))
        self._add(directory, path)

    def _add(self, directory: str, relpath: str) -> None:
        if relpath.endswith("/"):
            self._folders.setdefault(directory, []).append(relpath)
        else:
            self._paths.setdefault(directory, set()).add(relpath)

    def named(self, memory_dir: str) -> Callable[[str], bool] | None:
        """The filter of what was named in `memory_dir`, or None if nothing was."""
        paths = self._paths.get(memory_dir, set())
        folders = tuple(self._folders.get(memory_dir, ()))
        if not paths and not folders:
            return None
        return lambda rel: rel in paths or rel.startswith(folders)


def _record_named(
    history: History,
    state_dir: str,
    memory_dir: str,
    cause: str,
    session: str | None,
    note: str | None,
    log: object | None,
    named: Callable[[str], bool] | None,
) -> None:
    """Record what the block named as `cause`; anything else, first, as "edit"."""
    if named is not None:
        found = _session(state_dir, memory_dir)
        _record(
            history,
            state_dir,
            memory_dir,
            "edit",
            found,
            None,
            log,
            only=lambda rel: not named(rel),
        )
    _record(history, state_dir, memory_dir, cause, session, note, log, only=named)


def memory_dir_holding(directory: str) -> str:
    """The memory directory of a writer's folder: itself, or the one above `team/`."""
    trimmed = directory.rstrip(os.sep) or os.sep
    if os.path.basename(trimmed) == "team":
        return os.path.dirname(trimmed)
    return trimmed


def _state_dir(config: Config | None) -> str:
    """The configured state dir; the default one when config.toml cannot be read."""
    from memd.errors import ConfigError

    try:
        return (config or _load_config()).state_dir
    except ConfigError:
        from memd.dirs import default_state_dir

        return default_state_dir()


def _load_config() -> Config:
    from memd.config import load_config

    return load_config()


def record_edit(
    history: History,
    state_dir: str,
    memory_dir: str,
    *,
    cause: str = "edit",
    log: object | None = None,
    timeout: float = 2.0,
) -> Change | bool | None:
    """The daemon's record after a settled batch (or at start, cause "stopped").

    Returns the change (None: nothing changed), or False when a writer held
    the lock past `timeout`: the caller tries again later.
    """
    with write_lock(state_dir, timeout=timeout) as held:
        if not held:
            return False
        session = _session(state_dir, memory_dir) if cause == "edit" else None
        return _record(history, state_dir, memory_dir, cause, session, None, log)


def _open(state_dir: str, log: object | None) -> History | None:
    try:
        return History.open(state_dir)
    except (OSError, sqlite3.Error) as error:
        _warn(log, "history_open_failed", state_dir=state_dir, error=str(error))
        return None


def _recover(state_dir: str, history: History, log: object | None) -> None:
    from memd.history.restore import recover

    try:
        recover(state_dir, history)
    except (OSError, sqlite3.Error, ValueError) as error:
        _warn(log, "history_restore_recovery_failed", error=str(error))


def _record(
    history: History,
    state_dir: str,
    memory_dir: str,
    cause: str,
    session: str | None,
    note: str | None,
    log: object | None,
    *,
    only: Callable[[str], bool] | None = None,
) -> Change | None:
    try:
        change = history.record(
            memory_dir, cause=cause, session=session, note=note, only=only
        )
    except (OSError, sqlite3.Error, ValueError) as error:
        _warn(log, "history_record_failed", memory_dir=memory_dir, error=str(error))
        return None
    if change is not None and change.is_loss:
        note_loss(history, state_dir, change, log)
    return change


def note_loss(
    history: History, state_dir: str, change: Change, log: object | None
) -> None:
    """Log a loss and leave its notice for the next SessionStart."""
    first_at, before_rev, before_at = history.burst_start(change.memory_dir, change)
    notice = {
        "memory_dir": change.memory_dir,
        "sentence": change.loss,
        "at": change.at,
        "cause": change.cause,
        "rev": change.rev,
        "first_at": first_at,
        "before_rev": before_rev,
        "before_at": before_at,
    }
    _warn(
        log,
        "memory_loss",
        memory_dir=change.memory_dir,
        rev=change.rev,
        cause=change.cause,
        loss=change.loss,
        restore_rev=before_rev,
    )
    try:
        leave_notice(state_dir, change.memory_dir, notice)
    except OSError as error:
        _warn(log, "history_notice_failed", error=str(error))


def _warn(log: object | None, event: str, **fields: object) -> None:
    warning = getattr(log, "warning", None)
    if callable(warning):
        warning(event, **fields)


# -- which session a change came from ------------------------------------------------

_session_cache: dict[str, tuple[tuple[int, int], list[tuple[str, str]]]] = {}


def _session(state_dir: str, memory_dir: str) -> str | None:
    """The agent session that last ran a hook for `memory_dir`, if recent.

    The hooks keep one record per session in `<state_dir>/hooks/` (SessionStart
    writes it, every PostToolUse rewrites it); the newest few are read, and the
    answer is reused while the folder's stat is unchanged.
    """
    from memd.fsread import list_dir, read_prefix
    from memd.statkey import stat_key

    hooks = os.path.join(state_dir, "hooks")
    key = stat_key(hooks)
    cached = _session_cache.get(hooks)
    if cached is None or cached[0] != key[1:]:
        try:
            entries = [
                (entry.stat(follow_symlinks=False).st_mtime, entry.name)
                for entry in list_dir(hooks)
                if entry.name.endswith(".txt") and entry.is_file(follow_symlinks=False)
            ]
        except OSError:
            entries = []
        entries.sort(reverse=True)
        found: list[tuple[str, str]] = []
        cutoff = time.time() - SESSION_FRESH_SECONDS
        for mtime, name in entries[:_SESSION_SCAN]:
            if mtime < cutoff:
                break
            try:
                head = read_prefix(os.path.join(hooks, name), 4096)
            except OSError:
                continue
            for line in head.decode("utf-8", "replace").split("\n")[:4]:
                if line.startswith("memory_dir "):
                    found.append((normalize_dir(line[len("memory_dir ") :]), name[:-4]))
        cached = (key[1:], found)
        _session_cache[hooks] = cached
    wanted = normalize_dir(memory_dir)
    return next((session for path, session in cached[1] if path == wanted), None)
