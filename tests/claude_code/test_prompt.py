"""Tests for memd.claude_code.prompt and .wording: structure, determinism, the index."""

from __future__ import annotations

import datetime
import re

import pytest

from memd.claude_code.prompt import MODES, render_prompt, strip_index_markup
from memd.claude_code.truncation import EntrypointTruncation

INDEX = "- [Testing](feedback_testing.md) — integration tests use a real database\n"


def _headings(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("#")]


class TestRenderPrompt:
    @pytest.mark.parametrize("mode", MODES)
    def test_deterministic(self, mode: str) -> None:
        """The same inputs give the same bytes."""
        first = render_prompt(mode=mode, memory_dir="/m/", index_text=INDEX)
        second = render_prompt(mode=mode, memory_dir="/m/", index_text=INDEX)

        assert first == second

    def test_standard_structure(self) -> None:
        """Standard mode has the reference's sections in its order."""
        text, _ = render_prompt(mode="standard", memory_dir="/mem/", index_text=INDEX)

        expected = [
            "# auto memory",
            "## Types of memory",
            "## What NOT to save in memory",
            "## How to save memories",
            "## When to access memories",
            "## Before recommending from memory",
            "## Memory and other forms of persistence",
            "## MEMORY.md",
        ]
        assert expected == _headings(text)

    def test_standard_names_directory_and_types(self) -> None:
        """The intro names the directory in backticks; each type has a block."""
        text, _ = render_prompt(mode="standard", memory_dir="/mem/", index_text=INDEX)

        assert "`/mem/`" in text
        assert "already exists" in text
        assert ["user", "feedback", "project", "reference"] == re.findall(
            r"<name>(\w+)</name>", text
        )
        assert 2 == text.count("<body_structure>")
        assert "<scope>" not in text
        assert "- [Title](file.md) — one-line hook" in text

    def test_team_structure(self) -> None:
        """Team mode names both directories, has a scope section and scope tags."""
        text, _ = render_prompt(mode="team", memory_dir="/mem/", index_text=INDEX)

        assert "# Memory" == _headings(text)[0]
        assert "## Memory scope" in _headings(text)
        assert "`/mem/`" in text
        assert "`/mem/team/`" in text
        assert 4 == text.count("<scope>")
        assert "team/" in text.split("## How to save memories")[1]
        assert "Secrets" in text.split("## What NOT to save in memory")[1]

    def test_kairos_uses_pattern_not_date(self) -> None:
        """KAIROS gives the log path as a pattern and never today's date."""
        text, _ = render_prompt(mode="kairos", memory_dir="/mem/", index_text=INDEX)
        today = datetime.date.today()

        assert "/mem/logs/YYYY/MM/YYYY-MM-DD.md" in text
        assert today.isoformat() not in text
        assert str(today.year) not in text
        assert "- HH:MM" in text
        assert "## MEMORY.md" in text

    def test_empty_index(self) -> None:
        """A missing or blank index gives the empty line and no truncation facts."""
        missing = render_prompt(mode="standard", memory_dir="/m/", index_text=None)
        blank = render_prompt(mode="standard", memory_dir="/m/", index_text=" \n\n")

        assert missing == blank
        assert None is missing[1]
        assert missing[0].endswith(
            "## MEMORY.md\n\nYour MEMORY.md is empty for now. "
            "Memories you save will be listed here.\n"
        )

    def test_index_included(self) -> None:
        """The index appears under `## MEMORY.md` with its facts."""
        text, truncation = render_prompt(
            mode="standard", memory_dir="/m/", index_text=INDEX
        )

        assert text.endswith("## MEMORY.md\n\n" + INDEX)
        # By hand: the trimmed index is one line of 72 UTF-16 units, not cut.
        expected = EntrypointTruncation(
            content=INDEX.rstrip("\n"),
            line_count=1,
            byte_count=72,
            was_line_truncated=False,
            was_byte_truncated=False,
        )
        assert expected == truncation

    def test_truncated_index_warns(self) -> None:
        """An index over 200 lines is cut with the reference's warning."""
        index = "".join(f"- [E{i}](e{i}.md) — entry {i}\n" for i in range(250))
        text, truncation = render_prompt(
            mode="standard", memory_dir="/m/", index_text=index, profile="2.1.112"
        )

        assert truncation is not None
        assert truncation.was_line_truncated
        assert "> WARNING: MEMORY.md is 250 lines (limit: 200)." in text
        assert "- [E199](e199.md)" in text
        assert "- [E200](e200.md)" not in text

    def test_extra_guidelines(self) -> None:
        """Non-blank extra guidelines follow the persistence section."""
        with_extra, _ = render_prompt(
            mode="standard",
            memory_dir="/m/",
            index_text=None,
            extra_guidelines="Be terse.",
        )
        blank, _ = render_prompt(
            mode="standard", memory_dir="/m/", index_text=None, extra_guidelines="  "
        )
        plain, _ = render_prompt(mode="standard", memory_dir="/m/", index_text=None)

        assert "current work.\n\nBe terse.\n\n## MEMORY.md" in with_extra
        assert plain == blank

    def test_unknown_mode(self) -> None:
        """An unknown mode is a ValueError."""
        with pytest.raises(ValueError, match="tiny"):
            render_prompt(mode="tiny", memory_dir="/m/", index_text=None)


