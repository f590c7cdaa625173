"""What each MCP tool does, as plain functions of a `Project` and the tool's arguments.

The project is fixed when the server starts (its working directory resolved
as the agent resolves it, or `--project`); no argument ever names a path.
`memory_read` accepts a memory's `name`, or a relpath that must be one of the
topic files the directory reader found (it never follows a link out of the
memory directory) or `MEMORY.md`: `../`, absolute paths, and symlinks leading
outside are refused. `memory_write` writes only a file name it made itself
(`memd.mcp_server.writing`). Every failure is a `ToolFailedError` with a
sentence the model can act on.
"""

from __future__ import annotations

import contextlib
import errno
import os

from memd.claude_code.terms import INDEX_NAME, MEMORY_TYPES
from memd.errors import MemdError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from memd.claude_code.paths import MemoryLocation
    from memd.config import Config
    from memd.memory.memdir import MemDir

MAX_READ_BYTES = 256 * 1024
MAX_LOG_CHARS = 4000
# Each tool's text arguments, bounded before any work: a request's cost then
# stays within these however large the line the client sent.
MAX_ARGUMENT_CHARS = {
    "query": 1000,
    "name": 1000,
    "description": 1000,
    "type": 100,
    "name_or_relpath": 4096,
    "text": MAX_LOG_CHARS,
}
LOCK_WAIT_SECONDS = 5.0
MAX_LINK_HOPS = 8  # a topic file linked to another inside, as the reader allows


class ToolFailedError(MemdError):
    """A tool could not do what the model asked; the message says why."""


def check_arguments(**arguments: str | None) -> None:
    """Refuse a text argument over its bound (`MAX_ARGUMENT_CHARS`), by name."""
    for key, value in arguments.items():
        limit = MAX_ARGUMENT_CHARS[key]
        if value is not None and len(value) > limit:
            raise ToolFailedError(
                f"{key} is {len(value):,} characters; at most {limit:,} are accepted"
            )


class Project:
    """The one project a server serves: where its memory is, and memd's config."""

    __slots__ = ("config", "env", "location")

    def __init__(
        self, location: MemoryLocation, config: Config, env: Mapping[str, str]
    ) -> None:
        self.location = location
        self.config = config
        self.env = env

    @property
    def memory_dir(self) -> str:
        return self.location.memory_dir.rstrip(os.sep) or os.sep

    def require_enabled(self) -> None:
        if not self.location.enablement.enabled:
            raise ToolFailedError(
                f"auto memory is disabled for {self.location.project_root} "
                f"({self.location.enablement.reason})"
            )

    def load(self) -> MemDir:
        from memd.memory.reader import load_memdir

        return load_memdir(
            self.memory_dir, max_file_bytes=self.config.max_topic_file_bytes
        )


def project_start(project: str | None) -> str:
    """The directory the server serves: `project`, else the working directory.

    Checked before the handshake (a wrong `--project` is a usage error), and
    resolved only after it (`open_project`): the client waits on the handshake.
    """
    start = project if project is not None else os.getcwd()
    if not os.path.isdir(start):
        raise ToolFailedError(f"--project {start}: not a directory")
    return start


def open_project(project: str | None, env: Mapping[str, str]) -> Project:
    """Resolve the server's project: `project`, else the working directory."""
    from memd.claude_code.paths import project_root_of, resolve_memory_location
    from memd.config import load_config

    start = project_start(project)
    location = resolve_memory_location(project_root_of(start), env)
    return Project(location, load_config(env), env)


# -- memory_recall ---------------------------------------------------------------


def recall_memories(
    project: Project, query: str, limit: int = 5, memory_type: str | None = None
) -> list[dict[str, object]]:
    """The memories best matching `query`, as dicts, best first."""
    from memd.recall.index import open_index, recall

    check_arguments(query=query, type=memory_type)
    project.require_enabled()
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise ToolFailedError(
            f"type must be user, feedback, project or reference, not {memory_type!r}"
        )
    with open_index(project.config.cache_dir) as index:
        hits = recall(
            index,
            query,
            (project.memory_dir,),
            limit=max(1, min(limit, 50)),
            memory_type=memory_type,
            max_file_bytes=project.config.max_topic_file_bytes,
        )
    from memd.lint.secrets import mask_fields

    return [
        mask_fields(
            {k: v for k, v in hit.to_dict().items() if k != "memory_dir"},
            ("name", "description", "snippet"),
        )
        for hit in hits
    ]


# -- memory_read -----------------------------------------------------------------


def read_memory(project: Project, name_or_relpath: str) -> str:
    """The whole text of one memory (or of MEMORY.md), found by name or relpath."""
    check_arguments(name_or_relpath=name_or_relpath)
    project.require_enabled()
    memdir = project.load()
    relpath = _resolve_relpath(memdir, name_or_relpath)
    from memd.lint.secrets import mask_secrets

    data = _read_inside(project.memory_dir, relpath)
    return mask_secrets(data.decode("utf-8", errors="replace"))


