"""B002 (why-how-missing): section styles and the configurable labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memd.cli.main import main
from memd.lint.checks_frontmatter import has_section
from memd.lint.context import DEFAULT_HOW_LABELS, DEFAULT_WHY_LABELS


class TestHasSection:
    @pytest.mark.parametrize(
        "body",
        [
            "**Why:** a mock hid a bug",
            "## Why\nA mock hid a bug.",
            "**Why (DEF-029):** a mock hid a bug",
            "**Why.** a mock hid a bug",
            "Why: a mock hid a bug",
            "- **Why** — a mock hid a bug",
            "Rule first. **Why:** inline, after the rule.",
            "> **WHY:** quoted",
            "**理由**\uff1a上个季度的迁移",
            "## 理由\n二回続けて壊れた",
            "**이유:** 두 번 연속",
        ],
    )
    def test_why_styles(self, body: str) -> None:
        """Headings, qualified or punctuated labels and CJK/Korean labels count."""
        assert has_section(body, DEFAULT_WHY_LABELS)

    @pytest.mark.parametrize(
        "body",
        [
            "**How to apply:** in tests/db",
            "### How to apply\nIn tests/db.",
            "**How to apply.** in tests/db",
            "**如何应用**\uff1a所有测试",
            "## 適用方法\n毎回",
            "**적용 방법:** 항상",
        ],
    )
    def test_how_styles(self, body: str) -> None:
        """Every documented how-to-apply style counts."""
        assert has_section(body, DEFAULT_HOW_LABELS)

    @pytest.mark.parametrize(
        "body",
        ["Whyever this started, it stuck.", "Somewhy text", "`why` is a word", ""],
    )
    def test_words_that_are_not_labels(self, body: str) -> None:
        """A label followed by a letter, or not at a line or bold start, is not one."""
        assert not has_section(body, ("why",))


FEEDBACK = (
    "---\nname: review-style\ndescription: Review comments are questions first\n"
    "type: feedback\n---\nAsk first.\n\n**Warum:** Fragen sind freundlicher.\n"
    "**Anwendung:** bei jedem Review.\n"
)


class TestConfiguredLabels:
    def test_config_replaces_the_labels(
        self,
        isolated_home,  # type: ignore[no-untyped-def]
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """lint.why_labels / lint.how_labels in config.toml make German labels count."""
        root = tmp_path / "memory"
        root.mkdir()
        (root / "MEMORY.md").write_text("- [Style](feedback_style.md) — questions\n")
        (root / "feedback_style.md").write_text(FEEDBACK)
        main(["lint", "--format", "json", str(root)])
        before = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            '[lint]\nwhy_labels = ["why", "Warum"]\nhow_labels = ["Anwendung"]\n'
        )

        main(["lint", "--format", "json", str(root)])
        after = [d["code"] for d in json.loads(capsys.readouterr().out)["diagnostics"]]

        assert (["B002"], []) == (before, after)
