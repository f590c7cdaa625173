"""memd.jsonedit: a user's JSON is edited by splices, not rewritten (#41 class 6)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memd import jsonedit
from memd.jsonedit import JsonEditError, Number

FOUR = (
    "{\n"
    '    "cleanupPeriodDays": 1e400,\n'
    '    "ratio": 1.0,\n'
    '    "odd": "\\ud800 and \\u00e9",\n'
    '    "spaced" :   [1,2,   3],\n'
    '    "hooks": {\n'
    '        "Stop": [{"matcher": "", "hooks": []}]\n'
    "    }\n"
    "}\n"
)


def _with(value: object, **changes: object) -> dict[str, object]:
    assert isinstance(value, dict)
    out = dict(value)
    for key, new in changes.items():
        if new is None:
            out.pop(key, None)
        else:
            out[key] = new
    return out


class TestUntouchedKeysKeepTheirBytes:
    def test_loading_and_writing_back_the_same_value_changes_nothing(self) -> None:
        """No edit, no change: the text is returned as it was."""
        assert FOUR == jsonedit.rewrite(FOUR, jsonedit.load(FOUR))

    @pytest.mark.parametrize(
        "kept",
        ['"cleanupPeriodDays": 1e400', '"ratio": 1.0', '"odd": "\\ud800 and \\u00e9"'],
    )
    def test_adding_a_key_keeps_every_other_members_text(self, kept: str) -> None:
        """`1e400` is not written back as `Infinity`, `1.0` not as `1`, escapes stay."""
        new = _with(jsonedit.load(FOUR), mcpServers={"memd": {"command": "memd"}})

        text = jsonedit.rewrite(FOUR, new)

        assert kept in text
        assert '"spaced" :   [1,2,   3],' in text
        assert "Infinity" not in text
        assert new == jsonedit.load(text)

    def test_removing_a_key_takes_its_comma_and_nothing_else(self) -> None:
        """The last member removed: the comma before it goes, the rest stays."""
        text = jsonedit.rewrite(FOUR, _with(jsonedit.load(FOUR), hooks=None))

        assert text == FOUR[: FOUR.index(',\n    "hooks"')] + "\n}\n"

    def test_removing_a_middle_key(self) -> None:
        """A member between others goes with its own comma and line."""
        text = jsonedit.rewrite(FOUR, _with(jsonedit.load(FOUR), ratio=None))

        assert text == FOUR.replace('    "ratio": 1.0,\n', "")

    def test_a_nested_change_touches_only_that_value(self) -> None:
        """Adding an event under `hooks` leaves `Stop`'s one-line text alone."""
        value = jsonedit.load(FOUR)
        assert isinstance(value, dict)
        hooks = dict(value["hooks"])  # type: ignore[arg-type]
        hooks["SessionStart"] = [{"hooks": [{"type": "command", "command": "x"}]}]

        text = jsonedit.rewrite(FOUR, _with(value, hooks=hooks))

        assert '        "Stop": [{"matcher": "", "hooks": []}],\n' in text
        assert '        "SessionStart": [\n            {\n' in text
        assert FOUR.split('"hooks"')[0] == text.split('"hooks"')[0]

    def test_floats_load_as_their_text(self) -> None:
        """A float never becomes a Python float that could round or overflow."""
        value = jsonedit.load('{"a": 1e400, "b": -0.0}')

        assert {"a": Number("1e400"), "b": Number("-0.0")} == value

    def test_one_line_documents_stay_on_one_line(self) -> None:
        """A compact file gets a compact member, spaced as its own colon."""
        assert '{"a":1, "b":{"c": [1]}}' == jsonedit.rewrite(
            '{"a":1}', {"a": 1, "b": {"c": [1]}}
        )

    def test_an_empty_object_in_a_spread_file_is_spread(self) -> None:
        """`{}` in a multi-line file opens up at the right indent."""
        text = jsonedit.rewrite('{\n  "a": {}\n}\n', {"a": {"b": 1}})

        assert '{\n  "a": {\n    "b": 1\n  }\n}\n' == text

    def test_no_text_gives_a_two_space_document(self) -> None:
        """A file memd creates is laid out with two spaces and a final newline."""
        assert '{\n  "a": [\n    1\n  ]\n}\n' == jsonedit.rewrite(None, {"a": [1]})


class TestArrays:
    @pytest.mark.parametrize(
        ("old", "new", "expected"),
        [
            ("[1, 2, 3]", [1, 3], "[1, 3]"),
            ("[1, 2, 3]", [1, 2, 3, 4], "[1, 2, 3, 4]"),
            ("[1, 2, 3]", [0, 1, 2, 3], "[0, 1, 2, 3]"),
            ("[1, 2, 3]", [], "[]"),
            ("[]", [5], "[5]"),
            ('[1, {"a": 1e400}]', [{"a": Number("1e400")}], '[{"a": 1e400}]'),
        ],
    )
    def test_items_added_and_removed(
        self, old: str, new: list[object], expected: str
    ) -> None:
        """Kept items keep their text; removed ones go with a comma."""
        assert expected == jsonedit.rewrite(old, new)

    def test_spread_array_keeps_item_layout(self) -> None:
        """Appending to a spread array adds a line at the items' indent."""
        text = jsonedit.rewrite(
            '{\n  "a": [\n    1.50\n  ]\n}\n', {"a": [Number("1.50"), 2]}
        )

        assert '{\n  "a": [\n    1.50,\n    2\n  ]\n}\n' == text


