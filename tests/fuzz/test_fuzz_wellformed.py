"""The fuzzers' judge itself: a malformed Diagnostic must be caught."""

from __future__ import annotations

import pytest

from memd.diagnostics import Diagnostic, Severity
from tests.fuzz.wellformed import problems

GOOD = {
    "code": "M005",
    "name": "name-missing",
    "severity": Severity.ERROR,
    "path": "a.md",
    "message": "`name` is missing",
    "line": 2,
    "column": 1,
}


class TestProblems:
    def test_good_finding_passes(self) -> None:
        """A finding as the rules make it has no problems."""
        good = Diagnostic(**GOOD)  # type: ignore[arg-type]
        assert [] == problems(good, line_counts={"a.md": 1}, relative=True)

    @pytest.mark.parametrize(
        ("change", "expected"),
        [
            ({"code": "Z999"}, "code 'Z999' is not in RULES"),
            ({"name": "name-absent"}, "is not M005's"),
            ({"code": "X1", "name": "Bad_Name"}, "not kebab-case"),
            ({"severity": "error"}, "is not a Severity"),
            ({"path": ""}, "path is empty"),
            ({"path": "/abs/a.md"}, "is absolute"),
            ({"line": 0}, "line 0 is not >= 1"),
            ({"line": 3}, "past the file's 1 lines + 1"),
            ({"column": 0}, "column 0 is not >= 1"),
            ({"message": " "}, "message is empty"),
            ({"message": "a\u2028b"}, "not one line"),
        ],
    )
    def test_each_defect_is_named(
        self, change: dict[str, object], expected: str
    ) -> None:
        """Each kind of malformation is reported by name."""
        bad = Diagnostic(**{**GOOD, **change})  # type: ignore[arg-type]
        found = problems(bad, line_counts={"a.md": 1, "/abs/a.md": 1}, relative=True)
        assert 1 == sum(expected in p for p in found)
