"""The viewer in a real browser (Debian's chromium), served by a real `memd run`."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.kairos.daily_log import append_entry
from memd.ui.views import project_id
from tests.conftest import Home
from tests.daemon.conftest import backdate, wait_for
from tests.ui.conftest import click, dream_now, make_project, screenshot

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

SECRET = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0kLmNoPq"


def open_viewer(browser: Any, viewer: Any, path: str = "/") -> None:
    """Open the URL `memd ui` gives (token once), then `path` with the cookie."""
    browser.get(viewer.url + "?token=" + viewer.token)
    wait_for(lambda: "token=" not in browser.current_url, what="the token dropped")
    # The swap page refreshes to the address: the URL changes as that
    # navigation starts, so wait for its document too, not just the URL.
    wait_for(
        lambda: (
            browser.execute_script("return document.readyState") == "complete"
            and browser.find_elements("css selector", "main")
        ),
        what="the page after the token swap",
    )
    if path != "/":
        browser.get(viewer.url.rstrip("/") + path)


def text_of(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    text: str = browser.find_element(By.TAG_NAME, "main").text
    return text


class TestPages:
    def test_overview_lists_every_project(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """Every watched memory dir has a row; an over-long index is marked cut."""
        from selenium.webdriver.common.by import By

        memories = [make_project(isolated_home.home, f"app{n}") for n in range(3)]
        long_one = make_project(isolated_home.home, "long", entries=230)
        backdate(*memories, long_one)
        viewer = start_viewer()

        open_viewer(browser, viewer)

        def rows() -> tuple[set[str], set[str]] | None:
            """(every row's id, the cut rows' ids); None while a live update
            swaps the table."""
            from selenium.common.exceptions import StaleElementReferenceException

            try:
                found = browser.find_elements(By.CSS_SELECTOR, "tr.project")
                return {str(row.get_attribute("data-id")) for row in found}, {
                    str(row.get_attribute("data-id"))
                    for row in found
                    if "cut" in (row.get_attribute("class") or "").split()
                }
            except StaleElementReferenceException:
                return None

        read = wait_for(rows, what="the overview's rows")
        assert isinstance(read, tuple)
        shown, cut = read
        screenshot(browser, "overview")

        assert {project_id(str(m)) for m in [*memories, long_one]} == shown
        assert {project_id(str(long_one))} == cut
        assert viewer.url == browser.current_url  # the token is gone from the bar
        assert [] == [
            c for c in browser.get_cookies() if c["value"] == viewer.token
        ]  # the cookie is not the token
        [cookie] = browser.get_cookies()
        assert (True, "Strict") == (cookie["httpOnly"], cookie["sameSite"])

    def test_project_page_shows_the_cut(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """The marker sits after line 200; the entries past it are listed."""
        from selenium.webdriver.common.by import By

        memory = make_project(isolated_home.home, "long", entries=230)
        backdate(memory)
        viewer = start_viewer()

        open_viewer(browser, viewer, f"/project?id={project_id(str(memory))}")
        marker = browser.find_element(By.ID, "cut-marker")
        before = marker.find_element(By.XPATH, "preceding-sibling::li[1]")
        after = marker.find_element(By.XPATH, "following-sibling::li[1]")
        past = browser.find_elements(By.CSS_SELECTOR, "ul.past-entries li")
        screenshot(browser, "project")

        assert ("200", "201") == (
            before.get_attribute("value"),
            after.get_attribute("value"),
        )
        assert "past" in (after.get_attribute("class") or "")
        assert 30 == len(past)
        assert "note_200.md" in past[0].text
        assert (
            "30 entries past the cut" in browser.find_element(By.ID, "cut-summary").text
        )

    def test_file_page_shows_text_never_html_and_masks_secrets(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """Markup in a memory file is text; an S001 secret is masked."""
        from selenium.common.exceptions import NoAlertPresentException
        from selenium.webdriver.common.by import By

        memory = make_project(isolated_home.home, "web")
        hostile = (
            "<script>alert(1)</script><img src=x onerror=alert(2)>\n"
            f"deploy key: {SECRET}\n"
        )
        (memory / "note_0.md").write_text(topic_with(hostile))
        backdate(memory)
        viewer = start_viewer()

        open_viewer(
            browser, viewer, f"/file?id={project_id(str(memory))}&file=note_0.md"
        )
        shown = browser.find_element(By.ID, "file-text").text
        screenshot(browser, "file")

        assert "<script>alert(1)</script>" in shown
        assert [] == browser.find_elements(By.CSS_SELECTOR, "main img, main script")
        with pytest.raises(NoAlertPresentException):
            _ = browser.switch_to.alert.text
        assert SECRET not in browser.page_source
        assert "S001" in text_of(browser)

    def test_recall_and_telemetry_pages(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """The search box finds a memory with a snippet; telemetry draws SVG plots."""
        from selenium.webdriver.common.by import By

        memory = make_project(isolated_home.home, "search")
        (memory / "note_0.md").write_text(topic_with("The deploy uses blue green.\n"))
        backdate(memory)
        viewer = start_viewer()

        open_viewer(browser, viewer, "/recall")
        box = browser.find_element(By.NAME, "q")
        box.send_keys("deploy")
        box.submit()
        wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "li.hit"), what="hits")
        hits = [hit.text for hit in browser.find_elements(By.CSS_SELECTOR, "li.hit")]
        screenshot(browser, "recall")
        browser.get(viewer.url + "telemetry")
        plots = browser.find_elements(By.CSS_SELECTOR, "svg.plot")
        lines = browser.find_elements(By.CSS_SELECTOR, "svg.plot polyline")
        screenshot(browser, "telemetry")

        assert 1 == len(hits)
        assert "deploy" in hits[0]
        assert 3 == len(plots)
        assert len(lines) >= 2  # prompt size and index lines of the one project


def topic_with(body: str) -> str:
    return (
        "---\nname: note_0\ndescription: A note for the viewer tests\n"
        f"type: project\n---\n{body}"
    )


class TestLive:
    def test_an_open_page_updates_after_a_save_without_a_reload(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """A save reaches the open project page through SSE, with no reload."""
        from selenium.webdriver.common.by import By

        memory = make_project(isolated_home.home, "live")
        backdate(memory)
        viewer = start_viewer()
        open_viewer(browser, viewer, f"/project?id={project_id(str(memory))}")
        wait_for(
            lambda: browser.find_element(By.ID, "live").is_displayed(),
            what="the live badge (EventSource open)",
        )
        browser.execute_script("window.memdMarker = 'same page';")

        with open(memory / "MEMORY.md", "a") as index:
            index.write("- [Fresh](fresh.md) — written while the page was open\n")
        wait_for(
            lambda: "written while the page was open" in text_of(browser),
            what="the live update",
        )
        screenshot(browser, "live")

        assert "same page" == browser.execute_script("return window.memdMarker;")


class TestActions:
    def test_undo_through_the_button_restores_the_bytes(
        self,
        isolated_home: Home,
        git_repo: Path,
        start_viewer: Any,
        browser: Any,
    ) -> None:
        """A dream, then Undo on the dreams page: every file as before, to the byte."""
        from selenium.webdriver.common.by import By

        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Role](role.md) — who the user is\n")
        (memory / "role.md").write_text(topic_with("A backend developer.\n"))
        append_entry(
            str(memory), "#deploy blue green", now=datetime.datetime.now().astimezone()
        )
        backdate(memory)
        before = snapshot_files(memory)
        viewer = start_viewer()
        dream_now(viewer.daemon, git_repo)
        assert before != snapshot_files(memory)

        open_viewer(browser, viewer, "/dreams")
        screenshot(browser, "dreams")
        click(browser, "button.undo")  # the page may be swapped by a live update
        wait_for(lambda: browser.find_elements(By.ID, "result"), what="the result")
        result = browser.find_element(By.ID, "result").text
        screenshot(browser, "undo")

        assert "undid" in result.lower() or "restored" in result.lower(), result
        assert before == snapshot_files(memory)

    def test_restore_through_the_button_brings_back_the_bytes(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """Two versions recorded by the daemon; Restore on the older: its bytes back.

        Without memd.history (issue 33) the file page offers no Restore and
        says so: the button sits behind that feature check.
        """
        from selenium.webdriver.common.by import By

        from memd.ui.gather import history_available

        memory = make_project(isolated_home.home, "hist")
        backdate(memory)
        first = (memory / "note_0.md").read_bytes()
        viewer = start_viewer()
        page = f"/file?id={project_id(str(memory))}&file=note_0.md"
        if not history_available():
            open_viewer(browser, viewer, page)
            assert [] == browser.find_elements(By.CSS_SELECTOR, ".restore")
            assert "File history is not available" in text_of(browser)
            return
        from memd.history.store import History

        state = str(isolated_home.state / "memd")

        def revisions() -> list[int]:
            with History.open(state) as history:
                changes = history.changes(str(memory), relpath="note_0.md")
                return [change.rev for change in changes]

        older = wait_for(revisions, what="the first version recorded")
        assert isinstance(older, list)
        (memory / "note_0.md").write_bytes(first.replace(b"Fact 0", b"Changed 0"))
        wait_for(lambda: len(revisions()) > len(older), what="the second version")
        open_viewer(browser, viewer, page)
        screenshot(browser, "file-history")
        browser.find_element(
            By.CSS_SELECTOR, f'a.restore[data-rev="{older[0]}"]'
        ).click()
        browser.find_element(By.ID, "confirm").click()  # Restore asks once
        wait_for(lambda: browser.find_elements(By.ID, "result"), what="the result")
        result = browser.find_element(By.ID, "result").text

        assert "restored note_0.md" in result, result
        assert first == (memory / "note_0.md").read_bytes()


def snapshot_files(memory: Path) -> dict[str, bytes]:
    """Every regular file below `memory` (the lock file aside) and its bytes."""
    found = {}
    for path in sorted(memory.rglob("*")):
        if path.is_file() and path.name != ".consolidate-lock":
            found[os.path.relpath(path, memory)] = path.read_bytes()
    return found
