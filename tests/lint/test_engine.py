"""The lint engine: severities, ordering, lone files, exactly which entries are lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from memd.diagnostics import Severity
from memd.errors import UsageError
from memd.lint.engine import apply_severities, display_path, lint_memdir
from memd.lint.targets import lint_targets, resolve_targets
from memd.memory.reader import load_memdir

TOPIC = (
    "---\nname: {name}\ndescription: {name} is a specific enough description\n"
    "type: user\n---\nFact.\n"
)


def _memdir(root: Path, index: str, names: list[str]) -> Path:
    root.mkdir(exist_ok=True)
    (root / "MEMORY.md").write_text(index, encoding="utf-8")
    for name in names:
        (root / f"{name}.md").write_text(TOPIC.format(name=name), encoding="utf-8")
    return root


class TestSeverities:
    def test_override_by_code_and_name(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """A config entry by code or name changes the severity; `off` drops the rule."""
        make_memdir.write("MEMORY.md", "# Index\n- [Gone](gone.md) — missing\n")
        make_memdir.topic(
            "a.md", name="A", description="an orphan topic file here", type="user"
        )
        memdir = load_memdir(str(make_memdir.root))

        default = {d.code: d.severity for d in lint_memdir(memdir)}
        changed = {
            d.code: d.severity
            for d in lint_memdir(
                memdir, severities={"I005": "error", "topic-orphan": "off"}
            )
        }

        assert {"I005": Severity.WARNING, "I006": Severity.WARNING} == default
        assert {"I005": Severity.ERROR} == changed

    def test_unknown_level_is_ignored(self) -> None:
        """A level other than error, warning, info or off leaves the finding alone."""
        from memd.lint.rules import RULES_BY_KEY

        d = RULES_BY_KEY["I006"].diag("a.md", "orphan")

        assert [d] == apply_severities([d], {"I006": "loud"})


class TestOrdering:
    def test_sorted_by_path_line_code(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """Findings come out ordered by path, then line, then code."""
        make_memdir.write("MEMORY.md", "- [Z](z.md) — gone\n- [Y](y.md) — gone too\n")
        make_memdir.write("b.md", "no frontmatter\n")
        make_memdir.write("a.md", "no frontmatter either\n")

        diagnostics = lint_memdir(load_memdir(str(make_memdir.root)))

        keys = [(d.path, d.line or 0, d.code) for d in diagnostics]
        assert sorted(keys) == keys
        assert ["MEMORY.md", "MEMORY.md", "a.md", "a.md", "b.md", "b.md"] == [
            d.path for d in diagnostics
        ]


class TestTruncation:
    def test_names_exactly_the_entries_past_line_200(self, tmp_path: Path) -> None:
        """With 205 entry lines, entries 201 to 205 are the ones never loaded."""
        names = [f"t{i:03}" for i in range(205)]
        index = "".join(f"- [{n}]({n}.md) — hook\n" for n in names)
        root = _memdir(tmp_path / "memory", index, names)

        [finding] = [d for d in lint_memdir(load_memdir(str(root))) if d.code == "I002"]

        assert 201 == finding.line
        assert (
            "5 entries will not be loaded (lines 201-205): t200.md (line 201), t201.md"
            in finding.message
        )
        assert "t199.md" not in finding.message

    def test_counts_utf16_units_not_characters(self, tmp_path: Path) -> None:
        """Astral characters count two units: 13,000 emoji fit in Python, not in JS."""
        index = (
            "- [a](a.md) — "
            + "😀" * 6000
            + "\n"
            + "- [b](b.md) — "
            + "😀" * 7000
            + "\n"
        )
        root = _memdir(tmp_path / "memory", index, ["a", "b"])

        found = [d for d in lint_memdir(load_memdir(str(root))) if d.code == "I003"]

        assert 1 == len(found)
        assert "1 entry will not be loaded: b.md (line 2)" in found[0].message

    def test_leading_blank_lines_do_not_shift_the_cut(self, tmp_path: Path) -> None:
        """The reference trims first: blank lines above the list do not count."""
        names = [f"t{i:03}" for i in range(200)]
        index = "\n" * 10 + "".join(f"- [{n}]({n}.md) — hook\n" for n in names)
        root = _memdir(tmp_path / "memory", index, names)

        codes = {d.code for d in lint_memdir(load_memdir(str(root)))}

        assert "I002" not in codes

    def test_comments_and_frontmatter_do_not_count(self, tmp_path: Path) -> None:
        """The agent strips frontmatter and HTML comments first; so does the count."""
        names = [f"t{i:03}" for i in range(195)]
        comment = "<!--\n" + "old note\n" * 40 + "-->\n"
        entries = "".join(f"- [{n}]({n}.md) — hook\n" for n in names)
        root = _memdir(
            tmp_path / "memory", "---\nx: 1\n---\n" + comment + entries, names
        )

        codes = {d.code for d in lint_memdir(load_memdir(str(root)))}

        assert "I002" not in codes

    def test_lines_map_back_when_markup_is_stripped(self, tmp_path: Path) -> None:
        """With a comment above, lost entries are named by their line in the file."""
        names = [f"t{i:03}" for i in range(202)]
        entries = "".join(f"- [{n}]({n}.md) — hook\n" for n in names)
        root = _memdir(tmp_path / "memory", "<!-- a\nb\nc -->\n" + entries, names)

        [finding] = [d for d in lint_memdir(load_memdir(str(root))) if d.code == "I002"]

        assert 204 == finding.line
        assert "t201.md (line 205)" in finding.message
        assert "t199.md" not in finding.message


class TestLintFile:
    def test_lone_file_gets_no_index_rules(self, tmp_path: Path) -> None:
        """A lone topic file is checked alone: no orphan or missing-index findings."""
        path = tmp_path / "note.md"
        path.write_text(
            "---\nname: Note\ndescription: Short\ntype: feedbak\n---\nBody.\n"
        )

        diagnostics = lint_targets(resolve_targets([str(path)]), cwd=str(tmp_path))

        assert {("M008", "note.md"), ("M011", "note.md")} == {
            (d.code, d.path) for d in diagnostics
        }

    def test_missing_file_is_a_usage_error(self, tmp_path: Path) -> None:
        """A path that does not exist is one clear usage error, not an exception."""
        with pytest.raises(UsageError, match="no such file"):
            resolve_targets([str(tmp_path / "nope.md")])


class TestDisplayPath:
    def test_relative_inside_cwd_absolute_outside(self, tmp_path: Path) -> None:
        """Paths under the working directory are shown relative, others absolute."""
        inside = display_path(str(tmp_path / "mem"), "team/x.md", cwd=str(tmp_path))
        outside = display_path("/elsewhere/mem", "x.md", cwd=str(tmp_path))

        assert ("mem/team/x.md", "/elsewhere/mem/x.md") == (inside, outside)


class TestLinksInHooks:
    @pytest.mark.parametrize(
        "hook",
        [
            "see [x](../../../etc/passwd)",
            "or [abs](/etc/passwd) there",
            "a [ref][out] here",
        ],
    )
    def test_a_link_out_in_a_hook_is_flagged(self, tmp_path: Path, hook: str) -> None:
        """I008 sees every link of an entry line, the description's too."""
        index = f"- [A](A.md) — {hook}\n\n[out]: ../../secret.md\n"
        memdir = load_memdir(str(_memdir(tmp_path / "m", index, ["A"])))

        found = [(d.code, d.line) for d in lint_memdir(memdir) if d.code == "I008"]

        assert [("I008", 1)] == found

    def test_a_link_out_in_prose_is_not_an_entry(self, tmp_path: Path) -> None:
        """A paragraph's pointer outside is no entry line, so no I008."""
        index = "- [A](A.md) — a\n\nSee [the wiki](https://example.com) too.\n"
        memdir = load_memdir(str(_memdir(tmp_path / "m", index, ["A"])))

        assert [] == [d for d in lint_memdir(memdir) if d.code == "I008"]
