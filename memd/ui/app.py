"""The viewer's web app: Starlette routes, Jinja2 templates, the gate in front.

The one module that imports Starlette, Jinja2 and sse-starlette. memd.ui.server
imports it only when the first browser connects, so a daemon nobody opens
the viewer of never loads any of them.

`Gate` (plain ASGI) runs before every route: the Host header, every query
parameter's rule (memd.ui.security), the token-for-cookie swap, the cookie,
and the security headers on every answer. A POST also needs the Origin and
the CSRF value (`_checked_form`). Pages run memd.ui.gather on a worker
thread, so the event loop keeps serving the live updates.
"""

from __future__ import annotations

import asyncio
import threading
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memd.diagnostics import escape_surrogates
from memd.errors import MemdError
from memd.times import zone_note
from memd.ui import gather, plots, security, views

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
    from typing import Any

    Scope = MutableMapping[str, Any]
    Message = MutableMapping[str, Any]
    Receive = Callable[[], Awaitable[Message]]
    Send = Callable[[Message], Awaitable[None]]
    ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_FORM_BYTES = 8 * 1024
PAGES = frozenset({"/", "/project", "/file", "/dreams", "/recall", "/telemetry"})
MAX_QUERY_FIELDS = 8
UNAUTHORIZED = (
    "<!doctype html><meta charset=utf-8><title>memd</title>"
    "<p>401: open this page with <code>memd ui</code>.</p>"
)


class Refused(MemdError):
    """A request the gate or a form check turns away: (status, short reason)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Notifier:
    """Tells the open pages that a directory was rebuilt (from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]] = set()
        self.closed = False

    def changed(self, memory_dir: str) -> None:
        """Called by the daemon after each rebuild; never blocks."""
        message = views.project_id(memory_dir)
        with self._lock:
            waiters = list(self._waiters)
        for loop, queue in waiters:
            loop.call_soon_threadsafe(_offer, queue, message)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            waiters = list(self._waiters)
        for loop, queue in waiters:
            loop.call_soon_threadsafe(_offer, queue, "")

    async def stream(self) -> AsyncIterator[dict[str, str]]:
        """Yield one `changed` event per rebuilt project while the page is open."""
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=64)
        waiter = (asyncio.get_running_loop(), queue)
        with self._lock:
            self._waiters.add(waiter)
        try:
            yield {"event": "hello", "data": "live"}
            while not self.closed:
                project = await queue.get()
                if not project:
                    return
                yield {"event": "changed", "data": project}
        finally:
            with self._lock:
                self._waiters.discard(waiter)


def _offer(queue: asyncio.Queue[str], message: str) -> None:
    if queue.full():
        return  # the page refreshes once for many rebuilds anyway
    queue.put_nowait(message)


