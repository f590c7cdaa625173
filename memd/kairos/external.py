"""The agent dream: an agent consolidates a staging copy; memd checks it, then applies.

`dream.agent` (e.g. `claude`) runs with the flags memd chooses
(`agent_argv`); `dream.command` runs any other CLI as configured. Either way:

1. **A copy.** The memory directory's regular files (not `logs/`, not the
   lock) are copied into `<scratch>/memory`, where `<scratch>` is a fresh
   folder in memd's state dir; the agent runs with that as its cwd, with
   `HOME`, `XDG_CONFIG_HOME`, `CLAUDE_CONFIG_DIR` and `TMPDIR` inside
   `<scratch>`. The prompt, in memd's words, and the entries go on stdin (for
   `dream.command`, the entries as JSON lines; the prompt is in the file
   `MEMD_PROMPT_FILE`); `MEMD_MEMORY_DIR` names the copy.
2. **Confined** (`memd.kairos.confine`): with Landlock, no process of the
   agent can change anything outside `<scratch>`, so a change in the live
   directory during the run is the user's (or another tool's), never the
   agent's. The timeout bounds everything: stdio are files, not pipes, and at
   the deadline the agent, whatever it forked or detached, and anything else
   whose cwd or environment points into `<scratch>` is killed.
3. **Checks** (`check_result`), each failing the dream with a one-line reason:
   it exited 0 within the timeout; every byte of each log it was given is
   still there (the logs are append-only); the copy holds only regular files
   and folders (no symlink, FIFO, device); nothing appeared in `<scratch>`
   outside the copy; nothing under `logs/`; MEMORY.md still exists and, when
   the agent's version lands, fits its 200 lines and 25,000 units; lint finds
   no error the live directory does not already have; every deleted file's
   lines survive in the files left (the report names where they went).
4. **Re-based** (`rebase`), never forced: base = the copy taken at the start,
   theirs = the live directory now, ours = the agent's result. Only the
   agent's changes to files nobody else touched are applied; a file both
   changed keeps the live bytes, and the agent's version is kept in
   `<state>/dream-kept/<key>/` and named in the summary. The checks above
   run on the re-based result. Without Landlock memd cannot tell the user's
   writes from the agent's, so a live change fails the dream instead (nothing
   applied, nothing put back; the next dream tries again).
5. **Apply** through `memd.kairos.generations`: atomic, undoable, and each
   file is replaced only while it still holds the bytes the plan expects.

The user's files are never reverted or deleted.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
from dataclasses import dataclass, field, replace

from memd.claude_code.terms import INDEX_NAME
from memd.errors import DreamError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import IO

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config
    from memd.kairos.confine import Policy
    from memd.kairos.consolidate import LogEntry

_OUTPUT_TAIL = 4000  # characters of stdout/stderr kept in the log
_MAX_FILES = 10_000
_MAX_FILE = 64 * 1024 * 1024
_MAX_TOTAL = 256 * 1024 * 1024
_SKIP = frozenset({".consolidate-lock", "logs"})  # top level: the lock, memd's logs
_STOP_GRACE_SECONDS = 5.0  # for the supervisor to kill what the agent started
_REASON_CHARS = 200  # of the agent's last stderr line, in the failure's reason
_KEPT_FOLDERS = 5  # dreams whose versions of the user's files are kept
KEPT_DIR = "dream-kept"

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
    # Files the user changed during the dream that the agent changed too: the
    # user's bytes stay; the agent's version (b"": it deleted the file) ...
    kept_yours: dict[str, bytes] = field(default_factory=dict)
    kept_at: dict[str, str] = field(default_factory=dict)  # ... is kept here

    def summary(self) -> dict[str, object]:
        summary: dict[str, object] = {
            "changed": sorted(self.writes),
            "deleted_to": {rel: list(where) for rel, where in self.moved_to.items()},
        }
        if self.kept_yours:
            summary["kept_yours"] = {
                rel: self.kept_at.get(rel, "") for rel in sorted(self.kept_yours)
            }
        return summary


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
        "user",  # the scratch's empty ~/.claude: never the memory's .claude/
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


def kept_root(state_dir: str, memory_dir: str) -> str:
    """Return the folder keeping the dream's versions of files the user changed."""
    from memd.kairos.generations import dir_key

    return os.path.join(state_dir, KEPT_DIR, dir_key(memory_dir))


