"""`memd fix`: a diff and no writes with --dry-run; else atomic writes of safe fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.cli.main import main
from memd.lint.fix_files import apply_edit, plan_directory

GOOD = (
    "---\nname: {name}\ndescription: a specific enough description\n"
    "type: user\n---\nFact.\n"
)


def _memdir(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(
        "# Index\r\n- [A](a.md) — a\r\n- [Gone](gone.md) — gone\r\n"
        "- [A](./a.md) — again\r\n".encode()
    )
    (root / "a.md").write_text(GOOD.format(name="A"))
    (root / "b.md").write_bytes(b"\xef\xbb\xbf" + GOOD.format(name="B").encode())
    (root / "broken.md").write_bytes(b"---\r\nname: a: b: [\r\n---\r\nx\r\n")
    return root


class TestDryRun:
    def test_prints_a_diff_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run shows a unified diff of every planned edit and writes nothing."""
        root = _memdir(tmp_path / "memory")
        before = {p.name: p.read_bytes() for p in root.iterdir()}

        code = main(["fix", "--dry-run", str(root)])

        out = capsys.readouterr().out
        assert 0 == code
        assert before == {p.name: p.read_bytes() for p in root.iterdir()}
        assert f"--- {root / 'MEMORY.md'}\n+++ {root / 'MEMORY.md'}\n" in out
        assert "-- [Gone](gone.md) — gone\\r\n" in out
        assert "+- [B](b.md) — a specific enough description\n" in out
        assert "-<BOM>---\n" in out
        assert "broken.md" not in out
        assert out.endswith(
            "\nmemd fix would change 2 files; "
            "nothing is written until you run `memd fix`\n"
        )

    def test_a_clean_directory_says_so_in_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        root = tmp_path / "memory"
        root.mkdir()
        (root / "MEMORY.md").write_text("- [A](a.md) — a\n")
        (root / "a.md").write_text(GOOD.format(name="A"))

        assert 0 == main(["fix", "--dry-run", str(root)])
        assert "nothing to fix\n" == capsys.readouterr().out

    def test_relative_paths_get_git_style_prefixes(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """Inside the working directory the diff is labelled a/… and b/…, like git."""
        _memdir(tmp_path / "memory")
        monkeypatch.chdir(tmp_path)

        main(["fix", "--dry-run", "memory"])

        assert (
            "--- a/memory/MEMORY.md\n+++ b/memory/MEMORY.md\n"
            in capsys.readouterr().out
        )


class TestApply:
    def test_writes_the_fixes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The index and the BOM file are rewritten; the unparsable file is not."""
        root = _memdir(tmp_path / "memory")
        broken = (root / "broken.md").read_bytes()

        code = main(["fix", str(root)])

        assert 0 == code
        assert (
            "# Index\n- [A](a.md) — a\n- [B](b.md) — a specific enough description\n"
            == (root / "MEMORY.md").read_text()
        )
        assert GOOD.format(name="B").encode() == (root / "b.md").read_bytes()
        assert broken == (root / "broken.md").read_bytes()
        assert "2 files fixed" in capsys.readouterr().out

    def test_second_run_has_nothing_to_do(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Fixing is idempotent."""
        root = _memdir(tmp_path / "memory")
        main(["fix", str(root)])
        capsys.readouterr()

        main(["fix", str(root)])

        assert "0 files fixed\n" == capsys.readouterr().out

    def test_file_changed_after_planning_is_skipped(self, tmp_path: Path) -> None:
        """An edit is not applied over bytes other than those it was planned from."""
        root = _memdir(tmp_path / "memory")
        [index_edit] = [
            e for e in plan_directory(str(root)) if e.relpath == "MEMORY.md"
        ]
        (root / "MEMORY.md").write_text("# rewritten meanwhile\n")

        wrote = apply_edit(str(root), index_edit)

        assert (False, "# rewritten meanwhile\n") == (
            wrote,
            (root / "MEMORY.md").read_text(),
        )

    def test_a_folder_swapped_for_a_link_after_planning_is_never_written_through(
        self, tmp_path: Path
    ) -> None:
        """The edit is made below the memory dir's fd: a swapped-in link fails it."""
        root = tmp_path / "memory"
        (root / "sub").mkdir(parents=True)
        crlf = b"---\r\nname: x\r\ndescription: d\r\ntype: user\r\n---\r\nBody.\r\n"
        (root / "sub" / "x.md").write_bytes(crlf)
        [edit] = [e for e in plan_directory(str(root)) if e.relpath == "sub/x.md"]
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "x.md").write_bytes(crlf)
        (root / "sub").rename(tmp_path / "moved")
        (root / "sub").symlink_to(outside)

        with pytest.raises(OSError, match="symlink"):
            apply_edit(str(root), edit)

        assert crlf == (outside / "x.md").read_bytes()
        assert [] == [p.name for p in outside.iterdir() if p.name != "x.md"]

    def test_bad_path_is_a_usage_error(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A missing path exits 2 with one line."""
        code = main(["fix", str(tmp_path / "nope")])

        assert (2, 1) == (code, len(capsys.readouterr().err.splitlines()))
