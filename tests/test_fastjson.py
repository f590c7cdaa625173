"""memd.fastjson against the json module: the same values in, the same text out."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd import fastjson

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()  # lone surrogates included: json escapes them as \\udxxx
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5)
    ),
    max_leaves=30,
)


@given(values)
def test_dumps_is_json_dumps_without_ascii_escapes(value: object) -> None:
    assert json.dumps(value, ensure_ascii=False) == fastjson.dumps(value)


@given(values, st.sampled_from(["", " ", "\n\t", "\r\n  "]))
def test_loads_reads_what_json_wrote(value: object, padding: str) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        padded = padding + text + padding
        assert json.loads(padded) == fastjson.loads(padded)
        encoded = padded.encode("utf-8", "surrogatepass")
        assert json.loads(encoded) == fastjson.loads(encoded)


@given(st.text(alphabet='{}[]",:.-+0123456789eEtrufalsnNIiy \t\n\\', max_size=20))
@example("NaN")
@example("[Infinity, -Infinity]")
@example('{"a": 1} {}')
@example("")
@example("  ")
@example("01")
@example('"\\ud800"')
@example('"tab\there"')  # a raw control character: json is strict by default
def test_loads_accepts_and_rejects_what_json_does(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError, match=r"."):
            fastjson.loads(text)
        return
    got = fastjson.loads(text)
    # NaN is not equal to itself: compare the text both would write back.
    assert json.dumps(expected) == json.dumps(got)


def test_nan_and_infinity_decode_as_floats() -> None:
    got = fastjson.loads("[NaN, Infinity, -Infinity]")
    assert isinstance(got, list)
    assert math.isnan(got[0])
    assert [math.inf, -math.inf] == got[1:]


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf{}",  # a UTF-8 BOM: json.loads(bytes) accepts it
        '{"é": 1}'.encode("utf-16"),
        '{"é": 1}'.encode("utf-32-le"),
        b"\xff\xfe",
        b'{"a": "\xff"}',  # not UTF-8
    ],
)
def test_bytes_needing_encoding_detection_decode_as_json_does(data: bytes) -> None:
    try:
        expected = json.loads(data)
    except ValueError:
        with pytest.raises(ValueError, match=r"."):
            fastjson.loads(data)
        return
    assert expected == fastjson.loads(data)


def test_what_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        fastjson.dumps({"a": {1, 2}})
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        fastjson.dumps(looped)
    assert '{"after": "a failure"}' == fastjson.dumps({"after": "a failure"})


def test_importing_it_loads_neither_json_nor_re() -> None:
    code = (
        "import sys, memd.fastjson as f\n"
        'f.dumps(f.loads(b\'{"a": [1, 2.5, "x"]}\'))\n'
        "print(','.join(m for m in ('json', 're', 'enum') if m in sys.modules))\n"
    )
    # -S: no site, whose .pth hooks (an editable install's finder) may import re.
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "" == done.stdout.strip()


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


class TestBounds:
    @given(values)
    def test_depth_bound_is_exact(self, value: object) -> None:
        """A document parses at its own depth and is refused one level below it."""
        text = json.dumps(value)
        depth = _depth(value)

        assert json.loads(text) == fastjson.loads(text, max_depth=depth)
        if depth:
            with pytest.raises(ValueError, match="nested deeper"):
                fastjson.loads(text, max_depth=depth - 1)

    @pytest.mark.parametrize("opening", ["[", '{"a":'])
    def test_a_deep_line_is_a_value_error(self, opening: str) -> None:
        """50 KB of openers is refused before the C scanner recurses."""
        line = (opening * 50_000).encode()

        with pytest.raises(ValueError, match="nested deeper than 64"):
            fastjson.loads(line, max_depth=64)

    @pytest.mark.parametrize(
        "data",
        [b'{"a": "\\ud83d"}', b'["\\udc00x"]', b'{"\\ud800": 1}', b'["\xff"]'],
    )
    def test_strict_text_refuses_what_utf8_cannot_hold(self, data: bytes) -> None:
        """Lone surrogates, in keys or values, and bytes that are not UTF-8."""
        with pytest.raises(ValueError, match=r"surrogate|not UTF-8"):
            fastjson.loads(data, strict_text=True)

    def test_strict_text_keeps_a_surrogate_pair(self) -> None:
        """An escaped pair is one character, not a lone surrogate."""
        assert ["\U0001f600"] == fastjson.loads(b'["\\ud83d\\ude00"]', strict_text=True)
