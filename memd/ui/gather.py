"""What the viewer reads and does: memd's own modules on the daemon's directories.

Every page's data comes from here, built into memd.ui.views' models. A path
from a request never reaches the disk but through `read_memory_file`: the
project is looked up by its id among the directories the daemon watches, the
relpath must pass `memd.relpath.relpath_refusal`, and the file is opened
below the memory dir's descriptor with memd.fsread's beneath-opener (no
symlink on the way, a regular file, a size cap).

The actions (`undo_dream`, `restore_file`) are the CLI's own: the dream's
undo (memd.kairos.dream.undo_dream, under the dream lock) and the history's
restore (memd.history.restore.restore_file), when that package exists.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.util
import os
import time
from dataclasses import dataclass, field

from memd.agent.profile import NEWEST, AgentProfile
from memd.agent.prompt import view_index
from memd.diagnostics import Diagnostic
from memd.errors import MemdError
from memd.fsread import open_dir, read_beneath
from memd.relpath import relpath_refusal
from memd.ui import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.history.restore import RestorePlan

MAX_SHOWN_FILE_BYTES = 1024 * 1024
HISTORY_SHOWN = 50  # changes in a file's timeline
RECALL_LIMIT = 20
LOSS_ALARM_SECONDS = 7 * 86400


class NotFoundError(MemdError):
    """The project or file a request names is not one the viewer shows."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """What the viewer reads from the running daemon (called on each request)."""

    config: Callable[[], Config]
    memory_dirs: Callable[[], Mapping[str, str]]  # memory dir -> why it is watched
    log: FilteringBoundLogger
    profile: Callable[[], AgentProfile] = lambda: NEWEST
    # The telemetry page's events, kept while the sink's files stat the same.
    telemetry_cache: dict[str, object] = field(default_factory=dict)


def history_available() -> bool:
    """Whether memd.history (the file history, issue 33) is installed."""
    try:
        return importlib.util.find_spec("memd.history.restore") is not None
    except ModuleNotFoundError:
        return False


# -- lookups -----------------------------------------------------------------


def projects(source: Source) -> dict[str, tuple[str, str]]:
    """Return id -> (memory dir, why watched), for every watched directory."""
    return {
        views.project_id(path): (path, reason)
        for path, reason in sorted(source.memory_dirs().items())
    }


def memory_dir_of(source: Source, project: str) -> str:
    """Return the memory dir whose id is `project`; NotFoundError otherwise."""
    found = projects(source).get(project)
    if found is None:
        raise NotFoundError("no such project")
    return found[0]


def read_memory_file(memory_dir: str, relpath: str) -> bytes:
    """Read `relpath` below `memory_dir`: the one way a request's path is read.

    Raises NotFoundError for a refused relpath, a missing or non-regular
    file, a symlink on the way, or one past `MAX_SHOWN_FILE_BYTES`.
    """
    if relpath_refusal(relpath) is not None:
        raise NotFoundError("refused path")
    try:
        root = open_dir(memory_dir)
    except OSError:
        raise NotFoundError("memory dir unreadable") from None
    try:
        return read_beneath(root, relpath, MAX_SHOWN_FILE_BYTES)
    except OSError:
        raise NotFoundError("no such file") from None
    finally:
        os.close(root)


# -- the overview ------------------------------------------------------------


def overview(source: Source) -> list[views.ProjectRow]:
    """Return one row per watched directory, from snapshots and memd's states."""
    from memd.kairos.dream import dream_status
    from memd.snapshot.store import SnapshotReader
    from memd.state import read_state
    from memd.sync.engine import is_enabled
    from memd.sync.schedule import sync_record

    config = source.config()
    profile = source.profile()
    reader = SnapshotReader(config.cache_dir)
    mode = config.modes[0] if config.modes else "standard"
    dreams = dream_status(config.state_dir)
    teams = read_state(config.state_dir, "team")
    personal = views.sync_line(sync_record(config.state_dir)) or "enabled"
    if not is_enabled(config.state_dir):
        personal = ""
    alarms = loss_alarms(config.state_dir)
    rows = []
    for path, reason in sorted(source.memory_dirs().items()):
        team_dir = os.path.join(path, "team")
        rows.append(
            views.project_row(
                path,
                source=reason,
                meta=reader.read_meta(path, mode),
                last_dream=views.dream_line(
                    dreams.get(os.path.realpath(path)) or dreams.get(path)
                ),
                team=views.sync_line(teams.get(team_dir)),
                personal=personal,
                alarm=alarms.get(path, ""),
                max_lines=profile.entrypoint_max_lines,
                max_units=profile.entrypoint_max_units,
            )
        )
    return rows