def is_confined(config: Config) -> bool:
    """Return whether the agent runs confined; raise when it must be and cannot.

    `dream.confine` (the default) asks for it; where the kernel cannot give
    it (`memd.kairos.confine.unsupported`) the agent dream is refused with
    that reason, never run unconfined behind the user's back: only
    `dream.confine = false` runs it unconfined.
    """
    from memd.kairos.confine import unsupported

    if not config.dream_confine:
        return False
    why = unsupported()
    if why:
        raise DreamCommandFailed(
            f"the dream agent cannot be confined: {why}; nothing ran "
            "(set [dream] confine = false to run it unconfined)"
        )
    return True


def run_agent_dream(
    memory_dir: str,
    config: Config,
    entries: tuple[LogEntry, ...],
    log_files: tuple[str, ...],
    log: FilteringBoundLogger,
) -> AgentOutcome:
    """Run the agent on a staging copy, check what it left; raise on any failure."""
    import shutil

    confined = is_confined(config)  # refused before anything is copied
    base = snapshot_tree(memory_dir, strict=False)
    logs = _read_logs(memory_dir, log_files)
    scratch = staging_root(config.state_dir, memory_dir)
    shutil.rmtree(scratch, ignore_errors=True)  # a killed dream's; the lock is ours
    os.makedirs(scratch, 0o700)
    try:
        staging = os.path.join(scratch, "memory")
        for name in ("memory", "home", "tmp"):
            os.mkdir(os.path.join(scratch, name), 0o700)
        _write_tree(staging, base)
        if not confined:
            log.warning(
                "dream_agent_unconfined",
                memory_dir=memory_dir,
                configured=config.dream_confine,
            )
        _run(scratch, memory_dir, config, entries, log_files, log, confined=confined)
        _check_logs(memory_dir, logs, config, confined=confined, log=log)
        outcome = check_result(memory_dir, scratch, base, config, confined=confined)
        return _keep_dreams_versions(outcome, config.state_dir, memory_dir, log)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _read_logs(memory_dir: str, log_files: tuple[str, ...]) -> dict[str, bytes]:
    from memd.fsread import open_dir, read_beneath

    root_fd = open_dir(memory_dir, follow=True)
    try:
        return {rel: read_beneath(root_fd, rel, _MAX_FILE) for rel in log_files}
    finally:
        os.close(root_fd)


def _check_logs(
    memory_dir: str,
    before: dict[str, bytes],
    config: Config,
    *,
    confined: bool,
    log: FilteringBoundLogger,
) -> None:
    """Fail the dream unless every byte of every log it was given is still there.

    The logs are append-only: a hook may append while the agent runs, nothing
    may rewrite them. Confined, the agent cannot have changed one, so a
    rewrite is someone else's and is left alone; unconfined, the old bytes are
    put back and what was there is kept beside the dream's other versions.
    """
    from memd.atomic import write_atomic_beneath
    from memd.fsread import open_dir, read_beneath

    root_fd = open_dir(memory_dir, follow=True)
    try:
        for rel, old in sorted(before.items()):
            try:
                now: bytes | None = read_beneath(root_fd, rel, _MAX_FILE)
            except FileNotFoundError:
                now = None
            if now is not None and now.startswith(old):
                continue
            if confined:
                raise DreamCommandFailed(
                    f"{rel} changed during the dream other than by an append; "
                    "nothing applied, the next dream reads it again"
                )
            kept = ""
            if now is not None:
                kept = _keep(config.state_dir, memory_dir, {rel: now})[rel]
            write_atomic_beneath(root_fd, rel, old, make_dirs=True)
            log.warning("dream_log_put_back", relpath=rel, kept=kept)
            where = f", what it held is kept in {kept}" if kept else ""
            raise DreamCommandFailed(
                f"the agent rewrote {rel} (the daily logs are append-only): "
                f"its bytes are put back{where}"
            )
    finally:
        os.close(root_fd)


