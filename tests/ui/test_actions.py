"""The viewer's actions in a real browser, checked on disk byte for byte (issue 42).

Restore asks once with the diff and offers Undo; a revision that holds no
version is a clear 4xx page (issue 41, class 4); the overview puts what needs
attention first and filters by name; Compact shows `memd fix`'s plan before it
applies it; a loss brings back exactly what it took. Each served by a real
`memd run`, driven through Debian's chromium. With MEMD_DOC_SHOTS=1 the
screenshots go to docs/viewer-*.png (the ones docs/ui.md shows).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from memd.claude_code.paths import default_memory_dir
from memd.state import remember_project
from memd.ui.views import project_id
from tests.conftest import Home
from tests.daemon.conftest import backdate, topic, wait_for
from tests.ui.conftest import click, screenshot
from tests.ui.test_browser import open_viewer, snapshot_files, text_of

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

DOCS = Path(__file__).resolve().parent.parent.parent / "docs"
DOC_SHOTS = os.environ.get("MEMD_DOC_SHOTS") == "1"  # read before a test's own env


def shot(browser: Any, name: str) -> None:
    """The test artifact; with MEMD_DOC_SHOTS=1 also docs/viewer-NAME.png."""
    screenshot(browser, name)
    if DOC_SHOTS:
        browser.save_screenshot(str(DOCS / f"viewer-{name}.png"))


def state_dir(home: Home) -> str:
    return str(home.state / "memd")


def rooted_project(home: Home, name: str, *, entries: int = 1) -> Path:
    """A project in ~/code/NAME whose root memd has learned; returns its memory dir."""
    root = home.home / "code" / name
    root.mkdir(parents=True)
    memory = Path(default_memory_dir(str(root)).rstrip(os.sep))
    memory.mkdir(parents=True)
    lines = []
    for number in range(entries):
        (memory / f"note_{number}.md").write_text(
            topic(f"note_{number}", body=f"Fact {number} about {name}.\n")
        )
        lines.append(f"- [Note {number}](note_{number}.md) — fact {number} of {name}")
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")
    remember_project(state_dir(home), str(root))
    return memory


def stale_project(home: Home, name: str) -> Path:
    """A rooted project whose real git history removed `src/legacy.py`, with a
    memory that still names it (a D001 for the daemon's truth check)."""
    memory = rooted_project(home, name)
    root = home.home / "code" / name
    (root / "src").mkdir()
    (root / "src" / "legacy.py").write_text("print('old')\n")
    (root / "src" / "keep.py").write_text("print('kept')\n")
    who = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    for command in (
        ["init", "-q"],
        ["add", "-A"],
        ["commit", "-q", "-m", "init"],
        ["rm", "-q", "src/legacy.py"],
        ["commit", "-q", "-m", "drop legacy"],
    ):
        subprocess.run(
            ["git", "-c", "init.defaultBranch=main", *command],
            cwd=root,
            env={**os.environ, **who},
            check=True,
            capture_output=True,
        )
    (memory / "project_entry.md").write_text(
        topic("project_entry", type_="project", body="Entry point: `src/legacy.py`.\n")
    )
    with open(memory / "MEMORY.md", "a") as index:
        index.write("- [Entry](project_entry.md) — where the program starts\n")
    return memory


def revisions(home: Home, memory: Path, relpath: str | None = None) -> list[Any]:
    from memd.history.store import History

    with History.open(state_dir(home)) as history:
        return history.changes(str(memory), relpath=relpath)


def recorded(home: Home, memory: Path, relpath: str, data: bytes) -> bool:
    """Whether the history's newest version of `relpath` is `data`."""
    from memd.history.store import History

    with History.open(state_dir(home)) as history:
        last = history.last_rev(str(memory))
        return last > 0 and history.file_at(str(memory), relpath, last) == data


def result_of(browser: Any) -> str:
    from selenium.webdriver.common.by import By

    wait_for(lambda: browser.find_elements(By.ID, "result"), what="the result page")
    return str(browser.find_element(By.ID, "result").text)


class TestRestore:
    def test_restore_shows_the_diff_asks_once_and_undoes(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """The older version has no frontmatter: the diff shows the `---` lines
        leaving; Restore writes its bytes; Undo puts the newer bytes back."""
        from selenium.webdriver.common.by import By

        memory = rooted_project(isolated_home, "webshop")
        note = memory / "note_0.md"
        older = b"Checkout uses the blue-green deploy.\n"
        note.write_bytes(older)
        backdate(memory)
        viewer = start_viewer()
        wait_for(lambda: recorded(isolated_home, memory, "note_0.md", older))
        newer = topic("note_0", body="Checkout uses the canary deploy.\n").encode()
        note.write_bytes(newer)
        wait_for(lambda: recorded(isolated_home, memory, "note_0.md", newer))
        old_rev = revisions(isolated_home, memory, "note_0.md")[-1].rev

        page = f"/file?id={project_id(str(memory))}&file=note_0.md"
        open_viewer(browser, viewer, page)
        click(browser, f'a.restore[data-rev="{old_rev}"]')
        wait_for(lambda: browser.find_elements(By.ID, "confirm"), what="the confirm")
        removed = [
            e.text for e in browser.find_elements(By.CSS_SELECTOR, "pre.diff .del")
        ]
        heading = browser.find_element(By.TAG_NAME, "h1").text
        shot(browser, "restore-confirm")
        assert newer == note.read_bytes()  # asking wrote nothing
        click(browser, "#confirm")
        message = result_of(browser)
        changed = browser.find_element(By.ID, "changed").text
        shot(browser, "restore-done")
        restored = note.read_bytes()
        click(browser, "#undo")
        undone = result_of(browser)

        assert "Restore note_0.md to its version of" in heading
        assert ["----", "----"] == [line for line in removed if line == "----"]
        assert "-name: note_0" in removed
        assert "restored note_0.md" in message
        assert "note_0.md" in changed
        assert "lines" in changed
        assert older == restored
        assert "undid the restore" in undone
        assert newer == note.read_bytes()

    def test_a_revision_without_a_version_is_a_clear_4xx(
        self, isolated_home: Home, start_viewer: Any
    ) -> None:
        """rev 0, rev 999999999, a deletion: a page that says why, never a 500."""
        memory = rooted_project(isolated_home, "shop", entries=2)
        backdate(memory)
        viewer = start_viewer()
        wait_for(lambda: revisions(isolated_home, memory, "note_1.md"))
        (memory / "note_1.md").unlink()
        deletion = wait_for(
            lambda: [
                c.rev
                for c in revisions(isolated_home, memory, "note_1.md")
                if any(f.kind == "deleted" for f in c.files)
            ],
            what="the deletion recorded",
        )
        assert isinstance(deletion, list)
        cookie = viewer.cookie()
        ident = project_id(str(memory))
        from memd.ui.security import csrf_value

        csrf = csrf_value(viewer.token)
        cases = {
            "0": (404, "no revision 0"),
            "999999999": (404, "no revision 999999999"),
            str(deletion[0]): (409, "note_1.md was deleted in that change"),
        }
        for rev, (status, why) in cases.items():
            got, _, body = viewer.request(
                "GET",
                f"/restore?id={ident}&file=note_1.md&rev={rev}",
                headers={"Cookie": cookie},
            )
            posted, _, answer = viewer.request(
                "POST",
                "/restore",
                headers={"Cookie": cookie, "Origin": f"http://{viewer.host}"},
                body=f"csrf={csrf}&id={ident}&file=note_1.md&rev={rev}".encode(),
            )

            assert (status, status) == (got, posted), rev
            assert why in body.decode(), rev
            assert why in answer.decode(), rev
        assert not (memory / "note_1.md").exists()
        # the deleted file's page offers the version before the deletion
        got, _, body = viewer.request(
            "GET", f"/file?id={ident}&file=note_1.md", headers={"Cookie": cookie}
        )
        assert 200 == got
        assert "Deleted" in body.decode()
        assert "Restore this version" in body.decode()


class TestOverview:
    def test_what_needs_attention_comes_first_named_by_folder(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """A loss, then errors, then a cut index, then memories naming what the
        code no longer has (issue 43's truth check, with their count linking to
        "Needs review"), then warnings, then the rest; the filter keeps the
        projects whose name holds the text."""
        from selenium.webdriver.common.by import By

        clean = rooted_project(isolated_home, "aclean")
        warned = rooted_project(isolated_home, "bwarn")
        with open(warned / "MEMORY.md", "a") as index:
            index.write("- [Gone](gone.md) — a file that is not there\n")
        broken = rooted_project(isolated_home, "cerr")
        (broken / "note_0.md").write_text(topic("note_0", type_="bogus"))
        cut = rooted_project(isolated_home, "dcut", entries=230)
        lossy = rooted_project(isolated_home, "eloss", entries=5)
        stale = stale_project(isolated_home, "fstale")
        backdate(clean, warned, broken, cut, lossy, stale)
        viewer = start_viewer()
        wait_for(lambda: revisions(isolated_home, lossy), what="the first record")
        for number in range(1, 5):
            (lossy / f"note_{number}.md").unlink()
        wait_for(
            lambda: [c for c in revisions(isolated_home, lossy) if c.is_loss],
            what="the loss",
        )

        expected = [
            "~/code/eloss",
            "~/code/cerr",
            "~/code/dcut",
            "~/code/fstale",
            "~/code/bwarn",
            "~/code/aclean",
        ]
        open_viewer(browser, viewer)

        def names() -> list[str]:
            """The rows' names once every project is built (the daemon may still
            be linting one: its row then waits below the rest)."""
            from selenium.common.exceptions import StaleElementReferenceException

            browser.get(viewer.url)
            try:
                return [
                    e.text
                    for e in browser.find_elements(By.CSS_SELECTOR, "tr.project a.name")
                ]
            except StaleElementReferenceException:  # a live update swapped it
                return []

        shown = wait_for(lambda: (found := names()) == expected and found)
        shot(browser, "overview")
        review = wait_for(
            lambda: [
                (e.text, e.get_attribute("href"))
                for e in browser.find_elements(By.CSS_SELECTOR, "tr.project a.review")
            ],
            what="the needs-review link",
        )

        def type_filter() -> bool:
            from selenium.common.exceptions import (
                NoSuchElementException,
                StaleElementReferenceException,
            )

            try:  # a live update may swap the page under the box
                box = browser.find_element(By.NAME, "q")
                box.clear()
                box.send_keys("CUT")
                box.submit()
            except (NoSuchElementException, StaleElementReferenceException):
                return False
            return True

        wait_for(type_filter, what="the filter typed")
        wait_for(lambda: "q=CUT" in browser.current_url, what="the filtered page")
        filtered = wait_for(
            lambda: (
                "matching" in text_of(browser)
                and [
                    e.text
                    for e in browser.find_elements(By.CSS_SELECTOR, "tr.project a.name")
                ]
            ),
            what="the filtered rows",
        )

        assert expected == shown
        assert [
            (
                "1 memory needs review",
                f"{viewer.url}project?id={project_id(str(stale))}#needs-review",
            )
        ] == review
        assert ["~/code/dcut"] == filtered


class TestCompact:
    def test_compact_shows_the_plan_applies_it_and_undoes(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        from selenium.webdriver.common.by import By

        from memd.lint.fix_files import plan_directory

        memory = rooted_project(isolated_home, "bigindex", entries=230)
        backdate(memory)
        before = snapshot_files(memory)
        planned = plan_directory(str(memory))
        viewer = start_viewer()

        open_viewer(browser, viewer)
        wait_for(
            lambda: browser.find_elements(By.CSS_SELECTOR, "a.compact"),
            what="the Compact button",
        )
        click(browser, "a.compact")
        wait_for(lambda: browser.find_elements(By.ID, "summary"), what="the plan")
        summary = browser.find_element(By.ID, "summary").text
        shot(browser, "compact-plan")
        assert before == snapshot_files(memory)  # the plan wrote nothing
        click(browser, "#confirm")
        message = result_of(browser)
        shot(browser, "compact-done")
        after = snapshot_files(memory)
        click(browser, "#undo")
        undone = result_of(browser)

        assert re.search(r"MEMORY\.md 230 → \d+ lines", summary), summary
        assert "applied memd fix" in message
        for edit in planned:
            assert (None if edit.is_removal else edit.new) == (
                after.get(edit.relpath)
            ), edit.relpath
        assert len(after["MEMORY.md"].splitlines()) <= 200
        assert "undid memd fix" in undone
        assert before == snapshot_files(memory)

    def test_a_stale_plan_writes_nothing(
        self, isolated_home: Home, start_viewer: Any
    ) -> None:
        """The memory changed between showing the plan and Apply: 409, no write."""
        memory = rooted_project(isolated_home, "stale", entries=230)
        backdate(memory)
        viewer = start_viewer()
        cookie = viewer.cookie()
        ident = project_id(str(memory))
        status, _, body = viewer.request(
            "GET", f"/compact?id={ident}", headers={"Cookie": cookie}
        )
        digest = re.search(rb'name="plan" value="([0-9a-f]{64})"', body)
        assert (200, True) == (status, digest is not None)
        with open(memory / "MEMORY.md", "a") as index:
            index.write("- [Late](note_0.md) — written after the plan was shown\n")
        before = snapshot_files(memory)
        from memd.ui.security import csrf_value

        assert digest is not None
        status, _, answer = viewer.request(
            "POST",
            "/compact",
            headers={"Cookie": cookie, "Origin": f"http://{viewer.host}"},
            body=(
                f"csrf={csrf_value(viewer.token)}&id={ident}"
                f"&plan={digest.group(1).decode()}"
            ).encode(),
        )

        assert 409 == status
        assert "changed since the plan was shown" in answer.decode()
        assert before == snapshot_files(memory)


class TestLoss:
    def test_restore_what_was_lost_brings_back_exactly_those_files(
        self, isolated_home: Home, start_viewer: Any, browser: Any
    ) -> None:
        """Four files deleted; a file written after the loss stays as it is."""
        from selenium.webdriver.common.by import By

        memory = rooted_project(isolated_home, "lossy", entries=5)
        backdate(memory)
        original = snapshot_files(memory)
        viewer = start_viewer()
        wait_for(lambda: revisions(isolated_home, memory), what="the first record")
        for number in range(1, 5):
            (memory / f"note_{number}.md").unlink()
        wait_for(
            lambda: [c for c in revisions(isolated_home, memory) if c.is_loss],
            what="the loss",
        )
        fresh = topic("fresh", body="Written after the loss.\n").encode()
        (memory / "fresh.md").write_bytes(fresh)
        wait_for(lambda: recorded(isolated_home, memory, "fresh.md", fresh))

        open_viewer(browser, viewer)
        click(browser, "tr.lossy a.action")
        wait_for(lambda: browser.find_elements(By.ID, "confirm"), what="the list")
        listed = {
            row.get_attribute("data-file"): row.text
            for row in browser.find_elements(By.CSS_SELECTOR, "tr.lost-file")
        }
        shot(browser, "loss")
        click(browser, "#confirm")
        message = result_of(browser)
        shot(browser, "loss-done")
        restored = snapshot_files(memory)
        _, _, overview = viewer.request("GET", "/", headers={"Cookie": viewer.cookie()})
        lossy_rows = re.findall(r'class="project[^"]*\blossy\b', overview.decode())
        click(browser, "#undo")
        result_of(browser)

        assert {f"note_{n}.md" for n in range(1, 5)} == set(listed)
        size = len(original["note_1.md"])
        assert f"{size} bytes" in listed["note_1.md"]
        assert "brought back what was lost: 4 file(s)" in message
        assert {**original, "fresh.md": fresh} == restored
        assert [] == lossy_rows  # marked restored: no alarm
        settled = overview.decode().split('class="muted small settled">', 1)[1]
        assert "restored" in settled.split("</div>", 1)[0]
        assert {"MEMORY.md", "note_0.md", "fresh.md"} == set(snapshot_files(memory))


def test_hostile_paths_never_reach_the_new_pages(
    isolated_home: Home, start_viewer: Any
) -> None:
    """The new pages take their relpath through the one rule, and a number as rev."""
    memory = rooted_project(isolated_home, "guard")
    backdate(memory)
    viewer = start_viewer()
    cookie = viewer.cookie()
    ident = project_id(str(memory))
    for path in (
        f"/restore?id={ident}&file={quote('../x.md')}&rev=1",
        f"/restore?id={ident}&file=note_0.md&rev=-1",
        f"/restore?id={ident}&file=note_0.md&rev=1234567890",
        f"/loss?id={ident}&rev=x",
        f"/compact?id={ident}&file={quote('/etc/passwd')}",
        "/compact?id=../../etc",
    ):
        status, _, _ = viewer.request("GET", path, headers={"Cookie": cookie})
        assert 400 == status, path
    for path in ("/restore/undo", "/compact/undo"):  # a GET never acts
        status, _, _ = viewer.request(
            "GET", f"{path}?id={ident}", headers={"Cookie": cookie}
        )
        assert 405 == status, path
    for path in ("/restore/undo", "/loss", "/compact", "/compact/undo"):
        status, _, _ = viewer.request(
            "POST",
            path,
            headers={"Cookie": cookie, "Origin": f"http://{viewer.host}"},
            body=f"id={ident}&rev=1".encode(),
        )
        assert 403 == status, path  # no CSRF value


class TestDreams:
    def test_a_dream_reads_as_the_facts_it_added_and_updated_with_undo(
        self,
        isolated_home: Home,
        git_repo: Path,
        start_viewer: Any,
        browser: Any,
    ) -> None:
        """Per file: the fact added, the fact updated with its old value; Undo
        puts every file back to the byte; the names are the agent's."""
        import datetime

        from selenium.webdriver.common.by import By

        from memd.claude_code.paths import resolve_memory_location
        from memd.kairos.daily_log import append_entry
        from tests.ui.conftest import dream_now

        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [Role](role.md) — who the user is\n")
        (memory / "role.md").write_text(topic("role"))
        now = datetime.datetime.now().astimezone()
        append_entry(str(memory), "#deploy the deploy timeout is 30 s", now=now)
        backdate(memory)
        viewer = start_viewer()
        dream_now(viewer.daemon, git_repo)
        append_entry(str(memory), "#deploy the deploy timeout is 60 s", now=now)
        append_entry(str(memory), "[feedback] #testing use a real database", now=now)
        first = snapshot_files(memory)  # the first dream's files, the new entries
        dream_now(viewer.daemon, git_repo)

        open_viewer(browser, viewer, "/dreams")

        def newest_dream() -> tuple[dict[str, list[str]], str] | None:
            """The newest dream's facts per file and its heading; None while a
            live update swaps the page."""
            from selenium.common.exceptions import StaleElementReferenceException

            try:
                newest = browser.find_elements(By.CSS_SELECTOR, "article.generation")[0]
                return {
                    f.get_attribute("data-file"): [
                        li.text for li in f.find_elements(By.CSS_SELECTOR, "li.fact")
                    ]
                    for f in newest.find_elements(By.CSS_SELECTOR, ".dream-file")
                }, newest.find_element(By.TAG_NAME, "h3").text
            except (StaleElementReferenceException, IndexError):
                return None

        found = wait_for(newest_dream, what="the newest dream")
        assert isinstance(found, tuple)
        facts, heading = found
        shot(browser, "dreams")
        click(browser, "button.undo")
        message = result_of(browser)
        browser.get(viewer.url + "dreams")
        last = text_of(browser)

        assert [
            "UPDATED the deploy timeout is 60 s (was: the deploy timeout is 30 s)"
        ] == facts["project_deploy.md"]
        assert ["ADDED use a real database"] == facts["feedback_testing.md"]
        assert heading.startswith("Dream of ")
        assert "#" not in heading
        assert "+00:00" not in heading
        assert "undid dream" in message
        assert first == snapshot_files(memory)
        assert "undone, 2 entries" in last


def test_restore_never_writes_through_a_link_and_says_so(
    isolated_home: Home, start_viewer: Any
) -> None:
    """A memory file swapped for a link to outside: 409 at the confirm and the
    POST, the link and its target as they were."""
    memory = rooted_project(isolated_home, "linked")
    backdate(memory)
    viewer = start_viewer()
    first = wait_for(lambda: revisions(isolated_home, memory, "note_0.md"))
    assert isinstance(first, list)
    outside = isolated_home.root / "outside.md"
    outside.write_bytes(b"not memd's\n")
    (memory / "note_0.md").unlink()
    (memory / "note_0.md").symlink_to(outside)
    cookie = viewer.cookie()
    ident = project_id(str(memory))
    from memd.ui.security import csrf_value

    got, _, body = viewer.request(
        "GET",
        f"/restore?id={ident}&file=note_0.md&rev={first[-1].rev}",
        headers={"Cookie": cookie},
    )
    posted, _, answer = viewer.request(
        "POST",
        "/restore",
        headers={"Cookie": cookie, "Origin": f"http://{viewer.host}"},
        body=(
            f"csrf={csrf_value(viewer.token)}&id={ident}&file=note_0.md"
            f"&rev={first[-1].rev}"
        ).encode(),
    )

    assert (409, 409) == (got, posted)
    assert "note_0.md is not a regular file here" in body.decode()
    assert "note_0.md is not a regular file here" in answer.decode()
    assert (memory / "note_0.md").is_symlink()
    assert b"not memd's\n" == outside.read_bytes()


def test_a_history_that_cannot_be_read_is_a_clear_page(
    isolated_home: Home, start_viewer: Any
) -> None:
    """history.sqlite3 damaged: Restore's page says so (409), never a bare 500."""
    memory = rooted_project(isolated_home, "damaged")
    backdate(memory)
    store = isolated_home.state / "memd" / "history"
    store.mkdir(parents=True)
    (store / "history.sqlite3").write_bytes(b"not a database" * 512)
    viewer = start_viewer()
    cookie = viewer.cookie()
    ident = project_id(str(memory))

    status, _, body = viewer.request(
        "GET", f"/restore?id={ident}&file=note_0.md&rev=1", headers={"Cookie": cookie}
    )

    assert 409 == status
    assert "the file history cannot be read" in body.decode()
