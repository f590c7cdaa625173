"""memd.memory.yaml_safe: the one YAML loader, safe and bounded, never raising."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memd.memory.yaml_safe import (
    YamlProblem,
    is_within_budget,
    load_yaml,
    plain_mapping,
)


class TestLoadYaml:
    def test_a_mapping_loads(self) -> None:
        """Plain frontmatter YAML comes back as a dict with no problem."""
        assert ({"name": "a", "type": "user"}, None) == load_yaml(
            "name: a\ntype: user\n"
        )

    def test_blank_text_is_none(self) -> None:
        """Whitespace-only YAML is None, not a problem."""
        assert (None, None) == load_yaml("  \n")

    def test_a_syntax_error_names_its_line_in_the_text(self) -> None:
        """A marked error's line and column are 1-based within the YAML text."""
        value, problem = load_yaml("name: a\ndescription: [x\n")

        assert None is value
        assert problem is not None
        assert (3, 1) == (problem.line, problem.column)

    def test_python_tags_are_refused(self) -> None:
        """The safe loader refuses tags that would build Python objects."""
        value, problem = load_yaml("x: !!python/object/apply:os.system ['true']\n")

        assert (None, 1) == (value, problem.line if problem else None)

    def test_an_alias_bomb_is_refused(self) -> None:
        """Aliases that expand past the node budget are refused, not returned."""
        lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
        lines += [
            f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}]"
            for p, c in zip("abcde", "bcdef", strict=True)
        ]
        value, problem = load_yaml("\n".join(lines) + "\n")

        expected = YamlProblem(
            "frontmatter YAML aliases expand too far or loop; it was not used"
        )
        assert (None, expected) == (value, problem)


class TestBudget:
    def test_a_small_tree_is_within(self) -> None:
        """A few nested nodes fit the budget."""
        assert is_within_budget({"a": [1, 2, {"b": 3}]})

    def test_a_cycle_is_not(self) -> None:
        """A list that contains itself is refused."""
        loop: list[object] = []
        loop.append(loop)

        assert not is_within_budget(loop)

    def test_the_budget_counts_nodes(self) -> None:
        """A tree one node larger than the budget is refused."""
        assert (True, False) == (
            is_within_budget([1, 2], budget=3),
            is_within_budget([1, 2, 3], budget=3),
        )


# Keys and values near every edge the plain path must refuse or get right.
_KEYS = st.sampled_from(
    [
        "name",
        "description",
        "type",
        "a-b",
        "x_1",
        "on",
        "No",
        "NULL",
        "1a",
        "-a",
        "ké",
        "a b",
        "k" * 130,
        "?",
        "<<",
    ]
) | st.text(alphabet="abcXYZ019_-: ", min_size=1, max_size=6)
_SPECIAL = ("\t", "\r", "\x85", "\u2028", "\ufeff", "\x00", "\ud800", "\ue000", "\xa0")
_VALUE_CHARS = st.sampled_from([*"aZé😀ǅ :#'\"[]{},&*!|>%@`?-.~=\\/1", *_SPECIAL])
_VALUES = (
    st.text(alphabet=_VALUE_CHARS, max_size=12)
    # a letter first, as the plain path wants, so it is taken often
    | st.builds(str.__add__, st.sampled_from("aZéΩ\u01c5"), st.text(_VALUE_CHARS))
) | st.sampled_from(
    [
        "yes",
        "Off",
        "TRUE",
        "null",
        "Null",
        "y",
        "n",
        "~",
        "1e3",
        "0x1F",
        ".inf",
        "2026-02-30",
        "a: b",
        "a #c",
        "C#",
        "b:",
        "http://x.y",
        "x ",
        " x",
        "Ω omega",
    ]
)
_IDS = st.builds(
    str.__add__,
    st.sampled_from("0123456789"),
    st.text("0123456789abcdefxXbBoOzZ-_.+", max_size=12),
)
_DATES = st.dates().map(str) | st.datetimes().map(
    lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")
)
_DATE_LIKE = st.sampled_from(
    [
        "2026-02-30",
        "2026-1-1",
        "2026-11-01T10:14:00+01:00",
        "2026-11-01T25:14:00Z",
        "2026-11-01t10:14:00Z",
        "2026-11-01 10:14:00Z",
        "2026-11-01T10:14:00.5Z",
        "2026-11-0aT10:14:00Z",
        "0000-01-01",
        "1234-abcd",
    ]
)
_PLAINISH = st.builds(  # a value the plain path may take, so that it is taken often
    str.__add__,
    st.sampled_from("aZéΩǅ"),
    st.text("abcZé😀 ,.'\"()[]{}!?&*|>%@`~=-/\\:#1"),
)
_ANY_LINE = st.tuples(
    st.sampled_from(["", "  ", "   ", "\t"]),
    _KEYS,
    st.sampled_from([": ", ":  ", ":", " : ", ":\t"]),
    _VALUES | _IDS | _DATE_LIKE | st.just(""),
).map("".join)
_GOOD_LINE = st.tuples(  # shaped as the plain path wants, so that it is taken often
    st.sampled_from(["", "  "]),
    st.sampled_from(["name", "description", "type", "modified", "originSessionId"]),
    st.just(": "),
    _PLAINISH | _IDS | _DATES,
).map("".join)
_LINES = _GOOD_LINE | _GOOD_LINE | st.just("metadata:") | _ANY_LINE