def _keep_dreams_versions(
    outcome: AgentOutcome, state_dir: str, memory_dir: str, log: FilteringBoundLogger
) -> AgentOutcome:
    """Save the dream's version of each file the user changed meanwhile."""
    versions = {rel: data for rel, data in outcome.kept_yours.items() if data}
    where = _keep(state_dir, memory_dir, versions) if versions else {}
    for rel in outcome.kept_yours:
        log.info("dream_kept_your_version", relpath=rel, dreams=where.get(rel, ""))
    return replace(outcome, kept_at=where)


def _keep(state_dir: str, memory_dir: str, files: dict[str, bytes]) -> dict[str, str]:
    """Write `files` under a new folder of `kept_root`; return relpath -> path."""
    import shutil
    import time

    from memd.atomic import write_atomic_beneath
    from memd.fsread import list_names, open_dir, open_dir_beneath
    from memd.kairos.generations import dir_key

    root = kept_root(state_dir, memory_dir)
    stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns()}"
    os.makedirs(state_dir, exist_ok=True)
    state_fd = open_dir(state_dir, follow=True)  # memd's own: may be a link
    try:  # below it, no link is followed
        root_fd = open_dir_beneath(
            state_fd, [KEPT_DIR, dir_key(memory_dir)], make_missing=True
        )
    finally:
        os.close(state_fd)
    try:
        folder = open_dir_beneath(root_fd, [stamp], make_missing=True)
        try:
            for rel, data in files.items():
                write_atomic_beneath(folder, rel, data, make_dirs=True)
        finally:
            os.close(folder)
        for old in list_names(root_fd)[:-_KEPT_FOLDERS]:
            shutil.rmtree(old, dir_fd=root_fd, ignore_errors=True)
    finally:
        os.close(root_fd)
    return {rel: os.path.join(root, stamp, rel) for rel in files}


