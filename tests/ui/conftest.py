"""The viewer's tests: a real `memd run` serving it, and Debian's real chromium.

The browser is `/usr/bin/chromium` through `/usr/bin/chromedriver` (selenium,
headless, a fresh profile per test). Without them the browser tests skip,
which under CI=true fails the run (tests/ci_skips.py); .ci/run installs them.
Each page's screenshot goes to $MEMD_TEST_ARTIFACTS (default tests/artifacts/,
ignored by git).
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from memd.ui.views import project_id
from tests.daemon.conftest import (
    MEMD,
    TIMEOUT,
    Daemon,
    Starter,
    _start_daemon,
    topic,
    wait_for,
)

__all__ = ["_start_daemon"]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(
    os.environ.get("MEMD_TEST_ARTIFACTS")
    or Path(__file__).resolve().parent.parent / "artifacts"
)
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1280,900",
)


@dataclass
class Viewer:
    """The running daemon's viewer: its URL, token, and plain HTTP requests."""

    daemon: Daemon
    url: str  # http://127.0.0.1:PORT/
    token: str

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def port(self) -> int:
        port = urlsplit(self.url).port
        assert port is not None
        return port

    def cookie(self) -> str:
        """The session cookie, got the way a browser gets it: the token swap."""
        status, headers, _ = self.request("GET", "/?token=" + self.token)
        assert 200 == status
        raw = headers["set-cookie"]
        return raw.split(";", 1)[0]

    def request(
        self,
        method: str,
        path: str,
        *,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        """One raw HTTP request (any Host header) and its answer."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            connection.putrequest(
                method, path, skip_host=True, skip_accept_encoding=True
            )
            sent = {"Host": self.host, **(headers or {})}
            if body is not None:
                sent.setdefault("Content-Type", "application/x-www-form-urlencoded")
                sent["Content-Length"] = str(len(body))
            for name, value in sent.items():
                connection.putheader(name, value)
            connection.endheaders(body)
            response = connection.getresponse()
            data = response.read()
            found = {name.lower(): value for name, value in response.getheaders()}
            return response.status, found, data
        finally:
            connection.close()


def memory_of(home: Path, name: str) -> Path:
    """The memory dir of project `name` under ~/.claude/projects."""
    return home / ".claude" / "projects" / f"-work-{name}" / "memory"


def make_project(home: Path, name: str, *, entries: int = 1) -> Path:
    """A project with an index of `entries` entries and their topic files."""
    memory = memory_of(home, name)
    memory.mkdir(parents=True)
    lines = []
    for number in range(entries):
        (memory / f"note_{number}.md").write_text(
            topic(f"note_{number}", body=f"Fact {number} about {name}.\n")
        )
        lines.append(f"- [Note {number}](note_{number}.md) — fact {number} of {name}")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    return memory


@pytest.fixture(name="start_viewer")
def _start_viewer(start_daemon: Starter) -> object:
    def start(**extra_env: str) -> Viewer:
        daemon = start_daemon(MEMD_TELEMETRY="jsonl", **extra_env)
        done = wait_for(
            lambda: (
                result
                if (result := daemon.memd("ui", "--print")).returncode == 0
                else None
            ),
            what="memd ui --print",
        )
        assert isinstance(done, subprocess.CompletedProcess)
        url, _, query = done.stdout.strip().partition("?token=")
        return Viewer(daemon=daemon, url=url, token=query)

    return start


@pytest.fixture(name="browser")
def _browser() -> Iterator[object]:
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="memd-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: object, name: str) -> Path:
    """Save the page's screenshot as a test artifact; return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"ui-{name}.png"
    driver.save_screenshot(str(path))  # type: ignore[attr-defined]
    return path


def ids_of(*memories: Path) -> dict[str, Path]:
    return {project_id(str(memory)): memory for memory in memories}


def dream_now(daemon: Daemon, project_root: Path) -> None:
    """Run `memd dream --now` for a project, as a person would."""
    done = subprocess.run(
        [*MEMD, "dream", "--project", str(project_root), "--now"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert 0 == done.returncode, done.stderr


def ui_record(daemon: Daemon) -> dict[str, object]:
    path = daemon.home.runtime / "memd" / "ui.json"
    record = json.loads(path.read_text())
    assert isinstance(record, dict)
    return record


def click(browser: Any, selector: str) -> None:
    """Click what leads to another page, and wait until that page is there.

    A page swapped under us (a live update, a load still finishing) is
    looked up again.
    """
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.common.by import By

    clicked: list[Any] = []

    def press() -> bool:
        try:
            page = browser.find_element(By.TAG_NAME, "html")
            browser.find_element(By.CSS_SELECTOR, selector).click()
        except (NoSuchElementException, StaleElementReferenceException):
            return False
        clicked.append(page)
        return True

    wait_for(press, what=f"{selector} to click")

    def gone() -> bool:
        try:
            clicked[0].is_enabled()
        except StaleElementReferenceException:
            return True
        return False

    wait_for(gone, what=f"the page after clicking {selector}")
