"""Tests for memd.memory.memfile: dialects, parse diagnostics, the 30-line window."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.diagnostics import Severity
from memd.memory.memfile import MAX_FRONTMATTER_BYTES, MemoryFile, parse_memory_file

CLASSIC = b"""---
name: Integration tests hit a real database
description: Tests that touch the database must use a real one, never a mock
type: feedback
---
Rule first.

**Why:** mocks hid a broken migration.
**How to apply:** every test under tests/db.
"""

NESTED = b"""---
name: integration-tests-real-db
description: Tests that touch the database must use a real one, never a mock
metadata:
  node_type: memory
  type: feedback
  originSessionId: 7f0c
  modified: 2026-11-02T10:14:00Z
---
Rule first.
"""


def codes(parsed: MemoryFile) -> list[str]:
    return [d.code for d in parsed.diagnostics]


class TestClassicDialect:
    def test_fields(self) -> None:
        """A classic file yields name, description, type and the classic dialect."""
        parsed = parse_memory_file("feedback_db.md", CLASSIC)

        assert "Integration tests hit a real database" == parsed.name
        assert "Tests that touch the database must use a real one, never a mock" == (
            parsed.description
        )
        assert "feedback" == parsed.type
        assert "classic" == parsed.dialect
        assert {"type": "feedback"} == dict(parsed.metadata)
        assert [] == codes(parsed)

    def test_lines_and_body(self) -> None:
        """The closing line, the body start and the body itself are recorded."""
        parsed = parse_memory_file("a.md", CLASSIC)

        assert 1 == parsed.frontmatter_start_line
        assert 5 == parsed.frontmatter_end_line
        assert 6 == parsed.body_start_line
        assert parsed.body.startswith("Rule first.\n")
        assert parsed.is_frontmatter_in_scan
        assert {"name": 2, "description": 3, "type": 4} == dict(parsed.field_lines)

    def test_mappings_are_read_only(self) -> None:
        """metadata, fields and raw_frontmatter cannot be mutated."""
        parsed = parse_memory_file("a.md", CLASSIC)

        for mapping in (parsed.metadata, parsed.fields, parsed.raw_frontmatter):
            with pytest.raises(TypeError):
                mapping["x"] = 1  # type: ignore[index]


class TestNestedDialect:
    def test_fields(self) -> None:
        """A nested file reads `type` from metadata and records the nested dialect."""
        parsed = parse_memory_file("a.md", NESTED)

        assert "integration-tests-real-db" == parsed.name
        assert "feedback" == parsed.type
        assert "nested" == parsed.dialect
        assert "memory" == parsed.metadata["node_type"]
        assert "7f0c" == parsed.metadata["originSessionId"]
        assert [] == codes(parsed)

    def test_top_level_extras_fold_in_and_nested_wins(self) -> None:
        """Top-level extras join the metadata; a nested key beats the top-level one."""
        data = b"---\nname: n\ndescription: d\nextra: 1\nnode_type: top\n" + (
            b"metadata:\n  node_type: memory\n  type: user\n---\n"
        )

        parsed = parse_memory_file("a.md", data)

        assert {"extra": 1, "node_type": "memory", "type": "user"} == dict(
            parsed.metadata
        )
        assert {"name", "description", "extra", "node_type", "type"} == set(
            parsed.fields
        )

    def test_type_conflict_is_a_warning(self) -> None:
        """A top-level type disagreeing with metadata.type gives M012; nested wins."""
        data = b"---\nname: n\ndescription: d\ntype: user\n" + (
            b"metadata:\n  type: project\n---\n"
        )

        parsed = parse_memory_file("a.md", data)

        assert "project" == parsed.type
        assert ["M012"] == codes(parsed)
        assert Severity.WARNING == parsed.diagnostics[0].severity
        assert 4 == parsed.diagnostics[0].line

    def test_agreeing_types_are_fine(self) -> None:
        """The same type at both levels is not a conflict."""
        data = (
            b"---\nname: n\ndescription: d\ntype: user\nmetadata:\n  type: user\n---\n"
        )

        assert [] == codes(parse_memory_file("a.md", data))

    def test_metadata_not_a_mapping_stays_visible(self) -> None:
        """A scalar `metadata:` leaves the file classic and stays in fields."""
        parsed = parse_memory_file("a.md", b"---\nname: n\nmetadata: oops\n---\n")

        assert "classic" == parsed.dialect
        assert "oops" == parsed.fields["metadata"]

    def test_timestamp_is_parsed(self) -> None:
        """A YAML timestamp in metadata comes back as a datetime."""
        parsed = parse_memory_file("a.md", NESTED)

        assert isinstance(parsed.metadata["modified"], datetime.datetime)


class TestRawTypes:
    def test_wrong_yaml_types_are_kept_raw(self) -> None:
        """A list description is None as text but kept as a list in fields."""
        data = b"---\nname: 2024\ndescription: [a, b]\ntype: user\n---\n"

        parsed = parse_memory_file("a.md", data)

        assert (None, None) == (parsed.name, parsed.description)
        assert ["a", "b"] == parsed.fields["description"]
        assert 2024 == parsed.raw_frontmatter["name"]
        assert [] == codes(parsed)


class TestFrontmatterDiagnostics:
    @pytest.mark.parametrize(
        ("data", "code", "line"),
        [
            (b"", "M001", 1),
            (b"Just prose.\n", "M001", 1),
            (b"----\nname: x\n----\n", "M001", 1),
            (b"---\nname: x\n", "M003", 1),
            (b"---", "M003", 1),
            (b"---\nname: [unclosed\n---\n", "M002", 3),
            (b"---\nname: x\n  bad: indent\n---\n", "M002", 3),
            (b"---\nmodified: 2026-02-30\n---\n", "M002", 2),
            (b"---\n- a\n- b\n---\n", "M004", 2),
            (b"---\njust a string\n---\n", "M004", 2),
        ],
    )
    def test_error_codes(self, data: bytes, code: str, line: int) -> None:
        """Each broken frontmatter gets its error code and line, and no dialect."""
        parsed = parse_memory_file("a.md", data)

        assert [code] == codes(parsed)
        assert line == parsed.diagnostics[0].line
        assert Severity.ERROR == parsed.diagnostics[0].severity
        assert parsed.dialect is None

    def test_unparsable_has_column(self) -> None:
        """A YAML error reports the column of the problem, 1-based."""
        parsed = parse_memory_file("a.md", b"---\nname: x\ndescription: : : [\n---\n")

        assert 3 == parsed.diagnostics[0].line
        assert parsed.diagnostics[0].column is not None

    def test_empty_frontmatter_is_a_classic_mapping(self) -> None:
        """`---` straight after `---` is an empty mapping: no parse error."""
        parsed = parse_memory_file("a.md", b"---\n---\nbody\n")

        assert ("classic", {}, "body\n") == (
            parsed.dialect,
            dict(parsed.fields),
            parsed.body,
        )
        assert [] == codes(parsed)

    def test_closed_after_line_30(self) -> None:
        """Frontmatter closing on line 31 is parsed but flagged M003 at that line."""
        filler = b"".join(b"k%d: v\n" % i for i in range(28))
        data = b"---\nname: n\n" + filler + b"---\nbody\n"

        parsed = parse_memory_file("a.md", data)

        assert 31 == parsed.frontmatter_end_line
        assert not parsed.is_frontmatter_in_scan
        assert ["M003"] == codes(parsed)
        assert 31 == parsed.diagnostics[0].line
        assert "n" == parsed.name

    def test_closed_on_line_30(self) -> None:
        """Frontmatter closing exactly on line 30 is within the recall scan."""
        filler = b"".join(b"k%d: v\n" % i for i in range(27))
        data = b"---\nname: n\n" + filler + b"---\n"

        parsed = parse_memory_file("a.md", data)

        assert (30, True, []) == (
            parsed.frontmatter_end_line,
            parsed.is_frontmatter_in_scan,
            codes(parsed),
        )

    def test_frontmatter_over_cap_is_not_parsed(self) -> None:
        """A frontmatter over 64 KiB is refused before YAML sees it."""
        data = b"---\nname: " + b"x" * MAX_FRONTMATTER_BYTES + b"\n---\nbody\n"

        parsed = parse_memory_file("a.md", data)

        assert ["M002"] == codes(parsed)
        assert "64 KiB" in parsed.diagnostics[0].message
        assert {} == dict(parsed.fields)

    def test_unclosed_and_huge_is_over_cap(self) -> None:
        """An opening `---` followed by megabytes without a close reports the cap."""
        parsed = parse_memory_file("a.md", b"---\n" + b"a: b\n" * 200_000)

        assert ["M002"] == codes(parsed)

    def test_trailing_whitespace_on_delimiters(self) -> None:
        """`--- ` with trailing spaces still opens and closes frontmatter."""
        parsed = parse_memory_file("a.md", b"---  \nname: n\n---\t\nbody")

        assert ("n", "body", []) == (parsed.name, parsed.body, codes(parsed))


class TestEncoding:
    def test_bom_and_crlf(self) -> None:
        """A BOM and CRLF are info findings; the file still parses."""
        data = b"\xef\xbb\xbf---\r\nname: n\r\ndescription: d\r\n" + (
            b"type: user\r\n---\r\nbody\r\n"
        )

        parsed = parse_memory_file("a.md", data)

        assert ["F007", "F006"] == codes(parsed)
        assert all(d.severity is Severity.INFO for d in parsed.diagnostics)
        assert ("n", "user", "body\n") == (parsed.name, parsed.type, parsed.body)
        assert parsed.has_bom
        assert parsed.has_crlf

    def test_invalid_utf8_reports_the_line(self) -> None:
        """Invalid UTF-8 gives F001 on the first bad byte's line; the rest parses."""
        data = b"---\nname: n\ntype: user\n---\nok\nbad \xff here\n"

        parsed = parse_memory_file("a.md", data)

        assert ["F001"] == codes(parsed)
        assert 6 == parsed.diagnostics[0].line
        assert "user" == parsed.type
        assert "\ufffd" in parsed.body

    def test_nul_bytes_are_binary(self) -> None:
        """A NUL byte makes the file binary: F002 and nothing else parsed."""
        parsed = parse_memory_file("a.md", b"---\nname: n\n---\n\x00\x01")

        assert ["F002"] == codes(parsed)
        assert 4 == parsed.diagnostics[0].line
        assert parsed.is_binary
        assert parsed.name is None


