"""One dream for one memory directory: lock, collect, consolidate, lint, render, record.

The lock is the reference's `<memory dir>/.consolidate-lock` (REFERENCE.md §6),
taken and given back through `memd.locks`: a failed dream winds its mtime back,
so a failure never counts as a consolidation.

Crash safety comes from the order of atomic writes: topic files (each entry
carries an idempotency marker), then MEMORY.md, then the watermark in
dreams.json. A kill between any two leaves every file whole, and the rerun
re-collects the entries past the old watermark, recognises the ones already
filed by their markers and finishes the rest.

The crash harness (tests/reliability/test_crash_points.py) kills a real
dream at every write point through `memd.atomic.crash_point`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from memd.atomic import write_atomic
from memd.claude_code.terms import INDEX_NAME
from memd.errors import DreamError, LockHeldError
from memd.fsread import read_bytes_or_none
from memd.history.record import recording
from memd.kairos.consolidate import (
    ARCHIVE_DIR,
    COMPACT_COMMAND,
    needs_repair,
    plan_consolidation,
    render_diff,
    routed_files,
)
from memd.kairos.daily_log import (
    DREAMS_STATE,
    apply_retention,
    collect_entries,
    memory_key,
    update_dream_record,
)
from memd.kairos.external import DreamCommandFailed, run_agent_dream
from memd.kairos.generations import GenerationError, apply_generation, recover
from memd.lint.fix_files import read_topics
from memd.locks import acquire_consolidate_lock, release_lock, roll_back_lock

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from collections.abc import Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.diagnostics import Diagnostic
    from memd.kairos.consolidate import ConsolidationPlan, LogEntry
    from memd.memory.memdir import MemDir


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamResult:
    """What one dream did; `status` is ok, nothing, dry-run, locked, failed or error.

    `error`: the planned result had lint errors, so nothing was written.
    """

    memory_dir: str
    status: str
    entries: int = 0
    already_filed: int = 0
    files_written: tuple[str, ...] = ()
    unindexed: tuple[str, ...] = ()
    lint_errors: int = 0
    lint_warnings: int = 0
    message: str = ""
    diff: str = ""
    duration_seconds: float = 0.0
    log_files: tuple[str, ...] = field(default=())
    # added / merged / superseded / archived (built-in), deleted, generation
    summary: Mapping[str, object] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Return True unless the dream failed or was blocked by another holder."""
        return self.status in ("ok", "nothing", "dry-run")

    def to_dict(self) -> dict[str, object]:
        """Return the JSON-ready record kept in dreams.json (no diff)."""
        return {
            "status": self.status,
            "entries": self.entries,
            "already_filed": self.already_filed,
            "files_written": list(self.files_written),
            "unindexed": list(self.unindexed),
            "lint_errors": self.lint_errors,
            "lint_warnings": self.lint_warnings,
            "message": self.message,
            "duration_seconds": round(self.duration_seconds, 3),
            "summary": dict(self.summary),
        }


class _DreamFailed(DreamError):
    """A dream step failed; the message is the one-line reason."""


