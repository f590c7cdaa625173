"""`pytest tests/fuzz --long` runs every property with the "long" hypothesis profile.

Equivalent to `MEMD_HYPOTHESIS_PROFILE=long pytest tests/fuzz`; the default is
the CI-sized "ci" profile registered in tests/conftest.py.
"""

from __future__ import annotations

import pytest
from hypothesis import settings


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="run the fuzz properties with the long hypothesis profile",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--long", default=False):
        settings.load_profile("long")
