"""The one path rule (memd.relpath): what it refuses, and that what passes stays in."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.relpath import relpath_refusal

REFUSED = [
    "",
    "/etc/passwd",
    "../x.md",
    "a/../../x.md",
    "./x.md",
    "a/./x.md",
    "a//x.md",
    "a/",
    ".git/config",
    "sub/.git/config",
    "deep/er/.git/hooks/post-checkout",
    ".GIT/config",
    ".Git/config",
    ".git./x",
    ".git../x",
    ".git /x",
    ".git. . /x",
    ".git:$DATA/x",
    ".git::$INDEX_ALLOCATION/x",
    "git~1/config",
    "GIT~2/config",
    ".g\u200cit/config",
    ".gi\ufefft/config",
    "\u200e.git/config",
    "..\\x.md",
    "a\\b.md",
    "C:x.md",
    "c:/x.md",
    "x\0.md",
    "x\n.md",
    "x\x1b[31m.md",
    "x\x7f.md",
    "x\x85.md",
    "x\u2215y.md",
    "x\u2044y.md",
    "x\uff0fy.md",
    "x\u29f8y.md",
    "x\uff3cy.md",
    "\uff0e\uff0e/x.md",
    "\udc80x.md",
    "a" * 256,
    "/".join(["a"] * 65),
]
ACCEPTED = [
    "x.md",
    "sub/x.md",
    "team/notes.md",
    ".gitignore",
    ".github/x.md",
    "git/x.md",
    "x.git/y.md",
    "notes: a colon.md",
    "日本語/メモ.md",
    "emoji 🧠.md",
    "a" * 255,
    "..x.md",
    "x..md",
]


class TestRelpathRefusal:
    @pytest.mark.parametrize("relpath", REFUSED)
    def test_refused_with_a_reason(self, relpath: str) -> None:
        """Each spelling of the classes is refused, with a one-line reason."""
        why = relpath_refusal(relpath)

        assert why is not None
        assert "\n" not in why

    @pytest.mark.parametrize("relpath", ACCEPTED)
    def test_plain_names_pass(self, relpath: str) -> None:
        """Names a person or the agent writes pass, hidden ones included."""
        assert relpath_refusal(relpath) is None

    @given(st.text(max_size=40))
    def test_what_passes_stays_inside_and_is_never_git(self, relpath: str) -> None:
        """An accepted relpath normalises to itself, inside, with no .git part."""
        if relpath_refusal(relpath) is not None:
            return

        assert relpath == posixpath.normpath(relpath)
        assert not relpath.startswith(("/", "../"))
        assert all(
            part.casefold().rstrip(". ") != ".git" for part in relpath.split("/")
        )
        assert "\\" not in relpath
