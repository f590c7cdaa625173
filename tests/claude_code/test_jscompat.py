"""The JavaScript semantics the reference relies on, pinned case by case."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.claude_code.jscompat import (
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
from memd.claude_code.paths import js_normalize, sanitize_path, validate_memory_path
from memd.claude_code.truncation import format_file_size, truncate_entrypoint
from tests.strategies import TRAP_CHARACTERS, any_text

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


# The reference's functions written in JavaScript from REFERENCE.md, so that V8
# itself supplies trim(), toFixed(), path.normalize and UTF-16 string lengths.
REFERENCE_JS = r"""
const path = require("path");
function hash(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = ((h << 5) - h + s.charCodeAt(i)) | 0;
  return h;
}
function sanitizePath(name) {
  const s = name.replace(/[^a-zA-Z0-9]/g, "-");
  if (s.length <= 200) return s;
  return `${s.slice(0, 200)}-${Math.abs(hash(name)).toString(36)}`;
}
function fixed(x) { return x.toFixed(1).replace(/\.0$/, ""); }
function formatFileSize(n) {
  const kb = n / 1024;
  if (kb < 1) return `${n} bytes`;
  if (kb < 1024) return `${fixed(kb)}KB`;
  const mb = kb / 1024;
  if (mb < 1024) return `${fixed(mb)}MB`;
  return `${fixed(mb / 1024)}GB`;
}
function truncate(raw) {
  const t = raw.trim();
  const lines = t.split("\n");
  const lineCount = lines.length, byteCount = t.length;
  const wl = lineCount > 200, wb = byteCount > 25000;
  if (!wl && !wb) return {content: t, lineCount, byteCount, wl, wb};
  let k = wl ? lines.slice(0, 200).join("\n") : t;
  if (k.length > 25000) {
    const at = k.lastIndexOf("\n", 25000);
    k = k.slice(0, at > 0 ? at : 25000);
  }
  const size = formatFileSize(byteCount);
  const reason = wb && !wl
    ? `${size} (limit: ${formatFileSize(25000)}) — index entries are too long`
    : wl && !wb ? `${lineCount} lines (limit: 200)` : `${lineCount} lines and ${size}`;
  const content = k + `\n\n> WARNING: MEMORY.md is ${reason}. Only part of it ` +
    "was loaded. Keep index entries to one line under ~200 chars; " +
    "move detail into topic files.";
  return {content, lineCount, byteCount, wl, wb};
}
function validate(raw, expandTilde, home) {
  if (!raw) return null;
  let c = raw;
  if (expandTilde && (c.startsWith("~/") || c.startsWith("~\\"))) {
    const rest = c.slice(2);
    const restNorm = path.normalize(rest || ".");
    if (restNorm === "." || restNorm === "..") return null;
    c = path.join(home, rest);
  }
  const n = path.normalize(c).replace(/[/\\]+$/, "");
  if (!path.isAbsolute(n) || n.length < 3 || /^[A-Za-z]:$/.test(n) ||
      n.startsWith("\\\\") || n.startsWith("//") || n.includes("\0")) return null;
  return (n + path.sep).normalize("NFC");
}
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(cases.map(([kind, a, b]) => {
  if (kind === "s") return sanitizePath(a);
  if (kind === "f") return formatFileSize(a);
  if (kind === "t") return truncate(a);
  if (kind === "v") return validate(a, b, "/home/u");
  return path.normalize(a);
})));
"""


def _python_answer(case: list[object]) -> object:
    kind, first = case[0], case[1]
    if kind == "s":
        return sanitize_path(str(first))
    if kind == "f":
        assert isinstance(first, int | float)
        return format_file_size(first)
    if kind == "t":
        result = truncate_entrypoint(str(first), profile="2.1.112")
        return {
            "content": result.content,
            "lineCount": result.line_count,
            "byteCount": result.byte_count,
            "wl": result.was_line_truncated,
            "wb": result.was_byte_truncated,
        }
    if kind == "v":
        return validate_memory_path(
            str(first), bool(case[2]), home="/home/u", profile="2.1.112"
        )
    return js_normalize(str(first))


def _as_units(value: object) -> object:
    """Compare strings as UTF-16 units: a pair may be one char or two halves."""
    if isinstance(value, str):
        return utf16_units(value)
    if isinstance(value, dict):
        return {key: _as_units(item) for key, item in value.items()}
    return value


def _differential_cases(seed: int) -> list[list[object]]:
    rng = random.Random(seed)  # noqa: S311 -- reproducible test inputs
    chars = [*TRAP_CHARACTERS, "\0"]
    path_chars = list("/\\~.ab C:\0é\u0301😀")

    def text(n: int, alphabet: list[str]) -> str:
        return "".join(rng.choices(alphabet, k=n))

    cases: list[list[object]] = []
    cases += [
        ["s", text(rng.choice([0, 150, 200, 201, 260]), chars)] for _ in range(300)
    ]
    cases += [["f", n] for n in (0.5, -3, 1280, 2304, 25_000, 1_048_575, 2**40)]
    cases += [["f", rng.randint(0, 2**34)] for _ in range(300)]
    for _ in range(20):
        cases.append(
            ["t", "\n".join(text(rng.randint(0, 150), chars) for _ in range(210))]
        )
        cases.append(["t", text(rng.randint(24_990, 25_010), ["a", "😀", "\n", "\r"])])
        cases.append(["t", text(rng.randint(24_995, 25_005), ["a", "😀"])])
    for _ in range(600):
        raw = rng.choice(["", "~/", "~\\", "/", "//", "~"]) + text(
            rng.randint(0, 12), path_chars
        )
        cases += [["v", raw, rng.random() < 0.7], ["n", raw]]
    return cases


@pytest.mark.skipif(
    shutil.which("node") is None, reason="needs node to run the JS reference"
)
class TestAgainstNode:
    @pytest.mark.parametrize("seed", [0, 1])
    def test_matches_v8_on_random_inputs(self, seed: int) -> None:
        """sanitize, truncate, size and validate agree with a V8 model of 2.1.112."""
        cases = _differential_cases(seed)
        result = subprocess.run(
            ["node", "-e", REFERENCE_JS],
            input=json.dumps(cases).encode(),
            capture_output=True,
            check=True,
        )
        reference = json.loads(result.stdout)

        mismatches = [
            (case, mine, theirs)
            for case, theirs in zip(cases, reference, strict=True)
            if _as_units(mine := _python_answer(case)) != _as_units(theirs)
        ]

        assert [] == mismatches[:3]
