"""Fuzz frontmatter parsing: any bytes in, a MemoryFile with well-formed findings."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from memd.memory.memfile import PARSE_RULES, parse_memory_file
from tests.fuzz.wellformed import assert_well_formed, line_count
from tests.strategies import alias_bomb, deep_value, topic_bytes, topic_text

RELPATH = "topic.md"


def _parse_and_check(data: bytes) -> None:
    parsed = parse_memory_file(RELPATH, data)
    assert_well_formed(
        parsed.diagnostics, line_counts={RELPATH: line_count(data)}, relative=True
    )
    assert all(d.code in PARSE_RULES for d in parsed.diagnostics)
    assert RELPATH == parsed.relpath
    if parsed.dialect is not None:
        assert parsed.name is None or isinstance(parsed.name, str)
        assert parsed.description is None or isinstance(parsed.description, str)
        assert parsed.type is None or isinstance(parsed.type, str)
        nested = isinstance(parsed.raw_frontmatter.get("metadata"), dict)
        assert ("nested" if nested else "classic") == parsed.dialect


class TestParseMemoryFileFuzz:
    @given(st.binary(max_size=2_000))
    def test_arbitrary_bytes(self, data: bytes) -> None:
        """Any bytes parse without raising, and every finding is well-formed."""
        _parse_and_check(data)

    @given(topic_bytes)
    @example(b"---\ntype:\x16x\n---\nBody\n")
    @example(b"---\n" + b"[" * 5_000 + b"\n---\n")
    def test_structured_frontmatter(self, data: bytes) -> None:
        """Fenced YAML-ish text in both dialects parses without raising."""
        _parse_and_check(data)

    @given(st.one_of(alias_bomb, deep_value))
    def test_bombs_and_deep_nesting(self, inner: str) -> None:
        """Alias bombs and deeply nested values never raise nor load unbounded."""
        data = f"---\n{inner}\n---\nBody\n".encode()
        parsed = parse_memory_file(RELPATH, data)
        _parse_and_check(data)
        assert len(repr(parsed.raw_frontmatter)) < 10_000_000

    @given(topic_text)
    def test_crlf_and_lf_agree(self, text: str) -> None:
        """A CRLF copy of a file yields the same name, description and type."""
        lf = text.replace("\r", "").encode("utf-8", "surrogatepass")
        crlf = lf.replace(b"\n", b"\r\n")
        a, b = parse_memory_file(RELPATH, lf), parse_memory_file(RELPATH, crlf)
        assert (a.name, a.description, a.type) == (b.name, b.description, b.type)


class TestParseRegressions:
    def test_control_character_message_is_one_line(self) -> None:
        """A YAML ReaderError (control character) gives a one-line M002 message."""
        parsed = parse_memory_file(RELPATH, b"---\ntype:\x16x\n---\nBody\n")
        [finding] = [d for d in parsed.diagnostics if d.code == "M002"]
        expected = (
            "frontmatter is not valid YAML: unacceptable character #x0016: "
            "control characters are not allowed"
        )
        assert expected == finding.message

    def test_yaml_error_line_counts_lf_only(self) -> None:
        """A lone CR inside the frontmatter does not push M002's line past the file."""
        parsed = parse_memory_file(RELPATH, b"---\na: 1\rb: 2\r c: d: e\n---\n")
        [finding] = [d for d in parsed.diagnostics if d.code == "M002"]
        assert (2, 13) == (finding.line, finding.column)

    def test_yaml_error_line_and_column_with_lf(self) -> None:
        """With LF-only text the M002 place is YAML's own line and column."""
        parsed = parse_memory_file(
            RELPATH, "---\na: 1\nb: éé😀 c: d: e\n---\n".encode()
        )
        [finding] = [d for d in parsed.diagnostics if d.code == "M002"]
        assert (3, 9) == (finding.line, finding.column)
