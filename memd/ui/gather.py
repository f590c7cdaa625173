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
import sqlite3
from dataclasses import dataclass, field
from urllib.parse import urlencode

from memd.claude_code.profile import NEWEST, AgentProfile
from memd.claude_code.prompt import view_index
from memd.diagnostics import Diagnostic
from memd.errors import MemdError
from memd.fsread import FileTooLargeError, open_dir, read_beneath, refusal_reason
from memd.relpath import relpath_refusal
from memd.ui import views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.history.store import Change, History
    from memd.lint.fixes import FileEdit

MAX_SHOWN_FILE_BYTES = 1024 * 1024
HISTORY_SHOWN = 50  # changes in a file's timeline
RECALL_LIMIT = 20
LOSS_ALARM_SECONDS = 7 * 86400


class NotFoundError(MemdError):
    """The project or file a request names is not one the viewer shows."""


class TooLargeError(NotFoundError):
    """The file is there but over the viewer's cap: its message says so, exactly."""


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


def memory_dir_of(source: Source, project: str, *, stores: bool = False) -> str:
    """Return the memory dir whose id is `project`; NotFoundError otherwise.

    With `stores`, another agent's store (its directory) also answers: the
    file page, Restore and its Undo serve those from the history too.
    """
    found = projects(source).get(project)
    if found is not None:
        return found[0]
    store = store_dirs().get(project) if stores else None
    if store is None:
        raise NotFoundError("no such project")
    return store.directory


@dataclass(frozen=True, slots=True)
class StoreDir:
    """Another agent's store as the history records it: its directory, and for a
    single-file store (Gemini's GEMINI.md) the only names kept there."""

    directory: str
    label: str
    names: frozenset[str] | None  # None: every file below the directory

    def keeps(self, relpath: str) -> bool:
        return self.names is None or relpath in self.names


def store_dirs() -> dict[str, StoreDir]:
    """id -> each store of the other agents (memd.agents), as the daemon keeps it."""
    from memd.agents import all_agents

    found: dict[str, StoreDir] = {}
    for agent in all_agents():
        for store in agent.stores(os.environ):
            single = store.single_file
            directory = os.path.normpath(
                os.path.dirname(store.path) if single else store.path
            )
            ident = views.project_id(directory)
            known = found.get(ident)
            names = frozenset({os.path.basename(store.path)}) if single else None
            if known is not None and known.names is not None and names is not None:
                names |= known.names
            found[ident] = StoreDir(
                directory, known.label if known else store.label, names
            )
    return found


def _dir_for_file(source: Source, project: str, relpath: str) -> tuple[str, str]:
    """(directory, the store's label or "") serving `relpath` of `project`; a
    single-file store shows only its own file, never its neighbours."""
    found = projects(source).get(project)
    if found is not None:
        return found[0], ""
    store = store_dirs().get(project)
    if store is None or not store.keeps(relpath):
        raise NotFoundError("no such file")
    return store.directory, store.label


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
    except FileTooLargeError as error:  # a cap, never "no such file"
        raise TooLargeError(f"{relpath}: {refusal_reason(error)}") from None
    except OSError:
        raise NotFoundError("no such file") from None
    finally:
        os.close(root)


# -- the overview ------------------------------------------------------------


def overview(source: Source, name_filter: str = "") -> list[views.ProjectRow]:
    """Every watched directory, what needs attention first (views.by_attention)."""
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
    names = project_names(source)
    rows = []
    for path, reason in sorted(source.memory_dirs().items()):
        team_dir = os.path.join(path, "team")
        loss = alarms.get(path, LossLine())
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
                alarm=loss.alarm,
                loss_rev=loss.rev,
                settled=loss.settled,
                name=names.get(path, ""),
                needs_review=_gone_count(config.cache_dir, path),
                max_lines=profile.entrypoint_max_lines,
                max_units=profile.entrypoint_max_units,
            )
        )
    return views.by_attention(rows, name_filter)


def _gone_count(cache_dir: str, memory_dir: str) -> int:
    """How many memories name something the project no longer has, as the
    daemon's last truth check left it (read from its report, never git)."""
    from memd.truth.notice import read_report

    gone = (read_report(cache_dir, memory_dir) or {}).get("gone_files")
    return len({f for f in gone if isinstance(f, str)}) if isinstance(gone, list) else 0


