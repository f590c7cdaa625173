"""`memd fix` names a size cap as a cap, and an index left past the cut is an error.

#41 class 8: a 10,000-entry MEMORY.md over memd's per-file cap was reported as
"not a regular file" with exit 0. The real `memd` on real files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MEMD = str(Path(sys.executable).parent / "memd")
CAP = 262_144  # lint.max_topic_file_bytes by default
TOPIC = (
    "---\nname: {n}\ndescription: what {n} is about, said plainly\n"
    "type: user\n---\nbody\n"
)


def fix(root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MEMD, "fix", str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, **env},
    )


def big_index(root: Path, entries: int = 10_000) -> bytes:
    root.mkdir()
    for n in range(entries):
        (root / f"t{n}.md").write_text(TOPIC.format(n=n))
    lines = [f"- [Entry {n}](t{n}.md) — a note about thing {n}" for n in range(entries)]
    data = ("\n".join(lines) + "\n").encode()
    (root / "MEMORY.md").write_bytes(data)
    return data


@pytest.mark.parametrize("entries", [10_000, 6_000])
def test_an_index_over_the_cap_is_named_and_is_an_error(
    tmp_path: Path, entries: int
) -> None:
    """The file, its size, the cap, that it was not read; exit 1; untouched."""
    root = tmp_path / "memory"
    data = big_index(root, entries)
    assert len(data) > CAP

    done = fix(root)

    assert 1 == done.returncode, done.stderr
    assert "not a regular file" not in done.stderr
    line = next(x for x in done.stderr.splitlines() if "error" in x)
    assert str(root / "MEMORY.md") in line
    assert f"{len(data):,} bytes" in line
    assert f"cap of {CAP:,} bytes" in line
    assert "not read" in line
    assert data == (root / "MEMORY.md").read_bytes()


def test_raising_the_cap_lets_fix_compact_it(tmp_path: Path) -> None:
    """The way out the message names works: the index comes within the cut."""
    root = tmp_path / "memory"
    data = big_index(root, 10_000)

    done = fix(root, MEMD_MAX_TOPIC_FILE_BYTES=str(2 * len(data)))

    assert 0 == done.returncode, done.stderr
    assert len((root / "MEMORY.md").read_bytes().splitlines()) <= 200


def test_a_topic_file_over_the_cap_is_named_as_such(tmp_path: Path) -> None:
    """A topic file too big to read is a warning that names the cap."""
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text("- [Big](big.md) — a big one\n")
    (root / "big.md").write_text(TOPIC.format(n="big") + "x" * (CAP + 10))

    done = fix(root)

    assert 0 == done.returncode, done.stderr
    assert f"cap of {CAP:,} bytes" in done.stderr
    assert "not a regular file" not in done.stderr


def test_a_fifo_index_is_still_not_a_regular_file(tmp_path: Path) -> None:
    """A FIFO is never opened: said as what it is, and fix goes on."""
    root = tmp_path / "memory"
    root.mkdir()
    os.mkfifo(root / "MEMORY.md")

    done = fix(root)

    assert 0 == done.returncode, done.stderr
    assert "not a regular file" in done.stderr
    assert "cap" not in done.stderr
