"""HTML comments in MEMORY.md, stripped by top-level Markdown block as the agent does.

Every expected value here is what the real releases loaded (tests/e2e/
test_index.py runs the same inputs through 2.1.112 and 2.1.332).
"""

from __future__ import annotations

import pytest

from memd.claude_code.html_comments import sanitize_loaded_text, strip_comment_blocks
from memd.claude_code.prompt import view_index

# (input, what both releases load before truncation trims it)
LOADED = {
    "own-line": ("- a\n<!-- c -->\n- b\n", "- a\n- b\n"),
    "own-line-then-blank": ("- a\n\n<!-- x -->\n\n\n- b\n", "- a\n\n- b\n"),
    "indented-in-item": ("- a\n\n   <!-- c -->\n- b\n", "- a\n\n   <!-- c -->\n- b\n"),
    "inline-list": ("- a <!-- why --> more\n- b\n", "- a <!-- why --> more\n- b\n"),
    "inline-paragraph": (
        "Some <!-- h --> text\nnext\n",
        "Some <!-- h --> text\nnext\n",
    ),
    "after-paragraph": ("para\n<!-- c -->\nmore\n", "para\nmore\n"),
    "lazy-in-paragraph": ("para\n  <!-- c -->\nmore\n", "para\n  <!-- c -->\nmore\n"),
    "after-list-item": ("- item\n<!-- c -->\n- next\n", "- item\n- next\n"),
    "in-item": ("- item\n  <!-- c -->\n- next\n", "- item\n  <!-- c -->\n- next\n"),
    "multi-line": ("- a\n<!--\none\ntwo\n-->\n- b\n", "- a\n- b\n"),
    "unclosed": ("- a\n<!-- open\n- b\n", "- a\n<!-- open\n- b\n"),
    "late-close": ("- a\n<!-- open\n- b\n```\nx -->\n```\n- c\n", "- a\n```\n- c\n"),
    "empty-forms": ("<!---->\n<!-->\n<!--->\n- x\n", "<!-->\n<!--->\n- x\n"),
    "tilde-fence": (
        "~~~md\n<!-- c -->\n~~~\n<!-- out -->\n- b\n",
        "~~~md\n<!-- c -->\n~~~\n- b\n",
    ),
    "inline-code": ("- use `<!-- x -->` here\n", "- use `<!-- x -->` here\n"),
    "indented-code": (
        "text\n\n    <!-- c -->\n\n- b\n",
        "text\n\n    <!-- c -->\n\n- b\n",
    ),
    "blockquote": (
        "> q <!-- c -->\n> <!-- d -->\n\n- b\n",
        "> q <!-- c -->\n> <!-- d -->\n\n- b\n",
    ),
    "heading": ("# T <!-- c -->\n- b\n", "# T <!-- c -->\n- b\n"),
    "html-block": (
        "<div>\n<!-- c -->\n</div>\n\n- b\n",
        "<div>\n<!-- c -->\n</div>\n\n- b\n",
    ),
    "tab-in-item": ("- a\n\t<!-- tab -->\n- b\n", "- a\n\t<!-- tab -->\n- b\n"),
    "crlf": ("- a\r\n<!-- c -->\r\n- b\r\n", "- a\n- b\n"),
    "lone-cr": ("- a\r- b\r<!-- c -->\r- d\n", "- a\n- b\n- d\n"),
}


class TestStripCommentBlocks:
    @pytest.mark.parametrize("case", list(LOADED))
    @pytest.mark.parametrize("rebuild", [True, False])
    def test_matches_the_agent(self, case: str, rebuild: bool) -> None:
        """Each position keeps or drops its comment as the real agent did."""
        raw, loaded = LOADED[case]

        assert loaded == strip_comment_blocks(raw, rebuild=rebuild).content

    def test_no_comment_is_untouched(self) -> None:
        """Without `<!--` the text comes back as it was, CRLF and all."""
        raw = "- a\r\n- b\r\n"

        assert raw == strip_comment_blocks(raw, rebuild=True).content

    def test_fenced_comment_only(self) -> None:
        """2.1.112 rebuilds with LF; 2.1.332 keeps the file when nothing went."""
        raw = "```\r\n<!-- c -->\r\n```\r\n"

        assert (
            "```\n<!-- c -->\n```\n" == strip_comment_blocks(raw, rebuild=True).content
        )
        assert raw == strip_comment_blocks(raw, rebuild=False).content

    def test_many_unclosed_is_linear(self) -> None:
        """Thousands of unclosed comments finish and keep the text."""
        raw = "<!-- x\n" * 20_000

        assert raw == strip_comment_blocks(raw, rebuild=False).content


class TestViewIndex:
    def test_bom_hides_frontmatter_from_2_1_112(self) -> None:
        """2.1.112 looks for frontmatter before the BOM goes; 2.1.332 after."""
        raw = "\ufeff---\nk: v\n---\n- a\n"

        old = view_index(raw, profile="2.1.112").truncation
        new = view_index(raw, profile="2.1.332").truncation

        assert old is not None
        assert new is not None
        assert "---\nk: v\n---\n- a" == old.content
        assert "- a" == new.content

    def test_bom_taken_off_by_the_reader(self) -> None:
        """`has_bom` puts back the BOM the reader removed, for 2.1.112's rule."""
        view = view_index("---\nk: v\n---\n- a\n", profile="2.1.112", has_bom=True)

        assert view.truncation is not None
        assert "---\nk: v\n---\n- a" == view.truncation.content

    def test_2_1_332_removes_invisible_characters(self) -> None:
        """Zero-width, soft hyphen, BEL go and U+2028 breaks the line (2.1.332)."""
        raw = "- a\u200b b\n- c\u2028d\n- e\u00ad\x07f\n"

        old = view_index(raw, profile="2.1.112").truncation
        new = view_index(raw, profile="2.1.332").truncation

        assert old is not None
        assert new is not None
        assert "- a b\n- c\nd\n- ef" == new.content
        assert raw.strip() == old.content

    def test_sanitize_keeps_joiners(self) -> None:
        """ZWJ sequences and emoji variation selectors survive."""
        family = "\U0001f468\u200d\U0001f469\u2764\ufe0f"

        assert family == sanitize_loaded_text(family)
