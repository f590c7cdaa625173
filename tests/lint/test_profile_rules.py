"""Lint follows the agent profile: recall limit, scan byte cap, provenance keys."""

from __future__ import annotations

from pathlib import Path

from memd.lint.engine import lint_memdir
from memd.memory.reader import load_memdir

HEAD = (
    "---\nname: db\ndescription: How tests use the staging database\n"
    "type: reference\n---\n"
)
INDEX = "# Memory index\n\n- [Database](db.md) — staging database rules\n"


def memdir(tmp_path: Path, topic: str) -> str:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_text(INDEX)
    (root / "db.md").write_text(topic)
    return str(root)


def codes(diagnostics: tuple[object, ...], code: str) -> list[object]:
    return [d for d in diagnostics if getattr(d, "code", None) == code]


class TestRecallLimit:
    def test_names_size_last_line_and_fix(self, tmp_path: Path) -> None:
        """81 header bytes + 60 lines of 80: line 55 ends at byte 4,080, 56 at 4,160."""
        body = "".join(f"- Rule {i:02}: " + "r" * 68 + "\n" for i in range(1, 61))
        root = memdir(tmp_path, HEAD + body)  # 81 + 60 * 80 = 4,881 bytes

        found = codes(lint_memdir(load_memdir(root)), "M016")

        assert 1 == len(found)
        (d,) = found
        assert (
            "topic file is 4,881 bytes; recall shows only the first 4KB in whole "
            "lines (4,096 bytes): recall shows lines 1-55 only"
        ) == d.message
        assert 56 == d.line
        assert "split it into smaller topic files or summarise it" in d.hint

    def test_2_1_112_has_no_recall_limit(self, tmp_path: Path) -> None:
        """Under 2.1.112 a 5 KB topic file is fine."""
        root = memdir(tmp_path, HEAD + "x" * 5000 + "\n")

        assert [] == codes(lint_memdir(load_memdir(root), profile="2.1.112"), "M016")
        assert 1 == len(codes(lint_memdir(load_memdir(root)), "M016"))


class TestScanByteCap:
    def test_frontmatter_past_the_byte_cap_is_unclosed(self, tmp_path: Path) -> None:
        """Frontmatter of 65,532 bytes: its `---` ends at byte 65,539, past the cap."""
        long_desc = "d" * 65_509  # "name: db\n" + "description: " + 65,509 + "\n"
        root = memdir(tmp_path, f"---\nname: db\ndescription: {long_desc}\n---\nbody\n")

        new = codes(lint_memdir(load_memdir(root)), "M003")
        old = codes(lint_memdir(load_memdir(root), profile="2.1.112"), "M003")

        assert [
            "frontmatter closes on line 4, past the header scan's cap of 65,536 "
            "bytes: the agent sees no name, description or type"
        ] == [
            d.message
            for d in new  # type: ignore[attr-defined]
        ]
        assert [] == old


class TestProvenanceKeys:
    ITEM = (
        "metadata:\n  claudeCodeItem:\n    id: i1\n    state: {state}\n"
        "    consent: 'on'\n    account: null\n    src: typed\n    typed: null\n"
        "    scope: repo\n    promoted: []\n    ids: [i1]\n  typedTurn: 3\n"
    )

    def _topic(self, state: str) -> str:
        return (
            "---\nname: db\ndescription: How tests use the staging database\n"
            + self.ITEM.format(state=state)
            + "  type: reference\n---\nStaging credentials live in the vault.\n"
        )

    def test_known_under_2_1_332(self, tmp_path: Path) -> None:
        """claudeCodeItem and typedTurn are known keys now, unknown under 2.1.112."""
        root = memdir(tmp_path, self._topic("acked"))

        new = lint_memdir(load_memdir(root))
        old = lint_memdir(load_memdir(root), profile="2.1.112")

        assert [] == codes(new, "M015") + codes(new, "M017")
        assert [
            "unknown frontmatter key `claudeCodeItem`",
            "unknown frontmatter key `typedTurn`",
        ] == [
            d.message
            for d in codes(old, "M015")  # type: ignore[attr-defined]
        ]

    def test_bad_item_is_a_warning(self, tmp_path: Path) -> None:
        """A claudeCodeItem failing the schema is M017, at its line."""
        root = memdir(tmp_path, self._topic("done"))

        (d,) = codes(lint_memdir(load_memdir(root)), "M017")

        assert (
            "`metadata.claudeCodeItem` `state` is 'done', not one of legacy, pending, "
            "acked, suppressed; the agent treats it as absent",
            5,
        ) == (d.message, d.line)  # type: ignore[attr-defined]
