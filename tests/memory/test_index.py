"""Tests for memd.memory.index: which index lines are entries, and where links point."""

from __future__ import annotations

from typing import ClassVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.memory.index import (
    IndexEntry,
    classify_target,
    entry_line_numbers,
    normalize_target,
    parse_index,
    resolve_wiki_link,
    wiki_names,
)

REAL_INDEX = """# Project memory

Notes the agent keeps. Prose with a [link](prose.md) is a reference.

## User
- [User role](user_role.md) \u2014 senior backend engineer, new to React
* [Testing feedback](./feedback_testing.md): real database, never mocks
+ [Team conventions](team/conventions.md) - shared review rules
1. [Spaced name](<my notes.md>) \u2014 angle-bracket target
2) [Anchored](deploy.md#rollback "Deploy") \u2014 with anchor and title

- a bullet without a link
> - [Quoted](quoted.md) \u2013 inside a blockquote

```
- [In code](code.md) \u2014 not an entry
```
<!-- - [Commented](hidden.md) -->
- ![Image](diagram.png)
- `[Span](span.md)` in a code span
"""


def targets(entries: tuple[IndexEntry, ...]) -> list[str]:
    return [e.target for e in entries]


class TestParseIndex:
    def test_real_index(self) -> None:
        """Links in list items are entries, in prose references; code is neither."""
        links = parse_index(REAL_INDEX)
        entries = tuple(e for e in links if e.is_entry)

        assert (["prose.md"], [3]) == (
            [e.target for e in links if not e.is_entry],
            [e.line for e in links if not e.is_entry],
        )
        assert [
            "user_role.md",
            "./feedback_testing.md",
            "team/conventions.md",
            "my notes.md",
            "deploy.md#rollback",
            "quoted.md",
        ] == targets(entries)

    def test_hooks_lose_their_separator(self) -> None:
        """The hook after the link drops a leading dash, colon or em dash."""
        hooks = [e.hook for e in parse_index(REAL_INDEX) if e.is_entry]

        assert [
            "senior backend engineer, new to React",
            "real database, never mocks",
            "shared review rules",
            "angle-bracket target",
            "with anchor and title",
            "inside a blockquote",
        ] == hooks

    def test_line_numbers_titles_and_raw(self) -> None:
        """Line numbers are 1-based; title and raw line are kept."""
        first = next(e for e in parse_index(REAL_INDEX) if e.is_entry)

        assert 6 == first.line
        assert "User role" == first.title
        assert (
            "- [User role](user_role.md) \u2014 senior backend engineer, new to React"
        ) == first.raw
        assert 3 == first.column

    def test_crlf_is_not_part_of_the_entry(self) -> None:
        """A CRLF index gives the same entries, without carriage returns."""
        entries = parse_index("- [A](a.md) \u2014 hook\r\n- [B](b.md)\r\n")

        assert (["a.md", "b.md"], "hook", "- [A](a.md) \u2014 hook") == (
            targets(entries),
            entries[0].hook,
            entries[0].raw,
        )

    def test_several_links_on_one_line(self) -> None:
        """An item's first link is its entry, carrying the hook; the rest refer."""
        entries = parse_index("- [A](a.md), see also [B](b.md)\n")

        assert (["a.md", "b.md"], ["see also [B](b.md)", ""], [True, False]) == (
            targets(entries),
            [e.hook for e in entries],
            [e.is_entry for e in entries],
        )

    def test_leading_frontmatter_is_skipped(self) -> None:
        """A frontmatter block (stripped by the reference) holds no entries."""
        entries = parse_index("---\nx: '- [F](f.md)'\n---\n- [A](a.md)\n")

        assert (["a.md"], 4) == (targets(entries), entries[0].line)

    def test_multiline_comment(self) -> None:
        """Links inside a multi-line HTML comment are not entries."""
        text = "<!--\n- [Hidden](h.md)\n-->\n- [Shown](s.md)\n"

        assert ["s.md"] == targets(parse_index(text))

    def test_comment_in_list_item_reaches_the_agent(self) -> None:
        """A comment inside a list item is kept by the agent, so its link counts."""
        text = "- [A](a.md) <!-- see [B](b.md) -->\n- item\n  <!-- [C](c.md) -->\n"

        assert ["a.md", "b.md", "c.md"] == targets(parse_index(text))

    def test_comment_block_after_item_is_stripped(self) -> None:
        """A comment line right after a list item is its own block: stripped."""
        text = "- [A](a.md)\n<!-- [B](b.md) -->\n- [C](c.md)\n"

        assert (["a.md", "c.md"], 3) == (
            targets(parse_index(text)),
            parse_index(text)[1].line,
        )

    def test_parenthesised_target(self) -> None:
        """Balanced parentheses inside a target stay part of it."""
        assert ["notes(1).md"] == targets(parse_index("- [N](notes(1).md)\n"))

    def test_empty(self) -> None:
        """An empty index has no entries."""
        assert () == parse_index("")

    @given(st.text(max_size=2000))
    @example("- [")
    @example("- [a](")
    @example("<!--")
    @example("```\n- [a](b.md)")
    @example("- [" + "[" * 5000 + "](x)")
    @example("[[" * 3000 + "]]" * 10)
    @example("[a][b][c]\n[b]: x.md\n[c]: <y.md")
    @example("``" + "`[a](b)`" * 500)
    @example("| [x](x.md) | [[y|z]] |\n> ### [q](q.md)")
    def test_never_raises(self, text: str) -> None:
        """parse_index, wiki_names and entry_line_numbers accept any text;
        every link sits on a real line, at a real column."""
        lines = text.split("\n")

        entries = parse_index(text)
        numbers = entry_line_numbers(text, entries)
        names = wiki_names(text)

        assert all(1 <= e.line <= len(lines) for e in entries)
        assert all(1 <= e.column <= len(lines[e.line - 1]) for e in entries)
        assert numbers <= set(range(1, len(lines) + 1))
        assert [e.target for e in entries if e.is_wiki] == list(names)