class _Writer:
    """Counts the dream's writes (the lock counts as the first)."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, path: str, data: bytes) -> None:
        write_atomic(path, data)
        self.tick()

    def tick(self) -> None:
        self.count += 1


def plan_builtin(
    memory_dir: str, entries: tuple[LogEntry, ...], today: str | None = None
) -> ConsolidationPlan:
    """Read the files the entries route to, and their archive pages; plan the dream.

    A topic file filed by an older rule (memd.kairos.consolidate.needs_repair)
    is rebuilt: every entry of the logs still there is read again (`replay`).
    """
    existing = _top_level_names(memory_dir)
    repair = files_to_repair(memory_dir, existing)
    replay: tuple[LogEntry, ...] = ()
    if repair:
        every, _ = collect_entries(memory_dir, {})
        new = {(e.log, e.offset) for e in entries}
        replay = tuple(e for e in every if (e.log, e.offset) not in new)
    targets = sorted(routed_files(entries, existing, replay) | set(repair))
    files: dict[str, bytes | None] = {
        rel: read_bytes_or_none(os.path.join(memory_dir, rel)) for rel in targets
    }
    for rel in targets:
        for folder in (ARCHIVE_DIR, "archive"):
            for page in _archive_pages(memory_dir, folder, rel[:-3]):
                files[page] = read_bytes_or_none(os.path.join(memory_dir, page))
    index = read_bytes_or_none(os.path.join(memory_dir, INDEX_NAME))
    return plan_consolidation(
        entries,
        files,
        index,
        today=today,
        replay=replay,
        repair=repair,
        existing=existing,
        directory=read_topics(memory_dir),
    )


def files_to_repair(memory_dir: str, names: list[str] | None = None) -> list[str]:
    """Return the top-level topic files the dream filed by an older rule."""
    return [
        rel
        for rel in (_top_level_names(memory_dir) if names is None else names)
        if rel.endswith(".md")
        and rel != INDEX_NAME
        and needs_repair(_read_or_empty(os.path.join(memory_dir, rel)))
    ]


def _top_level_names(memory_dir: str) -> list[str]:
    """Return the regular files' names at the top of the memory dir, sorted."""
    from memd.fsread import list_dir

    try:
        entries = list_dir(memory_dir)
    except OSError:
        return []
    return sorted(e.name for e in entries if e.is_file(follow_symlinks=False))


def _read_or_empty(path: str) -> bytes:
    from memd.fsread import read_prefix

    try:
        return read_prefix(path, 1024 * 1024)
    except OSError:
        return b""


def _archive_pages(memory_dir: str, folder: str, topic: str) -> list[str]:
    """Return `<folder>/<topic>/*.md` relpaths, never through a symlinked folder."""
    from memd.fsread import list_dir, open_dir

    try:
        fd = open_dir(os.path.join(memory_dir, folder), follow=False)
    except OSError:
        return []
    try:
        try:
            topic_fd = open_dir(topic, dir_fd=fd)
        except OSError:
            return []
        try:
            return sorted(
                f"{folder}/{topic}/{entry.name}"
                for entry in list_dir(topic_fd)
                if entry.name.endswith(".md") and entry.is_file(follow_symlinks=False)
            )
        finally:
            os.close(topic_fd)
    finally:
        os.close(fd)


def planned_lint_errors(
    memory_dir: str, plan: ConsolidationPlan, config: Config
) -> tuple[Diagnostic, ...]:
    """Return the lint errors the plan would add to the files it writes.

    The directory is linted as it is and as it would be after the plan; an
    error already there (the user's own) never blocks a dream.
    """
    import dataclasses

    from memd.diagnostics import Severity
    from memd.lint.engine import lint_memdir
    from memd.memory.memfile import parse_memory_file
    from memd.memory.reader import load_memdir, too_large_diagnostic

    limit = config.max_topic_file_bytes
    before = load_memdir(memory_dir, max_file_bytes=limit)
    new = {edit.relpath: edit.new for edit in plan.edits}
    files = [f for f in before.files if f.relpath not in new]
    files += [
        parse_memory_file(rel, data[:limit], was_truncated=len(data) > limit)
        for rel, data in new.items()
        if rel != INDEX_NAME
    ]
    index = new.get(INDEX_NAME)
    after = dataclasses.replace(
        before,
        files=tuple(sorted(files, key=lambda f: f.relpath)),
        index_text=index.decode("utf-8", "replace") if index else before.index_text,
        diagnostics=(
            *(d for d in before.diagnostics if d.path not in new),
            *(
                too_large_diagnostic(rel, len(data), limit)
                for rel, data in new.items()
                if rel != INDEX_NAME and len(data) > limit
            ),
        ),
    )

    def errors(memdir: MemDir) -> list[Diagnostic]:
        found = lint_memdir(memdir, severities=config.lint_severities)
        return [d for d in found if d.severity is Severity.ERROR and d.path in new]

    old = {(d.code, d.path, d.message) for d in errors(before)}
    return tuple(d for d in errors(after) if (d.code, d.path, d.message) not in old)