def _resolve_relpath(memdir: MemDir, wanted: str) -> str:
    """Return the relpath a name or relpath means; refuse any other path.

    A relpath must pass `memd.relpath.relpath_refusal`, the one rule team
    sync applies to a remote's tree too, and name a file the reader found.
    """
    from memd.relpath import relpath_refusal

    key = " ".join(wanted.split()).casefold()
    for f in memdir.files:
        if f.name is not None and " ".join(f.name.split()).casefold() == key:
            return f.relpath
    text = wanted.strip()
    if not text:
        raise ToolFailedError(
            "give a memory's name or its path in the memory directory"
        )
    why = relpath_refusal(text)
    if why is not None:
        raise ToolFailedError(
            f"{text!r} is refused ({why}); give a relpath inside the memory dir"
        )
    known = {f.relpath for f in memdir.files}
    if text == INDEX_NAME and memdir.index_text is not None:
        return text
    if text in known:
        return text
    outside = {d.path for d in memdir.diagnostics if d.code == "F004"}
    if text in outside:
        raise ToolFailedError(
            f"{text} is a symlink out of the memory directory; it is never read"
        )
    raise ToolFailedError(f"no memory named or at {text!r}")


def _read_inside(memory_dir: str, relpath: str) -> bytes:
    """Read at most MAX_READ_BYTES of a regular file below `memory_dir`.

    Opened relative to the memory dir's descriptor, component by component,
    with no symlink followed (`memd.fsread.open_beneath`): a directory swapped
    for a link between the reader's walk and this open fails, never leads out.
    A topic file that is itself a link to a file inside (which the reader
    reads) is read by its target's relpath, worked out from the link's text
    alone, and opened the same way.
    """
    from memd.fsread import UnsafeFileError, open_beneath, open_dir, read_fd

    try:
        root_fd = open_dir(memory_dir, follow=True)  # the dir itself may be a link
        try:
            wanted = relpath
            for _ in range(MAX_LINK_HOPS):
                try:
                    fd = open_beneath(root_fd, wanted)
                    break
                except UnsafeFileError as error:
                    if error.errno != errno.ELOOP:
                        raise
                    wanted = _link_target(memory_dir, root_fd, wanted, error)
            else:
                raise OSError(errno.ELOOP, "too many levels of symbolic links")
        finally:
            os.close(root_fd)
        try:
            return read_fd(fd, MAX_READ_BYTES, os.fstat(fd).st_size)
        finally:
            os.close(fd)
    except OSError as error:
        raise _refused(relpath, error) from None


def _link_target(memory_dir: str, root_fd: int, relpath: str, error: OSError) -> str:
    """Return the relpath the link at `relpath` names, if it stays inside; else raise.

    Only the last component may be the link (a linked folder on the way
    re-raises `error`); its text is resolved lexically against the memory
    dir, never by following it, and must pass the path rule.
    """
    import posixpath

    from memd.fsread import open_dir_beneath, split_beneath
    from memd.relpath import relpath_refusal

    parts = split_beneath(relpath)
    parent = open_dir_beneath(root_fd, parts[:-1])  # ELOOP here: a linked folder
    try:
        text = os.readlink(parts[-1], dir_fd=parent)
    except OSError:
        raise error from None
    finally:
        os.close(parent)
    if text.startswith("/"):
        root = os.path.realpath(memory_dir) + "/"
        target = text[len(root) :] if text.startswith(root) else ".."
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), text))
    if relpath_refusal(target) is not None:
        raise error
    return target


def _refused(relpath: str, error: OSError) -> ToolFailedError:
    """Word an I/O refusal for the model: a link, a cap, not a regular file, errno."""
    from memd.fsread import UnsafeFileError, refusal_reason

    if error.errno == errno.ELOOP:
        return ToolFailedError(
            f"{relpath}: a symlink is on the way; memd never reads or writes "
            "through one"
        )
    if isinstance(error, UnsafeFileError):  # a cap, a FIFO: each says which
        return ToolFailedError(f"{relpath}: {refusal_reason(error)}")
    return ToolFailedError(f"{relpath}: {error.strerror or error}")


# -- memory_write ----------------------------------------------------------------


def write_memory(
    project: Project, name: str, description: str, memory_type: str, body: str
) -> dict[str, object]:
    """Write one memory and its index line atomically; return what was written."""
    check_arguments(name=name, description=description, type=memory_type)
    limit = project.config.max_topic_file_bytes
    if len(body) > limit or len(body.encode("utf-8", "surrogatepass")) > limit:
        raise ToolFailedError(
            f"body is over {limit:,} bytes, the most a topic file holds "
            "(max_topic_file_bytes); not written: save a shorter memory"
        )
    project.require_enabled()
    root = project.memory_dir
    os.makedirs(root, exist_ok=True)
    from memd.history.record import recording

    with (
        _directory_lock(root) as root_fd,
        recording(
            project.config.state_dir, root, cause="mcp", config=project.config
        ) as recorder,
    ):
        result = _write_locked(project, root_fd, name, description, memory_type, body)
        recorder.wrote(str(result["relpath"]))
        recorder.wrote(INDEX_NAME)
        return result


