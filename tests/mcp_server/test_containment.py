"""`memory_read` under a concurrent swap, through the SDK's real client.

A second process exchanges `sub` with a symlink to an outside folder
(`renameat2(RENAME_EXCHANGE)`) as fast as it can while the client reads
``sub/x.md`` again and again: no outside byte may ever come back.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.mcp_server.test_server import call, memory_of, text_of

SWAPPER = """
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
first, second = (a.encode() for a in sys.argv[1:3])
print("ready", flush=True)
while True:
    libc.renameat2(-100, first, -100, second, 2)
"""
READS = 300


def test_a_swapped_folder_never_leaks_an_outside_file(
    git_repo: Path, tmp_path: Path
) -> None:
    """300 reads while another process swaps `sub` and a link out: none is outside."""
    memory = memory_of(git_repo)
    (memory / "sub").mkdir()
    (memory / "sub" / "x.md").write_text(
        "---\nname: inside\ndescription: d\ntype: user\n---\ninside\n"
    )
    (memory / "MEMORY.md").write_text("- [inside](sub/x.md) — d\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("---\nname: leak\n---\nOUTSIDE SECRET\n")
    (memory / "swap").symlink_to(outside)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(memory / "sub"), str(memory / "swap")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "ready\n" == swapper.stdout.readline()  # type: ignore[union-attr]
        results = call(
            git_repo, *[("memory_read", {"name_or_relpath": "sub/x.md"})] * READS
        )
    finally:
        swapper.kill()
        swapper.wait()
        swapper.stdout.close()  # type: ignore[union-attr]

    texts = [text_of(r) for r in results]
    assert [] == [t for t in texts if "OUTSIDE" in t]
    assert any("inside" in t for t in texts)
    assert READS == len(texts)


def test_a_link_to_a_file_inside_is_read_by_its_target(
    git_repo: Path, tmp_path: Path
) -> None:
    """A topic file linked to another inside reads; one whose text climbs out fails."""
    memory = memory_of(git_repo)
    (memory / "sub").mkdir()
    (memory / "sub" / "real.md").write_text(
        "---\nname: real\ndescription: d\ntype: user\n---\nreal body\n"
    )
    (memory / "alias.md").symlink_to("sub/real.md")
    (memory / "absolute.md").symlink_to(memory / "sub" / "real.md")
    (tmp_path / "secret.md").write_text("---\nname: leak\n---\nOUTSIDE SECRET\n")
    (memory / "sub" / "climb.md").symlink_to("../../../secret.md")

    alias, absolute, climb = call(
        git_repo,
        ("memory_read", {"name_or_relpath": "alias.md"}),
        ("memory_read", {"name_or_relpath": "absolute.md"}),
        ("memory_read", {"name_or_relpath": "sub/climb.md"}),
    )

    assert "real body" in text_of(alias)
    assert "real body" in text_of(absolute)
    assert climb.is_error  # type: ignore[attr-defined]
    assert "OUTSIDE" not in text_of(climb)
