"""The viewer's gate against hostile requests, sent raw to a real `memd run`."""

from __future__ import annotations

import stat
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from memd.ui.views import project_id
from tests.conftest import Home
from tests.daemon.conftest import backdate
from tests.ui.conftest import make_project, ui_record

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

HOSTILE_PATHS = (
    "../x.md",
    "../../etc/passwd",
    "/etc/passwd",
    "a/../../b.md",
    "./note_0.md",
    "..",
    "%2e%2e/x.md",
    "note_0.md\x00.png",
    ".git/config",
    "C:\\x.md",
)


@pytest.fixture(name="served")
def _served(isolated_home: Home, start_viewer: Any) -> tuple[Any, str, str]:
    memory = make_project(isolated_home.home, "guarded")
    (memory / "secret_plan.md").write_text("---\nname: plan\n---\nthe plan\n")
    backdate(memory)
    viewer = start_viewer()
    return viewer, viewer.cookie(), str(memory)


def assert_shows_nothing(body: bytes, memory: str) -> None:
    text = body.decode("utf-8", "replace")
    assert memory not in text
    assert "note_0" not in text
    assert "secret_plan" not in text


class TestTheToken:
    def test_no_token_gets_a_401_that_shows_nothing(self, served: Any) -> None:
        viewer, _, memory = served
        for path in ("/", f"/project?id={project_id(memory)}", "/dreams", "/events"):
            status, headers, body = viewer.request("GET", path)

            assert 401 == status, path
            assert_shows_nothing(body, memory)
            assert "default-src 'self'" in headers["content-security-policy"]

    def test_a_wrong_token_or_cookie_gets_a_401(self, served: Any) -> None:
        viewer, cookie, memory = served
        name, _, value = cookie.partition("=")
        wrong = value[:-1] + ("1" if value.endswith("0") else "0")  # one char off
        for headers, path in (
            ({}, "/?token=" + "A" * 43),
            ({}, "/?token="),
            ({"Cookie": f"{name}={wrong}"}, "/"),
            ({"Cookie": f"{name}={viewer.token}"}, "/"),  # the token is no cookie
        ):
            status, _, body = viewer.request("GET", path, headers=headers)

            assert 401 == status, (headers, path)
            assert_shows_nothing(body, memory)

    def test_the_token_is_swapped_for_a_strict_httponly_cookie(
        self, served: Any
    ) -> None:
        viewer, _, _ = served
        status, headers, body = viewer.request(
            "GET", f"/recall?token={viewer.token}&q=plan"
        )
        cookie = headers["set-cookie"].lower()

        assert 200 == status
        assert b'content="0;url=/recall?q=plan"' in body  # the token dropped
        assert "no-referrer" == headers["referrer-policy"]
        assert ("httponly" in cookie, "samesite=strict" in cookie) == (True, True)
        assert viewer.token.lower() not in cookie

    @pytest.mark.parametrize("path", ["//evil.example", "/\\evil.example", "/nope"])
    def test_the_swap_never_sends_the_browser_elsewhere(
        self, served: Any, path: str
    ) -> None:
        viewer, _, _ = served
        status, _, body = viewer.request("GET", f"{path}?token={viewer.token}")

        assert 200 == status
        assert b'content="0;url=/"' in body

    def test_the_url_file_is_private_and_the_token_fresh_per_start(
        self, served: Any, start_viewer: Any
    ) -> None:
        viewer, _, _ = served
        path = viewer.daemon.home.runtime / "memd" / "ui.json"
        mode = stat.S_IMODE(path.stat().st_mode)
        first = ui_record(viewer.daemon)["token"]
        viewer.daemon.stop()

        assert 0o600 == mode
        assert not path.exists()  # removed at a clean stop
        second = start_viewer()
        assert first != second.token
        assert second.url.startswith("http://127.0.0.1:")


class TestTheHost:
    @pytest.mark.parametrize(
        "host",
        [
            "evil.example:{port}",
            "evil.example",
            "127.0.0.1",
            "127.0.0.1:1",
            "localhost.evil.example:{port}",
            "0.0.0.0:{port}",
            "",
        ],
    )
    def test_a_foreign_host_is_refused(self, served: Any, host: str) -> None:
        """DNS rebinding: a page of another name never reaches memd's pages."""
        viewer, cookie, memory = served
        status, _, body = viewer.request(
            "GET",
            "/",
            headers={"Host": host.format(port=viewer.port), "Cookie": cookie},
        )

        assert 400 == status
        assert_shows_nothing(body, memory)

    def test_loopback_names_are_served(self, served: Any) -> None:
        viewer, cookie, memory = served
        for host in (f"127.0.0.1:{viewer.port}", f"localhost:{viewer.port}"):
            status, _, body = viewer.request(
                "GET", "/", headers={"Host": host, "Cookie": cookie}
            )

            assert 200 == status
            assert memory in body.decode()


class TestIPv6:
    def test_the_viewer_answers_on_ipv6_loopback_too(self, served: Any) -> None:
        """::1 is bound beside 127.0.0.1; its peers pass the same gate."""
        import http.client
        import socket

        viewer, cookie, memory = served
        probe = socket.socket(socket.AF_INET6)
        try:
            probe.connect(("::1", viewer.port))
        except OSError:
            if socket.has_ipv6 and _has_ipv6_loopback():
                raise  # ::1 exists here, so the viewer must listen on it
            return  # no IPv6 loopback: the viewer binds 127.0.0.1 alone
        finally:
            probe.close()
        connection = http.client.HTTPConnection("::1", viewer.port, timeout=30)
        connection.request(
            "GET", "/", headers={"Host": f"[::1]:{viewer.port}", "Cookie": cookie}
        )
        response = connection.getresponse()
        body = response.read()
        connection.close()

        assert 200 == response.status
        assert memory in body.decode()


