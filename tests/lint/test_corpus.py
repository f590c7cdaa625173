"""Real-looking memory directories, one per index shape, with pinned findings.

Each directory under tests/lint/corpus/ is a shape seen in real memory: a
table index, a heading index, a prose index with reference-style links,
wiki-links, localized sections, linked reference documents and flat logs.
The expected findings are written by hand from the issue-13 rules.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memd.lint.engine import lint_memdir
from memd.lint.targets import Target, lint_targets
from memd.memory.reader import load_memdir
from tests.strategies import entry_link_forms, reference_link_forms

CORPUS = Path(__file__).parent / "corpus"
SHAPES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "clean")

# (code, severity, path, line) for every finding, by hand.
EXPECTED: dict[str, list[tuple[str, str, str, int | None]]] = {
    "table_index": [],
    "heading_index": [],
    "prose_index": [("I006", "warning", "code_only.md", None)],
    "wiki_links": [
        ("I009", "info", "MEMORY.md", 6),
        ("I009", "info", "project_deploy.md", None),
    ],
    "localized_sections": [("B002", "warning", "feedback_style.md", 5)],
    "reference_docs": [
        ("M001", "error", "SETUP.md", 1),  # top level: looks like a memory
        ("M001", "error", "project_decisions.md", 1),
        ("M001", "warning", "specs/ingest.md", 1),  # a linked reference document
        ("I006", "warning", "specs/project_wire.md", None),
        ("M001", "error", "specs/project_wire.md", 1),  # named like a memory
    ],
    "flat_logs": [
        ("F008", "warning", "logs/2026-05-20.md", None),
        ("F008", "warning", "logs/2026-05-21.md", None),
        ("F008", "error", "logs/2026/05/2026-05-32.md", None),
    ],
}


def _found(root: Path) -> list[tuple[str, str, str, int | None]]:
    return [
        (d.code, d.severity.value, d.path, d.line)
        for d in lint_memdir(load_memdir(str(root)))
    ]


class TestCorpus:
    def test_every_shape_is_pinned(self) -> None:
        """Each corpus directory has its expected findings written down."""
        assert sorted(EXPECTED) == SHAPES

    @pytest.mark.parametrize("shape", SHAPES)
    def test_findings(self, shape: str, tmp_path: Path) -> None:
        """Directory lint gives exactly the findings written by hand."""
        root = tmp_path / "memory"
        shutil.copytree(CORPUS / shape, root)

        assert EXPECTED[shape] == _found(root)

    def test_flat_log_hint_names_the_expected_path(self, tmp_path: Path) -> None:
        """A flat log's finding says where the log belongs."""
        root = tmp_path / "memory"
        shutil.copytree(CORPUS / "flat_logs", root)
        [first, *_] = lint_memdir(load_memdir(str(root)))

        assert "logs/2026/05/2026-05-20.md" in first.message
        assert "move it to logs/2026/05/2026-05-20.md" in first.hint

    @pytest.mark.parametrize("shape", SHAPES)
    def test_single_file_lint_agrees(self, shape: str, tmp_path: Path) -> None:
        """Linting each file alone gives the findings its directory lint gives it."""
        root = tmp_path / "memory"
        shutil.copytree(CORPUS / shape, root)
        whole = [f for f in _found(root) if f[2] != "MEMORY.md"]
        alone = []
        for path in sorted(p for p in root.rglob("*.md") if p.name != "MEMORY.md"):
            for d in lint_targets([Target(str(path), False)], cwd=str(root)):
                alone.append((d.code, d.severity.value, d.path, d.line))

        assert sorted(whole) == sorted(alone)


def _topic_files(root: Path) -> list[str]:
    memdir = load_memdir(str(root))
    return [f.relpath for f in memdir.files if f.name]


def _counts(root: Path) -> tuple[set[str], int]:
    found = lint_memdir(load_memdir(str(root)))
    orphans = {d.path for d in found if d.code == "I006"}
    return orphans, sum(1 for d in found if d.code == "I007")


@st.composite
def _additions(draw: st.DrawFn) -> tuple[str, int, str, bool]:
    shape = draw(st.sampled_from(SHAPES))
    is_entry = draw(st.booleans())
    form = draw(entry_link_forms if is_entry else reference_link_forms)
    return shape, draw(st.integers(0, 10_000)), form, is_entry


class TestAddingALink:
    @settings(max_examples=60, deadline=None)
    @given(_additions())
    def test_never_creates_an_orphan_or_duplicate(
        self, addition: tuple[str, int, str, bool]
    ) -> None:
        """A reference to any file, or an entry for an orphan, adds no I006 or I007."""
        shape, pick, form, is_entry = addition
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "memory"
            shutil.copytree(CORPUS / shape, root)
            orphans, duplicates = _counts(root)
            candidates = sorted(orphans) if is_entry else _topic_files(root)
            if not candidates:
                return  # no orphan to give an entry: nothing to add
            relpath = candidates[pick % len(candidates)]
            name = load_memdir(str(root)).files
            wiki = next(f.name for f in name if f.relpath == relpath)
            line = form.format(t=relpath, n=f"memd-{pick}", w=wiki)
            index = root / "MEMORY.md"
            index.write_text(index.read_text().rstrip("\n") + "\n\n" + line + "\n")

            after_orphans, after_duplicates = _counts(root)

        assert (after_orphans <= orphans - {relpath}, duplicates) == (
            True,
            after_duplicates,
        )
