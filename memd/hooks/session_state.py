"""What the hooks remember per session: the memory directory's stat, what was said.

A tool call's effect on memory is found by comparing the memory directory's
stat now against the stat the hooks recorded for this session (at session
start and after each hook run), never by reading the tool's command line and
never against the daemon's snapshot, which may already have caught up with the
write. So a `Write`, an `Edit`, a `NotebookEdit`, a Bash heredoc, a PowerShell
`Set-Content` and any future tool are all seen the same way.

The record is a small text file, one per session, under
`$XDG_STATE_HOME/memd/hooks/` (or `$MEMD_STATE_DIR/hooks/`), located from the
environment alone, as `memd.snapshot.serve` locates its resolution records from
it: the no-memory PostToolUse path reads it before any config is parsed.
Lines are `key value`, split with `str` methods only::

    memd-hook-session 1
    recorded_ns 1764580000000000000
    memory_dir /home/u/.claude/projects/-home-u-p/memory/
    profile 2.1.332                      the agent release in force at session start
    index 230 9812                       line count, UTF-16 units of MEMORY.md
    error M008 feedback_x.md             an error present when recorded
    said I002 MEMORY.md 9812:1764…:42    a notice already given (code, path, stat)
    entry 9812 1764579990000000000 42 MEMORY.md

Like git's "racily clean" rule, an entry whose mtime falls within
`RACY_WINDOW_NS` of the recording may have been rewritten in the same
timestamp tick without a visible stat change, so it counts as "maybe changed".

`untouched` is PostToolUse's whole answer in the common case (the call touched
no memory), so it must cost about what starting Python costs: only `os` is
imported at the top; no config, argparse, logging or `dataclasses`.
"""

from __future__ import annotations

import os

from memd.claude_code.terms import INDEX_NAME
from memd.dirs import default_state_dir, expand_home
from memd.fsread import list_dir, read_bytes
from memd.racy import is_racy
from memd.statkey import key_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

MAGIC = "memd-hook-session 1"
MAX_ENTRIES = 10_000  # a bigger memory directory is compared by its first entries
MAX_DEPTH = 4  # listings: the dir, logs/, logs/YYYY/, logs/YYYY/MM/ (the deepest)
MAX_RECORD_BYTES = 4 * 1024 * 1024
_SAFE_ID = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")

# relpath -> (size, mtime_ns, inode); "" is the directory itself
Entries = dict[str, tuple[int, int, int]]


class SessionState:
    """One session's record. A plain slotted class: `dataclasses` is too slow here."""

    __slots__ = (
        "entries",
        "errors",
        "index",
        "memory_dir",
        "profile",
        "recorded_ns",
        "said",
    )

    def __init__(
        self,
        *,
        memory_dir: str | None,
        recorded_ns: int,
        entries: Entries,
        index: tuple[int, int] | None = None,
        errors: frozenset[tuple[str, str]] = frozenset(),
        said: frozenset[str] = frozenset(),
        profile: str | None = None,
    ) -> None:
        self.memory_dir = memory_dir  # None: this session has no memory directory
        self.profile = profile  # the agent release lint judges by; None: unknown
        self.recorded_ns = recorded_ns
        self.entries = entries
        self.index = index  # (line count, UTF-16 units) of MEMORY.md, None if absent
        self.errors = errors  # (code, relpath) of every error when recorded
        self.said = said  # notice keys already given in this session


def state_dir(env: Mapping[str, str]) -> str:
    """Return where session records live, from the environment alone."""
    explicit = expand_home(env.get("MEMD_STATE_DIR", ""), env)
    base = explicit if os.path.isabs(explicit) else default_state_dir(env)
    return os.path.join(base, "hooks")


def record_path(session_id: object, env: Mapping[str, str]) -> str | None:
    """Return the record file of `session_id`, or None for a missing or odd id."""
    if not isinstance(session_id, str) or not 0 < len(session_id) <= 128:
        return None
    if not set(session_id) <= _SAFE_ID:
        return None  # Claude Code's ids are UUIDs; anything else is not remembered
    return os.path.join(state_dir(env), session_id + ".txt")