@settings(max_examples=400)  # most draws are refused; enough must be taken
@given(st.lists(_LINES, min_size=1, max_size=6), st.sampled_from(["\n", "", "\n\n"]))
@example(["name: Release train"], "\n")
@example(["metadata:", "  type: user", "  modified: 2026-11-01T10:14:00Z"], "\n")
def test_plain_mapping_is_what_pyyaml_loads(lines: list[str], end: str) -> None:
    """Whatever the plain path accepts, PyYAML's safe loader loads to the same value."""
    from frontmatter.default_handlers import YAMLHandler

    text = "\n".join(lines) + end
    plain = plain_mapping(text)
    if plain is None:
        return
    loaded = YAMLHandler().load(text)  # raising here would be a test failure too
    assert loaded == plain
    assert _types(loaded) == _types(plain)  # a date is not a datetime, nor a str


def _types(value: object) -> object:
    if isinstance(value, dict):
        return {key: _types(item) for key, item in value.items()}
    return type(value)


def test_a_plain_frontmatter_takes_the_plain_path() -> None:
    """The commonest frontmatter never reaches PyYAML (and so never imports it)."""
    text = (
        "name: Release train\ndescription: Releases leave every second Tuesday, "
        "from main (after the freeze); see CI/CD docs\ntype: project\n"
    )
    expected = {
        "name": "Release train",
        "description": "Releases leave every second Tuesday, from main "
        "(after the freeze); see CI/CD docs",
        "type": "project",
    }

    assert expected == plain_mapping(text)
    assert (expected, None) == load_yaml(text)


def test_the_agents_nested_metadata_takes_the_plain_path() -> None:
    """What Claude Code writes (REFERENCE.md §8): `metadata:` with a UTC time."""
    import datetime

    text = (
        "name: release-train\ndescription: Releases leave every second Tuesday\n"
        "metadata:\n  node_type: memory\n  type: project\n"
        "  originSessionId: 0f3c9a4e-7b1d-4c2e-9a8f-5d6e7f8a9b0c\n"
        "  modified: 2026-11-02T10:14:00Z\ncreated: 2026-11-01\n"
    )
    expected = {
        "name": "release-train",
        "description": "Releases leave every second Tuesday",
        "metadata": {
            "node_type": "memory",
            "type": "project",
            "originSessionId": "0f3c9a4e-7b1d-4c2e-9a8f-5d6e7f8a9b0c",
            "modified": datetime.datetime(2026, 11, 2, 10, 14, tzinfo=datetime.UTC),
        },
        "created": datetime.date(2026, 11, 1),
    }

    assert expected == plain_mapping(text)


@pytest.mark.parametrize(
    "text",
    [
        "type: yes\n",  # a bool
        "name: a\nname: b\n",  # a repeated key: PyYAML keeps the last
        "name: a\n  continued\n",
        "description: a: b\n",
        "description: a # note\n",
        "name: 'quoted'\n",
        "count: 3\n",
        "name: a\r\n",
        "name: a\n\ntype: user\n",
        "# comment\nname: a\n",
        "metadata:\n",  # null
        "metadata:\nname: a\n",
        "metadata:\n  type: user\n    deeper: x\n",
        "  type: user\n",
        "modified: 2026-02-30\n",  # PyYAML refuses the date, and says why
        "modified: 2026-11-02T10:14:00+01:00\n",
        "id: 0x1F\n",
        "id: 1234-abcd\n",
    ],
)
def test_anything_else_goes_to_pyyaml(text: str) -> None:
    assert plain_mapping(text) is None