def loss_alarms(state_dir: str) -> dict[str, str]:
    """Return memory dir -> a line about its latest loss in the past week (history)."""
    if not history_available():
        return {}
    from memd.history.store import History

    found: dict[str, str] = {}
    try:
        with History.open(state_dir) as history:
            since = time.time() - LOSS_ALARM_SECONDS
            for change in history.changes(since=since):
                if change.is_loss and change.memory_dir not in found:
                    found[change.memory_dir] = views.mask_secrets(
                        f"rev {change.rev}, {views.clock(change.at)}: "
                        f"{change.loss or f'{change.bytes_removed} bytes removed'}"
                    )
    except (OSError, ValueError, RuntimeError):
        return {}
    return found


# -- a project ---------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ProjectPage:
    id: str
    memory_dir: str
    index: views.IndexModel
    files: list[views.FileRow] = field(default_factory=list)
    other_findings: list[views.Finding] = field(default_factory=list)
    # what the last truth check found (memd.truth): gone names, duplicates, a shared dir
    needs_review: list[views.Finding] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0


def project_page(source: Source, project: str) -> ProjectPage:
    """Return the index as the agent loads it and each file with its findings."""
    from memd.agent.terms import INDEX_NAME
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    memory_dir = memory_dir_of(source, project)
    config = source.config()
    profile = source.profile()
    memdir = load_memdir(memory_dir, max_file_bytes=config.max_topic_file_bytes)
    view = view_index(memdir.index_text, profile=profile)
    diagnostics = lint_memdir(
        memdir,
        severities=config.lint_severities,
        index_view=view,
        why_labels=config.why_labels,
        how_labels=config.how_labels,
        profile=profile,
        secret_allow=config.sync_allow,
    )
    page = ProjectPage(
        id=project,
        memory_dir=memory_dir,
        index=views.index_model(
            memdir.index_text,
            view.shown,
            view.truncation,
            max_lines=profile.entrypoint_max_lines,
            max_units=profile.entrypoint_max_units,
        ),
    )
    root = memory_dir.rstrip(os.sep) + os.sep
    sizes = {
        i.path[len(root) :].replace(os.sep, "/"): i.size
        for i in memdir.inputs
        if i.path.startswith(root)
    }
    rows: dict[str, views.FileRow] = {}
    if memdir.index_text is not None:
        rows[INDEX_NAME] = views.FileRow(
            relpath=INDEX_NAME,
            type="index",
            description=None,
            size=sizes.get(INDEX_NAME),
        )
    for parsed in memdir.files:
        rows[parsed.relpath] = views.FileRow(
            relpath=parsed.relpath,
            type=parsed.type,
            description=views.mask_secrets(parsed.description or ""),
            size=sizes.get(parsed.relpath),
        )
    for diagnostic in diagnostics:
        finding = _finding(diagnostic)
        page.errors += finding.severity == "error"
        page.warnings += finding.severity == "warning"
        relpath = _relpath_in(memory_dir, diagnostic.path)
        row = rows.get(relpath) if relpath is not None else None
        if row is None:
            page.other_findings.append(finding)
        else:
            row.findings.append(finding)
    page.files = list(rows.values())
    page.needs_review = _needs_review(config.cache_dir, memory_dir)
    return page