def _lint_and_render(
    memory_dir: str, config: Config, log: FilteringBoundLogger
) -> tuple[int, int]:
    """Lint the directory and re-render its snapshots; return (errors, warnings).

    The memory files are already written: a failure here is logged and the
    dream still counts (the daemon re-renders on the next change anyway).
    """
    try:
        return _lint_and_render_unguarded(memory_dir, config, log)
    except Exception:
        log.exception("dream_refresh_failed", memory_dir=memory_dir)
        return 0, 0


def _lint_and_render_unguarded(
    memory_dir: str, config: Config, log: FilteringBoundLogger
) -> tuple[int, int]:
    from memd.diagnostics import count_by_severity
    from memd.errors import SnapshotError
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir
    from memd.snapshot.build import build_snapshot
    from memd.snapshot.publish import SnapshotStore

    memdir = load_memdir(memory_dir, max_file_bytes=config.max_topic_file_bytes)
    errors, warnings, _ = count_by_severity(
        lint_memdir(
            memdir,
            severities=config.lint_severities,
            why_labels=config.why_labels,
            how_labels=config.how_labels,
        )
    )
    store = SnapshotStore(config.cache_dir)
    for mode in config.modes:
        try:
            store.write(build_snapshot(memdir, mode, severities=config.lint_severities))
        except SnapshotError as error:  # the old snapshot stays; the dream still counts
            log.warning("snapshot_write_failed", mode=mode, error=str(error))
    return errors, warnings


def run_dream(
    memory_dir: str,
    config: Config,
    *,
    now: datetime.datetime,
    dry_run: bool = False,
    log: FilteringBoundLogger,
    telemetry: object | None = None,
) -> DreamResult:
    """Consolidate one memory directory's new log entries; a failure is a result.

    `telemetry` is a `memd.snapshot.telemetry_sink.TelemetrySink` (anything with
    `emit`).
    """
    started = time.monotonic()
    directory = memory_key(memory_dir)
    writer = _Writer()
    if dry_run:
        return _dry_run(directory, config, _watermark(config, directory), started)
    try:
        lock = acquire_consolidate_lock(directory, writer)
    except LockHeldError as error:
        log.info("dream_skipped_locked", memory_dir=directory, pid=error.pid)
        return DreamResult(memory_dir=directory, status="locked", message=str(error))
    except OSError as error:
        return _finish_failed(
            directory, config, now, started, f"lock: {error}", log, telemetry
        )
    entries: tuple[LogEntry, ...] = ()
    try:
        recover(config.state_dir, directory)  # a kill mid-apply: finish it first
        _catch_up_watermark(config, directory)
        # Read under the lock: a dream that just finished has moved it.
        entries, marks = collect_entries(directory, _watermark(config, directory))
        log_files = tuple(sorted({e.log for e in entries}))
        builtin = not (config.dream_command or config.dream_agent)
        if not entries and not (builtin and files_to_repair(directory)):
            roll_back_lock(lock)  # nothing consolidated: the last time stands
            result = DreamResult(
                memory_dir=directory,
                status="nothing",
                duration_seconds=time.monotonic() - started,
            )
            _record(config, directory, now, result, marks, writer)
            # A dream killed during retention left nothing new: finish its retention.
            _retain(directory, config, marks, now, log)
            return result
        written: tuple[str, ...] = ()
        already = 0
        unindexed: tuple[str, ...] = ()
        summary: dict[str, object] = {}
        if config.dream_command or config.dream_agent:
            outcome = run_agent_dream(directory, config, entries, log_files, log)
            writes, deletes = outcome.writes, outcome.deletes
            summary = outcome.summary()
            if outcome.kept_yours:  # what it filed there is not in: file it again
                marks = _int_marks(_watermark(config, directory))
        else:
            plan = plan_builtin(directory, entries, now.date().isoformat())
            for problem in plan.problems:
                log.warning(
                    "dream_input_problem", memory_dir=directory, problem=problem
                )
            introduced = planned_lint_errors(directory, plan, config)
            if introduced:
                roll_back_lock(lock)
                first = introduced[0]
                return _finish_failed(
                    directory,
                    config,
                    now,
                    started,
                    f"the result would not lint ({len(introduced)} error(s), first "
                    f"{first.code} in {first.path}: {first.message}); nothing written",
                    log,
                    telemetry,
                    len(entries),
                    status="error",
                )
            writes = {edit.relpath: (edit.old, edit.new) for edit in plan.edits}
            deletes = {
                rel: read_bytes_or_none(os.path.join(directory, rel)) or b""
                for rel in plan.deletes
            }
            already, unindexed = len(plan.already_filed), plan.unindexed
            summary = dict(plan.summary.to_dict())
            if plan.problems:
                summary["problems"] = list(plan.problems[:20])
        with recording(
            config.state_dir, directory, cause="dream", config=config
        ) as recorder:
            for relpath in (*writes, *deletes):
                recorder.wrote(relpath)
            generation = apply_generation(
                config.state_dir,
                directory,
                writes,
                deletes,
                created=now.isoformat(),
                watermark=_int_marks(_watermark(config, directory)),
                marks=marks,
            )
        if generation is not None:
            summary["generation"] = generation.number
        written = tuple(sorted(writes))
        summary["deleted"] = sorted(deletes)
    except (_DreamFailed, DreamCommandFailed, GenerationError, OSError) as error:
        roll_back_lock(lock)
        return _finish_failed(
            directory, config, now, started, str(error), log, telemetry, len(entries)
        )
    except BaseException:
        roll_back_lock(lock)
        raise
    errors, warnings = _lint_and_render(directory, config, log)
    message = (
        f"{len(unindexed)} file(s) left out of MEMORY.md: it is full; "
        f"`{COMPACT_COMMAND}` compacts it"
        if unindexed
        else ""
    )
    if unindexed:
        log.warning(
            "dream_index_full",
            memory_dir=directory,
            unindexed=list(unindexed),
            compact_with=COMPACT_COMMAND,
        )
    result = DreamResult(
        memory_dir=directory,
        status="ok",
        entries=len(entries),
        already_filed=already,
        files_written=written,
        unindexed=unindexed,
        lint_errors=errors,
        lint_warnings=warnings,
        message=message,
        duration_seconds=time.monotonic() - started,
        log_files=log_files,
        summary=summary,
    )
    try:
        _record(config, directory, now, result, marks, writer)
    finally:
        release_lock(lock, writer)
    _retain(directory, config, marks, now, log)
    log.info(
        "dream_completed", memory_dir=directory, entries=len(entries), files=written
    )
    _emit(telemetry, "dream_completed", now, result)
    return result


