"""Rewriting frontmatter between the classic and nested dialects (REFERENCE.md §8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.cli.main import main
from memd.memory.dialect import convert_dialect, slugify
from memd.memory.memfile import parse_memory_file

CLASSIC = (
    "---\nname: Integration tests hit a real DB\n"
    "description: Tests that touch the database use a real one\n"
    "type: feedback\noriginSessionId: 7f0c\n---\n"
    "Use a real database.\n\n**Why:** mocks hid a migration.\n"
    "**How to apply:** tests/integration.\n"
)
NESTED = (
    "---\nname: db-tests\ndescription: 集成测试必须使用真实数据库\nmetadata:\n"
    "  node_type: memory\n  type: project\n  modified: 2026-11-02T10:14:00Z\n---\n"
    "正文\n"
)


class TestSlugify:
    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("db-tests", "db-tests"),
            ("Integration tests hit a real DB", "integration-tests-hit-a-real-db"),
            ("  Café -- notes!  ", "caf----notes"),
            ("数据库测试", ""),
        ],
    )
    def test_matches_the_agents_rule(self, name: str, expected: str) -> None:
        """Slugs are kept as is; others are lower-cased with runs of others as '-'."""
        assert expected == slugify(name)


class TestConvertDialect:
    def test_classic_to_nested_and_back(self) -> None:
        """Classic → nested puts node_type first under metadata; back restores type."""
        classic = parse_memory_file("db.md", CLASSIC.encode())

        nested_bytes = convert_dialect(classic, "nested")
        assert nested_bytes is not None
        nested = parse_memory_file("db.md", nested_bytes)
        back = convert_dialect(nested, "classic")

        assert "nested" == nested.dialect
        assert "integration-tests-hit-a-real-db" == nested.name
        assert ["node_type", "type", "originSessionId"] == list(
            nested.raw_frontmatter["metadata"]
        )
        assert (classic.type, classic.description, classic.body) == (
            nested.type,
            nested.description,
            nested.body,
        )
        assert back is not None
        assert "feedback" == parse_memory_file("db.md", back).raw_frontmatter["type"]

    def test_nested_to_classic_keeps_cjk_and_dates(self) -> None:
        """CJK text and a timestamp survive the rewrite to classic."""
        nested = parse_memory_file("db.md", NESTED.encode())

        converted = convert_dialect(nested, "classic")

        assert converted is not None
        again = parse_memory_file("db.md", converted)
        assert ("classic", "project") == (again.dialect, again.type)
        assert "集成测试必须使用真实数据库" == again.description
        assert nested.metadata["modified"] == again.metadata["modified"]
        assert "正文\n" == again.body

    def test_already_in_target_is_left_alone(self) -> None:
        """A file already in the asked dialect is not rewritten."""
        assert (
            convert_dialect(parse_memory_file("a.md", CLASSIC.encode()), "classic")
            is None
        )

    def test_unparsable_or_unsluggable_is_left_alone(self) -> None:
        """Broken YAML, or a name with no slug, is never rewritten."""
        broken = parse_memory_file("a.md", b"---\nname: [x\ntype: user\n---\nbody\n")
        cjk_name = parse_memory_file(
            "b.md", "---\nname: 数据库\ndescription: d\ntype: user\n---\nb\n".encode()
        )

        assert convert_dialect(broken, "nested") is None
        assert convert_dialect(cjk_name, "nested") is None

    def test_crlf_body_stays_crlf(self) -> None:
        """A CRLF file keeps CRLF line endings after the rewrite."""
        crlf = parse_memory_file("a.md", CLASSIC.replace("\n", "\r\n").encode())

        converted = convert_dialect(crlf, "nested")

        assert converted is not None
        assert b"\n" not in converted.replace(b"\r\n", b"")


class TestFixDialectCommand:
    def test_dry_run_then_apply(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd fix --dialect nested`: --dry-run shows the diff; without, it writes."""
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "db.md").write_text(CLASSIC)
        (memory / "MEMORY.md").write_text("- [DB](db.md) — real database in tests\n")

        dry = main(["fix", "--dialect", "nested", "--dry-run", str(memory)])
        diff = capsys.readouterr().out
        unchanged = (memory / "db.md").read_text()
        applied = main(["fix", "--dialect", "nested", str(memory)])

        assert (0, 0) == (dry, applied)
        assert "+  node_type: memory" in diff
        assert CLASSIC == unchanged
        assert (
            "nested"
            == parse_memory_file("db.md", (memory / "db.md").read_bytes()).dialect
        )
