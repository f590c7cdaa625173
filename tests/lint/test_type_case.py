"""`type:` is one of four exact lowercase strings: every other case spelling is wrong.

REFERENCE.md's parseMemoryType compares with `===`, so `User`, `USER` and `uSer`
give the file no type; lint says so (M008) and the manifest shows no type.
"""

from __future__ import annotations

import pytest

from memd.claude_code.manifest import MEMORY_TYPES, build_manifest
from memd.lint.engine import lint_memdir
from memd.memory.reader import load_memdir
from tests.conftest import MemDirMaker


def _case_spellings(word: str) -> list[str]:
    """Every spelling of `word` but lowercase: upper, title, each letter up."""
    one_up = [word[:i] + word[i].upper() + word[i + 1 :] for i in range(len(word))]
    return sorted({word.upper(), word.title(), word.swapcase(), *one_up} - {word})


SPELLINGS = [
    (kind, spelling) for kind in MEMORY_TYPES for spelling in _case_spellings(kind)
]


def _topic(make_memdir: MemDirMaker, type_value: str, *, nested: bool) -> None:
    make_memdir.write("MEMORY.md", "- [A](a.md) — the one topic file here\n")
    if nested:
        text = (
            "---\nname: a\ndescription: the one topic file here\n"
            f"metadata:\n  node_type: memory\n  type: {type_value}\n---\nFact.\n"
        )
        make_memdir.write("a.md", text)
    else:
        make_memdir.topic(
            "a.md", name="A", description="the one topic file here", type=type_value
        )


def _type_findings(make_memdir: MemDirMaker) -> list[tuple[str, str]]:
    found = lint_memdir(load_memdir(str(make_memdir.root)))
    return [(d.code, d.path) for d in found if d.code in ("M007", "M008")]


class TestTypeCase:
    @pytest.mark.parametrize("nested", [False, True], ids=["classic", "nested"])
    @pytest.mark.parametrize(("kind", "spelling"), SPELLINGS)
    def test_other_case_is_reported(
        self, make_memdir: MemDirMaker, kind: str, spelling: str, nested: bool
    ) -> None:
        """`type: User` (any case but lowercase) is M008, once, on that file."""
        _topic(make_memdir, spelling, nested=nested)

        actual = _type_findings(make_memdir)

        assert [("M008", "a.md")] == actual

    @pytest.mark.parametrize("nested", [False, True], ids=["classic", "nested"])
    @pytest.mark.parametrize("kind", MEMORY_TYPES)
    def test_lowercase_is_clean(
        self, make_memdir: MemDirMaker, kind: str, nested: bool
    ) -> None:
        """The four exact lowercase values raise neither M007 nor M008."""
        _topic(make_memdir, kind, nested=nested)

        actual = _type_findings(make_memdir)

        assert [] == actual

    @pytest.mark.parametrize(("kind", "spelling"), SPELLINGS)
    def test_other_case_has_no_type_in_the_manifest(
        self, make_memdir: MemDirMaker, kind: str, spelling: str
    ) -> None:
        """The manifest shows no type for a case variant, the type for lowercase."""
        _topic(make_memdir, spelling, nested=False)
        make_memdir.topic("b.md", name="B", description="exact", type=kind)

        entries = build_manifest(load_memdir(str(make_memdir.root)))
        actual = {e.relpath: e.type for e in entries}

        assert {"a.md": None, "b.md": kind} == actual

    @pytest.mark.parametrize("quoted", ['" user"', '"user "', "'User'", '"USER"'])
    def test_quoted_variants_are_reported(
        self, make_memdir: MemDirMaker, quoted: str
    ) -> None:
        """A quoted value keeps its spaces and case: still not one of the four."""
        _topic(make_memdir, quoted, nested=False)

        actual = _type_findings(make_memdir)

        assert [("M008", "a.md")] == actual
