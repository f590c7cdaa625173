"""The JavaScript semantics the reference relies on, pinned case by case."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.jscompat import (
    JS_WHITESPACE,
    from_utf16_units,
    java_string_hash,
    js_number_to_string,
    js_to_fixed_1,
    js_trim,
    to_base36,
    utf16_len,
    utf16_units,
)
from tests.strategies import any_text

# The Java puzzler string whose hashCode is Integer.MIN_VALUE.
MIN_HASH_STRING = "polygenelubricants"


class TestUtf16Len:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("", 0),
            ("abc", 3),
            ("é", 1),
            ("e\u0301", 2),
            ("😀", 2),
            ("a😀b", 4),
            ("\ud83d", 1),
            ("\U0010ffff", 2),
        ],
    )
    def test_counts_code_units(self, text: str, expected: int) -> None:
        """An astral character counts two units, a lone surrogate one."""
        actual = utf16_len(text)

        assert expected == actual

    @given(any_text)
    def test_matches_the_encoded_length(self, text: str) -> None:
        """The count equals the UTF-16 encoding's length in 2-byte units."""
        expected = len(utf16_units(text)) // 2

        assert expected == utf16_len(text)


class TestUtf16Units:
    def test_split_pair_decodes_to_a_lone_surrogate(self) -> None:
        """Half a surrogate pair survives decoding, as in a JS slice."""
        units = utf16_units("a😀")

        assert "a\ud83d" == from_utf16_units(units[:4])


class TestJsTrim:
    @pytest.mark.parametrize("char", list(JS_WHITESPACE))
    def test_trims_every_js_whitespace_character(self, char: str) -> None:
        """Each character of the JS WhiteSpace and LineTerminator sets is trimmed."""
        assert "x" == js_trim(f"{char}{char}x{char}")

    @pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u200b"])
    def test_keeps_what_python_strip_would_remove(self, char: str) -> None:
        """U+001C..U+001F, U+0085 and U+200B are not JS whitespace."""
        assert f"{char}x{char}" == js_trim(f" {char}x{char} ")

    def test_trims_the_byte_order_mark(self) -> None:
        """U+FEFF is JS whitespace although str.strip() keeps it."""
        assert "x" == js_trim("\ufeffx\ufeff")

    def test_keeps_inner_whitespace(self) -> None:
        """Only the ends are trimmed."""
        assert "a \n b" == js_trim("\r\n a \n b \r\n")


class TestJsToFixed1:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (1.25, "1.3"),  # exact tie: half-up, where Python rounds half-even
            (2.25, "2.3"),
            (0.05, "0.1"),  # 0.05 is slightly above the tie as a double
            (0.15, "0.1"),  # 0.15 is slightly below it
            (1.0, "1.0"),
            (1023.999, "1024.0"),
            (24.4140625, "24.4"),
            (-1.25, "-1.3"),
            (-0.0, "0.0"),
            (-0.04, "-0.0"),
            (1e21, "1e+21"),
            (float("nan"), "NaN"),
            (float("inf"), "Infinity"),
        ],
    )
    def test_rounds_like_to_fixed(self, value: float, expected: str) -> None:
        """toFixed(1) rounds the exact double half away from zero."""
        actual = js_to_fixed_1(value)

        assert expected == actual


class TestJsNumberToString:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (1, "1"),
            (0.5, "0.5"),
            (3.0, "3"),
            (-3, "-3"),
            (-0.0, "0"),
            (1e-5, "0.00001"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (float("-inf"), "-Infinity"),
        ],
    )
    def test_formats_like_string_of_number(self, value: float, expected: str) -> None:
        """Integers lose `.0`; notation switches where JS switches."""
        assert expected == js_number_to_string(value)


class TestJavaStringHash:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("", 0),
            ("a", 97),
            ("hello", 99162322),
            ("Aa", 2112),
            ("BB", 2112),
            (MIN_HASH_STRING, -(2**31)),
            ("😀", 0xD83D * 31 + 0xDE00),
        ],
    )
    def test_is_java_hash_code(self, text: str, expected: int) -> None:
        """The hash is Java's String.hashCode over UTF-16 units."""
        actual = java_string_hash(text)

        assert expected == actual

    @given(any_text)
    @example(MIN_HASH_STRING)
    def test_stays_signed_32_bit(self, text: str) -> None:
        """Every hash fits a signed 32-bit integer."""
        assert -(2**31) <= java_string_hash(text) < 2**31


class TestToBase36:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (0, "0"),
            (35, "z"),
            (36, "10"),
            (2**31, "zik0zk"),
            (2**31 - 1, "zik0zj"),
            (-36, "-10"),
        ],
    )
    def test_writes_lowercase_base36(self, value: int, expected: str) -> None:
        """Digits are 0-9 then a-z, like Number.prototype.toString(36)."""
        assert expected == to_base36(value)

    @given(st.integers(min_value=0, max_value=2**40))
    def test_round_trips(self, value: int) -> None:
        """int(..., 36) reads the digits back."""
        assert value == int(to_base36(value), 36)