def _has_ipv6_loopback() -> bool:
    import socket

    probe = socket.socket(socket.AF_INET6)
    try:
        probe.bind(("::1", 0))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class TestPosts:
    def undo_form(self, memory: str, **extra: str) -> bytes:
        return urlencode({"id": project_id(memory), **extra}).encode()

    def test_a_post_without_csrf_or_origin_is_refused(self, served: Any) -> None:
        viewer, cookie, memory = served
        origin = f"http://{viewer.host}"
        cases = (
            ({"Cookie": cookie, "Origin": origin}, self.undo_form(memory)),
            ({"Cookie": cookie, "Origin": origin}, self.undo_form(memory, csrf="x")),
            ({"Cookie": cookie}, self.undo_form(memory, csrf=csrf_of(viewer, cookie))),
            (
                {"Cookie": cookie, "Origin": "http://evil.example"},
                self.undo_form(memory, csrf=csrf_of(viewer, cookie)),
            ),
            (
                {"Cookie": cookie, "Origin": "null"},
                self.undo_form(memory, csrf=csrf_of(viewer, cookie)),
            ),
        )
        for headers, body in cases:
            status, _, answer = viewer.request(
                "POST", "/undo", headers=headers, body=body
            )

            assert 403 == status, headers
            assert b"Done" not in answer

    def test_a_get_never_acts(self, served: Any) -> None:
        viewer, cookie, memory = served
        status, _, _ = viewer.request(
            "GET", f"/undo?id={project_id(memory)}", headers={"Cookie": cookie}
        )

        assert 405 == status


def csrf_of(viewer: Any, cookie: str) -> str:
    """The CSRF value the pages' forms carry, read from a page as a browser would."""
    import re

    status, _, body = viewer.request("GET", "/recall", headers={"Cookie": cookie})
    assert 200 == status
    from memd.ui.security import csrf_value

    value = csrf_value(viewer.token)
    assert value not in body.decode()  # the recall page has no form that posts
    assert re.fullmatch(r"[0-9a-f]{64}", value)
    return value


class TestParameters:
    @pytest.mark.parametrize("hostile", HOSTILE_PATHS)
    def test_a_path_that_leaves_the_memory_dir_is_refused(
        self, served: Any, hostile: str
    ) -> None:
        """`..`, absolute and other refused relpaths in the file parameter: 400."""
        viewer, cookie, memory = served
        path = f"/file?id={project_id(memory)}&file={quote(hostile, safe='%')}"
        status, _, body = viewer.request("GET", path, headers={"Cookie": cookie})

        assert 400 == status, hostile
        assert b"root:" not in body

    @pytest.mark.parametrize("name", ["id", "rev", "gen", "path", "dir", "memory_dir"])
    @pytest.mark.parametrize("hostile", ["../x", "/etc/passwd", "/tmp"])
    def test_a_path_in_any_other_parameter_is_refused(
        self, served: Any, name: str, hostile: str
    ) -> None:
        viewer, cookie, _ = served
        for page in ("/", "/project", "/file", "/dreams", "/telemetry"):
            status, _, _ = viewer.request(
                "GET",
                f"{page}?{name}={quote(hostile, safe='')}",
                headers={"Cookie": cookie},
            )

            assert 400 == status, (page, name, hostile)

    @pytest.mark.parametrize("hostile", [p for p in HOSTILE_PATHS if "%" not in p])
    def test_a_hostile_path_in_a_post_is_refused(
        self, served: Any, hostile: str
    ) -> None:
        viewer, cookie, memory = served
        body = urlencode(
            {
                "csrf": csrf_of(viewer, cookie),
                "id": project_id(memory),
                "file": hostile,
                "rev": "1",
            }
        ).encode()
        status, _, _ = viewer.request(
            "POST",
            "/restore",
            headers={"Cookie": cookie, "Origin": f"http://{viewer.host}"},
            body=body,
        )

        assert 400 == status, hostile

    def test_an_unknown_project_or_a_symlink_is_not_found(self, served: Any) -> None:
        viewer, cookie, memory = served
        import os

        os.symlink("/etc/passwd", os.path.join(memory, "link.md"))
        for path in (
            "/project?id=0123456789abcdef",
            f"/file?id={project_id(memory)}&file=link.md",
            f"/file?id={project_id(memory)}&file=missing.md",
        ):
            status, _, body = viewer.request("GET", path, headers={"Cookie": cookie})

            assert 404 == status, path
            assert b"root:" not in body


class TestOtherUsers:
    def test_another_local_user_is_refused_even_with_the_cookie(
        self, served: Any
    ) -> None:
        """Every local user can reach a loopback port: the peer's uid must be ours."""
        import os
        import shutil
        import subprocess
        import sys

        if os.getuid() != 0 or shutil.which("setpriv") is None:
            pytest.skip("needs root and setpriv to connect as another user")
        viewer, cookie, memory = served
        code = (
            "import http.client, sys\n"
            f"c = http.client.HTTPConnection('127.0.0.1', {viewer.port}, timeout=30)\n"
            "try:\n"
            f"    c.request('GET', '/', headers={{'Cookie': {cookie!r}}})\n"
            "    r = c.getresponse(); body = r.read()\n"
            f"    print(r.status, {memory!r}.encode() in body)\n"
            "except (http.client.RemoteDisconnected, ConnectionError):\n"
            "    print('closed at accept')\n"
        )
        done = subprocess.run(
            [
                "setpriv",
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                sys.executable,
                "-I",
                "-c",
                code,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            cwd="/",
        )
        status, _, _ = viewer.request("GET", "/", headers={"Cookie": cookie})

        assert "closed at accept" == done.stdout.strip(), done.stderr
        assert 200 == status  # the daemon's own user still gets in
