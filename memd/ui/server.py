"""The viewer's server in the daemon: its sockets, its token, its thread.

`start_viewer` binds the listening sockets at once (127.0.0.1 and ::1 on one
port: `[ui] port`, else the next free of `PORT_TRIES`, else any the kernel
gives), makes a fresh random token and writes `ui.json` (URL and token,
mode 0600) into the runtime dir for `memd ui`. Then one thread waits in
`select` on the sockets, using no CPU and importing nothing: only when a
browser connects does it load Starlette, uvicorn and Jinja2 (memd.ui.app)
and serve. Only the daemon's user's connections are accepted (the peer is
checked at accept, `OwnerOnlySocket`), and a request's headers must arrive
within `HEADER_SECONDS`, so no other user, and no stalled client, can hold
the owner's connection slots. Once no connection has been open for
`IDLE_SECONDS`, uvicorn
stops (its tick would otherwise wake ten times a second) and the thread
goes back to waiting; the sockets stay bound throughout, so the URL holds.
uvicorn gets duplicates of the sockets, since it closes what it is given.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import select
import socket
import threading
import time

from memd.ui import security
from memd.ui.urlfile import URL_FILE

TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Mapping

    from structlog.typing import FilteringBoundLogger

    from memd.claude_code.profile import AgentProfile
    from memd.config import Config
    from memd.ui.app import Notifier

PORT_TRIES = 10  # the configured port and the next nine, then an ephemeral one
IDLE_SECONDS = 30.0
STOP_SECONDS = 5.0
HEADER_SECONDS = 10.0  # headers arrive by then (browsers preconnect), or it closes
MAX_CONNECTIONS = 64  # the owner's; another user's never gets one (`OwnerOnlySocket`)


class Viewer:
    """The running viewer: `changed` after each rebuild, `stop` at shutdown."""

    def __init__(
        self,
        *,
        sockets: list[socket.socket],
        addresses: tuple[str, ...],
        port: int,
        url_file: str,
        make_app: Callable[[Notifier], object],
        log: FilteringBoundLogger,
    ) -> None:
        self.sockets = sockets
        self.addresses = addresses
        self.port = port
        self.url_file = url_file
        self.token = secrets.token_urlsafe(32)
        self.hosts = security.allowed_hosts(addresses, port)
        self.url = f"http://{security.host_for(addresses[0], port)}/"
        self._make_app = make_app
        self.log = log
        self._notifier: Notifier | None = None
        self._server: object | None = None
        self._stopping = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="memd-ui", daemon=True)
        self.sessions = 0  # how many times uvicorn started (for tests and status)

    def start(self) -> None:
        from memd.atomic import write_atomic
        from memd.fastjson import dumps

        record = {"pid": os.getpid(), "url": self.url, "token": self.token}
        write_atomic(self.url_file, (dumps(record) + "\n").encode(), mode=0o600)
        self._thread.start()
        self.log.info("ui_listening", url=self.url)

    def changed(self, memory_dir: str) -> None:
        """Tell the open pages `memory_dir` was rebuilt; nothing when none is open."""
        notifier = self._notifier
        if notifier is not None:
            notifier.changed(memory_dir)

    def stop(self) -> None:
        self._stopping.set()
        server = self._server
        if server is not None:
            server.should_exit = True  # type: ignore[attr-defined]
        if self._notifier is not None:
            self._notifier.close()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread.is_alive():
            self._thread.join(STOP_SECONDS)
        for sock in self.sockets:
            sock.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._remove_url_file()

    def _remove_url_file(self) -> None:
        from memd.fastjson import loads
        from memd.fsread import read_bytes_or_none

        with contextlib.suppress(OSError, ValueError):
            data = read_bytes_or_none(self.url_file, 4096)
            record = loads(data, max_depth=4) if data else None
            if isinstance(record, dict) and record.get("token") == self.token:
                os.unlink(self.url_file)

    # -- the thread ----------------------------------------------------------

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                fds = [sock.fileno() for sock in self.sockets]
                ready, _, _ = select.select([*fds, self._wake_r], [], [])
            except (OSError, ValueError):
                return
            if self._stopping.is_set() or self._wake_r in ready:
                return
            try:
                self._serve_until_idle()
            except Exception:  # a broken viewer must never stop the daemon
                self.log.exception("ui_failed")
                time.sleep(1.0)

    def _serve_until_idle(self) -> None:
        import uvicorn

        from memd.ui.app import Notifier

        notifier = self._notifier or Notifier()
        self._notifier = notifier
        app = self._make_app(notifier)
        config = uvicorn.Config(
            app,  # type: ignore[arg-type]
            http=_header_timed_protocol(),
            loop="asyncio",
            ws="none",
            lifespan="off",
            interface="asgi3",
            log_config=None,
            log_level="warning",
            access_log=False,
            server_header=False,
            proxy_headers=False,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=1,
            limit_concurrency=MAX_CONNECTIONS,
        )
        server = _idle_server_class()(config, idle_seconds=IDLE_SECONDS)
        self._server = server
        self.sessions += 1
        if self._stopping.is_set():
            return
        server.run(sockets=[OwnerOnlySocket.duplicate(sock) for sock in self.sockets])
        self._server = None


def _idle_server_class() -> type:
    import uvicorn

    class IdleServer(uvicorn.Server):
        """uvicorn that stops once no connection was open for `idle_seconds`."""

        def __init__(self, config: uvicorn.Config, *, idle_seconds: float) -> None:
            super().__init__(config)
            self.idle_seconds = idle_seconds
            self.idle_since = time.monotonic()

        async def on_tick(self, counter: int) -> bool:
            if await super().on_tick(counter):
                return True
            if self.server_state.connections:
                self.idle_since = time.monotonic()
                return False
            return time.monotonic() - self.idle_since > self.idle_seconds

    return IdleServer


class OwnerOnlySocket(socket.socket):
    """A listening socket whose `accept` hands on only the daemon's user's connections.

    Any local user can connect to a loopback port. Another user's connection
    is closed here, at accept, before a byte of it is read: it never holds
    one of the owner's `MAX_CONNECTIONS` slots nor waits on a header timeout.
    asyncio's server calls `accept` on the socket it is given, so uvicorn
    serves through this one unchanged.
    """

    @classmethod
    def duplicate(cls, sock: socket.socket) -> OwnerOnlySocket:
        """A duplicate of `sock` (uvicorn closes what it is given) that checks peers."""
        return cls(sock.family, sock.type, sock.proto, fileno=os.dup(sock.fileno()))

    def accept(self) -> tuple[socket.socket, object]:
        from memd.ui.app import peer_is_owner

        while True:  # BlockingIOError from super().accept(): none left waiting
            conn, address = super().accept()
            try:
                local = conn.getsockname()
                if peer_is_owner(
                    (str(address[0]), int(address[1])), (str(local[0]), int(local[1]))
                ):
                    return conn, address
            except OSError:
                pass  # gone already: nothing to serve
            conn.close()


def _header_timed_protocol() -> type:
    """uvicorn's h11 protocol, closing a connection whose headers do not arrive.

    uvicorn times out only the wait between requests; a client that opens a
    connection and trickles (or never sends) a request line would hold its
    slot for ever. Each request's headers get `HEADER_SECONDS` from the
    connection's start, or from the first byte after the previous response.
    """
    # h11 as uvicorn's own h11 protocol imports it (uvicorn's dependency, not ours)
    from uvicorn.protocols.http.h11_impl import H11Protocol, h11  # type: ignore[attr-defined]

    class HeaderTimedH11(H11Protocol):
        header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE and self.header_timer is None:
                self._arm()  # the next request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # its headers are in

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self.header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

        def _disarm(self) -> None:
            if self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None

        def _too_slow(self) -> None:
            self.header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimedH11


def bind_sockets(address: str, port: int) -> tuple[list[socket.socket], int]:
    """Bind `address` (and ::1 beside 127.0.0.1) on `port` or the next free one.

    Returns the listening sockets and the port; raises OSError when nothing
    can be bound at all.
    """
    last: OSError | None = None
    for candidate in [*range(port, min(port + PORT_TRIES, 65536)), 0]:
        try:
            first = _listen(address, candidate)
        except OSError as error:
            if error.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
            last = error
            continue
        bound = first.getsockname()[1]
        found = [first]
        if address == "127.0.0.1":
            with contextlib.suppress(OSError):  # no IPv6 here, or ::1 taken
                found.append(_listen("::1", bound))
        return found, bound
    raise last or OSError(errno.EADDRINUSE, "no free port")


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(64)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def sources_of(discovery: object) -> Mapping[str, str]:
    """Memory dir -> why it is watched, from the daemon's current discovery."""
    if discovery is None:
        return {}
    reasons: Mapping[str, str] = getattr(discovery, "sources", {})
    return {
        path: reasons.get(path, "") for path in getattr(discovery, "memory_dirs", ())
    }


