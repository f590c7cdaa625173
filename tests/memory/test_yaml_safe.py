"""memd.memory.yaml_safe: the one YAML loader, safe and bounded, never raising."""

from __future__ import annotations

from memd.memory.yaml_safe import YamlProblem, is_within_budget, load_yaml


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