def scan(memory_dir: str) -> Entries:
    """Return the lstat of the directory and everything in it, `MAX_DEPTH` deep.

    Links are recorded, never followed; a missing directory gives `{}`.
    """
    root = memory_dir.rstrip(os.sep) or os.sep
    entries: Entries = {}
    try:
        st = os.lstat(root)
    except OSError:
        return entries
    entries[""] = key_of(st)
    pending = [("", root, 1)]
    while pending and len(entries) < MAX_ENTRIES:
        prefix, directory, depth = pending.pop()
        try:
            listing = list_dir(directory)
        except OSError:
            continue
        for item in listing:
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            relpath = prefix + item.name
            entries[relpath] = key_of(st)
            if depth < MAX_DEPTH and item.is_dir(follow_symlinks=False):
                pending.append((relpath + "/", item.path, depth + 1))
            if len(entries) >= MAX_ENTRIES:
                break
    return entries


def changes(
    before: Entries, after: Entries, recorded_ns: int
) -> tuple[frozenset[str], frozenset[str]]:
    """Return (changed, maybe changed) relpaths between two scans.

    Changed: created, removed, or with a different size, mtime or inode.
    Maybe changed: the same stat, but racy (modified within the window of the
    recording), so a same-tick rewrite cannot be ruled out.
    """
    changed = set(before.keys() ^ after.keys())
    maybe = set()
    for path, now in after.items():
        old = before.get(path)
        if old is None:
            continue
        if old != now:
            changed.add(path)
        elif is_racy(now[1], recorded_ns):
            maybe.add(path)
    changed.discard("")
    maybe.discard("")
    return frozenset(changed), frozenset(maybe)


def entry_key(entries: Entries, relpath: str) -> str:
    """Return `size:mtime_ns:inode` of `relpath` in `entries` ("-" when absent)."""
    found = entries.get(relpath)
    return "-" if found is None else f"{found[0]}:{found[1]}:{found[2]}"


def notice_key(finding: Mapping[str, object], entries: Entries) -> str:
    """The key a said notice is remembered by: code, file and that file's stat."""
    path = str(finding.get("path"))
    return f"{finding.get('code')} {path} {entry_key(entries, path)}"


def read_state(path: str) -> SessionState | None:
    """Return the record at `path`, or None when it is missing or not a record."""
    data = _read_regular(path, MAX_RECORD_BYTES)
    return (
        None if data is None else parse_state(data.decode("utf-8", "surrogateescape"))
    )


def _read_regular(path: str, max_bytes: int) -> bytes | None:
    """Return a regular file's bytes (no link, no FIFO), None if absent or too big."""
    try:
        return read_bytes(path, max_bytes)
    except OSError:  # missing, a link, a FIFO, unreadable or too big
        return None


def parse_state(text: str) -> SessionState | None:
    """Parse a record's text; None when it is not one."""
    lines = text.split("\n")
    if lines[0] != MAGIC:
        return None
    memory_dir: str | None = None
    profile: str | None = None
    recorded_ns = 0
    index: tuple[int, int] | None = None
    entries: Entries = {}
    errors: set[tuple[str, str]] = set()
    said: set[str] = set()
    try:
        for line in lines[1:]:
            key, _, value = line.partition(" ")
            if key == "entry":
                size, mtime_ns, inode, relpath = value.split(" ", 3)
                entries[relpath] = (int(size), int(mtime_ns), int(inode))
            elif key == "error":
                code, _, relpath = value.partition(" ")
                errors.add((code, relpath))
            elif key == "said":
                said.add(value)
            elif key == "memory_dir":
                memory_dir = value if value != "-" else None
            elif key == "profile":
                profile = value or None
            elif key == "recorded_ns":
                recorded_ns = int(value)
            elif key == "index":
                lines_text, units_text = value.split(" ")
                index = (int(lines_text), int(units_text))
    except ValueError:
        return None
    return SessionState(
        memory_dir=memory_dir,
        recorded_ns=recorded_ns,
        entries=entries,
        index=index,
        errors=frozenset(errors),
        said=frozenset(said),
        profile=profile,
    )