class TestComments:
    def test_comments_survive_an_edit(self) -> None:
        """JSONC: comments are kept, even beside the changed member."""
        text = '// mine\n{\n  "a": 1, // one\n  /* two */ "b": "//x"\n}\n'

        edited = jsonedit.rewrite(text, {"a": 2, "b": "//x", "c": 3}, comments=True)

        assert (
            '// mine\n{\n  "a": 2, // one\n  /* two */ "b": "//x",\n  "c": 3\n}\n'
            == (edited)
        )

    @pytest.mark.parametrize(
        ("text", "new", "expected"),
        [
            (
                '{\n  "a": 1, // keep\n  "memd": 2 // memd\'s\n}\n',
                {"a": 1},
                '{\n  "a": 1 // keep\n}\n',
            ),
            (
                '{\n  "a": 1, // keep\n  "memd": 2, // memd\'s\n  "b": 3\n}\n',
                {"a": 1, "b": 3},
                '{\n  "a": 1, // keep\n  "b": 3\n}\n',
            ),
            ('{"a": 1 // keep\n}', {"a": 1, "b": 2}, '{"a": 1, // keep\n"b": 2\n}'),
        ],
    )
    def test_a_comment_ending_a_kept_line_stays_on_it(
        self, text: str, new: dict[str, object], expected: str
    ) -> None:
        """Removing or adding a neighbour never swallows a kept member's comment."""
        assert expected == jsonedit.rewrite(text, new, comments=True)

    def test_comments_are_refused_in_plain_json(self) -> None:
        """Without `comments=True` a comment is a syntax error, with its place."""
        with pytest.raises(JsonEditError, match="line 2, column 3"):
            jsonedit.load('{\n  // x\n  "a": 1}')


class TestRefusals:
    @pytest.mark.parametrize(
        ("text", "words"),
        [
            ("[" * 100_000, "nested deeper than"),
            ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested deeper than"),
            ('{"a": NaN}', "NaN is not JSON"),
            ('{"a": -Infinity}', "-Infinity is not JSON"),
            ('{"a": 1} {}', "extra data"),
            ('{"a": 1,}', "line 1, column 9"),
            ('{"a": ' + "9" * 5000 + "}", "digits"),
        ],
    )
    def test_bad_documents_give_one_line(self, text: str, words: str) -> None:
        """What JSON.parse rejects, or what would blow the stack, is one line."""
        with pytest.raises(JsonEditError, match=words) as caught:
            jsonedit.rewrite(text, {"b": 1})
        assert "\n" not in str(caught.value)

    def test_a_changed_duplicate_key_is_refused(self) -> None:
        """Which of two `hooks` the agent reads is unclear: memd does not guess."""
        with pytest.raises(JsonEditError, match="'hooks' appears twice"):
            jsonedit.rewrite('{"hooks": 1, "hooks": 2}', {"hooks": 3})

    def test_an_untouched_duplicate_key_is_left_alone(self) -> None:
        """Duplicates memd does not change stay as they are."""
        text = '{"x": 1, "x": 2}'

        assert '{"x": 1, "x": 2, "y": 3}' == jsonedit.rewrite(text, {"x": 2, "y": 3})

    def test_a_lone_surrogate_escape_loads_and_stays(self) -> None:
        """`"\\ud800"` is valid JSON; a new string holding one is written escaped."""
        text = jsonedit.rewrite('{"a": "\\ud800"}', {"a": "\ud800", "b": "\udc00é"})

        assert '{"a": "\\ud800", "b": "\\udc00\\u00e9"}' == text
        text.encode("utf-8")


def test_dump_matches_json_for_plain_values() -> None:
    """`dump` lays out plain values as `json.dumps` does."""
    value = {"a": [1, {"b": None, "c": True}], "é": "x", "e": {}}

    assert json.dumps(value, indent=2, ensure_ascii=False) == jsonedit.dump(value)
    assert json.dumps(value, ensure_ascii=False) == jsonedit.dump(value, indent=None)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(max_size=6),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
    ),
    max_leaves=12,
)
_DOCS = st.dictionaries(st.sampled_from("abcdef"), _VALUES, max_size=5)


@settings(max_examples=300, deadline=None)
@given(old=_DOCS, new=_DOCS, indent=st.sampled_from([None, 2, 4, "\t"]))
def test_any_edit_reads_back_as_the_value_asked_for(
    old: dict[str, object], new: dict[str, object], indent: int | str | None
) -> None:
    """Whatever the two documents, the text written loads as the new one."""
    text = json.dumps(old, indent=indent, ensure_ascii=False)

    written = jsonedit.rewrite(text, new)

    assert json.dumps(new, sort_keys=True) == json.dumps(
        json.loads(written), sort_keys=True
    )  # as text: `true` and `1` differ
    for key, value in old.items():  # a member both share keeps its exact text
        if key in new and json.dumps(new[key]) == json.dumps(value) and indent is None:
            member = json.dumps({key: value}, ensure_ascii=False)[1:-1]
            assert member in written


@settings(max_examples=200, deadline=None)
@given(old=_DOCS, new=_DOCS)
def test_any_edit_of_a_commented_document_reads_back(
    old: dict[str, object], new: dict[str, object]
) -> None:
    """JSONC: comments after each line's comma and at the top never break an edit."""
    lines = json.dumps(old, indent=2, ensure_ascii=False).split("\n")
    text = "// settings\n" + "\n".join(
        line + " // note" if line.endswith(",") else line for line in lines
    )

    written = jsonedit.rewrite(text, new, comments=True)

    assert json.dumps(new, sort_keys=True) == json.dumps(
        jsonedit.load(written, comments=True), sort_keys=True
    )
    assert written.startswith("// settings\n")
