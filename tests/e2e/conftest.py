"""The e2e fixtures: one installed release per memd profile, and a project.

`MEMD_E2E_RELEASES` (comma-separated, as `python -m tests.e2e --release`
sets it) picks other releases; by default every profile's release runs.
A release that cannot be installed fails under CI=true and skips elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.ci_skips import in_ci
from tests.e2e.harness import Project
from tests.e2e.releases import (
    Release,
    ReleaseUnavailable,
    install_release,
    profile_versions,
)


def releases_under_test() -> tuple[str, ...]:
    chosen = os.environ.get("MEMD_E2E_RELEASES", "")
    picked = tuple(v.strip() for v in chosen.split(",") if v.strip())
    return picked or profile_versions()


@pytest.fixture(name="release", scope="session", params=releases_under_test())
def _release(request: pytest.FixtureRequest) -> Release:
    version: str = request.param
    try:
        return install_release(version)
    except ReleaseUnavailable as error:
        if in_ci():
            pytest.fail(f"release {version} is not installable: {error}")
        pytest.skip(f"release {version} is not installable: {error}")


@pytest.fixture(name="project")
def _project(git_repo: Path, release: Release) -> Project:
    return Project(root=git_repo, release=release)