class TestNormalizeTarget:
    @pytest.mark.parametrize(
        ("target", "expected"),
        [
            ("user_role.md", "user_role.md"),
            ("./x.md", "x.md"),
            ("team/x.md", "team/x.md"),
            ("team/./sub/../x.md", "team/x.md"),
            ("<my notes.md>", "my notes.md"),
            ("my%20notes.md", "my notes.md"),
            ("x.md#section", "x.md"),
            ("x.md?plain=1", "x.md"),
            ("team%2Fx.md", "team/x.md"),
        ],
    )
    def test_inside(self, target: str, expected: str) -> None:
        """Targets inside the memory directory become a clean POSIX relpath."""
        assert expected == normalize_target(target)

    @pytest.mark.parametrize(
        ("target", "why"),
        [
            ("../x.md", "outside"),
            ("team/../../x.md", "outside"),
            ("%2e%2e/secret.md", "outside"),
            ("..", "outside"),
            ("..\\x.md", "outside"),
            ("/etc/passwd", "absolute"),
            ("%2Fetc%2Fpasswd", "absolute"),
            ("https://example.com/x.md", "url"),
            ("file:///etc/passwd", "url"),
            ("mailto:someone@example.com", "url"),
            ("//host/share/x.md", "url"),
            ("C:\\Users\\x.md", "url"),
            ("#section", "empty"),
            ("", "empty"),
            (".", "empty"),
        ],
    )
    def test_never_followed(self, target: str, why: str) -> None:
        """URLs, absolute paths and `..` escapes give None with the reason."""
        assert (None, why) == classify_target(target)

    @given(st.text(max_size=200))
    def test_result_stays_inside(self, target: str) -> None:
        """A normalised target is never absolute and never climbs out."""
        result = normalize_target(target)

        assert result is None or not (result.startswith(("/", "../")) or result == "..")


def links(text: str) -> list[tuple[str, bool, bool]]:
    return [(e.target, e.is_entry, e.is_wiki) for e in parse_index(text)]


class TestEveryLinkForm:
    def test_table_rows(self) -> None:
        """A link opening a table cell row is an entry; later cells refer."""
        text = "| [X](x.md) | about x, see [Y](y.md) |\n| --- | --- |\n"

        assert [("x.md", True, False), ("y.md", False, False)] == links(text)

    def test_headings_and_paragraphs(self) -> None:
        """A heading or paragraph that starts with a link is an entry; prose refers."""
        text = (
            "### [gis](gis.md)\n**[Deploy](deploy.md)** — blue/green\n"
            "details: [r](./r.md)\n"
        )

        assert [
            ("gis.md", True, False),
            ("deploy.md", True, False),
            ("./r.md", False, False),
        ] == links(text)

    def test_item_with_a_cross_reference(self) -> None:
        """'→ [incident](x.md)' inside another entry is a reference."""
        text = (
            "- [Outage](outage.md) — root cause → [incident](x.md)\n- see [y](y.md)\n"
        )

        assert [
            ("outage.md", True, False),
            ("x.md", False, False),
            ("y.md", False, False),
        ] == links(text)

    def test_reference_style_links(self) -> None:
        """`[x][1]`, `[x][]` and `[x]` take their definitions' targets; an unused
        definition still reaches its file."""
        text = (
            "- [Arch][1] — archive\nsee [Rig][] and [notes]\n\n"
            '[1]: archive.md "Archive"\n[rig]: <rig setup.md>\n[NOTES]: n.md\n'
            "[spare]: spare.md\n"
        )

        assert [
            ("archive.md", True, False),
            ("rig setup.md", False, False),
            ("n.md", False, False),
            ("spare.md", False, False),
        ] == links(text)

    def test_wiki_links(self) -> None:
        """`[[name]]`, `[[name|alias]]` and `[[name#part]]` link by name."""
        text = "- [[deploy-checklist|Deploy]] — before a release\nsee [[gis#tiles]]\n"

        assert [("deploy-checklist", True, True), ("gis", False, True)] == links(text)

    def test_code_and_comments_hide_links(self) -> None:
        """Links in fenced code, inline code (any backtick run), comments: none."""
        text = (
            "```\n[a](a.md)\n```\n``[b](b.md) ` still code``\n"
            "<!-- [c](c.md) --> [d](d.md)\n`[[e]]` and \\[f](f.md)\n"
        )

        assert [("d.md", True, False)] == links(text)  # the comment is invisible

    def test_unmatched_backticks_are_text(self) -> None:
        """A lone backtick run opens no code span, so a later link counts."""
        assert [("x.md", False, False)] == links("a ` b [x](x.md)\n")


class TestResolveWikiLink:
    NAMES: ClassVar[dict[str, str]] = {
        "feedback_db.md": "integration-tests-real-db",
        "own.md": "Team ownership",
    }

    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("integration-tests-real-db", "feedback_db.md"),
            ("team-ownership", "own.md"),  # by the name's slug
            ("own", "own.md"),  # by file stem
            ("billing", None),
        ],
    )
    def test_by_name_then_stem(self, name: str, expected: str | None) -> None:
        """A wiki-link resolves by `name:` (as written or slugged), then by stem."""
        assert expected == resolve_wiki_link(name, self.NAMES, list(self.NAMES))