class TestStripIndexMarkup:
    def test_frontmatter_and_comments(self) -> None:
        """Frontmatter and a comment's own line go; fenced comments stay."""
        raw = (
            "---\ntitle: x\n---\n<!-- hidden -->\n- [A](a.md) — a\n"
            "```\n<!-- kept -->\n```\n"
        )

        expected = "- [A](a.md) — a\n```\n<!-- kept -->\n```\n"
        assert expected == strip_index_markup(raw)

    def test_comment_only_index_is_empty(self) -> None:
        """An index holding only a comment renders as empty."""
        _, truncation = render_prompt(
            mode="standard", memory_dir="/m/", index_text="<!-- TODO -->\n"
        )

        assert None is truncation

    def test_unclosed_frontmatter_kept(self) -> None:
        """Text that only starts like frontmatter is left alone."""
        raw = "---\nnot closed\n- [A](a.md)\n"

        assert raw == strip_index_markup(raw)


# Typed from REFERENCE.md, "2.1.332: what changed", "`[[name]]` links".
NESTED_TEMPLATE = (
    "---\n"
    "name: {{short-kebab-case-slug}}\n"
    "description: {{one-line summary, used to decide relevance in future "
    "conversations, so be specific}}\n"
    "metadata:\n"
    "  type: {{user, feedback, project, reference}}\n"
    "---\n"
)
LINK_SENTENCE = (
    "In the body, link to related memories with `[[name]]`, where `name` is the "
    "other memory's name: slug. Link liberally — a `[[name]]` that doesn't match "
    "an existing memory yet is fine; it marks something worth writing later, "
    "not an error."
)


class TestFrontmatterTemplate:
    @pytest.mark.parametrize("mode", ["standard", "team"])
    def test_2_1_332_has_the_nested_template_and_link_sentence(self, mode: str) -> None:
        """The template, a body asking for `[[their-name]]`, then the sentence."""
        text, _ = render_prompt(
            mode=mode, memory_dir="/m/", index_text=INDEX, profile="2.1.332"
        )
        saving = text.split("## How to save memories")[1].split("\n## ")[0]

        assert 1 == saving.count(NESTED_TEMPLATE)
        body = saving.split(NESTED_TEMPLATE)[1].split("```")[0]
        assert body.startswith("\n{{")
        assert body.endswith("}}\n")
        assert "Link related memories with [[their-name]]" in body
        assert f"```\n\n{LINK_SENTENCE}\n\n2. Add a pointer" in saving
        assert "type: {{user, feedback, project or reference}}" not in text

    @pytest.mark.parametrize("mode", ["standard", "team"])
    def test_2_1_112_keeps_the_classic_template(self, mode: str) -> None:
        """Top-level `type:`, no `metadata:`, no links: as 2.1.112 asks."""
        text, _ = render_prompt(
            mode=mode, memory_dir="/m/", index_text=INDEX, profile="2.1.112"
        )

        assert (
            "---\nname: {{short title}}\n"
            "description: {{one specific line, used later to judge whether it is "
            "relevant}}\ntype: {{user, feedback, project or reference}}\n---\n"
        ) in text
        assert "metadata:" not in text
        assert "[[" not in text

    def test_kairos_has_no_template_in_either_release(self) -> None:
        """The daily-log prompt has no saving steps, so no template or sentence."""
        for profile in ("2.1.112", "2.1.332"):
            text, _ = render_prompt(
                mode="kairos", memory_dir="/m/", index_text=INDEX, profile=profile
            )

            assert "name: {{" not in text
            assert "[[name]]" not in text
