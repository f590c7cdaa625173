"""The codebase passes its own linters: ruff, and mypy --strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
class TestTooling:
    def test_ruff_is_clean(self) -> None:
        """`ruff check` reports nothing on memd, tests and bench."""
        result = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "memd", "tests", "bench"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == result.returncode, result.stdout + result.stderr

    def test_ruff_format_is_clean(self) -> None:
        """`ruff format --check` finds nothing to reformat."""
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "ruff",
                "format",
                "--check",
                "memd",
                "tests",
                "bench",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == result.returncode, result.stdout + result.stderr

    def test_mypy_strict_is_clean(self) -> None:
        """mypy --strict passes on memd and tests/typing_api.py."""
        result = subprocess.run(
            [sys.executable, "-m", "mypy"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == result.returncode, result.stdout + result.stderr
