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

    def test_hostile_soak_misses_nothing_and_leaks_nothing(self) -> None:
        """FIFOs, a symlinked logs/, quadratic bait, a deep chain, a rename storm."""
        result = subprocess.run(
            [
                sys.executable,
                str(SOAK),
                "--seconds",
                "8",
                "--projects",
                "10",
                "--hostile",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )

        assert 0 == result.returncode, result.stdout + result.stderr
        assert "missed updates: 0" in result.stdout
        assert "outside canary in cache or state: 0 files" in result.stdout
