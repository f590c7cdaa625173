"""A generation writes only relpaths the one path rule (memd.relpath) accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.errors import DreamError
from memd.kairos.generations import apply_generation

REFUSED = (
    "../x.md",
    ".git/config",
    ".GIT./x.md",
    "a\\b.md",
    "sub\u2215x.md",
    "/abs.md",
)


@pytest.mark.parametrize("relpath", REFUSED)
def test_a_path_the_rule_refuses_changes_nothing(tmp_path: Path, relpath: str) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [a](a.md) - a\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    with pytest.raises(DreamError, match="refusing to write"):
        apply_generation(
            str(tmp_path / "state"),
            str(memory),
            {relpath: (None, b"x\n")},
            {},
            created="2026-12-01T00:00:00",
        )

    after = sorted(
        p.relative_to(tmp_path)
        for p in tmp_path.rglob("*")
        if "state" not in p.relative_to(tmp_path).parts
    )
    assert before == after
    assert "- [a](a.md) - a\n" == (memory / "MEMORY.md").read_text()


def test_a_generations_copy_of_a_file_keeps_its_mode(tmp_path: Path) -> None:
    """The bytes a dream replaced, kept for its undo, keep the file's mode (#41)."""
    import stat

    from memd.kairos.generations import generations_root

    memory = tmp_path / "memory"
    memory.mkdir()
    secret = memory / "secret.md"
    secret.write_bytes(b"token: hunter2\n")
    secret.chmod(0o600)
    gone = memory / "gone.md"
    gone.write_bytes(b"old\n")
    gone.chmod(0o640)

    apply_generation(
        str(tmp_path / "state"),
        str(memory),
        {"secret.md": (b"token: hunter2\n", b"token: [moved]\n")},
        {"gone.md": b"old\n"},
        created="2026-12-01T00:00:00",
    )

    root = Path(generations_root(str(tmp_path / "state"), str(memory)))
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in root.glob("*/before/*.md")}
    assert {"secret.md": 0o600, "gone.md": 0o640} == modes
    assert 0o600 == stat.S_IMODE(secret.stat().st_mode)