def build_app(
    source: gather.Source,
    *,
    token: str,
    hosts: frozenset[str],
    notifier: Notifier,
    port: int,
) -> ASGIApp:
    """Return the viewer's ASGI app behind its gate."""
    templates = Environment(
        loader=PackageLoader("memd.ui", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.filters["urlencode"] = _urlencode
    templates.filters["ago"] = views.ago
    templates.filters["clock"] = views.clock
    csrf = security.csrf_value(token)
    templates.globals["zone_note"] = zone_note  # every page says its zone once
    history = gather.history_available()

    def page(name: str, status: int = 200, **values: object) -> HTMLResponse:
        html = templates.get_template(name).render(
            csrf=csrf, has_history=history, **values
        )
        html = escape_surrogates(html)  # a name that is not UTF-8, as `\\xe9`
        return HTMLResponse(views.mask_page(html, keep=(csrf,)), status_code=status)

    def param(request: Request, name: str) -> str:
        value = request.query_params.get(name)
        if value is None:
            raise Refused(400, f"missing {name}")
        return value

    async def overview(request: Request) -> Response:
        rows = await run_in_threadpool(gather.overview, source)
        return page("overview.html", rows=rows, live="*")

    async def project(request: Request) -> Response:
        chosen = param(request, "id")
        model = await run_in_threadpool(gather.project_page, source, chosen)
        return page("project.html", p=model, live=chosen)

    async def file(request: Request) -> Response:
        chosen, relpath = param(request, "id"), param(request, "file")
        model = await run_in_threadpool(gather.file_page, source, chosen, relpath)
        return page("file.html", f=model, live=chosen)

    async def dreams(request: Request) -> Response:
        found = await run_in_threadpool(gather.dreams_page, source)
        return page("dreams.html", projects=found, live="*")

    async def recall(request: Request) -> Response:
        query = request.query_params.get("q", "")
        hits, note = await run_in_threadpool(gather.recall_hits, source, query)
        return page("recall.html", q=query, hits=hits, note=note, live="")

    async def telemetry(request: Request) -> Response:
        def build() -> dict[str, object]:
            labels, sessions = gather.telemetry_names(source)
            model = plots.telemetry_model(gather.telemetry_events(source), labels)
            profile = source.profile()
            return {
                "events": model.events,
                "sessions": sessions,
                "units": Markup(  # noqa: S704 -- plots.py escapes every label
                    plots.line_plot(
                        model.units,
                        title="memory prompt size per project, in characters",
                        unit="characters",
                        limit=profile.entrypoint_max_units,
                    )
                ),
                "lines": Markup(  # noqa: S704 -- as above
                    plots.line_plot(
                        model.lines,
                        title="memory prompt lines per project",
                        unit="lines",
                        limit=profile.entrypoint_max_lines,
                        marks=tuple(when for when, _ in model.cuts),
                    )
                ),
                "per_day": Markup(  # noqa: S704 -- as above
                    plots.bar_plot(
                        model.per_day,
                        title="times memd built a memory prompt, per day",
                        unit="builds",
                    )
                ),
                "cuts": model.cuts[-20:],
                "max_lines": profile.entrypoint_max_lines,
                "max_chars": profile.entrypoint_max_units,
            }

        values = await run_in_threadpool(build)
        return page("telemetry.html", live="*", t=values)

    async def events(request: Request) -> Response:
        return EventSourceResponse(notifier.stream(), ping=10)

    async def undo(request: Request) -> Response:
        form = await _checked_form(request, hosts, csrf, ("id",))
        ok, message = await run_in_threadpool(gather.undo_dream, source, form["id"])
        return page(
            "result.html",
            status=200 if ok else 409,
            ok=ok,
            message=message,
            back="/dreams",
            live="",
        )

    async def restore(request: Request) -> Response:
        form = await _checked_form(request, hosts, csrf, ("id", "file", "rev"))
        back = "/file?" + urlencode({"id": form["id"], "file": form["file"]})
        try:
            message = await run_in_threadpool(
                gather.restore_file, source, form["id"], form["file"], int(form["rev"])
            )
            ok = True
        except (OSError, ValueError, RuntimeError) as error:
            ok, message = False, views.mask_secrets(str(error))
        return page(
            "result.html",
            status=200 if ok else 409,
            ok=ok,
            message=message,
            back=back,
            live="",
        )

    routes = [
        Route("/", overview),
        Route("/project", project),
        Route("/file", file),
        Route("/dreams", dreams),
        Route("/recall", recall),
        Route("/telemetry", telemetry),
        Route("/events", events),
        Route("/undo", undo, methods=["POST"]),
        Route("/restore", restore, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("memd.ui", "static")])),
    ]

    def refused(status: int, reason: str) -> HTMLResponse:
        return page("error.html", status=status, code=status, reason=reason, live="")

    app = Starlette(routes=routes)

    async def not_found(request: Request, exc: Exception) -> Response:
        return refused(404, "not found")

    async def turned_away(request: Request, exc: Exception) -> Response:
        if isinstance(exc, Refused):
            return refused(exc.status, exc.reason)
        return refused(400, "refused")

    app.add_exception_handler(gather.NotFoundError, not_found)
    app.add_exception_handler(Refused, turned_away)
    app.add_exception_handler(404, not_found)
    return Gate(app, token=token, hosts=hosts, cookie=f"{security.COOKIE_NAME}_{port}")


def _urlencode(value: object) -> str:
    """Jinja's `urlencode` for a query value, never failing on a lone surrogate."""
    from urllib.parse import quote

    return quote(escape_surrogates(str(value)), safe="/")


async def _checked_form(
    request: Request, hosts: frozenset[str], csrf: str, names: tuple[str, ...]
) -> dict[str, str]:
    """Return a POST's fields once its Origin, size, CSRF value and fields pass."""
    if not security.origin_allowed(request.headers.get("origin"), hosts):
        raise Refused(403, "cross-origin request refused")
    length = request.headers.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_FORM_BYTES:
        raise Refused(413, "form too large")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise Refused(413, "form too large")
    try:
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=MAX_QUERY_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):
        raise Refused(400, "bad form") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise Refused(400, f"{name} given twice")
        why = security.parameter_refusal(name, value)
        if why is not None:
            raise Refused(400, f"{name}: {why}")
        form[name] = value
    if not security.same_secret(form.pop("csrf", None), csrf):
        raise Refused(403, "missing or wrong CSRF value")
    missing = [name for name in names if name not in form]
    if missing:
        raise Refused(400, f"missing {', '.join(missing)}")
    return form


