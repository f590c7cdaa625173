"""The viewer's overview names other agents' stores, their losses and problems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Home
from tests.daemon.conftest import wait_for


def test_the_overview_lists_codex_and_gemini_stores(
    isolated_home: Home, start_viewer: Any
) -> None:
    from memd.history.store import History

    codex = isolated_home.home / ".codex" / "memories"
    codex.mkdir(parents=True)
    (codex / "memory_summary.md").write_text("- uses pnpm\n" * 10)
    (codex / "raw_memories.md").write_text(
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n"
    )
    project = isolated_home.home / ".gemini" / "tmp" / "app" / "memory"
    project.mkdir(parents=True)
    (project.parent / ".project_root").write_text(str(isolated_home.home / "app"))
    (project / "MEMORY.md").write_text("- [Build](build.md) — make\n")
    viewer = start_viewer(CODEX_HOME=str(codex.parent))
    state = str(isolated_home.state / "memd")

    def recorded(losses: bool) -> bool:
        with History.open(state) as history:
            return bool(history.changes(str(codex), losses_only=losses))

    wait_for(lambda: recorded(False), what="the first record")
    (codex / "memory_summary.md").write_text("")
    wait_for(lambda: recorded(True), what="the loss recorded")
    status, _, body = viewer.request("GET", "/", headers={"Cookie": viewer.cookie()})

    assert status == 200
    page = body.decode()
    section = page.split("<h2>Other agents", 1)[1]
    assert "Codex CLI memories" in section
    assert "Gemini CLI memory of ~/app" in section
    codex_row = section.split("Codex CLI memories", 1)[1].split("</tr>", 1)[0]
    assert "loss:" in codex_row
    assert "likely secret (github-token" in codex_row
    assert "ghp_" not in page  # only the rule and fingerprint, never the secret


def test_a_store_file_history_restores_and_undoes_in_the_browser(
    isolated_home: Home, start_viewer: Any, browser: Any
) -> None:
    """Codex's emptied summary and Gemini's GEMINI.md: each store's file is a
    link on the overview to its history; Restore asks with the diff, writes
    the recorded bytes back, and Undo takes it back (issue 44 item 2)."""
    from selenium.webdriver.common.by import By

    from memd.history.store import History
    from memd.ui.views import project_id
    from tests.ui.conftest import click
    from tests.ui.test_actions import result_of
    from tests.ui.test_browser import open_viewer

    codex = isolated_home.home / ".codex" / "memories"
    codex.mkdir(parents=True)
    summary = codex / "memory_summary.md"
    kept = b"- the webshop uses pnpm, never npm\n" * 5
    summary.write_bytes(kept)
    gemini = isolated_home.home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_bytes(b"## Gemini Added Memories\n- likes tabs\n")
    (gemini / "settings.json").write_text('{"secret": "not memory"}\n')
    viewer = start_viewer(CODEX_HOME=str(codex.parent))
    state = str(isolated_home.state / "memd")

    def losses() -> list[int]:
        with History.open(state) as history:
            return [c.rev for c in history.changes(str(codex), losses_only=True)]

    def recorded(directory: Path) -> bool:
        with History.open(state) as history:
            return bool(history.changes(str(directory)))

    wait_for(lambda: recorded(codex) and recorded(gemini), what="the first records")
    summary.write_bytes(b"")
    wait_for(losses, what="the loss recorded")

    open_viewer(browser, viewer)
    links = wait_for(
        lambda: {
            e.text: e.get_attribute("href")
            for e in browser.find_elements(By.CSS_SELECTOR, "tr.store a.store-file")
        },
        what="the stores' file links",
    )
    assert isinstance(links, dict)
    ident = project_id(str(codex))
    assert links["memory_summary.md"] == (
        f"{viewer.url}file?id={ident}&file=memory_summary.md"
    )
    assert links["GEMINI.md"].endswith(
        f"file?id={project_id(str(gemini))}&file=GEMINI.md"
    )
    assert "settings.json" not in links
    cookie = viewer.cookie()
    status, _, _ = viewer.request(  # a single-file store shows its file alone
        "GET",
        f"/file?id={project_id(str(gemini))}&file=settings.json",
        headers={"Cookie": cookie},
    )
    assert 404 == status

    click(browser, 'tr.store a.store-file[href$="memory_summary.md"]')
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, "a.restore"))
    heading = browser.find_element(By.TAG_NAME, "h1").text
    click(browser, "a.restore")
    wait_for(lambda: browser.find_elements(By.ID, "confirm"), what="the confirm")
    assert b"" == summary.read_bytes()  # asking wrote nothing
    click(browser, "#confirm")
    message = result_of(browser)
    restored = summary.read_bytes()
    click(browser, "#undo")
    undone = result_of(browser)

    assert "memory_summary.md" == heading
    assert "restored memory_summary.md" in message
    assert kept == restored
    assert "undid the restore" in undone
    assert b"" == summary.read_bytes()
