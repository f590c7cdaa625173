"""bench/soak.py runs end to end on a small workload and misses no update."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


class TestSoakScript:
    def test_small_soak_misses_nothing(self) -> None:
        """Three seconds over ten projects: exit 0 and `missed updates: 0`."""
        result = subprocess.run(
            [sys.executable, str(SOAK), "--seconds", "3", "--projects", "10"],
            capture_output=True,
            text=True,
            timeout=300,
        )

        assert 0 == result.returncode, result.stdout + result.stderr
        assert "missed updates: 0" in result.stdout
        assert "p99" in result.stdout
