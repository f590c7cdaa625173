"""The built distribution, shared by the wheel test and the live systemd test."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.machine_lock import held

REPO = Path(__file__).resolve().parents[2]


def one_at_a_time(name: str) -> contextlib.AbstractContextManager[None]:
    """Hold the machine-wide lock `name` (pytest-xdist's workers run side by side).

    For what a machine has once: the checkout `python -m build` writes its
    egg-info into, and /run/systemd/system, which a live user manager needs.
    """
    return held(Path(tempfile.gettempdir()) / f"memd-tests-{name}.lock")


@pytest.fixture(name="dist_dir", scope="session")
def _dist_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the real `python -m build` once: an sdist and a wheel, in a temp dir."""
    out = tmp_path_factory.mktemp("dist")
    with one_at_a_time("build"):
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
