"""The viewer's overview names other agents' stores, their losses and problems."""

from __future__ import annotations

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
