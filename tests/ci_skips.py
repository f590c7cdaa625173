"""Under CI=true a skipped test is a failure: CI installs every tool the tests need.

A skip for a missing `node`, `systemd-analyze`, `faketime` or `setpriv`, or for
not being root, would otherwise pass unnoticed. tests/conftest.py imports the
hook; `pytest -p tests.ci_skips` loads it on its own (as its test does).
Expected failures (`xfail`) are left alone.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest


def in_ci() -> bool:
    """Return True when the CI variable says this run is CI (.ci/run sets it)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped under CI=true, where every test must run: {reason}"
