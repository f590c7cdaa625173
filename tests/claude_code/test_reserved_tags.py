r"""Reserved tags in loaded memory, neutralized as 2.1.332 does it.

The first cases are what the real 2.1.332 loaded (tests/e2e/test_index.py
runs the same spellings through it); the rest were checked against the
release's own scrubber run on the same inputs.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memd.claude_code.prompt import view_index
from memd.claude_code.reserved_tags import RESERVED_TAGS, neutralize_reserved_tags

CASES = {
    # Seen with the real agent.
    "open-and-close": (
        "<system-reminder>x</system-reminder>",
        "<\\system-reminder>x<\\/system-reminder>",
    ),
    "function-results": ("<function_results>", "<\\function_results>"),
    "fullwidth-letter": ("<\uff33ystem-reminder>", "<\\\uff33ystem-reminder>"),
    "unreserved": ("<invoke> <div> a < b", "<invoke> <div> a < b"),
    # Homoglyphs: Cyrillic, Greek, mathematical, accented, a ligature.
    "cyrillic": ("<s\u0443st\u0435m-reminder>", "<\\s\u0443st\u0435m-reminder>"),
    "greek": ("<t\u03bfol_use_error>", "<\\t\u03bfol_use_error>"),
    "math-bold": ("<\U0001d42dick>", "<\\\U0001d42dick>"),
    "accented": ("<s\u00fdstem-reminder>", "<\\s\u00fdstem-reminder>"),
    # The ligature reads as "s", "t": the "s" is filler, "tick" follows.
    "ligature": ("<\ufb06ick>", "<\\\ufb06ick>"),
    "dash-lookalike": ("<system\u2010reminder>", "<\\system\u2010reminder>"),
    # What may sit between the opener, the letters and the end.
    "filler-space": ("< system-reminder>", "<\\ system-reminder>"),
    "filler-slash-space": ("</ system-reminder>", "<\\/ system-reminder>"),
    "filler-anything": ("<\u00b7\u2022 tick>", "<\\\u00b7\u2022 tick>"),
    "letter-before-name": ("<x system-reminder>", "<x system-reminder>"),
    "zero-width-between": ("<sys\u200btem-reminder>", "<\\sys\u200btem-reminder>"),
    "combining-between": ("<sy\u0301stem-reminder>", "<\\sy\u0301stem-reminder>"),
    "upper-case": ("<SYSTEM-REMINDER>", "<\\SYSTEM-REMINDER>"),
    "underscore-for-dash": ("<system_reminder><tool-use-error>", None),
    "longer-name": ("<system-reminders> <tickle>", "<system-reminders> <tickle>"),
    "self-closing": ("<tick/>", "<\\tick/>"),
    "at-end": ("text <tick", "text <\\tick"),
    "already-escaped": ("<\\system-reminder>", "<\\system-reminder>"),
    "lookalike-opener": ("\uff1csystem-reminder>", "<\\system-reminder>"),
    "guillemet-opener": ("\u2039tick\u203a", "<\\tick\u203a"),
    # `antml` only as a prefix; `channel` only with a `source=`.
    "antml-prefix": ("<\u0061ntml:invoke>", "<\\\u0061ntml:invoke>"),
    "antml-close": ("</\u0061ntml:invoke>", "<\\/\u0061ntml:invoke>"),
    "antml-fullwidth-colon": ("<ANTML\uff1ax>", "<\\ANTML\uff1ax>"),
    "antml-no-colon": ("<antml> <antmlx:y>", "<antml> <antmlx:y>"),
    "channel-source": ('<channel source="x">', '<\\channel source="x">'),
    "channel-source-later": (
        '<channel kind="a" source="x">',
        '<\\channel kind="a" source="x">',
    ),
    "channel-bare": ("<channel> <channel kind=x>", "<channel> <channel kind=x>"),
    "channel-source-past-close": (
        "<channel>source=x",
        "<channel>source=x",
    ),
    "channel-resource": ("<channel resource=x>", "<channel resource=x>"),
    "channel-source-too-far": (
        "<channel " + "y" * 120 + " source=x>",
        "<channel " + "y" * 120 + " source=x>",
    ),
    "channel-source-in-reach": (
        "<channel " + "y" * 110 + " source=x>",
        "<\\channel " + "y" * 110 + " source=x>",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_neutralizes_as_the_release(case: str) -> None:
    text, want = CASES[case]
    if want is None:
        want = text.replace("<", "<\\")
    assert neutralize_reserved_tags(text) == want


@pytest.mark.parametrize("tag", RESERVED_TAGS)
def test_every_reserved_tag(tag: str) -> None:
    text = f"<{tag}>x</{tag}>"
    assert neutralize_reserved_tags(text) == f"<\\{tag}>x<\\/{tag}>"


def test_index_view_neutralizes_on_2_1_332_only() -> None:
    index = "- [a](a.md) <system-reminder>x</system-reminder>\n"
    new = view_index(index, profile="2.1.332").truncation
    old = view_index(index, profile="2.1.112").truncation
    assert new is not None
    assert old is not None
    assert new.content == "- [a](a.md) <\\system-reminder>x<\\/system-reminder>"
    assert old.content == index.rstrip("\n")


def test_index_view_sanitizes_before_neutralizing() -> None:
    # The zero-width space goes first, so the name underneath is seen.
    index = "- <sys\u200btem-reminder>\n"
    view = view_index(index, profile="2.1.332").truncation
    assert view is not None
    assert view.content == "- <\\system-reminder>"


_PIECES = st.sampled_from(
    [
        "<",
        "</",
        "< ",
        ">",
        "\\",
        "\uff1c",
        "\u2039",
        "system-reminder",
        "SYSTEM_REMINDER",
        "tick",
        "antml",
        ":",
        "\uff1a",
        "channel",
        " source",
        "=",
        "\u200b",
        "\u0301",
        "\u0443",
        "\uff33",
        "\ufb06",
        "x",
        " ",
        "\n",
    ]
)


_OPENERS = "<\uff1c\u2039"


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_only_openers_change(text: str) -> None:
    """Each change writes one opener as `<\\`; everything else is kept."""
    out = neutralize_reserved_tags(text)
    j = 0
    for i, char in enumerate(text):
        kept_escape = char == "<" and text.startswith("\\", i + 1)
        if char in _OPENERS and out.startswith("<\\", j) and not kept_escape:
            j += 2  # an opener the release neutralizes is never followed by `\`
            continue
        assert out[j] == char, (text, out)
        j += 1
    assert j == len(out)
    assert neutralize_reserved_tags(out) == out  # neutralized text stays as it is


def _cpu(text: str) -> float:
    started = time.process_time()
    neutralize_reserved_tags(text)
    return time.process_time() - started


@pytest.mark.parametrize(
    "unit",
    ["<" + " " * 50, "<s\u0301" * 8, "<channel " + "\u00b7" * 40, "< \uff33", "<<<"],
)
def test_work_is_linear_in_the_text(unit: str) -> None:
    """4x the text costs about 4x, never 16x (as tests/reliability/test_linear.py)."""
    small = unit * (16384 // len(unit))
    large = unit * (65536 // len(unit))
    ratio = float("inf")
    for _ in range(3):  # a loaded machine may spoil one round, not three
        large_cost = min(_cpu(large) for _ in range(3))
        ratio = min(ratio, large_cost / max(min(_cpu(small) for _ in range(3)), 1e-4))
        if ratio < 8:
            break
    assert ratio < 8, (unit, ratio)
