"""tests/ci_skips.py: a skip fails the run under CI=true and only there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = """
import pytest

def test_runs():
    pass

def test_needs_a_tool():
    pytest.skip("the tool is not installed")

@pytest.mark.skipif(True, reason="marked")
def test_marked():
    pass

@pytest.mark.xfail(reason="known", strict=True)
def test_known_bug():
    assert False
"""


def _pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.ci_skips",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("ci", ["true", "1"])
def test_skips_fail_in_ci(tmp_path: Path, ci: str) -> None:
    """Both kinds of skip fail with their reason; pass and xfail are untouched.

    A skip in the test body is a failure, a skip mark (decided at set-up) an error.
    """
    done = _pytest(tmp_path, ci)

    assert 1 == done.returncode, done.stdout
    assert "1 failed, 1 passed, 1 xfailed, 1 error" in done.stdout, done.stdout
    assert "FAILED test_sample.py::test_needs_a_tool - skipped under CI" in done.stdout
    assert "ERROR test_sample.py::test_marked - skipped under CI" in done.stdout


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_skips_stay_skips_outside_ci(tmp_path: Path, ci: str | None) -> None:
    """Without CI=true a skip is a skip."""
    done = _pytest(tmp_path, ci)

    assert 0 == done.returncode, done.stdout
    assert "1 passed, 2 skipped, 1 xfailed" in done.stdout, done.stdout
