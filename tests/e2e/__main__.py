"""Run the e2e suite against a release: `python -m tests.e2e --release X`.

Claude Code by default (`--release 2.1.332`: memd runs with the newest
profile not newer than it); `--agent codex --release 0.171.0` or
`--agent gemini --release 0.61.0` runs that agent's file (test_codex.py,
test_gemini.py) against that release instead of the one its module in
`memd.agents` names. Each release is installed (cached) from npm. pytest
prints, per case, what the agent did and what memd said where they differ.
"""

from __future__ import annotations

import argparse
import os
import sys

import pytest

OTHER_AGENTS = {"codex": "test_codex.py", "gemini": "test_gemini.py"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e")
    parser.add_argument(
        "--agent",
        choices=("claude-code", *OTHER_AGENTS),
        default="claude-code",
        help="the agent whose release runs (default claude-code)",
    )
    parser.add_argument(
        "--release", action="append", required=True, help="e.g. 2.1.332, 0.171.0"
    )
    args, pytest_args = parser.parse_known_args(argv)  # the rest goes to pytest
    here = os.path.dirname(os.path.abspath(__file__))
    if args.agent in OTHER_AGENTS:
        if len(args.release) != 1:
            parser.error(f"--agent {args.agent} takes one --release")
        os.environ["MEMD_E2E_AGENT_RELEASE"] = args.release[0]
        target = os.path.join(here, OTHER_AGENTS[args.agent])
    else:
        os.environ["MEMD_E2E_RELEASES"] = ",".join(args.release)
        target = here
        pytest_args = [
            *(f"--deselect={os.path.join(here, f)}" for f in OTHER_AGENTS.values()),
            *pytest_args,
        ]
    return int(
        pytest.main(["-q", "-p", "no:cacheprovider", "-rf", target, *pytest_args])
    )


if __name__ == "__main__":
    sys.exit(main())