def _needs_review(cache_dir: str, memory_dir: str) -> list[views.Finding]:
    """The last truth check's findings, as the daemon or `memd lint` left them."""
    from memd.truth.notice import read_report

    found = (read_report(cache_dir, memory_dir) or {}).get("findings")
    result = []
    for item in found if isinstance(found, list) else ():
        if isinstance(item, dict):
            try:
                diagnostic = Diagnostic.from_dict(item)
                where = f"{diagnostic.path}: {diagnostic.message}"
                result.append(_finding(dataclasses.replace(diagnostic, message=where)))
            except (KeyError, TypeError, ValueError):
                continue
    return result


def _finding(diagnostic: Diagnostic) -> views.Finding:
    return views.Finding(
        code=diagnostic.code,
        name=diagnostic.name,
        severity=str(diagnostic.severity),
        line=diagnostic.line,
        message=views.mask_secrets(diagnostic.message),
        hint=views.mask_secrets(diagnostic.hint),
    )


def _relpath_in(memory_dir: str, path: str) -> str | None:
    """A finding's file as a relpath (lint gives them relative to the memory dir)."""
    if not os.path.isabs(path):
        return path.replace(os.sep, "/")
    root = memory_dir.rstrip(os.sep) + os.sep
    if path.startswith(root):
        return path[len(root) :].replace(os.sep, "/")
    return None


# -- a file ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Revision:
    rev: int
    at: float
    cause: str
    kind: str
    diff: views.Diff
    is_loss: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class FilePage:
    id: str
    memory_dir: str
    relpath: str
    text: str  # masked; the template escapes it
    size: int
    findings: tuple[views.Finding, ...]
    history: tuple[Revision, ...]
    has_history: bool  # memd.history is installed


def file_page(source: Source, project: str, relpath: str) -> FilePage:
    """Return a file's text (masked), its findings and its history timeline."""
    memory_dir = memory_dir_of(source, project)
    data = read_memory_file(memory_dir, relpath)
    page = project_page(source, project)
    findings: tuple[views.Finding, ...] = ()
    for row in page.files:
        if row.relpath == relpath:
            findings = tuple(row.findings)
    return FilePage(
        id=project,
        memory_dir=memory_dir,
        relpath=relpath,
        text=views.mask_secrets(views.text_of(data) or ""),
        size=len(data),
        findings=findings,
        history=_timeline(source.config().state_dir, memory_dir, relpath),
        has_history=history_available(),
    )


def _timeline(state_dir: str, memory_dir: str, relpath: str) -> tuple[Revision, ...]:
    """Return the file's recorded changes, newest first, each with its diff."""
    if not history_available():
        return ()
    from memd.history.store import History

    found = []
    with History.open(state_dir) as history:
        changes = history.changes(memory_dir, relpath=relpath, limit=HISTORY_SHOWN)
        for change in changes:
            kind = next(
                (f.kind for f in change.files if f.relpath == relpath), "modified"
            )
            after = history.file_at(memory_dir, relpath, change.rev)
            before = (
                history.file_at(memory_dir, relpath, change.rev - 1)
                if change.rev > 1
                else None
            )
            found.append(
                Revision(
                    rev=change.rev,
                    at=change.at,
                    cause=change.cause,
                    kind=kind,
                    diff=views.diff(before, after, name=relpath),
                    is_loss=change.is_loss,
                )
            )
    return tuple(found)


