"""One watched memory directory: everything the daemon knows about it, and its rebuild.

A `WatchedDir` holds the parse cache, the lint cache, the last read (for
incremental re-reads), how many incremental reads have run since the last
full one, the last snapshot written per mode, the status shown by `memd
status`, the files currently broken, and when a racy or failed build must be
re-checked. `rebuild` re-reads the directory (only the changed relpaths when
they are known), re-renders each mode, and publishes what changed.

Each object is touched by one thread at a time: the settle thread, or the
one rebuild worker it runs on (`busy`), or the flusher for `flush_failed`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

from memd.claude_code.profile import NEWEST, AgentProfile
from memd.diagnostics import Severity, count_by_severity
from memd.lint.engine import LintCache, lint_memdir
from memd.memory.memdir import ParseCache
from memd.memory.reader import load_memdir
from memd.racy import RACY_WINDOW_NS, is_racy
from memd.snapshot.build import build_snapshot
from memd.snapshot.store import changed_input

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.diagnostics import Diagnostic
    from memd.memory.memdir import InputStat, MemDir
    from memd.snapshot.build import Snapshot
    from memd.snapshot.publish import Published, SnapshotStore

INCREMENTAL_FROM_FILES = 50  # smaller directories are re-read and linted whole
FULL_READ_EVERY = 100  # incremental reads trust events; re-read in full now and then
REBUILD_RETRY_SECONDS = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class DirStatus:
    """What `memd status` shows of one directory: how its last rebuild went.

    Replaced whole, never changed in place: daemon.json compares the last
    status written with the next one.
    """

    source: str | None = None  # what chose the directory; None before a rebuild
    is_missing: bool = False
    lint_errors: int | None = None  # the counts: None until a rebuild linted
    lint_warnings: int | None = None
    snapshots: tuple[tuple[str, float], ...] = ()  # (mode, built at, epoch seconds)
    modes: tuple[str, ...] = ()
    files: int | None = None
    error: str | None = None  # the last rebuild raised this
    slow_seconds: float | None = None  # the last rebuild took this, past its budget

    def to_dict(self, *, is_slow: bool = False) -> dict[str, object]:
        """Return the `dirs` entry of daemon.json (its keys are `memd status`'s)."""
        data: dict[str, object] = {}
        if self.source is not None:
            data["source"] = self.source
        if self.is_missing:
            data["missing"] = True
        if self.lint_errors is not None:
            data.update(
                lint_errors=self.lint_errors,
                lint_warnings=self.lint_warnings,
                snapshots=dict(self.snapshots),
                modes=list(self.modes),
                files=self.files,
            )
        if self.error is not None:
            data["error"] = self.error
        if self.slow_seconds is not None:
            data["slow_seconds"] = self.slow_seconds
        if is_slow:
            data["slow"] = True
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Rebuild:
    """What every directory's rebuild shares: the settings, the store, the outlets."""

    config: Config
    extra_guidelines: str | None
    store: SnapshotStore
    emit_loaded: Callable[[Snapshot], None]
    log: FilteringBoundLogger
    # Told of every directory read, with the relpaths it re-read (the recall index).
    on_read: Callable[[MemDir, frozenset[str] | None], None] = lambda memdir, changed: (
        None
    )
    # The agent release to render and lint under
    # (memd.claude_code.choice.choose_profile).
    profile: AgentProfile = NEWEST


@dataclass(slots=True, eq=False)
class WatchedDir:
    """Everything the daemon knows about one memory directory."""

    path: str
    parse_cache: ParseCache = field(default_factory=ParseCache)
    lint_cache: LintCache | None = None
    last_read: MemDir | None = None  # kept only for big directories
    reloads: int = 0  # incremental reads since the last full one
    written: dict[str, tuple[str, object]] = field(default_factory=dict)  # mode ->
    status: DirStatus = DirStatus()
    broken: dict[str, tuple[str, ...]] = field(default_factory=dict)  # relpath -> codes
    recheck_at: float | None = None  # monotonic time a racy or failed build is redone
    busy: bool = False  # a rebuild is running (maybe past its budget)
    pending: bool = False  # changes came while busy: read it in full when done
    is_slow: bool = False  # the settle thread stopped waiting for this rebuild
    # The input that last stat'ed otherwise right after a build, and how: the
    # same mismatch again is a lasting one (the sweep's), not a new change.
    moved_while_built: tuple[str, tuple[int, int, int]] | None = None

    def due(self, now: float) -> bool:
        """Whether a racy or failed build is due for its re-check."""
        return self.recheck_at is not None and self.recheck_at <= now

    def recheck_in(self, seconds: float) -> None:
        self.recheck_at = time.monotonic() + seconds

    def take_due(self, now: float) -> bool:
        """Whether to rebuild in full now (a re-check due, or what waited on
        a busy rebuild); clears the re-check if so."""
        if self.due(now) or (self.pending and not self.busy):
            self.recheck_at = None
            return True
        return False

    def start_rebuild(self) -> None:
        """Mark a rebuild as running (what was pending, it reads in full)."""
        self.busy, self.pending = True, False

    def wait_for_rebuild(self) -> bool:
        """Changes came while busy: read again in full after. Return whether
        the rebuild ended meanwhile, so the caller must wake the settle thread.

        The rebuild's thread clears `busy`, then looks at `pending`; set just
        between the two, `pending` would wait for the next heartbeat.
        """
        self.pending = True
        return not self.busy

    def mark_slow(self) -> None:
        """The settle thread stopped waiting: shown as slow until it ends.

        A rebuild ending meanwhile clears `busy` before it reads `is_slow`,
        so either it sees the mark or this sees it done: never a stale mark.
        """
        self.is_slow = True
        if not self.busy:
            self.is_slow = False

    def end_rebuild(self, *, slow_seconds: float | None) -> bool:
        """Mark the rebuild done; return whether to wake the settle thread
        (changes waited, or the end of a slow one must be reported)."""
        if slow_seconds is not None:
            self.status = replace(self.status, slow_seconds=slow_seconds)
        self.busy = False
        woke = self.pending or self.is_slow
        self.is_slow = False
        return woke

    def forget_written(self) -> None:
        """Forget every snapshot written, so the next rebuild writes them all."""
        self.written.clear()

    def is_stale(
        self, store: SnapshotStore, modes: tuple[str, ...], extra: str | None
    ) -> bool:
        """Whether a stat sweep finds this directory out of date.

        A snapshot whose inputs no longer stat the same (a `touch`, an event
        the watcher missed), or that is gone (a wiped cache), or a directory
        that came back after being missing.
        """
        if self.status.is_missing:
            return os.path.isdir(self.path)
        return not all(
            store.is_fresh(self.path, mode, extra_guidelines=extra) for mode in modes
        )

    def forget_reads(self) -> None:
        """Drop what was read (the directory is gone); keep nothing stale."""
        self.parse_cache = ParseCache()
        self.lint_cache = None
        self.last_read = None

    def flush_failed(self, mode: str) -> None:
        """A published snapshot could not be made durable: write it again later."""
        self.written.pop(mode, None)
        self.recheck_in(REBUILD_RETRY_SECONDS)

    def failed(self, error: BaseException) -> None:
        """Record a rebuild that raised, and retry it on its own later."""
        self.status = replace(self.status, error=f"{type(error).__name__}: {error}")
        # A full disk frees up without touching the memory dir.
        self.recheck_in(REBUILD_RETRY_SECONDS)

    def rebuild(
        self,
        changed: frozenset[str] | None,
        shared: Rebuild,
        *,
        source: str,
        flush_later: Callable[[WatchedDir, str, Published], None] | None = None,
    ) -> None:
        """Re-read (only `changed` relpaths when known), re-render, publish if new.

        With `flush_later`, a new snapshot is made durable by that callback
        (the daemon's flusher thread) instead of here.
        """
        config = shared.config
        log = shared.log.bind(memory_dir=self.path)
        self.status = DirStatus(source=source)
        if not os.path.isdir(self.path):
            self.status = DirStatus(source=source, is_missing=True)
            self.forget_reads()
            return
        started_ns = time.time_ns()  # before reading: the racy-input rule needs it
        memdir = self._read(changed, config.max_topic_file_bytes)
        shared.on_read(memdir, changed)
        first: Snapshot | None = None
        built: dict[str, float] = {}
        for mode in config.modes:
            snapshot = build_snapshot(
                memdir,
                mode,
                extra_guidelines=shared.extra_guidelines,
                severities=config.lint_severities,
                started_ns=started_ns,
                lint_cache=self.lint_cache,
                why_labels=config.why_labels,
                how_labels=config.how_labels,
                profile=shared.profile,
            )
            first = first or snapshot
            self._publish(snapshot, shared, flush_later)
            log.debug("snapshot_written", mode=mode, sha256=snapshot.sha256)
            built[mode] = snapshot.built_ns / 1e9
        self._recheck_if_moved(memdir, changed, log)
        if first is None:  # no modes configured: lint only
            diagnostics = lint_memdir(
                memdir,
                severities=config.lint_severities,
                cache=self.lint_cache,
                why_labels=config.why_labels,
                how_labels=config.how_labels,
                profile=shared.profile,
            )
        else:
            diagnostics = first.diagnostics
        errors, warnings, _ = count_by_severity(diagnostics)
        self.status = DirStatus(
            source=source,
            lint_errors=errors,
            lint_warnings=warnings,
            snapshots=tuple(built.items()),
            modes=tuple(config.modes),
            files=len(memdir.files),
        )
        self._log_transitions(memdir, diagnostics, log)

    def _recheck_if_moved(
        self, memdir: MemDir, changed: frozenset[str] | None, log: FilteringBoundLogger
    ) -> None:
        """Rebuild at once when what was just read no longer stats as recorded.

        A change while the build ran (a `touch` between the read and the
        publish, an event taken into the batch being built) must not leave
        the snapshot with a stat that is not the file's: readers would render
        cold until the next sweep. Only what this build read is checked.
        """
        moved = changed_input(_inputs_read(memdir, changed))
        if moved is not None and moved != self.moved_while_built:
            log.debug("memory_dir_changed_while_built", path=moved[0])
            self.recheck_in(0.0)
        self.moved_while_built = moved

    def _read(self, changed: frozenset[str] | None, max_file_bytes: int) -> MemDir:
        """Read the directory: incrementally when the last read and changes allow."""
        previous = self.last_read
        reloads = self.reloads + 1
        if previous is None or changed is None or reloads >= FULL_READ_EVERY:
            previous, changed, reloads = None, None, 0
        memdir = load_memdir(
            self.path,
            cache=self.parse_cache,
            max_file_bytes=max_file_bytes,
            previous=previous,
            changed=changed,
        )
        if previous is None:  # forget files gone since
            self.parse_cache.prune(
                os.path.join(memdir.path, f.relpath) for f in memdir.files
            )
        if len(memdir.files) >= INCREMENTAL_FROM_FILES:
            # Only a big directory repays keeping its last read and findings.
            self.last_read, self.reloads = memdir, reloads
            if self.lint_cache is None:
                self.lint_cache = LintCache()
        else:
            self.last_read, self.lint_cache = None, None
        return memdir

    def _publish(
        self,
        snapshot: Snapshot,
        shared: Rebuild,
        flush_later: Callable[[WatchedDir, str, Published], None] | None,
    ) -> None:
        """Publish `snapshot` unless the store already holds it, fresh and whole."""
        store, mode = shared.store, snapshot.mode
        fingerprint = (snapshot.sha256, snapshot.inputs)
        previous = self.written.get(mode)
        if previous is None:  # start-up: a warm cache may already hold it
            if store.matches(snapshot):
                self.written[mode] = fingerprint
                shared.emit_loaded(snapshot)
                return
        elif previous == fingerprint and store.is_fresh(
            self.path, mode, extra_guidelines=shared.extra_guidelines
        ):
            return  # a racy re-stamp of what is there (else the cache was wiped)
        published = store.publish(snapshot)
        if flush_later is None:
            store.flush(published)
        else:
            flush_later(self, mode, published)
        self.written[mode] = fingerprint
        if previous is None or previous[0] != snapshot.sha256:
            shared.emit_loaded(snapshot)  # a re-stamp is not a new prompt
        if _is_racy(snapshot):
            self.recheck_in(RACY_WINDOW_NS / 1e9 + 0.05)

    def _log_transitions(
        self,
        memdir: MemDir,
        diagnostics: tuple[Diagnostic, ...],
        log: FilteringBoundLogger,
    ) -> None:
        """Log a file turning invalid once, and again only when it is fixed."""
        by_file: dict[str, list[Diagnostic]] = {}
        for diagnostic in diagnostics:
            if diagnostic.severity == Severity.ERROR:
                path = _relpath(self.path, diagnostic.path or "")
                by_file.setdefault(path, []).append(diagnostic)
        before = self.broken
        for path in sorted(set(by_file) - set(before)):
            log.warning(
                "memory_file_broken",
                file=path,
                diagnostics=[d.to_dict() for d in by_file[path]],
            )
        present = {f.relpath for f in memdir.files}
        for path in sorted(set(before) - set(by_file)):
            if path in present or os.path.lexists(os.path.join(self.path, path)):
                log.info("memory_file_fixed", file=path)
        self.broken = {
            path: tuple(sorted(d.code for d in found))
            for path, found in by_file.items()
        }


def _inputs_read(memdir: MemDir, changed: frozenset[str] | None) -> list[InputStat]:
    """The inputs a build read: all of them, or a re-read's files and their dirs."""
    if changed is None:
        return list(memdir.inputs)
    paths = {os.path.join(memdir.path, rel) for rel in changed}
    paths |= {os.path.dirname(path) for path in paths}
    return [item for item in memdir.inputs if item.path.rstrip(os.sep) in paths]


def _is_racy(snapshot: Snapshot) -> bool:
    return any(is_racy(item.mtime_ns, snapshot.built_ns) for item in snapshot.inputs)


def _relpath(memory_dir: str, path: str) -> str:
    if os.path.isabs(path):
        return os.path.relpath(path, memory_dir).replace(os.sep, "/")
    return path
