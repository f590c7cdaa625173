"""The daemon's side of `memd.hook_lint`: lint a watched directory for a hook.

`HookLintServer` listens on the runtime dir's `hooks.sock` on a thread of its
own and answers one request per connection, one connection at a time: a
request takes a few milliseconds, and a peer that sends nothing is dropped
after `PEER_TIMEOUT_SECONDS`. `answer` is the pure part: it refuses what the
daemon cannot answer exactly as the hook would (another user, a directory it
does not watch, other lint settings) and otherwise lints the directory afresh
from disk, never from a snapshot that may lag the write the hook is about.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import stat
import threading

from memd import fastjson
from memd.hook_lint import (
    MAX_REQUEST_BYTES,
    MAX_REQUEST_DEPTH,
    read_line,
    same_user,
)
from memd.lint.targets import lint_findings
from memd.memory.memdir import ParseCache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from structlog.typing import FilteringBoundLogger

    from memd.config import Config

PEER_TIMEOUT_SECONDS = 1.0
# Crashes of the serving loop it recovers from; past them the socket is removed,
# so hooks lint by themselves at once instead of waiting out their timeout.
MAX_RESTARTS = 5


class HookLinter:
    """What the server answers with: the daemon's config, its directories, parses."""

    def __init__(
        self,
        config: Callable[[], tuple[Config, list[object] | None]],
        is_watched: Callable[[str], bool],
        heartbeat_age: Callable[[], float | None] = lambda: None,
    ):
        # (config, the lint settings it was loaded under), swapped on a reload
        self._config = config
        self._is_watched = is_watched
        # Seconds since the settle thread last finished a round: a ping answered
        # with a large one means this thread lives but the daemon's work is stuck.
        self._heartbeat_age = heartbeat_age
        self._caches: dict[str, ParseCache] = {}

    def answer(self, request: object) -> dict[str, object]:
        """The answer to one decoded request."""
        if not isinstance(request, dict):
            return {"refused": "not a request"}
        if request.get("ping") is True:
            return {"pong": os.getpid(), "heartbeat_age": self._heartbeat_age()}
        memory_dir, profile = request.get("lint"), request.get("profile")
        if not isinstance(memory_dir, str) or not isinstance(profile, str | None):
            return {"refused": "not a request"}
        memory_dir = memory_dir.rstrip(os.sep) or os.sep
        if not self._is_watched(memory_dir):
            return {"refused": "not a watched memory directory"}
        config, settings = self._config()
        if settings is None or request.get("settings") != settings:
            return {"refused": "other lint settings"}
        cache = self._caches.setdefault(memory_dir, ParseCache())
        return {"findings": lint_findings(memory_dir, config, profile, cache=cache)}

    def forget(self, memory_dir: str) -> None:
        """Drop the parses of a directory no longer watched."""
        self._caches.pop(memory_dir, None)


class HookLintServer:
    """Serves `HookLinter.answer` on a Unix socket; `start()`, then `stop()`."""

    def __init__(
        self,
        path: str,
        answer: Callable[[object], dict[str, object]],
        log: FilteringBoundLogger,
    ):
        self.path = path
        self._answer = answer
        self._log = log
        self._listener: socket.socket | None = None
        self._wake_r, self._wake_w = -1, -1
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.crashes = 0  # of the serving loop, each logged and restarted
        self._bound_inode = -1

    @property
    def listening(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> bool:
        """Bind and serve; False (logged) when the socket cannot be made."""
        try:
            self._listener = self._bind()
        except OSError as error:
            self._log.warning("hook_lint_unavailable", path=self.path, error=str(error))
            return False
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(
            target=self._supervise,
            args=(self._listener,),
            name="memd-hook-lint",
            daemon=True,
        )
        self._thread.start()
        return True

    def stop(self) -> None:
        """Stop serving, and remove the socket so no hook waits on it."""
        if self._thread is None or self._listener is None:
            return
        self._stopping = True
        os.write(self._wake_w, b"x")
        self._thread.join()
        self._listener.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._thread = None

    def _bind(self) -> socket.socket:
        # The instance lock is held: a socket left here is a dead daemon's.
        # Anything else by that name is not memd's to remove.
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):
                os.unlink(self.path)
        listener = socket.socket(
            socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC
        )
        try:
            listener.bind(self.path)
            self._bound_inode = os.lstat(self.path).st_ino
            os.chmod(self.path, 0o600)
            listener.listen(16)
        except OSError:
            listener.close()
            raise
        return listener

    def _supervise(self, listener: socket.socket) -> None:
        """Serve; restart the loop after a crash, and remove the socket if it
        ends for any reason but `stop()`, so no hook waits on a deaf socket."""
        try:
            while True:
                try:
                    self._serve(listener)
                    return
                except Exception:  # noqa: BLE001 -- the loop's guard: log, count, go on
                    self.crashes += 1
                    self._log.exception("hook_lint_crashed", crashes=self.crashes)
                    if self.crashes >= MAX_RESTARTS:
                        return
        finally:
            if not self._stopping:
                self._log.error("hook_lint_stopped", path=self.path)
                self._remove_socket()

    def _remove_socket(self) -> None:
        # Only the socket this server bound, not one a successor made since.
        with contextlib.suppress(OSError):
            if os.lstat(self.path).st_ino == self._bound_inode:
                os.unlink(self.path)

    def _serve(self, listener: socket.socket) -> None:
        while True:
            ready, _, _ = select.select([listener.fileno(), self._wake_r], [], [])
            if self._wake_r in ready:
                return
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    self._handle(conn)
                except Exception:  # noqa: BLE001 -- one peer's failure is not the server's
                    self._log.exception("hook_lint_request_crashed")

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(PEER_TIMEOUT_SECONDS)
            if not same_user(conn):
                self._log.warning("hook_lint_refused", reason="another user")
                return
            line = read_line(conn, MAX_REQUEST_BYTES, seconds=PEER_TIMEOUT_SECONDS)
            request = (
                fastjson.loads(line, max_depth=MAX_REQUEST_DEPTH)
                if line is not None
                else None
            )
        except (OSError, ValueError):
            return
        try:
            answer = self._answer(request)
        except Exception as error:  # noqa: BLE001 -- one request's failure is not the daemon's
            self._log.exception("hook_lint_failed")
            answer = {"refused": f"{type(error).__name__}: {error}"}
        with contextlib.suppress(OSError):
            conn.sendall(fastjson.dumps(answer).encode() + b"\n")