class TestHostileYaml:
    def test_alias_bomb_is_refused(self) -> None:
        """A billion-laughs document is refused as M002 instead of expanding."""
        lines = ["---", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
        for i in range(1, 10):
            refs = ", ".join([f"*a{i - 1}"] * 9)
            lines.append(f"a{i}: &a{i} [{refs}]")
        data = ("\n".join([*lines, "---", ""])).encode()

        parsed = parse_memory_file("a.md", data)

        assert ["M002"] == codes(parsed)
        assert "aliases" in parsed.diagnostics[0].message

    def test_self_referencing_alias_is_refused(self) -> None:
        """A list that contains itself is refused rather than walked forever."""
        parsed = parse_memory_file("a.md", b"---\nname: n\nloop: &l [*l]\n---\n")

        assert ["M002"] == codes(parsed)

    def test_a_few_aliases_are_fine(self) -> None:
        """Ordinary anchors and aliases parse normally."""
        data = b"---\nname: &n hello\ndescription: *n\ntype: user\n---\n"

        parsed = parse_memory_file("a.md", data)

        assert ("hello", "hello", []) == (
            parsed.name,
            parsed.description,
            codes(parsed),
        )

    def test_deep_nesting_does_not_raise(self) -> None:
        """Thousands of nested brackets become a diagnostic, not a RecursionError."""
        data = b"---\nx: " + b"[" * 20_000 + b"]" * 20_000 + b"\n---\n"

        parsed = parse_memory_file("a.md", data)

        assert ["M002"] == codes(parsed)

    def test_python_tags_are_not_executed(self) -> None:
        """The safe loader refuses python object tags."""
        data = b"---\nname: !!python/object/apply:os.system ['true']\n---\n"

        assert ["M002"] == codes(parse_memory_file("a.md", data))


class TestNeverRaises:
    @given(st.binary(max_size=2000))
    @example(b"---\n")
    @example(b"---\n---")
    @example(b"---\n? [a]\n: b\n---\n")
    @example(b"\xef\xbb\xbf")
    def test_arbitrary_bytes(self, data: bytes) -> None:
        """parse_memory_file returns a MemoryFile for any bytes."""
        parsed = parse_memory_file("x.md", data)

        assert "x.md" == parsed.relpath

    @given(st.text(max_size=500))
    def test_arbitrary_frontmatter_text(self, text: str) -> None:
        """Any text between `---` lines parses or becomes diagnostics."""
        data = f"---\n{text}\n---\nbody\n".encode("utf-8", "surrogatepass")

        parsed = parse_memory_file("x.md", data)

        assert parsed.dialect in (None, "classic", "nested")

    @given(st.text(alphabet=":-&*[]{}!?|>#'\"%@`,. \n\tab01\u00e9", max_size=300))
    @example("a: &x [*x]")
    @example("!!binary x")
    @example("? - a\n: b")
    def test_yaml_punctuation(self, text: str) -> None:
        """YAML-heavy frontmatter parses or becomes diagnostics, never an exception."""
        parsed = parse_memory_file("x.md", f"---\n{text}\n---\n".encode())

        assert all(d.path == "x.md" for d in parsed.diagnostics)