def project_names(source: Source) -> dict[str, str]:
    """Memory dir -> the project's folder as a person names it (`~/code/webshop`),
    "" where no root is known (the page shows the memory dir): memd.projects."""
    from memd.projects.roots import load_project_names

    watched = source.memory_dirs()
    names = load_project_names(watched, config=source.config())
    return {path: names.label(path) if names.roots_of(path) else "" for path in watched}


@dataclass(frozen=True, slots=True)
class StoreRow:
    """Another agent's own memory store: named by agent and project (memd.agents)."""

    label: str
    path: str
    alarm: str  # its latest loss in the past week, or ""
    problems: tuple[str, ...]  # size, secrets, encoding, access (masked, no content)
    id: str = ""  # its directory's id: /file?id=...&file=... shows a file's history
    files: tuple[str, ...] = ()  # the relpaths its history holds, each a link


def agent_stores(source: Source) -> list[StoreRow]:
    """Codex's and Gemini's own stores, which the daemon keeps in history."""
    from memd.agents import all_agents
    from memd.agents.store_check import check_store

    state_dir = source.config().state_dir
    alarms = loss_alarms(state_dir)
    rows = []
    for agent in all_agents():
        for store in agent.stores(os.environ):
            directory = os.path.dirname(store.path) if store.single_file else store.path
            directory = os.path.normpath(directory)
            names = {os.path.basename(store.path)} if store.single_file else None
            rows.append(
                StoreRow(
                    id=views.project_id(directory),
                    files=_recorded_files(state_dir, directory, names),
                    label=store.label,
                    path=store.path,
                    alarm=alarms.get(directory, LossLine()).alarm,
                    problems=tuple(
                        f"{os.path.basename(f.path)}: {f.message}"
                        for f in check_store(store)
                    ),
                )
            )
    return rows


STORE_FILES_SHOWN = 50


def _recorded_files(
    state_dir: str, directory: str, names: set[str] | None
) -> tuple[str, ...]:
    """The files a store's history holds: its last recorded state and what its
    recent changes touched (a deleted file too, so Restore can bring it back)."""
    if not history_available():
        return ()
    from memd.history.store import History

    try:
        with History.open(state_dir) as history:
            found = set(history.recorded_tree(directory))
            for change in history.changes(directory, limit=HISTORY_SHOWN):
                found.update(f.relpath for f in change.files)
    except (OSError, ValueError, RuntimeError, MemdError, sqlite3.Error):
        return ()
    kept = sorted(
        rel
        for rel in found
        if (names is None or rel in names) and relpath_refusal(rel) is None
    )
    return tuple(kept[:STORE_FILES_SHOWN])


@dataclass(frozen=True, slots=True)
class LossLine:
    """A project's loss on the overview: an open one's alarm, or the last settled."""

    alarm: str = ""  # an open loss: what it took ("" none open)
    rev: int | None = None  # the open loss, for "Restore what was lost"
    settled: str = ""  # else the newest loss restored or dismissed, said so


def loss_alarms(state_dir: str) -> dict[str, LossLine]:
    """Memory dir -> its newest loss of the past week: open, or restored/dismissed
    (memd.history's loss report)."""
    if not history_available():
        return {}
    from memd.history.report import loss_report

    try:
        entries = loss_report(state_dir, days=LOSS_ALARM_SECONDS / 86400)
    except (OSError, ValueError, RuntimeError, MemdError, sqlite3.Error):
        return {}
    found: dict[str, LossLine] = {}
    for entry in entries:  # newest first; an open loss outranks a settled one
        path, line = str(entry["memory_dir"]), views.mask_secrets(str(entry["message"]))
        rev = entry.get("rev")
        if entry.get("state") == "open" and isinstance(rev, int):
            if not found.get(path, LossLine()).alarm:
                found[path] = LossLine(alarm=line, rev=rev)
        elif path not in found:
            found[path] = LossLine(settled=line)
    return found


# -- a project ---------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ProjectPage:
    id: str
    memory_dir: str
    index: views.IndexModel
    name: str = ""
    files: list[views.FileRow] = field(default_factory=list)
    other_findings: list[views.Finding] = field(default_factory=list)
    # what the last truth check found (memd.truth): gone names, duplicates, a shared dir
    needs_review: list[views.Finding] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0


