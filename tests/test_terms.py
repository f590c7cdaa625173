"""Each term the agent names has one home, memd/claude_code/terms.py; no copies.

As tests/test_fsread.py forbids a raw `open(`, this forbids another spelling
of the index's name or another tuple of the memory types in code (prose,
docstrings and the agent's own sentences may say "MEMORY.md").
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

from memd.claude_code.terms import INDEX_NAME, MEMORY_TYPES

PACKAGE = Path(__file__).resolve().parent.parent / "memd"
HOME = PACKAGE / "claude_code" / "terms.py"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p != HOME)


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


@pytest.mark.parametrize("path", SOURCES, ids=_name)
class TestNoCopies:
    def test_no_bare_index_name(self, path: Path) -> None:
        """A string that is exactly "MEMORY.md" is INDEX_NAME's job."""
        source = path.read_text("utf-8")
        found = [
            f"{_name(path)}:{tok.start[0]}"
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.STRING
            and tok.string.lstrip("bBrRuU") in (f'"{INDEX_NAME}"', f"'{INDEX_NAME}'")
        ]

        assert [] == found

    def test_no_other_tuple_of_the_memory_types(self, path: Path) -> None:
        """A literal holding all four types is MEMORY_TYPES' job."""
        tree = ast.parse(path.read_text("utf-8"))
        found = [
            f"{_name(path)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Tuple | ast.List | ast.Set)
            and {c.value for c in node.elts if isinstance(c, ast.Constant)}
            >= set(MEMORY_TYPES)
        ]

        assert [] == found


def test_the_home_holds_what_the_agent_uses() -> None:
    """The index's name and the four types, in the agent's order."""
    assert ("MEMORY.md", ("user", "feedback", "project", "reference")) == (
        INDEX_NAME,
        MEMORY_TYPES,
    )


def _calls(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
        for n in ast.walk(node)
    )


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if _name(p) != "memory/index.py"], ids=_name
)
def test_is_linked_has_one_answer(path: Path) -> None:
    """Only memd.memory.index.linked_relpaths turns an index's links into relpaths.

    A comprehension over `parse_index(...)` that normalises targets, or a
    regex for `](<relpath>)`, is a second answer that can disagree with it.
    """
    source = path.read_text("utf-8")
    tree = ast.parse(source)
    found = [
        f"{_name(path)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp)
        and any(_calls(g.iter, "parse_index") for g in node.generators)
        and _calls(node.elt, "normalize_target")
    ]
    found += [
        f"{_name(path)}:{number}"
        for number, line in enumerate(source.splitlines(), start=1)
        if r"\]\(" in line and "re.escape(" in line
    ]

    assert [] == found


STAT_KEY = {"st_size", "st_mtime_ns", "st_ino"}
# The parse cache's key adds ctime and the size cap: another key, on purpose.
STAT_KEY_ELSEWHERE = ("memory/reader.py",)


@pytest.mark.parametrize(
    "path",
    [p for p in SOURCES if _name(p) not in ("statkey.py", *STAT_KEY_ELSEWHERE)],
    ids=_name,
)
def test_the_stat_key_is_read_in_one_place(path: Path) -> None:
    """(size, mtime_ns, inode) of a stat result comes from memd.statkey.key_of."""
    tree = ast.parse(path.read_text("utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List):
            parts: list[ast.expr] = list(node.elts)
        elif isinstance(node, ast.Call):
            parts = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        read = {p.attr for p in parts if isinstance(p, ast.Attribute)}
        if STAT_KEY <= read:
            found.append(f"{_name(path)}:{node.lineno}")

    assert [] == found
