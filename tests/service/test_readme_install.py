"""README.md's first install command, run as written, in a fresh HOME.

The checkout is the sdist `python -m build` made, unpacked; systemctl is the
recording stub (the live user manager case is tests/service/test_live_systemd.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.conftest import SERVICE_STUB_DIR, recorded
from tests.service.conftest import REPO

pytestmark = pytest.mark.slow


def install_lines() -> list[str]:
    readme = (REPO / "README.md").read_text("utf-8")
    match = re.search(
        r"<!-- install-command:start -->\n```sh\n(.*?)```\n"
        r"<!-- install-command:end -->",
        readme,
        re.DOTALL,
    )
    assert match is not None
    return match.group(1).splitlines()


def test_the_published_line_comes_second_and_says_it_is_not_published() -> None:
    lines = install_lines()

    assert lines[0].startswith("python3 -m venv ")
    assert "not yet" in lines[1]
    assert lines[2].startswith("pipx install memd-daemon")


def test_the_first_line_works_on_a_fresh_machine(
    dist_dir: Path, tmp_path: Path, stub: Path
) -> None:
    (sdist,) = dist_dir.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "src", filter="data")
    (checkout,) = (tmp_path / "src").iterdir()
    home = tmp_path / "fresh-home"
    home.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith(("PIP_", "SERVICE_"))},
        "HOME": str(home),
        "PATH": f"{SERVICE_STUB_DIR}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }

    done = subprocess.run(
        ["sh", "-c", install_lines()[0]],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )

    assert 0 == done.returncode, done.stdout[-2000:] + done.stderr[-2000:]
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert {"SessionStart", "PostToolUse"} == set(settings["hooks"])
    assert "systemctl --user enable --now memd.service" in recorded(stub)
    assert "next:" in done.stdout