def project_page(source: Source, project: str) -> ProjectPage:
    """Return the index as the agent loads it and each file with its findings."""
    from memd.claude_code.terms import INDEX_NAME
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
        name=project_names(source).get(memory_dir, ""),
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
    name: str = ""
    is_deleted: bool = False  # not on disk now; its history can bring it back
    is_store: bool = False  # another agent's store: its way back is the overview


def file_page(source: Source, project: str, relpath: str) -> FilePage:
    """Return a file's text (masked), its findings and its history timeline.

    A file that is gone but has a history is shown as deleted, with Restore.
    """
    memory_dir, store = _dir_for_file(source, project, relpath)
    try:
        data: bytes | None = read_memory_file(memory_dir, relpath)
    except NotFoundError:
        if os.path.lexists(os.path.join(memory_dir, relpath)):
            raise  # there, but a link or not a regular file: never shown
        data = None
    history = _timeline(source.config().state_dir, memory_dir, relpath)
    if data is None and not history:
        raise NotFoundError("no such file")
    findings: tuple[views.Finding, ...] = ()
    name = store
    if not store:  # another agent's store is not linted as Claude Code's memory
        page = project_page(source, project)
        name = page.name
        for row in page.files:
            if row.relpath == relpath:
                findings = tuple(row.findings)
    return FilePage(
        id=project,
        memory_dir=memory_dir,
        relpath=relpath,
        text=views.mask_secrets(views.text_of(data) or ""),
        size=len(data or b""),
        findings=findings,
        history=history,
        has_history=history_available(),
        name=name,
        is_deleted=data is None,
        is_store=bool(store),
    )


def _timeline(state_dir: str, memory_dir: str, relpath: str) -> tuple[Revision, ...]:
    """Return the file's recorded changes, newest first, each with its diff."""
    if not history_available():
        return ()
    from memd.history.store import History
    from memd.history.wording import cause_words

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
                    cause=cause_words(change.cause),
                    kind=kind,
                    diff=views.diff(before, after, name=relpath),
                    is_loss=change.is_loss,
                )
            )
    return tuple(found)


