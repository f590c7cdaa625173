"""Every page on real memory: the lint corpus's dirs and 200 generated projects."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from memd.ui.views import project_id
from tests.conftest import Home
from tests.daemon.conftest import backdate
from tests.ui.conftest import make_project, memory_of

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

CORPUS = Path(__file__).resolve().parent.parent / "lint" / "corpus"


def test_every_page_of_every_corpus_dir(isolated_home: Home, start_viewer: Any) -> None:
    """Overview, each project, each file, dreams, telemetry and a recall: all 200."""
    memories = []
    for source in sorted(CORPUS.iterdir()):
        memory = memory_of(isolated_home.home, source.name)
        shutil.copytree(source, memory, symlinks=True)
        memories.append(memory)
    backdate(*memories)
    viewer = start_viewer()
    cookie = viewer.cookie()

    def get(path: str) -> str:
        status, _, body = viewer.request("GET", path, headers={"Cookie": cookie})
        assert 200 == status, path
        return body.decode()

    overview = get("/")
    pages = 0
    for memory in memories:
        chosen = project_id(str(memory))
        assert f'data-id="{chosen}"' in overview
        project = get(f"/project?id={chosen}")
        links = re.findall(r'href="/file\?id=[0-9a-f]+&amp;file=([^"]+)"', project)
        assert links, memory
        for link in links:
            get(f"/file?id={chosen}&file={link}")
            pages += 1
    for path in ("/dreams", "/telemetry", "/recall?q=" + quote("testing")):
        get(path)

    assert pages >= len(memories)


def test_two_hundred_projects(isolated_home: Home, start_viewer: Any) -> None:
    memories = [make_project(isolated_home.home, f"p{n:03}") for n in range(200)]
    backdate(*memories)
    viewer = start_viewer()
    status, _, body = viewer.request("GET", "/", headers={"Cookie": viewer.cookie()})
    shown = set(
        re.findall(r'<tr class="project[^"]*" data-id="([0-9a-f]+)"', body.decode())
    )

    assert 200 == status
    assert {project_id(str(m)) for m in memories} == shown


def test_a_file_name_that_is_not_utf8(isolated_home: Home, start_viewer: Any) -> None:
    """Shown with its byte escaped, not linked, and no page fails on it."""
    import os

    memory = make_project(isolated_home.home, "bytes")
    name = os.path.join(os.fsencode(memory), b"caf\xe9.md")
    with open(name, "wb") as handle:
        handle.write(b"---\nname: cafe\ndescription: d\ntype: user\n---\nbody\n")
    backdate(memory)
    viewer = start_viewer()
    cookie = viewer.cookie()
    chosen = project_id(str(memory))
    status, _, body = viewer.request(
        "GET", f"/project?id={chosen}", headers={"Cookie": cookie}
    )
    recall, _, _ = viewer.request("GET", "/recall?q=body", headers={"Cookie": cookie})

    assert (200, 200) == (status, recall)
    assert "caf\\xe9.md" in body.decode()


def test_the_overview_shows_a_loss_alarm(
    isolated_home: Home, start_viewer: Any
) -> None:
    """Deleting most of a project's files is a loss (memd.history): the row says so."""
    from memd.history.store import History
    from tests.daemon.conftest import wait_for

    memory = make_project(isolated_home.home, "lossy", entries=6)
    backdate(memory)
    viewer = start_viewer()
    state = str(isolated_home.state / "memd")

    def recorded(losses: bool) -> bool:
        with History.open(state) as history:
            return bool(history.changes(str(memory), losses_only=losses))

    wait_for(lambda: recorded(False), what="the first record")
    for number in range(5):
        (memory / f"note_{number}.md").unlink()
    wait_for(lambda: recorded(True), what="the loss recorded")
    status, _, body = viewer.request("GET", "/", headers={"Cookie": viewer.cookie()})
    row = body.decode().split(f'data-id="{project_id(str(memory))}"', 1)[1]

    assert 200 == status
    assert '<div class="alarm">loss:' in row.split("</tr>", 1)[0]

    # Dismissed (or restored), the loss is shown as such, no longer as an alarm.
    with History.open(state) as history:
        [loss] = history.losses()
    done = viewer.daemon.memd("history", "dismiss", str(loss.rev))
    assert done.returncode == 0, done.stderr
    _, _, body = viewer.request("GET", "/", headers={"Cookie": viewer.cookie()})
    row = body.decode().split(f'data-id="{project_id(str(memory))}"', 1)[1]
    cell = row.split("</tr>", 1)[0]
    assert '<div class="alarm">' not in cell
    assert "5 memory files were deleted at" in cell
    assert ": dismissed at " in cell