@contextlib.contextmanager
def _directory_lock(root: str) -> Iterator[int]:
    """Hold the memory directory's flock, as a dream does, or refuse after a wait.

    Yields the directory's descriptor: every read and write of the tool is
    made relative to it. Two servers (or a server and a dream) must not both
    read MEMORY.md, add a line and write it back: the second would drop the
    first one's entry.
    """
    import fcntl
    import time

    from memd.fsread import open_dir

    fd = open_dir(root, follow=True)
    try:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ToolFailedError(
                        "the memory directory is busy (a dream or another write); "
                        "try again in a moment"
                    ) from None
                time.sleep(0.05)
        yield fd
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _write_locked(
    project: Project,
    root_fd: int,
    name: str,
    description: str,
    memory_type: str,
    body: str,
) -> dict[str, object]:
    from memd.atomic import write_atomic_beneath
    from memd.mcp_server.writing import WriteRefusedError, plan_write
    from memd.relpath import relpath_refusal

    index_bytes = _read_optional(root_fd, INDEX_NAME)
    try:
        plan = plan_write(
            project.load(),
            name=name,
            description=description,
            memory_type=memory_type,
            body=body,
            index_bytes=index_bytes,
            severities=project.config.lint_severities,
        )
    except WriteRefusedError as error:
        raise ToolFailedError(str(error)) from None
    why = relpath_refusal(plan.relpath)
    if why is not None:  # the planner makes its names; a found file could differ
        raise ToolFailedError(f"{plan.relpath!r} is refused ({why}); not written")
    old = _read_optional(root_fd, plan.relpath)
    try:
        write_atomic_beneath(root_fd, plan.relpath, plan.data)
    except OSError as error:
        raise _refused(plan.relpath, error) from None
    if plan.index is not None:
        try:
            write_atomic_beneath(root_fd, INDEX_NAME, plan.index)
        except OSError as error:
            _roll_back(root_fd, plan.relpath, old)
            raise _refused(INDEX_NAME, error) from None
    return {
        "relpath": plan.relpath,
        "replaced": plan.old_data_exists,
        "index_entry": plan.entry,
    }


def _read_optional(root_fd: int, relpath: str) -> bytes | None:
    """A regular file's bytes below `root_fd`, None if missing; a link is refused."""
    from memd.fsread import read_beneath

    try:
        return read_beneath(root_fd, relpath)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _refused(relpath, error) from None


def _roll_back(root_fd: int, relpath: str, old: bytes | None) -> None:
    """Put back what `relpath` held before this write (remove it if it was new)."""
    from memd.atomic import remove_beneath, write_atomic_beneath

    if old is None:
        remove_beneath(root_fd, relpath)
    else:
        write_atomic_beneath(root_fd, relpath, old)


# -- memory_log, memory_lint, the prompt ---------------------------------------


def log_memory(project: Project, text: str) -> str:
    """Append `text` to today's KAIROS log; return the log's relpath."""
    import datetime

    from memd.kairos.daily_log import append_entry

    check_arguments(text=text)
    project.require_enabled()
    if not text.strip():
        raise ToolFailedError("nothing to log: text is empty")
    os.makedirs(project.memory_dir, exist_ok=True)
    now = datetime.datetime.now().astimezone()
    try:
        path = append_entry(project.memory_dir, text, now=now)
    except (MemdError, OSError) as error:
        raise ToolFailedError(f"not logged: {error}") from None
    return os.path.relpath(path, project.memory_dir)


def lint_memories(project: Project) -> list[dict[str, object]]:
    """Every lint finding about the project's memory directory.

    With what memory names that the project no longer has, duplicates and a
    shared memory dir (memd.truth), as `memd lint` reports them.
    """
    from memd.claude_code.gitroot import find_git_root
    from memd.lint.engine import lint_memdir, sort_key
    from memd.lint.formats import masked_diagnostics
    from memd.projects.roots import roots_by_memory_dir
    from memd.truth.check import check_memory

    project.require_enabled()
    memdir = project.load()
    config = project.config
    found = lint_memdir(memdir, severities=config.lint_severities)
    root = project.location.project_root
    roots = roots_by_memory_dir(
        [project.memory_dir],
        env=project.env,
        state_dir=config.state_dir,
        extra_roots=(root, *config.watch_projects),
    ).get(project.memory_dir, ())
    truth = check_memory(
        project.memory_dir,
        find_git_root(root) or root,
        cache_dir=config.cache_dir,
        severities=config.lint_severities,
        memdir=memdir,
        roots=roots,
        env=project.env,
    )
    merged = sorted((*found, *truth.diagnostics), key=sort_key)
    return [d.to_dict() for d in masked_diagnostics(merged)]


def memory_prompt(project: Project) -> str:
    """The project's rendered memory prompt (fresh, from its snapshot when warm)."""
    from memd.snapshot.serve import serve

    served = serve(project.location.project_root, None, project.config, project.env)
    if not served.enabled:
        return ""
    return served.text