def _dry_run(
    directory: str, config: Config, marks_in: Mapping[str, object], started: float
) -> DreamResult:
    try:
        entries, _ = collect_entries(directory, marks_in)
        summary: dict[str, object] = {}
        if config.dream_command or config.dream_agent:
            diff = ""
            argv = config.dream_command or (config.dream_agent or "",)
            message = f"would run {' '.join(argv)} on {len(entries)} entries"
            plan = None
        else:
            plan = plan_builtin(directory, entries)
            diff, message = render_diff(plan), plan.summary.describe()
            if plan.problems:
                message += f"; {len(plan.problems)} problem(s): {plan.problems[0]}"
            summary = dict(plan.summary.to_dict())
    except (_DreamFailed, DreamCommandFailed, OSError) as error:
        return DreamResult(memory_dir=directory, status="failed", message=str(error))
    return DreamResult(
        memory_dir=directory,
        status="dry-run",
        entries=len(entries),
        files_written=tuple(e.relpath for e in plan.edits) if plan else (),
        unindexed=plan.unindexed if plan else (),
        message=message,
        diff=diff,
        duration_seconds=time.monotonic() - started,
        summary=summary,
    )


def _catch_up_watermark(config: Config, directory: str) -> None:
    """Record the watermark of a generation applied by a run killed before its record.

    dreams.json names the newest generation its watermark reflects; a newer
    one (its files already live) brings its own: a dream's marks after it,
    an undo's the marks from before the dream it undid.
    """
    from memd.kairos.generations import list_generations
    from memd.state import read_state

    kept = list_generations(config.state_dir, directory)
    if not kept:
        return
    newest = kept[-1]
    record = read_state(config.state_dir, DREAMS_STATE).get(directory)
    known = record.get("generation") if isinstance(record, dict) else None
    if isinstance(known, int) and known >= newest.number:
        return
    marks = newest.marks if newest.kind == "dream" else newest.watermark

    def update(record: dict[str, object]) -> None:
        record["generation"] = newest.number
        if marks is not None:
            record["watermark"] = marks

    update_dream_record(config.state_dir, directory, update)