class ConflictError(MemdError):
    """An action that cannot go ahead as asked (a 409 page naming why)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RestorePreview:
    """What Restore would do to one file: shown before it is done."""

    id: str
    memory_dir: str
    name: str
    relpath: str
    rev: int
    at: float  # when that version was recorded
    diff: views.Diff  # the file now -> that version
    action: str  # "modify" | "create" | "" (already that version)
    is_store: bool = False  # another agent's store (memd.agents)


def restore_preview(
    source: Source, project: str, relpath: str, rev: int
) -> RestorePreview:
    """Check that `rev` holds a version of `relpath`; return the diff Restore makes.

    Raises NotFoundError (no such revision of this project: 404) or
    ConflictError (the file did not exist at that revision: 409).
    """
    memory_dir, store = _dir_for_file(source, project, relpath)
    target, at = _version_at(source, memory_dir, relpath, rev)
    now = _current_bytes(memory_dir, relpath)
    if now is None and os.path.lexists(os.path.join(memory_dir, relpath)):
        raise ConflictError(_NOT_REGULAR.format(relpath=relpath))
    action = "" if now == target else "create" if now is None else "modify"
    return RestorePreview(
        id=project,
        memory_dir=memory_dir,
        name=store or project_names(source).get(memory_dir, ""),
        relpath=relpath,
        rev=rev,
        is_store=bool(store),
        at=at,
        diff=views.diff(now, target, name=relpath),
        action=action,
    )


def _version_at(
    source: Source, memory_dir: str, relpath: str, rev: int
) -> tuple[bytes, float]:
    """`relpath`'s bytes as of `rev` and that change's time; the errors above."""
    if not history_available():
        raise NotFoundError("file history is not installed")
    from memd.history.store import History, normalize_dir

    if relpath_refusal(relpath) is not None:
        raise NotFoundError("refused path")
    with History.open(source.config().state_dir) as history:
        change = history.change(rev) if rev > 0 else None
        if change is None or change.memory_dir != normalize_dir(memory_dir):
            raise NotFoundError(f"this project has no revision {rev}")
        data = history.file_at(memory_dir, relpath, rev)
        if data is None:
            touched = {f.relpath: f.kind for f in change.files}
            why = (
                "was deleted in that change: restore a version before it"
                if touched.get(relpath) == "deleted"
                else "did not exist at that revision"
            )
            raise ConflictError(f"{relpath} {why}")
    return data, change.at


_NOT_REGULAR = (
    "{relpath} is not a regular file here (a link, or a folder): memd never "
    "writes through it; move it away first"
)


def _current_bytes(memory_dir: str, relpath: str) -> bytes | None:
    """The file's bytes now, None when it is not there (or cannot be read safely)."""
    try:
        return read_memory_file(memory_dir, relpath)
    except NotFoundError:
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What an action did, for its result page: one line, what changed, its undo."""

    ok: bool
    message: str
    # (relpath, what changed: "changed, +3 -1 lines")
    changed: tuple[tuple[str, str], ...] = ()
    undo: str = ""  # the form action that takes it back ("" none)
    undo_fields: tuple[tuple[str, str], ...] = ()
    back: str = "/"


def restore_file(source: Source, project: str, relpath: str, rev: int) -> Outcome:
    """Put `relpath` back as it was at `rev` (memd.history's restore)."""
    from memd.history.restore import restore_file as restore

    preview = restore_preview(source, project, relpath, rev)
    back = "/file?" + urlencode({"id": project, "file": relpath})
    when = views.clock(preview.at)
    if not preview.action:
        return Outcome(
            ok=True, message=f"{relpath} already holds its version of {when}", back=back
        )
    plan = restore(source.config().state_dir, preview.memory_dir, relpath, rev=rev)
    change = plan.change
    target, _ = _version_at(source, preview.memory_dir, relpath, rev)
    if _current_bytes(preview.memory_dir, relpath) != target:  # say what happened
        return Outcome(
            ok=False,
            message=f"{relpath} was not restored: it changed meanwhile or is not "
            "a regular file now; look at it and try again",
            back=back,
        )
    return Outcome(
        ok=True,
        message=f"restored {relpath} to its version of {when}",
        changed=tuple(
            (rel, f"{_done(action)}, {preview.diff.counts}")
            for rel, action in plan.steps
        ),
        undo="/restore/undo" if change is not None else "",
        undo_fields=(("id", project), ("rev", str(change.rev)))
        if change is not None
        else (),
        back=back,
    )


def _done(action: str) -> str:
    return {"create": "brought back", "modify": "changed", "delete": "removed"}.get(
        action, action
    )


def undo_restore(source: Source, project: str, rev: int) -> Outcome:
    """Take back the viewer's restore recorded as `rev`: each file it wrote gets
    its bytes from just before, unless someone changed it since (then nothing)."""
    if not history_available():
        raise NotFoundError("file history is not installed")
    from memd.history.store import History, normalize_dir

    memory_dir = memory_dir_of(source, project, stores=True)
    with History.open(source.config().state_dir) as history:
        change = history.change(rev)
        if (
            change is None
            or change.memory_dir != normalize_dir(memory_dir)
            or change.cause != "restore"
        ):
            raise NotFoundError(f"this project has no restore at revision {rev}")
        wanted = {
            f.relpath: (
                history.file_at(memory_dir, f.relpath, rev),
                history.file_at(memory_dir, f.relpath, rev - 1),
            )
            for f in change.files
            if relpath_refusal(f.relpath) is None
        }
    changed = write_versions(
        source, memory_dir, wanted, note=f"undo of the restore at revision {rev}"
    )
    return Outcome(
        ok=True,
        message=f"undid the restore: {len(changed)} file(s) as they were before it",
        changed=changed,
        back=f"/project?id={project}" if project in projects(source) else "/",
    )


def write_versions(
    source: Source,
    memory_dir: str,
    wanted: Mapping[str, tuple[bytes | None, bytes | None]],
    *,
    note: str,
) -> tuple[tuple[str, str], ...]:
    """Write each relpath's new bytes (None: remove it) while it holds the expected.

    relpath -> (bytes expected now, bytes wanted). Recorded as one "restore"
    change; every file is checked first under the history's write lock, so a
    file changed since means nothing is written (ConflictError). Below the
    memory dir's descriptor, no link followed (memd.atomic's beneath writers).
    """
    from memd.atomic import remove_beneath, write_atomic_beneath
    from memd.history.record import recording

    config = source.config()
    done: list[tuple[str, str]] = []
    with recording(
        config.state_dir, memory_dir, cause="restore", note=note, config=config
    ) as recorder:
        for relpath, (expected, _) in sorted(wanted.items()):
            if _current_bytes(memory_dir, relpath) != expected:
                raise ConflictError(f"{relpath} changed since; nothing was written")
        os.makedirs(memory_dir, mode=0o700, exist_ok=True)
        root = open_dir(memory_dir, follow=True)
        try:
            for relpath, (expected, new) in sorted(wanted.items()):
                if expected == new:
                    continue
                recorder.wrote(relpath)
                if new is None:
                    remove_beneath(root, relpath, prune_empty=True)
                    done.append((relpath, "removed"))
                else:
                    write_atomic_beneath(root, relpath, new, make_dirs=True)
                    counts = views.diff(expected, new, name=relpath).counts
                    verb = "brought back" if expected is None else "changed"
                    done.append((relpath, f"{verb}, {len(new):,} bytes, {counts}"))
        finally:
            os.close(root)
    return tuple(done)


# -- a loss: what it took, and bringing exactly that back ---------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LostFile:
    relpath: str
    size: int  # bytes it had before the loss
    data: bytes  # those bytes
    left: bytes | None  # what the loss left (None: deleted)
    now: bytes | None  # on disk now
    diff: views.Diff  # now -> before the loss

    @property
    def is_changed_since(self) -> bool:
        """Someone wrote it after the loss: it is left alone."""
        return self.now != self.left and self.now != self.data


@dataclass(frozen=True, slots=True, kw_only=True)
class LossPage:
    id: str
    memory_dir: str
    name: str
    rev: int
    at: float
    sentence: str
    files: tuple[LostFile, ...]

    @property
    def to_restore(self) -> tuple[LostFile, ...]:
        return tuple(
            f for f in self.files if not f.is_changed_since and f.now != f.data
        )


def loss_page(source: Source, project: str, rev: int) -> LossPage:
    """The loss recorded as `rev`: the files it took and their sizes before it.

    The boundary to memd.history's own "what this loss took" (issue 41,
    class 3): a file the loss (or its burst) deleted or cut is taken back to
    its bytes just before the burst began; nothing else.
    """
    if not history_available():
        raise NotFoundError("file history is not installed")
    from memd.history.store import History, normalize_dir

    memory_dir = memory_dir_of(source, project)
    with History.open(source.config().state_dir) as history:
        change = history.change(rev) if rev > 0 else None
        if (
            change is None
            or change.memory_dir != normalize_dir(memory_dir)
            or not change.is_loss
        ):
            raise NotFoundError(f"this project has no loss at revision {rev}")
        files = []
        for relpath, before in _taken(history, change).items():
            left = history.file_at(memory_dir, relpath, rev)
            now = _current_bytes(memory_dir, relpath)
            files.append(
                LostFile(
                    relpath=relpath,
                    size=len(before),
                    data=before,
                    left=left,
                    now=now,
                    diff=views.diff(now, before, name=relpath),
                )
            )
    return LossPage(
        id=project,
        memory_dir=memory_dir,
        name=project_names(source).get(memory_dir, ""),
        rev=rev,
        at=change.at,
        sentence=views.mask_secrets(change.loss or ""),
        files=tuple(files),
    )


# What a loss took is the history's loss ledger's (`History.loss`); the viewer
# only asks it. A loss recorded before the ledger existed has no record:
# nothing to bring back.


def _taken(history: History, change: Change) -> dict[str, bytes]:
    """relpath -> the bytes the loss `change` took, for each file it took."""
    record = history.loss(change.rev)
    taken: dict[str, bytes] = {}
    for relpath, at in record.taken if record is not None else ():
        data = history.file_at(change.memory_dir, relpath, at)
        if data is not None and relpath_refusal(relpath) is None:
            taken[relpath] = data
    return dict(sorted(taken.items()))


def _bring_back(source: Source, page: LossPage) -> tuple[tuple[str, str], ...]:
    """Write back exactly what the loss took; (relpath, what was done) per file."""
    from memd.history.restore import restore_loss

    plan = restore_loss(source.config().state_dir, page.rev)
    sizes = {f.relpath: f.size for f in page.files}
    return tuple(
        (rel, f"{_done(action)}, {sizes.get(rel, 0):,} bytes")
        for rel, action in plan.done
    )


def restore_loss(source: Source, project: str, rev: int) -> Outcome:
    """Bring back exactly what the loss `rev` took (the files `loss_page` lists)."""
    page = loss_page(source, project, rev)
    if not page.to_restore:
        raise ConflictError(
            "nothing to bring back: every file is back or changed since"
        )
    changed = _bring_back(source, page)
    undo, fields = _undo_of_last_restore(source, project, page.memory_dir)
    return Outcome(
        ok=True,
        message=f"brought back what was lost: {len(changed)} file(s); the loss is "
        "marked restored",
        changed=changed,
        undo=undo,
        undo_fields=fields,
        back="/",
    )


def _undo_of_last_restore(
    source: Source, project: str, memory_dir: str
) -> tuple[str, tuple[tuple[str, str], ...]]:
    from memd.history.store import History

    with History.open(source.config().state_dir) as history:
        last = history.changes(memory_dir, limit=1)
    if not last or last[0].cause != "restore":
        return "", ()
    return "/restore/undo", (("id", project), ("rev", str(last[0].rev)))


# -- Compact: `memd fix`'s plan, shown, then applied, with undo -------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedEdit:
    relpath: str
    reason: str
    what: str  # "created" | "changed" | "removed"
    diff: views.Diff


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactPage:
    id: str
    memory_dir: str
    name: str
    edits: tuple[PlannedEdit, ...]
    digest: str  # of the plan: what Apply applies is what was shown
    summary: str
    can_undo: bool  # a memd fix of this directory can be taken back
    notes: tuple[str, ...] = ()  # what fix leaves alone, and why (its warnings)


def compact_page(source: Source, project: str) -> CompactPage:
    """`memd fix`'s plan for a project, as `memd fix --dry-run` makes it."""
    from memd.lint.fix_files import undo_dir

    memory_dir = memory_dir_of(source, project)
    notes: list[str] = []
    edits = _fix_plan(source, memory_dir, notes.append)
    planned = tuple(
        PlannedEdit(
            relpath=edit.relpath,
            reason=views.mask_secrets(edit.reason),
            what=_what(edit),
            diff=views.diff(
                edit.old, None if edit.is_removal else edit.new, name=edit.relpath
            ),
        )
        for edit in edits
    )
    return CompactPage(
        id=project,
        memory_dir=memory_dir,
        name=project_names(source).get(memory_dir, ""),
        edits=planned,
        digest=_plan_digest(edits),
        summary=_plan_summary(edits),
        notes=tuple(views.mask_secrets(note) for note in notes),
        can_undo=os.path.isdir(undo_dir(source.config().state_dir, memory_dir)),
    )


def _what(edit: FileEdit) -> str:
    return (
        "removed" if edit.is_removal else "created" if edit.old is None else "changed"
    )


def _fix_plan(
    source: Source, memory_dir: str, warn: Callable[[str], None] | None = None
) -> tuple[FileEdit, ...]:
    from memd.lint.fix_files import plan_directory

    return plan_directory(
        memory_dir, max_file_bytes=source.config().max_topic_file_bytes, warn=warn
    )


def _plan_digest(edits: tuple[FileEdit, ...]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for edit in edits:
        for part in (
            edit.relpath.encode("utf-8", "surrogateescape"),
            b"-" if edit.old is None else hashlib.sha256(edit.old).digest(),
            b"x" if edit.is_removal else hashlib.sha256(edit.new).digest(),
        ):
            digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _plan_summary(edits: tuple[FileEdit, ...]) -> str:
    """One line: what the plan does to the index, and how many files it writes."""
    from memd.claude_code.terms import INDEX_NAME

    if not edits:
        return "nothing to fix"
    created = sum(e.old is None for e in edits)
    removed = sum(e.is_removal for e in edits)
    parts = [f"{len(edits)} file(s)"]
    for edit in edits:
        if edit.relpath == INDEX_NAME and edit.old is not None:
            parts.append(
                f"{INDEX_NAME} {_line_count(edit.old)} \u2192 "
                f"{_line_count(edit.new)} lines"
            )
    if created:
        parts.append(f"{created} new (hubs the index links)")
    if removed:
        parts.append(f"{removed} removed")
    return ", ".join(parts)


def _line_count(data: bytes) -> int:
    return data.count(b"\n") + (not data.endswith(b"\n") and bool(data))


def apply_compact(source: Source, project: str, digest: str) -> Outcome:
    """Apply the plan the page showed (same digest), as `memd fix` does: one change."""
    from memd.history.record import recording
    from memd.lint.fix_files import apply_edits, recover_fix

    memory_dir = memory_dir_of(source, project)
    config = source.config()
    recover_fix(memory_dir, config.state_dir)
    edits = _fix_plan(source, memory_dir)
    if not edits:
        raise ConflictError("nothing to fix any more")
    if _plan_digest(edits) != digest:
        raise ConflictError(
            "the memory changed since the plan was shown; nothing was written, "
            "look at the new plan"
        )
    with recording(config.state_dir, memory_dir, cause="fix", config=config) as rec:
        for edit in edits:
            rec.wrote(edit.relpath)
        wrote = apply_edits(memory_dir, edits, config.state_dir)
    if not wrote:
        raise ConflictError("a file changed while fixing; nothing was written")
    return Outcome(
        ok=True,
        message=f"applied memd fix: {_plan_summary(edits)}",
        changed=tuple(
            (edit.relpath, f"{_what(edit)}: {views.mask_secrets(edit.reason)}")
            for edit in edits
        ),
        undo="/compact/undo",
        undo_fields=(("id", project),),
        back=f"/project?id={project}",
    )


def undo_compact(source: Source, project: str) -> Outcome:
    """Take back the last `memd fix` of the project, as `memd fix --undo`."""
    from memd.history.record import recording
    from memd.lint.fix_files import FixUndoError, undo_fix

    memory_dir = memory_dir_of(source, project)
    config = source.config()
    try:
        with recording(
            config.state_dir,
            memory_dir,
            cause="fix",
            note="memd fix --undo",
            config=config,
        ):
            restored = undo_fix(memory_dir, config.state_dir)
    except FixUndoError as error:
        raise ConflictError(str(error)) from None
    return Outcome(
        ok=True,
        message=f"undid memd fix: {len(restored)} file(s) as they were before it",
        changed=tuple((rel, "as before the fix") for rel in restored),
        back=f"/project?id={project}",
    )


# -- dreams ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DreamFile:
    relpath: str
    diff: views.Diff
    facts: views.FactChanges | None = None  # None: not a file of facts (the index)


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
    name: str = ""


def dreams_page(source: Source) -> list[DreamProject]:
    """Return every project's kept dream generations, with their diffs."""
    from memd.errors import DreamError
    from memd.kairos.dream import describe_summary, dream_status
    from memd.kairos.generations import generations_root, list_generations

    config = source.config()
    status = dream_status(config.state_dir)
    names = project_names(source)
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
                    _dream_file(root, generation.number, rel)
                    for rel in (*generation.writes, *generation.deletes)
                    if relpath_refusal(rel) is None
                )
                entries.append(
                    DreamEntry(
                        number=generation.number,
                        kind=generation.kind,
                        created=views.local_time(generation.created),
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
                name=names.get(path, ""),
            )
        )
    return found


def _dream_file(root: int | None, number: int, relpath: str) -> DreamFile:
    """One file of a generation: its facts added, updated, archived, and its diff.

    From the generation's before/ and after/ copies, read below the
    generations folder's descriptor, no link followed, as
    memd.kairos.generations reads them.
    """
    if root is None:
        return DreamFile(relpath=relpath, diff=views.Diff(note="copy unreadable"))
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
            return DreamFile(relpath=relpath, diff=views.Diff(note="copy unreadable"))
    before, after = copies
    return DreamFile(
        relpath=relpath,
        diff=views.diff(before, after, name=relpath),
        facts=views.fact_changes(relpath, before, after),
    )


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
    project: str = ""  # the project's folder (memd.projects), else the dir's path


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
    from memd.projects.roots import load_project_names

    names = load_project_names({hit.memory_dir for hit in hits}, config=config)
    found = [
        RecallHit(
            id=ids.get(hit.memory_dir.rstrip(os.sep), ""),
            memory_dir=hit.memory_dir,
            project=names.label(hit.memory_dir),
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
    from memd.claude_code.paths import home_dir
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
