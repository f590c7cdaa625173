"""Every lint rule has a triggering and a clean case, as real memory directories."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.diagnostics import Severity
from memd.lint.engine import lint_memdir
from memd.lint.rules import RULES
from memd.memory.reader import load_memdir

CASES = Path(__file__).parent / "cases"
CORPUS = Path(__file__).parent / "corpus" / "clean"
# The D rules judge memory against the project's repository and the other
# topic files (memd.truth, tested with real repositories in tests/truth/).
CODES = sorted(rule.code for rule in RULES if not rule.code.startswith("D"))


def _large_file(root: Path) -> None:
    text = "---\nname: Big\ndescription: a file over the size limit\ntype: user\n---\n"
    (root / "big.md").write_text(text + "x" * 100 + "\n" * 3000 + "y" * (300 * 1024))


def _symlink_out(root: Path) -> None:
    outside = root.parent / "outside.md"
    outside.write_text(
        "---\nname: Outside\ndescription: lives elsewhere\ntype: user\n---\nx\n"
    )
    (root / "linked.md").symlink_to(outside)


def _unreadable(root: Path) -> None:
    # A FIFO can never be read as a topic file (chmod 000 does not stop root).
    os.mkfifo(root / "pipe.md")


def _log_dir_symlink(root: Path) -> None:
    # A symlinked year directory, pointing inside the memory directory even.
    (root / "logs").mkdir(exist_ok=True)
    (root / "logs" / "2026").symlink_to(root / "elsewhere")


# Bad cases that cannot live in git as plain files are finished at test time.
SETUP: dict[str, Callable[[Path], None]] = {
    "F009": _log_dir_symlink,
    "F003": _large_file,
    "F004": _symlink_out,
    "F005": _unreadable,
}


def _materialise(code: str, side: str, tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    shutil.copytree(CASES / code / side, root)
    if side == "bad" and code in SETUP:
        SETUP[code](root)
    return root


class TestRuleTable:
    def test_codes_are_unique(self) -> None:
        """No two rules share a code or a name."""
        codes = [r.code for r in RULES]
        names = [r.name for r in RULES]

        assert len(codes) == len(set(codes))
        assert len(names) == len(set(names))

    def test_every_code_has_cases(self) -> None:
        """Each rule has a bad and a good case; no case is for an unknown code."""
        expected = {(code, side) for code in CODES for side in ("bad", "good")}
        actual = {(p.parent.name, p.name) for p in CASES.glob("*/*") if p.is_dir()}

        assert expected == actual

    def test_severity_policy(self) -> None:
        """Errors are exactly the rules SPEC §4 says stop memory loading as meant."""
        expected = {
            "M001", "M002", "M003", "M004", "M005", "M006", "M007", "M008",
            "I002", "I003", "F001", "F002", "F004", "F005", "F008", "F009",
        }  # fmt: skip
        actual = {r.code for r in RULES if r.default_severity is Severity.ERROR}

        assert expected == actual


class TestCases:
    @pytest.mark.parametrize("code", CODES)
    def test_bad_triggers(self, code: str, tmp_path: Path) -> None:
        """The bad case of a rule reports that rule."""
        diagnostics = lint_memdir(load_memdir(str(_materialise(code, "bad", tmp_path))))

        assert code in {d.code for d in diagnostics}

    @pytest.mark.parametrize("code", CODES)
    def test_good_is_clean(self, code: str, tmp_path: Path) -> None:
        """The good case of a rule does not report it."""
        diagnostics = lint_memdir(
            load_memdir(str(_materialise(code, "good", tmp_path)))
        )

        assert [] == [d for d in diagnostics if d.code == code]


class TestCorpus:
    def test_real_world_directory_has_no_findings(self, tmp_path: Path) -> None:
        """Both dialects, CJK, team/ and ./ links, headings, prose, quotes: clean."""
        root = tmp_path / "memory"
        shutil.copytree(CORPUS, root)

        diagnostics = lint_memdir(load_memdir(str(root)))

        assert [] == [d.to_dict() for d in diagnostics]