def _int_marks(marks: Mapping[str, object]) -> dict[str, int]:
    return {k: v for k, v in marks.items() if isinstance(v, int)}


def undo_dream(
    memory_dir: str,
    config: Config,
    *,
    now: datetime.datetime,
    log: FilteringBoundLogger,
) -> tuple[bool, str]:
    """Restore the memory as it was before its newest kept dream; (ok, one line).

    Under the dream lock, as one generation (crash-safe like a dream). The
    watermark goes back too, so the next dream files those entries again.
    """
    from memd.kairos.generations import undo

    directory = memory_key(memory_dir)
    writer = _Writer()
    try:
        lock = acquire_consolidate_lock(directory, writer)
    except LockHeldError as error:
        return False, f"a dream is running ({error}); try again when it ends"
    try:
        recover(config.state_dir, directory)
        _catch_up_watermark(config, directory)
        with recording(config.state_dir, directory, cause="dream-undo", config=config):
            target, own = undo(config.state_dir, directory, created=now.isoformat())
    except (GenerationError, OSError) as error:
        roll_back_lock(lock)
        return False, str(error)
    except BaseException:
        roll_back_lock(lock)
        raise
    marks = target.watermark
    files = len(target.writes) + len(target.deletes)

    def rewind(record: dict[str, object]) -> None:
        # What the undone dream did, counted: its entries go back to the logs.
        entries = _entries_of(record, target.number)
        if entries is None:
            entries = _entries_between(directory, target.watermark, target.marks)
        record["last_result"] = {
            "status": "undone",
            **({"entries": entries} if entries is not None else {}),
            "files": files,
            "message": f"dream {target.number} of {_shown(target.created)} undone"
            + (
                f": its {entries} entr{'y' if entries == 1 else 'ies'} wait for the "
                "next dream"
                if entries
                else ""
            ),
            "undone_at": now.isoformat(),  # status shows this, not the dream's time
        }
        record["generation"] = own.number
        if marks is not None:
            record["watermark"] = marks

    update_dream_record(config.state_dir, directory, rewind)
    roll_back_lock(lock)
    _lint_and_render(directory, config, log)
    noun = "file" if files == 1 else "files"
    return (
        True,
        f"undid dream {target.number} of {_shown(target.created)} ({files} {noun})",
    )


def _shown(stamp: str) -> str:
    """A stored ISO time as a person reads it (`today 03:30:12`); memd.times."""
    import time

    from memd.times import clock, to_epoch

    epoch = to_epoch(stamp)
    return stamp if epoch is None else clock(epoch, now=time.time())


def _entries_between(
    directory: str, before: dict[str, int] | None, after: dict[str, int] | None
) -> int | None:
    """The log entries between two watermarks: what a dream filed (None: unknown)."""
    if before is None or after is None:
        return None
    try:
        entries, _ = collect_entries(directory, before)
    except OSError:
        return None
    return sum(entry.offset < after.get(entry.log, -1) for entry in entries)


def _entries_of(record: dict[str, object], generation: int) -> int | None:
    """The entries the dream that applied `generation` filed, from its record.

    None when the record is of another dream (the count is not known then).
    """
    result = record.get("last_result")
    if not isinstance(result, dict) or result.get("status") == "undone":
        return None
    summary = result.get("summary")
    applied = summary.get("generation") if isinstance(summary, dict) else None
    entries = result.get("entries")
    if applied == generation and isinstance(entries, int):
        return entries
    return None


def _watermark(config: Config, directory: str) -> dict[str, object]:
    from memd.state import read_state

    record = read_state(config.state_dir, DREAMS_STATE).get(directory)
    marks = record.get("watermark") if isinstance(record, dict) else None
    return marks if isinstance(marks, dict) else {}


