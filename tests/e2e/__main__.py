"""Run the e2e suite against any Claude Code release: `python -m tests.e2e --release X`.

The release is installed (cached) like the profile releases; memd runs with
the newest profile not newer than it. pytest prints, per case, what the agent
did and what memd said where they differ.
"""

from __future__ import annotations

import argparse
import os
import sys

import pytest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e")
    parser.add_argument(
        "--release", action="append", required=True, help="e.g. 2.1.332"
    )
    args, pytest_args = parser.parse_known_args(argv)  # the rest goes to pytest
    os.environ["MEMD_E2E_RELEASES"] = ",".join(args.release)
    here = os.path.dirname(os.path.abspath(__file__))
    return int(pytest.main(["-q", "-p", "no:cacheprovider", "-rf", here, *pytest_args]))


if __name__ == "__main__":
    sys.exit(main())
