"""`memd ui`: the URL with its one-time token, or how to start a daemon."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from memd.cli.commands.ui import has_display
from tests.conftest import Home
from tests.daemon.conftest import MEMD, TIMEOUT, wait_for


def memd_ui(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, "ui", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


class TestWithoutADaemon:
    def test_says_how_to_start_one(self) -> None:
        done = memd_ui()

        assert (1, "") == (done.returncode, done.stdout)
        assert "memd run" in done.stderr
        assert 1 == len(done.stderr.splitlines())

    def test_a_stale_url_file_is_no_daemon(self, isolated_home: Home) -> None:
        """A daemon killed before it removed ui.json: its pid is gone."""
        folder = isolated_home.runtime / "memd"
        folder.mkdir()
        dead = subprocess.Popen(["true"])
        dead.wait()
        (folder / "ui.json").write_text(
            json.dumps({"pid": dead.pid, "url": "http://127.0.0.1:9/", "token": "t"})
        )

        assert 1 == memd_ui("--print").returncode

    def test_the_viewer_switched_off(self) -> None:
        done = memd_ui(MEMD_UI_ENABLED="false")

        assert 1 == done.returncode
        assert "enabled = false" in done.stderr


@pytest.mark.daemon
class TestWithADaemon:
    def test_prints_the_url_with_its_token_without_a_display(
        self, start_viewer: Any
    ) -> None:
        viewer = start_viewer()
        env = {k: v for k, v in viewer.daemon.env.items() if "DISPLAY" not in k}
        done = subprocess.run(
            [*MEMD, "ui"], env=env, capture_output=True, text=True, timeout=TIMEOUT
        )

        assert 0 == done.returncode
        assert f"{viewer.url}?token={viewer.token}\n" == done.stdout


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({}, "darwin", True),
    ],
)
def test_has_display(env: dict[str, str], platform: str, expected: bool) -> None:
    assert expected == has_display(env, platform)


@pytest.mark.daemon
class TestTheOpener:
    def test_the_browser_gets_a_private_page_not_the_token_on_its_argv(
        self, start_viewer: Any, browser: Any
    ) -> None:
        """`ui-open.html` is 0600 and forwards the browser into the viewer."""
        import stat as stat_module

        from memd.cli.commands.ui import write_opener

        viewer = start_viewer()
        env = viewer.daemon.env
        page = write_opener(
            env,
            env["XDG_STATE_HOME"] + "/memd",
            f"{viewer.url}?token={viewer.token}",
        )
        mode = stat_module.S_IMODE(os.stat(page).st_mode)
        browser.get("file://" + page)
        # The URL changes before the page is parsed: wait for its heading too.
        wait_for(
            lambda: (
                browser.current_url == viewer.url
                and "Every project's memory" in browser.page_source
            ),
            what="the viewer's overview",
        )

        assert 0o600 == mode


@pytest.mark.daemon
def test_a_daemon_with_the_viewer_off_serves_nothing(start_daemon: Any) -> None:
    daemon = start_daemon(MEMD_UI_ENABLED="false")
    done = daemon.memd("ui", "--print")

    assert 1 == done.returncode
    assert not (daemon.home.runtime / "memd" / "ui.json").exists()


def test_a_taken_port_falls_back_to_the_next_free_one() -> None:
    """Real sockets: the configured port is held by someone else."""
    import socket

    from memd.ui.server import bind_sockets

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    try:
        sockets, port = bind_sockets("127.0.0.1", taken)
        try:
            addresses = {sock.getsockname()[0] for sock in sockets}
            assert port != taken
            assert {"127.0.0.1"} <= addresses <= {"127.0.0.1", "::1"}
        finally:
            for sock in sockets:
                sock.close()
    finally:
        holder.close()


@pytest.mark.daemon
def test_a_daemon_without_the_viewer_is_told_apart_from_none(
    start_daemon: Any,
) -> None:
    """The daemon runs but serves no viewer (off when it started): restart it."""
    daemon = start_daemon(MEMD_UI_ENABLED="false")
    done = subprocess.run(
        [*MEMD, "ui", "--print"],
        env={**daemon.env, "MEMD_UI_ENABLED": "true"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )

    assert 1 == done.returncode
    assert "restart it" in done.stderr