class NoViewer:
    """What the daemon holds when the viewer is off or could not start."""

    url = ""

    def changed(self, memory_dir: str) -> None:
        return

    def stop(self) -> None:
        return


def start_viewer(
    config: Callable[[], Config],
    env: Mapping[str, str],
    log: FilteringBoundLogger,
    *,
    discovery: Callable[[], object],
    profile: Callable[[], AgentProfile],
) -> Viewer | NoViewer:
    """Start the viewer the config asks for; a NoViewer when off or unbindable.

    Called once by `memd run`; `[ui]` changes take effect at its next start.
    """
    from memd.dirs import runtime_dir
    from memd.ui import gather

    settings = config()
    log = log.bind(component="ui")
    if not settings.ui_enabled:
        return NoViewer()
    address = settings.ui_address
    if (
        not security.is_loopback(address)
        and settings.sources.get("ui_address", "default") == "default"
    ):
        log.warning("ui_refused_address", address=address)
        return NoViewer()
    try:
        sockets, port = bind_sockets(address, settings.ui_port)
    except OSError as error:
        log.warning("ui_not_started", address=address, error=str(error))
        return NoViewer()
    if port != settings.ui_port:
        log.info("ui_port_taken", wanted=settings.ui_port, port=port)
    directory = runtime_dir(env, state_dir=settings.state_dir)
    with contextlib.suppress(OSError):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    source = gather.Source(
        config=config,
        memory_dirs=lambda: sources_of(discovery()),
        log=log,
        profile=profile,
    )
    addresses = tuple(sock.getsockname()[0] for sock in sockets)
    holder: dict[str, Viewer] = {}

    def make_app(notifier: Notifier) -> object:
        from memd.ui.app import build_app

        viewer = holder["viewer"]
        return build_app(
            source,
            token=viewer.token,
            hosts=viewer.hosts,
            notifier=notifier,
            port=viewer.port,
        )

    viewer = Viewer(
        sockets=sockets,
        addresses=addresses,
        port=port,
        url_file=os.path.join(directory, URL_FILE),
        make_app=make_app,
        log=log,
    )
    holder["viewer"] = viewer
    try:
        viewer.start()
    except OSError as error:
        log.warning("ui_not_started", error=str(error))
        viewer.stop()
        return NoViewer()
    return viewer