def format_state(state: SessionState) -> str | None:
    """Return the record's text, or None when a path cannot be written on one line."""
    lines = [
        MAGIC,
        f"recorded_ns {state.recorded_ns}",
        f"memory_dir {state.memory_dir or '-'}",
    ]
    if state.profile is not None:
        lines.append(f"profile {state.profile}")
    if state.index is not None:
        lines.append(f"index {state.index[0]} {state.index[1]}")
    lines.extend(f"error {code} {path}" for code, path in sorted(state.errors))
    lines.extend(f"said {key}" for key in sorted(state.said))
    lines.extend(
        f"entry {size} {mtime_ns} {inode} {path}"
        for path, (size, mtime_ns, inode) in sorted(state.entries.items())
    )
    if any("\n" in line or "\r" in line for line in lines):
        return None
    return "\n".join(lines) + "\n"


def write_state(path: str, state: SessionState) -> None:
    """Replace the record atomically; skip one that cannot be written on its lines.

    Not fsynced: the record is memd's own note of what it saw, and losing it to
    a power cut costs one call the long way, while two fsyncs would cost more
    than the rest of the hook.
    """
    from memd.atomic import write_atomic

    text = format_state(state)
    if text is None:
        return
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    write_atomic(
        path, text.encode("utf-8", "surrogateescape"), mode=0o600, durable=False
    )


def named_paths(payload: Mapping[str, object]) -> tuple[str, ...]:
    """Return the absolute paths a tool's input names (`file_path`, `notebook_path`).

    Only a hint for memory directories other than the session's own: the
    session's directory is always compared by stat.
    """
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return ()
    cwd = payload.get("cwd")
    found = []
    for key in ("file_path", "notebook_path"):
        raw = tool_input.get(key)
        if not isinstance(raw, str) or not raw or "\0" in raw:
            continue
        if not os.path.isabs(raw):
            if not isinstance(cwd, str):
                continue
            raw = os.path.join(cwd, raw)
        found.append(os.path.normpath(raw))
    return tuple(found)


def within(path: str, directories: Iterable[str]) -> bool:
    """Whether `path` lies lexically inside one of `directories`."""
    return any(
        path.startswith(d if d.endswith(os.sep) else d + os.sep) for d in directories
    )


def read_index_text(memory_dir: str, max_bytes: int = 1024 * 1024) -> str | None:
    """Return MEMORY.md's text: a regular file, no link, at most `max_bytes`."""
    data = _read_regular(os.path.join(memory_dir, INDEX_NAME), max_bytes)
    return None if data is None else data.decode("utf-8", "replace")


def untouched(payload: Mapping[str, object], env: Mapping[str, str]) -> bool:
    """Whether this tool call provably changed nothing in the session's memory.

    False means "not proven": no record yet, a stat that moved, a racy entry,
    or a file named in what may be another memory directory.
    """
    record = record_path(payload.get("session_id"), env)
    if record is None:
        return False
    state = read_state(record)
    if state is None:
        return False
    session_dirs = (state.memory_dir,) if state.memory_dir else ()
    for path in named_paths(payload):
        if not within(path, session_dirs) and _may_be_memory(path):
            return False
    if state.memory_dir is None:
        return True
    changed, maybe = changes(state.entries, scan(state.memory_dir), state.recorded_ns)
    return not changed and not maybe


def _may_be_memory(path: str) -> bool:
    """Whether `path` may lie in a memory directory: an index beside it or above it."""
    parent = os.path.dirname(path)
    return os.path.basename(path) == INDEX_NAME or any(
        os.path.exists(os.path.join(d, INDEX_NAME))
        for d in (parent, os.path.dirname(parent))
    )
