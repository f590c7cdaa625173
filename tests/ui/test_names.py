"""The viewer names projects by their folder and shows times a person reads.

A real `memd run` serving the viewer, projects in real folders under
`~/code`, pages fetched over HTTP with the session cookie and read as text.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from memd.claude_code.paths import auto_mem_path
from memd.ui import plots
from tests.conftest import Home
from tests.daemon.conftest import backdate, topic, wait_for
from tests.ui.conftest import Viewer

RAW_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
MICROSECONDS = re.compile(r"\d\d:\d\d:\d\d\.\d{3,}")
LONG = (
    "platform-infrastructure-terraform-modules-for-production-eu-west-1-and-us-east-2"
)


def _project(home: Home, *parts: str) -> Path:
    root = home.home.joinpath("code", *parts)
    root.mkdir(parents=True)
    memory = Path(auto_mem_path(str(root)))
    memory.mkdir(parents=True)
    (memory / "note.md").write_text(topic("note"))
    (memory / "MEMORY.md").write_text("- [Note](note.md) — a note\n")
    return memory


def _get(viewer: Viewer, path: str) -> str:
    status, _, body = viewer.request("GET", path, headers={"Cookie": viewer.cookie()})
    assert 200 == status, body
    return body.decode("utf-8")


def _legend(svg_page: str) -> list[str]:
    found = re.findall(r'<text class="axis legend"[^>]*>([^<]*)</text>', svg_page)
    return [html.unescape(text) for text in found]


def test_telemetry_names_projects_in_full_with_units(
    isolated_home: Home, start_viewer: object
) -> None:
    memories = [
        _project(isolated_home, "infra-terraform"),
        _project(isolated_home, "webshop"),
        _project(isolated_home, "team", LONG),
    ]
    backdate(*memories)
    viewer = start_viewer()  # type: ignore[operator]
    telemetry = isolated_home.state / "memd" / "telemetry.jsonl"
    wait_for(
        lambda: telemetry.exists() and telemetry.read_text().count("\n") >= 3,
        what="three prompts built",
    )

    page = _get(viewer, "/telemetry")

    legend = "\n".join(_legend(page))
    assert "~/code/infra-terraform" in legend, legend
    assert "~/code/webshop" in legend, legend
    assert f"~/code/team/{LONG}" in "".join(_legend(page)), legend  # wrapped, whole
    assert ">characters</text>" in page
    assert ">lines</text>" in page
    assert "time (local)" in page
    assert page.count("times are local (") == 1  # the zone, once per page
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    for internal in ("memdir_loaded", "renders", "units", "UTC-16"):
        assert internal not in text, internal
    assert RAW_ISO.search(text) is None
    assert MICROSECONDS.search(text) is None


class TestLegend:
    def test_a_long_name_wraps_and_loses_no_character(self) -> None:
        label = f"~/code/team/{LONG}"
        series = (plots.Series(label=label, points=((1.0, 2.0), (2.0, 3.0))),)

        svg = plots.line_plot(series, title="t", unit="characters")

        pieces = _legend(svg)
        assert "".join(pieces) == label
        assert len(pieces) > 1
        assert all(len(piece) <= plots.LEGEND_CHARS for piece in pieces)

    def test_every_series_is_named_up_to_the_cap_then_counted(self) -> None:
        series = tuple(
            plots.Series(label=f"~/code/p{i}", points=((1.0, float(i)),))
            for i in range(plots.MAX_SERIES + 3)
        )

        pieces = _legend(plots.line_plot(series, title="t", unit="lines"))

        assert len(pieces) == plots.MAX_SERIES + 1
        assert pieces[-1] == "and 3 more projects, smaller, not drawn"
        assert "~/code/p0" not in pieces  # the smallest are left out


def test_the_last_dream_reads_as_a_local_time() -> None:
    """The overview's dream line had "2026-12-06T23:03:51.696334+00:00" (#42)."""
    import time
    from datetime import datetime

    from memd.times import clock
    from memd.ui import views

    stamp = "2026-12-06T23:03:51.696334+00:00"
    record = {"last_run": stamp, "last_result": {"status": "ok", "entries": 3}}

    line = views.dream_line(record)

    epoch = datetime.fromisoformat(stamp).timestamp()
    assert line == f"{clock(epoch, now=time.time())}, ok, 3 entries"
    assert MICROSECONDS.search(line) is None
    assert RAW_ISO.search(line) is None


def test_recall_names_each_hit_by_its_project(
    isolated_home: Home, start_viewer: object
) -> None:
    memory = _project(isolated_home, "webshop")
    (memory / "note.md").write_text(topic("note", body="The deploy uses blue green.\n"))
    backdate(memory)
    viewer = start_viewer()  # type: ignore[operator]

    def hits() -> str | None:
        found = _get(viewer, "/recall?q=deploy")
        return found if 'class="hit"' in found else None

    page = wait_for(hits, what="a recall hit")

    assert "~/code/webshop: note.md" in html.unescape(str(page))
    assert str(memory) not in str(page)


def test_the_dreams_page_names_a_dream_by_a_local_time(
    isolated_home: Home, start_viewer: object
) -> None:
    """The dreams page showed "2026-12-06T23:03:51.696334+00:00" (#42)."""
    import subprocess

    from tests.daemon.conftest import MEMD

    memory = _project(isolated_home, "webshop")
    root = isolated_home.home / "code" / "webshop"
    viewer = start_viewer()  # type: ignore[operator]
    env = viewer.daemon.env
    for argv in (["log", "#ops the pager rotates weekly"], ["dream", "--now"]):
        subprocess.run([*MEMD, *argv], cwd=root, env=env, check=True, timeout=60)

    page = html.unescape(_get(viewer, "/dreams"))

    assert "today " in page, page
    assert MICROSECONDS.search(page) is None
    assert RAW_ISO.search(page) is None
    assert memory.exists()
