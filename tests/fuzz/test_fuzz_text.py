"""Fuzz the pure text functions: truncation, index parsing, link targets, paths."""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata

from hypothesis import event, example, given
from hypothesis import strategies as st

from memd.claude_code.jscompat import js_trim, utf16_len, utf16_units
from memd.claude_code.paths import (
    MAX_SANITIZED_LENGTH,
    sanitize_path,
    validate_memory_path,
)
from memd.claude_code.truncation import (
    MAX_ENTRYPOINT_LINES,
    MAX_ENTRYPOINT_UNITS,
    truncate_entrypoint,
)
from memd.memory.index import classify_target, normalize_target, parse_index
from tests.fuzz.wellformed import line_count
from tests.strategies import (
    alphabet,
    any_text,
    index_markdown,
    index_text,
    link_target,
    long_line,
    path_text,
)

_WARNING = "\n\n> WARNING: MEMORY.md is "
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")

big_index = st.one_of(
    index_text,
    index_markdown,
    st.lists(long_line, min_size=1, max_size=30).map("\n".join),
    st.builds(lambda n, line: "\n".join([line] * n), st.integers(190, 420), any_text),
)


class TestTruncateEntrypointFuzz:
    @given(big_index)
    @example("a\n" * 201)
    @example("😀" * 12_501)
    @example("x" * 24_999 + "😀")
    @example("0\n\n> WARNING: MEMORY.md is \n0")  # the marker in the user's text
    def test_within_limits_and_a_prefix(self, raw: str) -> None:
        """Kept text is <= 200 lines, <= 25,000 units, and a prefix of the trim."""
        result = truncate_entrypoint(raw)
        trimmed = js_trim(raw)
        truncated = result.was_line_truncated or result.was_byte_truncated
        kept = result.content.rpartition(_WARNING)[0] if truncated else result.content
        assert len(kept.split("\n")) <= MAX_ENTRYPOINT_LINES or not truncated
        assert utf16_len(kept) <= MAX_ENTRYPOINT_UNITS or not truncated
        assert utf16_units(trimmed).startswith(utf16_units(kept))
        assert (kept == js_trim(raw)) == (not truncated)
        event(f"truncated={truncated}")
        assert (len(trimmed.split("\n")), utf16_len(trimmed)) == (
            result.line_count,
            result.byte_count,
        )

    @given(big_index)
    def test_untruncated_is_the_trim(self, raw: str) -> None:
        """Within both limits the content is exactly the JS-trimmed input."""
        result = truncate_entrypoint(raw)
        if not (result.was_line_truncated or result.was_byte_truncated):
            assert js_trim(raw) == result.content


class TestParseIndexFuzz:
    @given(st.one_of(index_markdown, index_text, any_text))
    @example("- [a](b.md)\r\n" * 3)
    def test_entries_are_placed(self, text: str) -> None:
        """Every entry sits on a real line, at a real column, and quotes that line."""
        lines = text.split("\n")
        for entry in parse_index(text):
            assert 1 <= entry.line <= line_count(text)
            assert lines[entry.line - 1].removesuffix("\r") == entry.raw
            assert 1 <= entry.column <= len(entry.raw)
            assert "\n" not in entry.target
            assert "\n" not in entry.hook


def _assert_inside(target: str) -> None:
    relpath = normalize_target(target)
    if _SCHEME.match(target.strip().removeprefix("<")):
        assert relpath is None  # a URL is never a file here
    if relpath is None:
        return
    assert relpath
    assert relpath != "."
    assert not relpath.startswith("/")
    assert ".." not in relpath.split("/")
    assert "\\" not in relpath
    assert "\0" not in relpath
    assert posixpath.normpath(posixpath.join("/mem", relpath)).startswith("/mem/")


class TestNormalizeTargetFuzz:
    @given(st.one_of(link_target, any_text))
    @example("%2e%2e/x.md")
    @example("a/%2F../../x.md")
    @example("./%2e%2e%2fx.md")
    @example("%5c..%5cx.md")
    @example("./A:")
    def test_never_leaves_the_dir(self, target: str) -> None:
        """A normalised target is never absolute nor `..`; a URL is never a file.

        `./A:` is the file `A:` in the directory (Markdown reads it as a relative
        link), so a relpath may look like a scheme: only the raw target is a URL.
        """
        _assert_inside(target)
        why = classify_target(target)[1]
        assert why in {"ok", "url", "absolute", "outside", "empty"}

    @given(st.lists(st.sampled_from(["..", ".", "a", "%2e%2e", "%2E.", "", "/"])))
    def test_dot_segments(self, parts: list[str]) -> None:
        """Any mix of (encoded) dot segments stays inside or is refused."""
        _assert_inside("/".join(parts))


class TestSanitizePathFuzz:
    @given(st.one_of(any_text, path_text, st.text(alphabet=alphabet, max_size=400)))
    def test_charset_length_determinism(self, name: str) -> None:
        """The result is ASCII alphanumerics and `-`, bounded, and deterministic."""
        result = sanitize_path(name)
        assert re.fullmatch(r"[A-Za-z0-9-]*", result)
        assert len(result) <= MAX_SANITIZED_LENGTH + 1 + 7
        assert result == sanitize_path(name)
        if utf16_len(name) <= MAX_SANITIZED_LENGTH:
            assert utf16_len(name) == len(result)


class TestValidateMemoryPathFuzz:
    @given(
        st.one_of(st.none(), path_text, any_text),
        st.booleans(),
        st.one_of(
            st.none(), st.sampled_from(["/home/u", "/", "/h\u0301", ""]), path_text
        ),
    )
    @example("~/..", True, "/home/u")
    @example("/a\0b", False, None)
    @example("//server/share", False, None)
    def test_none_or_normal_absolute_dir(
        self, raw: str | None, expand: bool, home: str | None
    ) -> None:
        """The result is None or NFC, absolute, NUL-free, ending in one separator."""
        result = validate_memory_path(raw, expand, home)
        if result is None:
            return
        assert result.startswith("/")
        assert result.endswith(os.sep)
        assert not result.endswith(os.sep * 2)
        assert "\0" not in result
        assert unicodedata.normalize("NFC", result) == result
        assert ".." not in result.split("/")
