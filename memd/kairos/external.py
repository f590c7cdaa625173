"""The agent dream: an agent consolidates a staging copy; memd checks it, then applies.

`dream.agent` (e.g. `claude`) runs with the flags memd chooses
(`agent_argv`); `dream.command` runs any other CLI as configured. Either way:

1. **A copy.** The memory directory's regular files (not `logs/`, not the
   lock) are copied into `<scratch>/memory`, where `<scratch>` is a fresh
   folder in memd's state dir; the agent runs with that as its cwd, with
   `HOME`, `XDG_CONFIG_HOME`, `CLAUDE_CONFIG_DIR` and `TMPDIR` inside
   `<scratch>`, in its own process group (the whole group is killed at the
   timeout). The prompt, in memd's words, and the entries go on stdin (for
   `dream.command`, the entries as JSON lines; the prompt is in the file
   `MEMD_PROMPT_FILE`); `MEMD_MEMORY_DIR` names the copy.
2. **Checks** (`check_result`), each failing the dream with a one-line reason:
   it exited 0 within the timeout; the copy holds only regular files and
   folders (no symlink, FIFO, device); nothing changed in the live memory
   directory while it ran and nothing appeared in `<scratch>` outside the
   copy (a write through an absolute path or `../`); nothing under `logs/`;
   MEMORY.md still exists and fits its 200 lines and 25,000 units; lint finds
   no error the live directory does not already have; every deleted file's
   lines survive in the files left (the report names where they went).
3. **Apply** through `memd.kairos.generations`: atomic, undoable.

A live file the agent touched anyway (an absolute path to the real memory)
is put back byte for byte before the dream is failed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from dataclasses import dataclass, field

from memd.agent.terms import INDEX_NAME
from memd.errors import DreamError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.kairos.consolidate import LogEntry

_OUTPUT_TAIL = 4000  # characters of stdout/stderr kept in the log
_MAX_FILES = 10_000
_MAX_FILE = 64 * 1024 * 1024
_MAX_TOTAL = 256 * 1024 * 1024
_SKIP = frozenset({".consolidate-lock", "logs"})  # top level: the lock, memd's logs

# The tools the agent may use: read and edit files in its cwd, nothing else.
AGENT_TOOLS = "Read,Edit,Write,Glob,Grep"
AGENT_DENIED = "Bash,WebFetch,WebSearch,NotebookEdit,Task"

PROMPT = """\
You are consolidating a memory directory for memd, in your current working
directory. Only files in this directory may be read or changed; never use an
absolute path, `..`, or a symbolic link.

Do this:
1. Read MEMORY.md and the topic files (*.md) here.
2. File each new daily-log entry below into the topic file it belongs to
   (create one, with name/description/type frontmatter, if none fits).
3. Keep each fact once. When an entry gives a fact a new value, write the
   new value and keep the old one as "previously: <old>, until YYYY-MM-DD".
4. Turn relative dates ("today", "yesterday", "next week", a weekday) into
   absolute dates, using the date of the entry's log.
5. Keep every topic file under 4 KB, frontmatter included; move older
   material into another file and link it rather than losing it.
6. Keep MEMORY.md under 200 lines: one line per topic file,
   `- [Title](file.md) — one-line hook`.
7. Delete a file only when everything in it now lives in another file. To
   delete one, write it empty: memd removes the empty files after checking.