def _run(
    scratch: str,
    memory_dir: str,
    config: Config,
    entries: tuple[LogEntry, ...],
    log_files: tuple[str, ...],
    log: FilteringBoundLogger,
    *,
    confined: bool,
) -> None:
    """Run the agent under `memd.kairos.confine`; return once nothing of it runs.

    stdin, stdout and stderr are unnamed files in the scratch folder, never
    pipes: a detached child that keeps one open holds nothing memd waits on.
    At the deadline the supervisor is told to stop (it kills what the agent
    started), then the group is killed, then `sweep` kills anything left.
    """
    import json
    import subprocess
    import tempfile

    from memd.atomic import write_atomic
    from memd.kairos import confine

    staging = os.path.join(scratch, "memory")
    home = os.path.join(scratch, "home")
    prompt = PROMPT + "".join(
        f"[{e.date}{' ' + e.time if e.time else ''}] {e.text}\n" for e in entries
    )
    prompt_file = os.path.join(scratch, "prompt.md")
    write_atomic(prompt_file, prompt.encode("utf-8"), durable=False)
    if config.dream_agent:
        argv = agent_argv(config.dream_agent)
        stdin = prompt
    else:
        argv = list(config.dream_command)
        stdin = "".join(
            json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in entries
        )
    protected = protected_paths(config, memory_dir, os.environ)
    env = {
        **agent_environ(os.environ, protected),
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
        "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
        "TMPDIR": os.path.join(scratch, "tmp"),
        "PWD": staging,  # its cwd, not memd's
        "MEMD_MEMORY_DIR": staging,
        "MEMD_LIVE_MEMORY_DIR": memory_dir,
        "MEMD_PROMPT_FILE": prompt_file,
        "MEMD_LOG_FILES": os.pathsep.join(
            os.path.join(memory_dir, r) for r in log_files
        ),
        "MEMD_ENTRY_COUNT": str(len(entries)),
        confine.SCRATCH_ENV: scratch,
    }
    argv[0] = _executable(argv[0], staging, env.get("PATH", os.defpath))
    wrapper = [sys.executable, "-I", confine.__file__]
    if confined:
        rules = _policy(scratch, argv, env, protected, memory_dir, log_files, config)
        wrapper += ["--policy", json.dumps(rules)]
    wrapper += [scratch, "--", *argv]
    tmp = os.path.join(scratch, "tmp")
    with (
        tempfile.TemporaryFile(dir=tmp) as stdin_file,
        tempfile.TemporaryFile(dir=tmp) as out_file,
        tempfile.TemporaryFile(dir=tmp) as err_file,
    ):
        stdin_file.write(stdin.encode("utf-8"))
        stdin_file.seek(0)
        try:
            proc = subprocess.Popen(
                wrapper,
                stdin=stdin_file,
                stdout=out_file,
                stderr=err_file,
                cwd=staging,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            raise DreamCommandFailed(f"dream agent could not start: {error}") from None
        timed_out = False
        try:
            proc.wait(timeout=config.dream_timeout_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _stop(proc)
            left = confine.sweep(proc.pid, scratch)  # nothing it started outlives it
            if left:
                log.warning("dream_agent_leftovers_killed", processes=left)
        out, err = _tail(out_file), _tail(err_file)
    log.info(
        "dream_command_finished",
        exit_status=proc.returncode,
        timed_out=timed_out,
        confined=confined,
        stdout=out,
        stderr=err,
    )
    if timed_out:
        log.warning(
            "dream_command_timed_out", timeout_seconds=config.dream_timeout_seconds
        )
        raise DreamCommandFailed(
            f"dream agent timed out after {config.dream_timeout_seconds:g}s"
        )
    if proc.returncode != 0:
        last = next((line for line in reversed(err.splitlines()) if line.strip()), "")
        raise DreamCommandFailed(
            f"dream agent exited with status {proc.returncode}"
            + (f": {last.strip()[:_REASON_CHARS]}" if last else "")
        )


# Variables that name a way into another process (a bus, an agent, a display,
# systemd), or a directory of memd's process rather than the agent's.
_DROPPED_VARIABLES = frozenset(
    {
        "OLDPWD",
        "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "DISPLAY",
        "WAYLAND_DISPLAY",
        "TMUX",
        "STY",
        "NOTIFY_SOCKET",
        "LISTEN_FDS",
        "LISTEN_PID",
        "JOURNAL_STREAM",
        "MANAGERPID",
        "INVOCATION_ID",
    }
)
_PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")
_DEFAULT_MODEL_PORT = 443  # every hosted model API, and a proxy's default


def protected_paths(
    config: Config, memory_dir: str, env: Mapping[str, str]
) -> tuple[str, ...]:
    """Return what the agent must never read, change nor be told of.

    memd's state (the scratch aside), cache, config and runtime dirs (the
    viewer's `ui.json`, `hooks.sock`), the session's runtime dir (its bus,
    systemd), the live memory and every project's memory. The agent's own
    `~/.claude` is not readable either (nothing lets it), but an install kept
    there (`~/.claude/local`) may be.
    """
    from memd.claude_code.settings import claude_config_home
    from memd.dirs import (
        config_path,
        default_cache_dir,
        default_state_dir,
        runtime_dir,
    )

    paths = [
        config.state_dir,
        config.cache_dir,
        default_state_dir(env),
        default_cache_dir(env),
        os.path.dirname(config_path(env)),
        runtime_dir(env, state_dir=config.state_dir),
        memory_dir,
        os.path.join(claude_config_home(env), "projects"),
    ]
    session_runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(session_runtime):
        paths.append(session_runtime)
    found: list[str] = []
    for path in paths:
        for form in (os.path.abspath(path), os.path.realpath(path)):
            if form not in found and form != os.sep:
                found.append(form)
    return tuple(found)


def agent_environ(env: Mapping[str, str], protected: tuple[str, ...]) -> dict[str, str]:
    """Return the variables the agent inherits: none that names memd or a way out.

    Dropped: every `MEMD_*` and `XDG_*` (memd sets its own after), those
    naming another process's socket, and any whose value names a protected
    path (a `PATH` keeps its other entries).
    """

    def names_protected(value: str) -> bool:
        return any(path in value for path in protected)

    kept: dict[str, str] = {}
    for name, value in env.items():
        if name.startswith(("MEMD_", "XDG_")) or name in _DROPPED_VARIABLES:
            continue
        if name == "PATH":
            parts = [p for p in value.split(os.pathsep) if not names_protected(p)]
            kept[name] = os.pathsep.join(parts)
        elif not names_protected(value):
            kept[name] = value
    return kept


def model_ports(env: Mapping[str, str]) -> tuple[int, ...]:
    """Return the TCP ports the agent may connect to: its model's and proxies'.

    Each `*_BASE_URL` (ANTHROPIC_BASE_URL, ...) and proxy variable gives its
    port (its scheme's default when it names none); 443 is always allowed.
    """
    from urllib.parse import urlsplit

    ports = {_DEFAULT_MODEL_PORT}
    for name, value in env.items():
        if not (name.upper().endswith("_BASE_URL") or name.upper() in _PROXY_VARIABLES):
            continue
        try:
            parts = urlsplit(value if "://" in value else f"http://{value}")
            port = parts.port
        except ValueError:
            continue
        ports.add(port or (443 if parts.scheme == "https" else 80))
    return tuple(sorted(ports))


def viewer_ports(config: Config, env: Mapping[str, str]) -> set[int]:
    """Return the viewer's configured port and the one it listens on now."""
    from urllib.parse import urlsplit

    from memd.dirs import runtime_dir
    from memd.fastjson import loads
    from memd.fsread import read_bytes_or_none

    ports = {config.ui_port}
    # memd.ui.urlfile's file (kairos may not import the viewer): url, token, pid.
    where = os.path.join(runtime_dir(env, state_dir=config.state_dir), "ui.json")
    try:
        data = read_bytes_or_none(where, 4096)
        record = loads(data, max_depth=4) if data else None
        url = record.get("url") if isinstance(record, dict) else None
        if isinstance(url, str) and urlsplit(url).port:
            ports.add(int(urlsplit(url).port or 0))
    except (OSError, ValueError):
        pass
    return ports


def _policy(
    scratch: str,
    argv: list[str],
    env: Mapping[str, str],
    protected: tuple[str, ...],
    memory_dir: str,
    log_files: tuple[str, ...],
    config: Config,
) -> Policy:
    """Return the confinement of this run; raise when it cannot be safe."""
    from memd.kairos import confine

    ports = model_ports(env)
    clash = sorted(set(ports) & viewer_ports(config, os.environ))
    if clash:
        raise DreamCommandFailed(
            f"the dream agent's model port {clash[0]} is memd's viewer's: the agent "
            "could reach the viewer; nothing ran (move the viewer, [ui] port)"
        )
    try:
        return confine.policy(
            scratch,
            argv,
            env.get("PATH", os.defpath),
            protected=protected,
            readable=tuple(os.path.join(memory_dir, rel) for rel in log_files),
            ports=ports,
        )
    except confine.Unconfinable as error:
        raise DreamCommandFailed(f"{error}; nothing ran") from None


def _executable(name: str, staging: str, path: str) -> str:
    import shutil

    if os.sep in name:
        return os.path.join(staging, name)  # relative to the copy, as before
    found = shutil.which(name, path=path)
    if found is None:
        raise DreamCommandFailed(f"dream agent could not start: {name} not found")
    return found


def _stop(proc: subprocess.Popen[bytes]) -> None:
    import subprocess

    if proc.poll() is None:
        proc.terminate()  # the supervisor kills the agent and what it started
        try:
            proc.wait(timeout=_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.wait()
    _kill_group(proc.pid)


def _tail(handle: IO[bytes]) -> str:
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - _OUTPUT_TAIL * 4))
    data = handle.read(_OUTPUT_TAIL * 4)
    return data.decode("utf-8", errors="replace")[-_OUTPUT_TAIL:]


def check_result(
    memory_dir: str,
    scratch: str,
    before: dict[str, bytes],
    config: Config,
    *,
    confined: bool = True,
) -> AgentOutcome:
    """Check the staging copy the agent left; return the changes to apply.

    `before` is the live directory as the agent's copy was taken. A live file
    that differs now was changed by someone else (confined, the agent cannot
    write there): the agent's changes are re-based onto the live directory,
    and a file both changed keeps the live bytes (`kept_yours`). Unconfined,
    memd cannot tell who changed it, so the dream fails without applying or
    putting anything back, and the next dream tries again.
    """
    staging = os.path.join(scratch, "memory")
    from memd.fsread import list_names

    strays = sorted(set(list_names(scratch)) - {"memory", "home", "tmp", "prompt.md"})
    if strays:
        raise DreamCommandFailed(
            f"the agent wrote outside the staging copy: ../{strays[0]}"
        )
    if os.path.lexists(os.path.join(staging, "logs")):
        raise DreamCommandFailed("the agent wrote under logs/, which memd owns")
    after = snapshot_tree(staging)
    # An agent without a shell deletes a file by emptying it (the prompt says so).
    for rel in [r for r, data in after.items() if r in before and not data.strip()]:
        del after[rel]
    if INDEX_NAME in before and INDEX_NAME not in after:
        raise DreamCommandFailed("the agent deleted MEMORY.md")
    live = snapshot_tree(memory_dir, strict=False)
    theirs = sorted(
        rel for rel in live.keys() | before.keys() if live.get(rel) != before.get(rel)
    )
    if theirs and not confined:
        raise DreamCommandFailed(
            f"{theirs[0]} changed in the live memory directory during the dream, "
            "and without Landlock memd cannot tell your writes from the agent's: "
            "nothing applied, nothing put back; the next dream tries again"
        )
    rebased = rebase(before, live, after)
    try:
        _check_merged(memory_dir, staging, live, rebased, config)
    except DreamCommandFailed as error:
        if not theirs:
            raise
        raise DreamCommandFailed(
            f"{error} once re-based on what changed during the dream "
            f"({', '.join(theirs[:3])}); nothing applied, the next dream tries again"
        ) from None
    return rebased


def rebase(
    base: dict[str, bytes], theirs: dict[str, bytes], ours: dict[str, bytes]
) -> AgentOutcome:
    """Return the agent's changes (`base` -> `ours`) that apply onto `theirs`.

    A file the agent changed and nobody else did is written (or deleted)
    with `theirs`' bytes as the expected old ones; one both changed keeps
    `theirs` and goes in `kept_yours` with the agent's version (b"" when the
    agent deleted it); one both changed alike needs nothing.
    """
    writes: dict[str, tuple[bytes | None, bytes]] = {}
    deletes: dict[str, bytes] = {}
    kept: dict[str, bytes] = {}
    for rel in sorted(base.keys() | ours.keys()):
        old, new, live = base.get(rel), ours.get(rel), theirs.get(rel)
        if old == new or live == new:
            continue
        if live != old:
            kept[rel] = new or b""
        elif new is None:
            deletes[rel] = live or b""
        else:
            writes[rel] = (live, new)
    return AgentOutcome(writes=writes, deletes=deletes, kept_yours=kept)


def _check_merged(
    memory_dir: str,
    staging: str,
    live: dict[str, bytes],
    outcome: AgentOutcome,
    config: Config,
) -> None:
    """Check the tree the live directory would become; trace each deleted file."""
    merged = dict(live)
    merged.update((rel, new) for rel, (_, new) in outcome.writes.items())
    for rel in outcome.deletes:
        del merged[rel]
    _mirror(staging, merged)  # lint reads a directory: the copy becomes the result
    if INDEX_NAME in outcome.writes:
        _check_index(merged)
    _check_lint(memory_dir, staging, config)
    moved_to = {
        rel: _where_it_went(old, merged) for rel, old in outcome.deletes.items()
    }
    lost = [rel for rel, where in moved_to.items() if not where]
    if lost:
        raise DreamCommandFailed(
            f"the agent deleted {lost[0]} and its content is nowhere else"
        )
    outcome.moved_to.update(moved_to)


def _mirror(root: str, files: dict[str, bytes]) -> None:
    """Make the tree under `root` (memd's scratch) hold exactly `files`."""
    now = snapshot_tree(root)
    for rel in now.keys() - files.keys():
        os.unlink(os.path.join(root, rel))
    _write_tree(root, {rel: new for rel, new in files.items() if now.get(rel) != new})


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
