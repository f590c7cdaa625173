"""MEMORY.md truncation and formatFileSize at every boundary of REFERENCE.md §3."""

from __future__ import annotations

import pytest
from hypothesis import example, given

from memd.claude_code.jscompat import js_trim, utf16_len, utf16_units
from memd.claude_code.truncation import (
    MAX_ENTRYPOINT_LINES,
    MAX_ENTRYPOINT_UNITS,
    EntrypointTruncation,
    format_file_size,
    truncate_entrypoint,
)
from tests.strategies import index_text

OLD = "2.1.112"  # these pin the 2.1.112 warning sentence
WARNING_HEAD = "\n\n> WARNING: MEMORY.md is "
WARNING_TAIL = (
    ". Only part of it was loaded. Keep index entries to one line under ~200 chars;"
    " move detail into topic files."
)


def warned(kept: str, reason: str) -> str:
    return f"{kept}{WARNING_HEAD}{reason}{WARNING_TAIL}"


def lines(count: int, text: str = "x") -> str:
    return "\n".join(f"{text}{i}" for i in range(count))


class TestTruncateEntrypoint:
    def test_empty_text_is_one_line(self) -> None:
        """An empty index counts one line and zero units."""
        expected = EntrypointTruncation(
            content="",
            line_count=1,
            byte_count=0,
            was_line_truncated=False,
            was_byte_truncated=False,
        )

        assert expected == truncate_entrypoint(" \n\t ", profile=OLD)

    def test_trims_with_the_js_set(self) -> None:
        """U+FEFF is trimmed; U+0085 and U+001C are kept."""
        actual = truncate_entrypoint("\ufeff \x1c- [a](a.md)\x85 \r\n", profile=OLD)

        assert "\x1c- [a](a.md)\x85" == actual.content
        assert 13 == actual.byte_count

    def test_200_lines_pass_untouched(self) -> None:
        """Exactly 200 lines is within the limit."""
        text = lines(200)

        actual = truncate_entrypoint(text, profile=OLD)

        assert text == actual.content
        assert (200, False) == (actual.line_count, actual.was_line_truncated)

    def test_201_lines_are_cut_to_200(self) -> None:
        """The 201st line goes and the line-only warning is appended."""
        actual = truncate_entrypoint(lines(201), profile=OLD)

        assert warned(lines(200), "201 lines (limit: 200)") == actual.content
        assert (201, True, False) == (
            actual.line_count,
            actual.was_line_truncated,
            actual.was_byte_truncated,
        )

    def test_crlf_lines_keep_their_cr(self) -> None:
        """Only LF splits lines, so the kept lines end in CR."""
        actual = truncate_entrypoint("x\r\n" * 201, profile=OLD)

        assert (
            warned("\n".join(["x\r"] * 200), "201 lines (limit: 200)") == actual.content
        )

    def test_25000_units_pass_untouched(self) -> None:
        """Exactly 25,000 units is within the limit."""
        text = "a" * 25_000

        actual = truncate_entrypoint(text, profile=OLD)

        assert text == actual.content
        assert (25_000, False) == (actual.byte_count, actual.was_byte_truncated)

    def test_25001_units_without_newline_are_hard_cut(self) -> None:
        """No newline: the cut falls at 25,000 units with the bytes-only warning."""
        actual = truncate_entrypoint("a" * 25_001, profile=OLD)

        reason = "24.4KB (limit: 24.4KB) — index entries are too long"
        assert warned("a" * 25_000, reason) == actual.content
        assert (1, 25_001, False, True) == (
            actual.line_count,
            actual.byte_count,
            actual.was_line_truncated,
            actual.was_byte_truncated,
        )

    def test_cuts_at_a_newline_at_exactly_25000(self) -> None:
        """lastIndexOf("\\n", 25000) matches a newline at index 25,000."""
        actual = truncate_entrypoint("a" * 25_000 + "\n" + "b" * 10, profile=OLD)

        assert actual.content.startswith("a" * 25_000 + WARNING_HEAD)

    def test_ignores_a_newline_past_25000(self) -> None:
        """A newline at index 25,001 is out of reach; the earlier one is used."""
        text = "a" * 100 + "\n" + "a" * 24_900 + "\n" + "b" * 10

        actual = truncate_entrypoint(text, profile=OLD)

        assert actual.content.startswith("a" * 100 + WARNING_HEAD)

    @pytest.mark.parametrize(
        ("newline_at", "kept_units"),
        [(24_999, 24_999), (25_000, 25_000), (25_001, 100)],
    )
    def test_cut_falls_at_the_last_newline_at_or_before_the_limit(
        self, newline_at: int, kept_units: int
    ) -> None:
        """With a newline at 100 too, one at 24,999 or 25,000 wins; at 25,001 not."""
        text = "a" * 100 + "\n" + "a" * (newline_at - 101) + "\n" + "b" * 10

        actual = truncate_entrypoint(text, profile=OLD)

        assert actual.content.startswith(text[:kept_units] + WARNING_HEAD)

    def test_a_newline_at_index_1_is_a_cut_point(self) -> None:
        """Only index 0 means "no newline": one at index 1 keeps the first character."""
        actual = truncate_entrypoint("x\n" + "a" * 25_010, profile=OLD)

        assert actual.content.startswith("x" + WARNING_HEAD)

    def test_200_kept_lines_of_exactly_25000_units_are_not_cut_again(self) -> None:
        """Past 200 lines, kept text exactly at 25,000 units stays whole."""
        # 200 lines: 199 of 125 units plus newlines, the last filling to 25,000.
        head = ["y" * 124] * 199
        last = "y" * (25_000 - 199 * 125)
        text = "\n".join([*head, last, "over the line limit"])

        actual = truncate_entrypoint(text, profile=OLD)

        kept = "\n".join([*head, last])
        assert 25_000 == utf16_len(kept)
        assert warned(kept, "201 lines and 24.4KB") == actual.content

    def test_the_newest_notice_names_what_was_cut(self) -> None:
        """2.1.332's sentence counts the cut lines and quotes the first one cut."""
        actual = truncate_entrypoint(lines(203), profile="2.1.332")

        assert actual.content.endswith(
            "Only part of it was loaded: 3 of 203 lines were cut off, starting at"
            ' line 201 ("x200"). Keep index entries to one line under ~200 chars;'
            " move detail into topic files."
        )

    def test_astral_characters_count_two_units(self) -> None:
        """12,500 emoji are 25,000 units: within the limit."""
        text = "😀" * 12_500

        actual = truncate_entrypoint(text, profile=OLD)

        assert (text, 25_000, False) == (
            actual.content,
            actual.byte_count,
            actual.was_byte_truncated,
        )

    def test_12501_astral_characters_are_cut_on_a_pair_boundary(self) -> None:
        """25,002 units cut at 25,000 keep whole pairs."""
        actual = truncate_entrypoint("😀" * 12_501, profile=OLD)

        assert actual.content.startswith("😀" * 12_500 + WARNING_HEAD)
        assert 25_002 == actual.byte_count

    def test_hard_cut_may_split_a_surrogate_pair(self) -> None:
        """A cut between the halves of a pair leaves a lone high surrogate, as in JS."""
        actual = truncate_entrypoint("a" * 24_999 + "😀" + "b", profile=OLD)

        assert actual.content.startswith("a" * 24_999 + "\ud83d" + WARNING_HEAD)

    def test_line_and_byte_limits_both_exceeded(self) -> None:
        """Over both limits, the line cut comes first and the reason names both."""
        actual = truncate_entrypoint("\n".join(["y" * 99] * 300), profile=OLD)

        assert (
            warned("\n".join(["y" * 99] * 200), "300 lines and 29.3KB")
            == actual.content
        )
        assert (True, True) == (actual.was_line_truncated, actual.was_byte_truncated)

    def test_line_cut_then_byte_cut_at_last_newline(self) -> None:
        """When 200 lines are still over 25,000 units, the cut falls at a newline."""
        text = "\n".join(["z" * 200] * 201)

        actual = truncate_entrypoint(text, profile=OLD)

        # Newlines sit at 201k - 1; the last one at or before 25,000 ends line 124.
        assert (
            warned("\n".join(["z" * 200] * 124), "201 lines and 39.5KB")
            == actual.content
        )

    @given(index_text)
    @example("a" * 24_999 + "😀")
    @example(lines(201))
    def test_output_stays_within_limits_and_is_a_prefix(self, raw: str) -> None:
        """The kept text fits both limits and is a prefix of the trimmed input."""
        actual = truncate_entrypoint(raw, profile=OLD)
        trimmed = js_trim(raw)

        kept = actual.content
        if actual.was_line_truncated or actual.was_byte_truncated:
            kept, head, _ = actual.content.rpartition(WARNING_HEAD)
            assert WARNING_HEAD == head
        assert len(kept.split("\n")) <= MAX_ENTRYPOINT_LINES
        assert utf16_len(kept) <= MAX_ENTRYPOINT_UNITS
        assert utf16_units(trimmed).startswith(utf16_units(kept))
        assert (len(trimmed.split("\n")), utf16_len(trimmed)) == (
            actual.line_count,
            actual.byte_count,
        )


class TestFormatFileSize:
    @pytest.mark.parametrize(
        ("size", "expected"),
        [
            (0, "0 bytes"),
            (1, "1 bytes"),
            (0.5, "0.5 bytes"),
            (-5, "-5 bytes"),
            (1023, "1023 bytes"),
            (1024, "1KB"),
            (1280, "1.3KB"),
            (2304, "2.3KB"),
            (25_000, "24.4KB"),
            (30_720, "30KB"),
            (102_399, "100KB"),
            (1_048_575, "1024KB"),
            (1_048_576, "1MB"),
            (1_073_741_824, "1GB"),
            (2**40, "1024GB"),
        ],
    )
    def test_matches_the_reference(self, size: float, expected: str) -> None:
        """Half-up ties, no space before the unit, GB the largest unit."""
        actual = format_file_size(size)

        assert expected == actual

    def test_an_unknown_profile_is_refused(self) -> None:
        """The profile is checked though every profile formats alike."""
        with pytest.raises(ValueError, match="no agent profile for"):
            format_file_size(1, profile="0.0.1")
