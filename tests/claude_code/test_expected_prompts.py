"""The real `memd prompt` against hand-reviewed expected prompts, one per mode.

The oracle is text in tests/claude_code/expected_prompts/ (see its README), not a
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


@pytest.mark.parametrize(
    ("mode", "pin", "expected_file"),
    [
        ("standard", None, "standard.md"),
        ("team", None, "team.md"),
        ("kairos", None, "kairos.md"),
        ("standard", "2.1.112", "standard-2.1.112.md"),
        ("team", "2.1.112", "team-2.1.112.md"),
        ("kairos", "2.1.112", "kairos.md"),  # no saving steps: the same text
    ],
)
def test_memd_prompt_prints_the_reviewed_text(
    mode: str,
    pin: str | None,
    expected_file: str,
    isolated_home: Home,
    tmp_path: Path,
) -> None:
    """Cold, then warm: both print exactly the reviewed prompt for the mode.

    Without a pin, memd takes the newest profile (2.1.332) when no `claude`
    is on PATH, as in CI.
    """
    if pin is not None:
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[agent]\nversion = "{pin}"\n')
    memory = tmp_path / "mem"
    memory.mkdir()
    (memory / "MEMORY.md").write_bytes((EXPECTED / "MEMORY.md.in").read_bytes())
    old = 1_700_000_000  # not racily clean, so the second run is served warm
    os.utime(memory / "MEMORY.md", (old, old))
    expected = (EXPECTED / expected_file).read_text("utf-8")
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