def _record(
    config: Config,
    directory: str,
    now: datetime.datetime,
    result: DreamResult,
    marks: dict[str, int] | None,
    writer: _Writer | None,
) -> None:
    """Store the outcome; the watermark moves only when `marks` is given (success)."""

    def update(record: dict[str, object]) -> None:
        record["last_run"] = now.isoformat()
        record["last_result"] = result.to_dict()
        generation = result.summary.get("generation")
        if isinstance(generation, int):
            record["generation"] = generation
        if marks is not None:
            record["last_success"] = now.isoformat()
            record["watermark"] = marks
            closed = record.get("closed_logs")
            if isinstance(closed, list):
                record["closed_logs"] = [rel for rel in closed if rel in marks]

    update_dream_record(config.state_dir, directory, update)
    if writer is not None:
        writer.tick()


def _finish_failed(
    directory: str,
    config: Config,
    now: datetime.datetime,
    started: float,
    message: str,
    log: FilteringBoundLogger,
    telemetry: object | None,
    entries: int = 0,
    *,
    status: str = "failed",
) -> DreamResult:
    result = DreamResult(
        memory_dir=directory,
        status=status,
        entries=entries,
        message=message,
        duration_seconds=time.monotonic() - started,
    )
    try:
        _record(config, directory, now, result, None, None)
    except OSError as error:
        log.warning("dream_state_write_failed", error=str(error))
    log.warning("dream_failed", memory_dir=directory, reason=message)
    _emit(telemetry, "dream_failed", now, result)
    return result


def _retain(
    directory: str,
    config: Config,
    marks: dict[str, int],
    now: datetime.datetime,
    log: FilteringBoundLogger,
) -> None:
    if config.log_retention_days is None:
        return
    try:
        done = apply_retention(
            directory,
            marks,
            today=now.date(),
            days=config.log_retention_days,
            action=config.log_retention_action,
        )
    except OSError as error:
        log.warning("log_retention_failed", error=str(error))
        return
    for item in done:
        log.info(
            "log_retired", log=item.relpath, action=item.action, to=item.destination
        )


def _emit(
    telemetry: object | None, event: str, now: datetime.datetime, result: DreamResult
) -> None:
    emit = getattr(telemetry, "emit", None)
    if emit is None:
        return
    emit(
        {
            "event": event,
            "time": now.isoformat(),
            "memory_dir": result.memory_dir,
            **result.to_dict(),
        }
    )


def describe_summary(summary: object) -> str:
    """Return "2 added, 30 merged, 1 superseded, 0 archived" (or what is known)."""
    if not isinstance(summary, dict):
        return ""
    parts = [
        f"{summary[name]} {name}"
        for name in ("added", "merged", "superseded", "archived")
        if isinstance(summary.get(name), int)
    ]
    changed = summary.get("changed")
    if isinstance(changed, list):
        parts.append(f"{len(changed)} file{'' if len(changed) == 1 else 's'} changed")
    deleted_to = summary.get("deleted_to")
    if isinstance(deleted_to, dict):
        parts += [
            f"{rel} deleted, its content in {', '.join(map(str, where))}"
            for rel, where in deleted_to.items()
            if isinstance(where, list)
        ]
    kept = summary.get("kept_yours")
    if isinstance(kept, dict):
        parts += [
            f"{rel} changed by you during the dream: yours kept"
            + (f", the dream's version in {where}" if where else "")
            for rel, where in kept.items()
        ]
        parts.append("its entries wait for the next dream")
    if isinstance(summary.get("generation"), int):
        # the number `memd dream undo` says ("undid dream 1"), not memd's word
        parts.append(f"dream {summary['generation']}")
    return ", ".join(parts)


def dream_status(state_dir: str) -> dict[str, dict[str, object]]:
    """Return per memory dir: last_run, last_success, last_result, watermark."""
    from memd.state import read_state

    status: dict[str, dict[str, object]] = {}
    for key, record in read_state(state_dir, DREAMS_STATE).items():
        if not isinstance(record, dict):
            continue
        status[key] = {
            "last_run": record.get("last_run"),
            "last_success": record.get("last_success"),
            "last_result": record.get("last_result"),
            "watermark": record.get("watermark", {}),
        }
    return status
