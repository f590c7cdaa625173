"""The real `memd prompt` against hand-reviewed expected prompts, one per mode.

The oracle is text in tests/agent/expected_prompts/ (see its README), not a
render by memd: any change to the wording, order or index handling fails here.
The second run is served warm from the snapshot the first one wrote and must
print the same bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home

EXPECTED = Path(__file__).resolve().parent / "expected_prompts"
MEMD = os.path.join(os.path.dirname(sys.executable), "memd")


@pytest.mark.parametrize("mode", ["standard", "team", "kairos"])
def test_memd_prompt_prints_the_reviewed_text(
    mode: str, isolated_home: Home, tmp_path: Path
) -> None:
    """Cold, then warm: both print exactly the reviewed prompt for the mode."""
    memory = tmp_path / "mem"
    memory.mkdir()
    (memory / "MEMORY.md").write_bytes((EXPECTED / "MEMORY.md.in").read_bytes())
    old = 1_700_000_000  # not racily clean, so the second run is served warm
    os.utime(memory / "MEMORY.md", (old, old))
    expected = (EXPECTED / f"{mode}.md").read_text("utf-8")
    expected = expected.replace("@MEMORY_DIR@/", f"{memory}/")
    env = isolated_home.env(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=str(memory))

    runs = [
        subprocess.run(
            [MEMD, "prompt", "--mode", mode],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        for _ in range(2)
    ]

    for done in runs:
        assert 0 == done.returncode, done.stderr
        assert expected == done.stdout