The new entries, one per line as `[YYYY-MM-DD HH:MM] text`:
"""


class DreamCommandFailed(DreamError):
    """The agent could not start, timed out, exited non-zero or failed a check."""


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """What a checked agent dream would change in the live directory."""

    writes: dict[str, tuple[bytes | None, bytes]]
    deletes: dict[str, bytes]
    moved_to: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        return {
            "changed": sorted(self.writes),
            "deleted_to": {rel: list(where) for rel, where in self.moved_to.items()},
        }


def agent_argv(agent: str) -> list[str]:
    """Return the command line memd runs `dream.agent` with (docs/dream.md)."""
    return [
        agent,
        "-p",
        "--output-format",
        "text",
        "--permission-mode",
        "acceptEdits",
        "--tools",
        AGENT_TOOLS,
        "--disallowedTools",
        AGENT_DENIED,
        "--strict-mcp-config",
        "--setting-sources",
        "project",
        "--no-session-persistence",
    ]


def snapshot_tree(root: str, *, strict: bool = True) -> dict[str, bytes]:
    """Return relpath -> bytes of every regular file under `root` (not `logs/`).

    `strict` (the agent's copy): raise `DreamCommandFailed` naming the first
    symlink, special file, hard link or oversized tree: the agent must leave
    only plain files and folders. Not strict (the live directory): links and
    special files are skipped, never followed (lint reports them).
    """
    from memd.fsread import list_dir, open_dir, read_bytes

    found: dict[str, bytes] = {}
    total = 0
    root_fd = open_dir(root, follow=True)
    pending: list[tuple[int, str]] = [(root_fd, "")]
    try:
        while pending:
            fd, prefix = pending.pop()
            try:
                for entry in sorted(list_dir(fd), key=lambda e: e.name):
                    rel = prefix + entry.name
                    if not prefix and entry.name in _SKIP:
                        continue
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        pending.append((open_dir(entry.name, dir_fd=fd), rel + "/"))
                        continue
                    kind = (
                        "a symlink"
                        if stat.S_ISLNK(st.st_mode)
                        else "a special file"
                        if not stat.S_ISREG(st.st_mode)
                        else "a hard link"
                        if st.st_nlink > 1
                        else None
                    )
                    if kind is not None and strict:
                        raise DreamCommandFailed(f"the result holds {kind}: {rel}")
                    if kind is not None and kind != "a hard link":
                        continue  # the live dir: never followed, lint reports it
                    found[rel] = read_bytes(entry.name, _MAX_FILE, dir_fd=fd)
                    total += len(found[rel])
                    if len(found) > _MAX_FILES or total > _MAX_TOTAL:
                        raise DreamCommandFailed(
                            f"more than {_MAX_FILES} files or {_MAX_TOTAL} bytes"
                        )
            finally:
                os.close(fd)
    finally:
        for fd, _ in pending:
            with contextlib.suppress(OSError):
                os.close(fd)
    return found


def _write_tree(root: str, files: dict[str, bytes]) -> None:
    from memd.atomic import write_atomic

    for rel, data in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, data, durable=False)  # memd's scratch: no fsync


def staging_root(state_dir: str, memory_dir: str) -> str:
    """Return the scratch folder of `memory_dir`'s agent dream (the lock: one at once).

    `<scratch>/memory` is the copy the agent works in, so its path is known
    before the dream runs.
    """
    from memd.kairos.generations import dir_key

    return os.path.join(state_dir, "dream-staging", dir_key(memory_dir))


def run_agent_dream(
    memory_dir: str,
    config: Config,
    entries: tuple[LogEntry, ...],
    log_files: tuple[str, ...],
    log: FilteringBoundLogger,
) -> AgentOutcome:
    """Run the agent on a staging copy, check what it left; raise on any failure."""
    import shutil

    live_before = snapshot_tree(memory_dir, strict=False)
    scratch = staging_root(config.state_dir, memory_dir)
    shutil.rmtree(scratch, ignore_errors=True)  # a killed dream's; the lock is ours
    os.makedirs(scratch, 0o700)
    try:
        staging = os.path.join(scratch, "memory")
        for name in ("memory", "home", "tmp"):
            os.mkdir(os.path.join(scratch, name), 0o700)
        _write_tree(staging, live_before)
        _run(scratch, memory_dir, config, entries, log_files, log)
        return check_result(memory_dir, scratch, live_before, config)
    finally:
        _restore_live(memory_dir, live_before, log)
        shutil.rmtree(scratch, ignore_errors=True)


def _restore_live(
    memory_dir: str, before: dict[str, bytes], log: FilteringBoundLogger
) -> None:
    """Put back any live file an agent wrote through an absolute path."""
    from memd.atomic import write_atomic

    try:
        now = snapshot_tree(memory_dir, strict=False)
    except (DreamCommandFailed, OSError) as error:
        log.warning("dream_live_check_failed", error=str(error))
        return
    for rel, data in before.items():
        if now.get(rel) != data:
            write_atomic(os.path.join(memory_dir, rel), data)
            log.warning("dream_live_file_restored", relpath=rel)
    for rel in now.keys() - before.keys():
        os.unlink(os.path.join(memory_dir, rel))
        log.warning("dream_live_file_removed", relpath=rel)


def _run(
    scratch: str,
    memory_dir: str,
    config: Config,
    entries: tuple[LogEntry, ...],
    log_files: tuple[str, ...],
    log: FilteringBoundLogger,
) -> None:
    import json
    import subprocess

    staging = os.path.join(scratch, "memory")
    home = os.path.join(scratch, "home")
    prompt = PROMPT + "".join(
        f"[{e.date}{' ' + e.time if e.time else ''}] {e.text}\n" for e in entries
    )
    prompt_file = os.path.join(scratch, "prompt.md")
    from memd.atomic import write_atomic

    write_atomic(prompt_file, prompt.encode("utf-8"), durable=False)
    if config.dream_agent:
        argv = agent_argv(config.dream_agent)
        stdin = prompt
    else:
        argv = list(config.dream_command)
        stdin = "".join(
            json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in entries
        )
    env = {
        **os.environ,
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "TMPDIR": os.path.join(scratch, "tmp"),
        "MEMD_MEMORY_DIR": staging,
        "MEMD_LIVE_MEMORY_DIR": memory_dir,
        "MEMD_PROMPT_FILE": prompt_file,
        "MEMD_LOG_FILES": os.pathsep.join(
            os.path.join(memory_dir, r) for r in log_files
        ),
        "MEMD_ENTRY_COUNT": str(len(entries)),
    }
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=staging,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        raise DreamCommandFailed(f"dream agent could not start: {error}") from None
    try:
        out, err = proc.communicate(
            stdin.encode("utf-8"), timeout=config.dream_timeout_seconds
        )
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()
        log.warning(
            "dream_command_timed_out", timeout_seconds=config.dream_timeout_seconds
        )
        raise DreamCommandFailed(
            f"dream agent timed out after {config.dream_timeout_seconds:g}s"
        ) from None
    finally:
        _kill_group(proc.pid)  # nothing it started outlives it
    log.info(
        "dream_command_finished",
        exit_status=proc.returncode,
        stdout=out.decode("utf-8", errors="replace")[-_OUTPUT_TAIL:],
        stderr=err.decode("utf-8", errors="replace")[-_OUTPUT_TAIL:],
    )
    if proc.returncode != 0:
        raise DreamCommandFailed(f"dream agent exited with status {proc.returncode}")


def check_result(
    memory_dir: str, scratch: str, before: dict[str, bytes], config: Config
) -> AgentOutcome:
    """Check the staging copy the agent left; return the changes to apply."""
    staging = os.path.join(scratch, "memory")
    from memd.fsread import list_names

    strays = sorted(set(list_names(scratch)) - {"memory", "home", "tmp", "prompt.md"})
    if strays:
        raise DreamCommandFailed(
            f"the agent wrote outside the staging copy: ../{strays[0]}"
        )
    live = snapshot_tree(memory_dir, strict=False)
    if live != before:
        changed = sorted(
            rel
            for rel in live.keys() | before.keys()
            if live.get(rel) != before.get(rel)
        )
        raise DreamCommandFailed(
            f"the agent wrote to the live memory directory: {changed[0]}"
        )
    if os.path.lexists(os.path.join(staging, "logs")):
        raise DreamCommandFailed("the agent wrote under logs/, which memd owns")
    after = snapshot_tree(staging)
    # An agent without a shell deletes a file by emptying it (the prompt says so).
    for rel in [r for r, data in after.items() if r in before and not data.strip()]:
        os.unlink(os.path.join(staging, rel))  # the copy is ours: lint sees it gone
        del after[rel]
    if INDEX_NAME in before and INDEX_NAME not in after:
        raise DreamCommandFailed("the agent deleted MEMORY.md")
    _check_index(after)
    _check_lint(memory_dir, staging, config)
    deleted = sorted(before.keys() - after.keys())
    moved_to = {rel: _where_it_went(before[rel], after) for rel in deleted}
    lost = [rel for rel, where in moved_to.items() if not where]
    if lost:
        raise DreamCommandFailed(
            f"the agent deleted {lost[0]} and its content is nowhere else"
        )
    writes = {
        rel: (before.get(rel), data)
        for rel, data in after.items()
        if before.get(rel) != data
    }
    return AgentOutcome(
        writes=writes, deletes={rel: before[rel] for rel in deleted}, moved_to=moved_to
    )


def _check_index(after: dict[str, bytes]) -> None:
    from memd.kairos.consolidate import fits_index

    index = after.get(INDEX_NAME)
    if index is None:
        return
    try:
        text = index.decode("utf-8")
    except UnicodeDecodeError:
        raise DreamCommandFailed("the agent left MEMORY.md not UTF-8") from None
    if not fits_index(text):
        raise DreamCommandFailed(
            "the agent left MEMORY.md past 200 lines or 25,000 units"
        )


def _check_lint(memory_dir: str, staging: str, config: Config) -> None:
    from memd.diagnostics import Severity
    from memd.lint.engine import lint_memdir
    from memd.memory.reader import load_memdir

    def errors(root: str) -> set[tuple[str, str, str]]:
        memdir = load_memdir(root, max_file_bytes=config.max_topic_file_bytes)
        return {
            (d.code, d.path, d.message)
            for d in lint_memdir(memdir, severities=config.lint_severities)
            if d.severity is Severity.ERROR
        }

    old = {
        (code, path, message.replace(memory_dir, staging))
        for code, path, message in errors(memory_dir)
    }
    new = sorted(errors(staging) - old)
    if new:
        code, path, message = new[0]
        raise DreamCommandFailed(
            f"the result would not lint ({len(new)} new error(s), first {code} "
            f"in {path}: {message})"
        )


def _where_it_went(data: bytes, after: dict[str, bytes]) -> tuple[str, ...]:
    """Return the files that hold every line of a deleted file's body, or ()."""
    from memd.kairos.facts import normalise
    from memd.memory.memfile import parse_memory_file

    body = parse_memory_file("x.md", data).body
    wanted = {normalise(line) for line in body.splitlines()} - {""}
    if not wanted:
        return ("(nothing: it was empty)",)
    holders: list[str] = []
    for rel, text in sorted(after.items()):
        norm = "\n".join(
            normalise(line) for line in text.decode("utf-8", "replace").splitlines()
        )
        hits = {w for w in wanted if w in norm}
        if hits:
            holders.append(rel)
            wanted -= hits
        if not wanted:
            return tuple(holders)
    return ()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
