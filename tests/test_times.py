"""Every time memd prints is one `--at` reads back, to what the person read.

`memd.times` formats, `memd.history.when.parse_when` parses: each printed
form, pasted back, names the instant printed (the start of its second or
minute) and, read through its end as `--at` does, still covers it.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.history.when import parse_when
from memd.times import ago, clock, iso, moment, span, to_epoch, zone_note

NOW = time.mktime((2026, 12, 6, 23, 8, 13, 0, 0, -1)) + 0.696334
OFFSETS = [
    0.0,
    0.4,
    5.0,
    59.0,
    61.0,
    3599.0,
    3601.0,
    6 * 3600.0,
    23 * 3600.0 + 7,  # yesterday
    30 * 3600.0,
    3 * 86400.0 + 17,
    400 * 86400.0,
    -3600.0,  # later today
    -86400.0,  # tomorrow
    -3 * 86400.0,
]


@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("seconds", [True, False])
def test_each_clock_form_reads_back_to_what_was_printed(
    offset: float, seconds: bool
) -> None:
    epoch = NOW - offset
    printed = clock(epoch, now=NOW, seconds=seconds)

    start = parse_when(printed, now=NOW)
    end = parse_when(printed, now=NOW, through=True)

    assert clock(start, now=NOW, seconds=seconds) == printed
    assert start <= epoch <= end, (printed, start, epoch, end)
    assert end - start < (1.0 if seconds else 60.0)


@given(st.floats(min_value=-30 * 86400, max_value=400 * 86400))
def test_any_moment_reads_back(offset: float) -> None:
    epoch = NOW - offset
    for printed in (clock(epoch, now=NOW), moment(epoch, now=NOW), ago(epoch, now=NOW)):
        start = parse_when(printed, now=NOW)
        end = parse_when(printed, now=NOW, through=True)
        if printed.endswith(" ago"):  # a distance, rounded down to its unit
            unit = {"s": 1, "min": 60, "h": 3600}[printed.split()[1]]
            assert epoch - 1e-6 <= start < epoch + unit, printed
        else:
            assert start <= epoch <= end, printed


@pytest.mark.parametrize(
    ("offset", "printed"),
    [
        (0.0, "0 s ago"),
        (12.5, "12 s ago"),
        (3 * 60 + 5, "3 min ago"),
        (5 * 3600 + 1, "5 h ago"),
    ],
)
def test_ago_reads_as_a_person_says_it(offset: float, printed: str) -> None:
    assert ago(NOW - offset, now=NOW) == printed


def test_the_forms_a_person_reads() -> None:
    assert clock(NOW, now=NOW) == "today 23:08:13"
    assert clock(NOW - 86400 - 5 * 3600, now=NOW, seconds=False) == "yesterday 18:08"
    assert clock(NOW - 3 * 86400, now=NOW) == "2026-12-03 23:08:13"
    assert span(7) == "7 s"
    assert span(3 * 3600 + 20 * 60) == "3 h 20 min"
    assert zone_note(NOW).startswith("times are local (")


def test_json_keeps_iso_8601_with_the_offset_and_no_microseconds() -> None:
    text = iso(NOW)

    assert re.fullmatch(r"2026-12-06T23:08:13[+-]\d\d:\d\d", text), text
    assert to_epoch(text) == int(NOW)
    assert to_epoch("2026-12-06T22:08:13.5Z") is not None
    assert to_epoch(True) is None


def test_memd_dreams_words_read_back() -> None:
    """`memd dream` says "the next dream runs tomorrow at 03:30": pasteable too."""
    tomorrow = parse_when("tomorrow at 03:30", now=NOW)

    assert clock(tomorrow, now=NOW, seconds=False) == "tomorrow 03:30"
    assert parse_when("today at 23:08:13", now=NOW) == int(NOW)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on Thu 03 Dec at 23:08:13", "2026-12-03 23:08:13"),
        ("on Thu 3 Dec", "2026-12-03 00:00:00"),
        ("on Tue 05 Jan at 03:30", "2027-01-05 03:30:00"),
    ],
)
def test_a_day_further_off_reads_back(text: str, expected: str) -> None:
    """`memd dream` names a day past tomorrow as "on Sat 05 Dec at 03:30"."""
    found = parse_when(text, now=NOW)

    assert time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(found)) == expected


def test_a_day_whose_weekday_disagrees_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot read the time 'on Fri 03 Dec'"):
        parse_when("on Fri 03 Dec", now=NOW)