def restore_file(source: Source, project: str, relpath: str, rev: int) -> str:
    """Put `relpath` back as it was at `rev` (memd.history); return one line."""
    if not history_available():
        raise NotFoundError("file history is not installed")
    from memd.history.restore import (
        restore_file as restore,
    )

    memory_dir = memory_dir_of(source, project)
    if relpath_refusal(relpath) is not None:
        raise NotFoundError("refused path")
    plan = restore(source.config().state_dir, memory_dir, relpath, rev=rev)
    actions = ", ".join(f"{rel}: {action}" for rel, action in _plan_items(plan))
    return f"restored {relpath} to rev {rev}" + (f" ({actions})" if actions else "")


def _plan_items(plan: RestorePlan) -> list[tuple[str, str]]:
    """The (relpath, action) steps of a memd.history RestorePlan."""
    return [(str(relpath), str(action)) for relpath, action in plan.steps]


# -- dreams ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamFile:
    relpath: str
    diff: views.Diff


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamEntry:
    number: int
    kind: str  # dream | undo
    created: str
    undoes: int | None
    files: tuple[DreamFile, ...]
    is_undone: bool
    is_undoable: bool  # the newest dream not yet undone: what Undo puts back


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamProject:
    id: str
    memory_dir: str
    last: str  # dreams.json's last result, one line
    summary: str
    generations: tuple[DreamEntry, ...]  # newest first
    problem: str = ""  # the kept generations could not be read


def dreams_page(source: Source) -> list[DreamProject]:
    """Return every project's kept dream generations, with their diffs."""
    from memd.errors import DreamError
    from memd.kairos.dream import describe_summary, dream_status
    from memd.kairos.generations import generations_root, list_generations

    config = source.config()
    status = dream_status(config.state_dir)
    found = []
    for project, (path, _) in projects(source).items():
        problem = ""
        try:
            kept = list_generations(config.state_dir, path)
        except (DreamError, OSError) as error:  # a corrupt or linked history
            kept, problem = (), views.mask_secrets(str(error))
        record = status.get(os.path.realpath(path)) or {}
        if not kept and not record and not problem:
            continue
        undone = {g.undoes for g in kept if g.kind == "undo"}
        targets = [g for g in kept if g.kind == "dream" and g.number not in undone]
        newest = targets[-1].number if targets else None
        entries = []
        try:
            root: int | None = open_dir(generations_root(config.state_dir, path))
        except OSError:
            root = None
        try:
            for generation in reversed(kept):
                files = tuple(
                    DreamFile(
                        relpath=rel, diff=_generation_diff(root, generation.number, rel)
                    )
                    for rel in (*generation.writes, *generation.deletes)
                    if relpath_refusal(rel) is None
                )
                entries.append(
                    DreamEntry(
                        number=generation.number,
                        kind=generation.kind,
                        created=generation.created,
                        undoes=generation.undoes,
                        files=files,
                        is_undone=generation.number in undone,
                        is_undoable=generation.number == newest,
                    )
                )
        finally:
            if root is not None:
                os.close(root)
        result = record.get("last_result")
        found.append(
            DreamProject(
                id=project,
                memory_dir=path,
                last=views.dream_line(record),
                summary=views.mask_secrets(
                    describe_summary(
                        result.get("summary") if isinstance(result, dict) else None
                    )
                ),
                generations=tuple(entries),
                problem=problem,
            )
        )
    return found


def _generation_diff(root: int | None, number: int, relpath: str) -> views.Diff:
    """The diff of one file of a generation, from its before/ and after/ copies.

    Read below the generations folder's descriptor, no link followed, as
    memd.kairos.generations reads them.
    """
    if root is None:
        return views.Diff(note="copy unreadable")
    copies: list[bytes | None] = []
    for side in ("before", "after"):
        try:
            copies.append(
                read_beneath(
                    root, f"{number:06}/{side}/{relpath}", MAX_SHOWN_FILE_BYTES
                )
            )
        except FileNotFoundError:
            copies.append(None)
        except OSError:
            return views.Diff(note="copy unreadable")
    return views.diff(copies[0], copies[1], name=relpath)


