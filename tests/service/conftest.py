"""The built distribution, shared by the wheel test and the live systemd test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(name="dist_dir", scope="session")
def _dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the real `python -m build` once: an sdist and a wheel, in a temp dir."""
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert 0 == result.returncode, result.stdout[-2000:] + result.stderr[-2000:]
    return out


def wheel_in(dist_dir: Path) -> Path:
    """Return the one wheel `python -m build` made."""
    (wheel,) = dist_dir.glob("*.whl")
    return wheel