class Gate:
    """Host, parameters, token and cookie before any route; headers on every answer."""

    def __init__(
        self, app: ASGIApp, *, token: str, hosts: frozenset[str], cookie: str
    ) -> None:
        self.app = app
        self.token = token
        self.session = security.session_value(token)
        self.hosts = hosts
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no websockets, no lifespan
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope.get("headers", ())
        }

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [
                    (name.encode(), value.encode())
                    for name, value in security.SECURITY_HEADERS
                    if name.encode() not in present
                ]
                message["headers"] = headers
            await send(message)

        try:
            query = self._query(scope)
            hosts = [n for n, _ in scope.get("headers", ()) if n.lower() == b"host"]
            if len(hosts) != 1 or not security.host_allowed(
                headers.get("host"), self.hosts
            ):
                raise Refused(400, "wrong Host")
            if not _is_own_user(scope):
                raise Refused(403, "")
            given = query.get(security.TOKEN_PARAMETER)
            if given is not None:
                if not security.same_secret(given, self.token):
                    raise Refused(401, "")
                await self._swap(scope, query, send_secured)
                return
            if not security.same_secret(self._cookie(headers), self.session):
                raise Refused(401, "")
        except Refused as refusal:
            await self._refuse(refusal, send_secured)
            return
        await self.app(scope, receive, send_secured)

    def _query(self, scope: Scope) -> dict[str, str]:
        raw = scope.get("query_string", b"").decode("latin-1")
        try:
            pairs = parse_qsl(
                raw, keep_blank_values=True, max_num_fields=MAX_QUERY_FIELDS
            )
        except ValueError:
            raise Refused(400, "too many parameters") from None
        query: dict[str, str] = {}
        for name, value in pairs:
            why = security.parameter_refusal(name, value)
            if why is not None or name in query:
                raise Refused(400, f"{name}: {why or 'given twice'}")
            query[name] = value
        return query

    def _cookie(self, headers: dict[str, str]) -> str | None:
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 -- a malformed cookie is no cookie
            return None
        morsel = jar.get(self.cookie)
        return morsel.value if morsel is not None else None

    async def _swap(self, scope: Scope, query: dict[str, str], send: Send) -> None:
        """The token, once in the URL: set the cookie, drop the token from the URL.

        A page that refreshes to the address without the token, not a 303: a
        redirect keeps the navigation's initiator, and when that is another
        site (`memd ui`'s opener page is a file) a SameSite=Strict cookie set
        on the way is not sent to the address it redirects to.
        """
        from html import escape

        rest = {k: v for k, v in query.items() if k != security.TOKEN_PARAMETER}
        path = scope.get("path", "/")
        if path not in PAGES:  # never `//evil.example` or `/\\evil.example`
            path, rest = "/", {}
        location = path + ("?" + urlencode(rest) if rest else "")
        target = escape(location, quote=True)
        response = HTMLResponse(
            "<!doctype html><meta charset=utf-8><title>memd</title>"
            f'<meta http-equiv="refresh" content="0;url={target}">'
            f'<p><a href="{target}">Continue</a></p>',
            headers={"referrer-policy": "no-referrer"},
        )
        response.set_cookie(
            self.cookie,
            self.session,
            httponly=True,
            samesite="strict",
            path="/",
        )
        await response({"type": "http"}, _no_body, send)

    async def _refuse(self, refusal: Refused, send: Send) -> None:
        body = (
            UNAUTHORIZED
            if refusal.status == 401
            else (
                "<!doctype html><meta charset=utf-8><title>memd</title>"
                f"<p>{refusal.status}</p>"
            )
        )
        response = HTMLResponse(body, status_code=refusal.status)
        await response({"type": "http"}, _no_body, send)


def _is_own_user(scope: Scope) -> bool:
    """Whether the peer of this loopback connection runs as the daemon's user.

    Linux only (/proc/net/tcp); elsewhere, and for the peers of an address
    set explicitly in `[ui] address`, the token alone guards. A loopback
    peer that cannot be found is refused.
    """
    import os

    from memd.fsread import read_bytes

    client, server = scope.get("client"), scope.get("server")
    if not client or not server:
        return False
    if not security.is_loopback(str(client[0])):
        return True  # an address set explicitly in [ui] address: the token guards
    table = "/proc/net/tcp6" if ":" in str(client[0]) else "/proc/net/tcp"
    if not os.path.exists(table):
        return True
    try:
        text = read_bytes(table, 64 * 1024 * 1024).decode("ascii", "replace")
    except OSError:
        return False
    uid = security.peer_uid(
        text, (str(client[0]), int(client[1])), (str(server[0]), int(server[1]))
    )
    return uid == os.getuid()


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}