def undo_dream(source: Source, project: str) -> tuple[bool, str]:
    """Undo the project's newest dream, as `memd dream undo` does; (ok, one line)."""
    from memd.kairos.dream import undo_dream as undo

    memory_dir = memory_dir_of(source, project)
    now = datetime.datetime.now(datetime.UTC).astimezone()
    ok, message = undo(memory_dir, source.config(), now=now, log=source.log)
    return ok, views.mask_secrets(message)


# -- recall ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RecallHit:
    id: str
    memory_dir: str
    relpath: str
    name: str
    description: str
    snippet: str
    score: float


def recall_hits(source: Source, query: str) -> tuple[list[RecallHit], str]:
    """Search every watched directory as `memd recall --all` does; (hits, note)."""
    from memd.recall.index import open_index, recall

    config = source.config()
    ids = {path: project for project, (path, _) in projects(source).items()}
    if not query.strip() or not ids:
        return [], ""
    try:
        with open_index(config.cache_dir) as index:
            hits = recall(
                index,
                query,
                tuple(ids),
                limit=RECALL_LIMIT,
                max_file_bytes=config.max_topic_file_bytes,
            )
            note = index.unusable or ""
    except (MemdError, OSError) as error:
        return [], str(error)
    found = [
        RecallHit(
            id=ids.get(hit.memory_dir.rstrip(os.sep), ""),
            memory_dir=hit.memory_dir,
            relpath=hit.relpath,
            name=views.mask_secrets(hit.name or hit.relpath),
            description=views.mask_secrets(hit.description or ""),
            snippet=views.mask_secrets(hit.snippet),
            score=hit.score,
        )
        for hit in hits
    ]
    return found, note


# -- telemetry ---------------------------------------------------------------


def telemetry_events(source: Source) -> list[dict[str, object]]:
    """Return the memdir_loaded events of the telemetry sink, oldest first.

    Parsed again only when one of the sink's files changed (up to four files
    of 10 MiB: the page must not parse them on every visit).
    """
    from memd.snapshot.telemetry import LOADED
    from memd.snapshot.telemetry_sink import default_path, read_events, rotated_paths
    from memd.statkey import stat_key

    path = default_path(source.config().state_dir)
    key = (path, tuple(stat_key(one) for one in rotated_paths(path)))
    cached = source.telemetry_cache.get("events")
    if isinstance(cached, tuple) and cached[0] == key:
        events: list[dict[str, object]] = cached[1]
        return events
    events = [event for event in read_events(path) if event.get("event") == LOADED]
    source.telemetry_cache["events"] = (key, events)
    return events


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionsRow:
    """One project's line on the telemetry page: how often sessions loaded it."""

    name: str  # the project's folder (memd.projects), else the memory dir
    memory_dir: str
    count: int  # sessions in the agent's transcripts
    recent: int  # of them in the last 7 days
    last: float | None  # the newest session's last activity


def telemetry_names(
    source: Source,
) -> tuple[dict[str, str], tuple[SessionsRow, ...]]:
    """Each watched dir's name for the plots' legend, and its sessions' row.

    Names are memd.projects' (`~/code/webshop`), keyed by the memory dir
    without a trailing separator; sessions come from the agent's transcripts.
    """
    from memd.agent.paths import home_dir
    from memd.projects.naming import memory_dir_key, tilde
    from memd.projects.roots import load_project_names
    from memd.projects.sessions import sessions_by_memory_dir

    watched = [memory_dir_key(path) for path in source.memory_dirs()]
    names = load_project_names(watched, config=source.config())
    sessions = sessions_by_memory_dir(watched)
    home = home_dir(os.environ)
    rows = tuple(
        SessionsRow(
            name=names.label(path),
            memory_dir=tilde(path, home),
            count=sessions[path].count,
            recent=sessions[path].recent,
            last=sessions[path].last,
        )
        for path in sorted(watched, key=names.label)
    )
    return {path: names.label(path) for path in watched}, rows
