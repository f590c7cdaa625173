"""The viewer names its size cap as a cap, never "not found" (#41 class 8)."""

from __future__ import annotations

from typing import Any

import pytest

from memd.ui.gather import MAX_SHOWN_FILE_BYTES
from memd.ui.views import project_id
from tests.conftest import Home
from tests.daemon.conftest import backdate
from tests.ui.conftest import make_project

pytestmark = [pytest.mark.daemon, pytest.mark.slow]


def test_a_file_over_the_viewers_cap_says_so(
    isolated_home: Home, start_viewer: Any
) -> None:
    """The file, its size and the cap: a real `memd run`, a real request."""
    memory = make_project(isolated_home.home, "capped")
    size = MAX_SHOWN_FILE_BYTES + 100
    (memory / "huge.md").write_bytes(b"---\nname: huge\n---\n" + b"x" * (size - 19))
    backdate(memory)
    viewer = start_viewer()
    cookie = viewer.cookie()

    status, _, body = viewer.request(
        "GET",
        f"/file?id={project_id(str(memory))}&file=huge.md",
        headers={"Cookie": cookie},
    )

    text = body.decode()
    assert 404 == status
    assert "huge.md" in text
    assert f"{size:,} bytes" in text
    assert f"cap of {MAX_SHOWN_FILE_BYTES:,} bytes" in text
    assert "not read" in text
