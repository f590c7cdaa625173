"""The conflict rules as pure functions: expected values written by hand."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memd.gitsync.merge import (
    author_slug,
    conflict_copy_path,
    conflict_copy_text,
    link_copies,
    merge_index,
)
from memd.lint.checks_files import is_conflict_copy
from memd.memory.memfile import parse_memory_file


class TestMergeIndex:
    def test_new_entries_from_both_sides_keep_their_order(self) -> None:
        """Theirs' new entry lands after the line it follows in theirs."""
        ours = "# Team\n- [A](a.md) — a\n- [B](b.md) — b\n- [O](o.md) — ours\n"
        theirs = "# Team\n- [A](a.md) — a\n- [T](t.md) — theirs\n- [B](b.md) — b\n"

        merged = merge_index(ours, theirs)

        assert (
            "# Team\n- [A](a.md) — a\n- [T](t.md) — theirs\n"
            "- [B](b.md) — b\n- [O](o.md) — ours\n"
        ) == merged

    def test_an_entry_is_the_same_entry_when_it_links_the_same_file(self) -> None:
        """Different titles or hooks for one file: ours is kept, listed once."""
        merged = merge_index(
            "- [X](x.md) — ours\n", "- [Other title](./x.md) — theirs\n"
        )

        assert "- [X](x.md) — ours\n" == merged

    def test_entries_of_deleted_files_are_dropped_from_both_sides(self) -> None:
        """A file the merge deleted loses its entry, whoever still had it."""
        merged = merge_index(
            "- [A](a.md) — a\n- [Gone](gone.md) — g\n",
            "- [Gone](gone.md) — g\n- [B](b.md) — b\n",
            deleted=frozenset({"gone.md"}),
        )

        assert "- [A](a.md) — a\n- [B](b.md) — b\n" == merged

    def test_prose_lines_are_kept_once(self) -> None:
        """Prose is one line when its text is; theirs' new lines follow their anchor."""
        merged = merge_index(
            "# Team\n\nNotes here.\n- [A](a.md) — a\n",
            "# Team\n\n## New section\n- [B](b.md) — b\n",
        )

        assert (
            "# Team\n## New section\n- [B](b.md) — b\n\nNotes here.\n- [A](a.md) — a\n"
        ) == merged

    @given(
        st.lists(st.sampled_from("abcdefgh"), unique=True),
        st.lists(st.sampled_from("abcdefgh"), unique=True),
    )
    def test_union_has_each_file_once_and_keeps_ours_in_order(
        self, ours_files: list[str], theirs_files: list[str]
    ) -> None:
        """Every linked file appears exactly once; ours' entries keep their order."""
        ours = "".join(f"- [{f}]({f}.md) — o\n" for f in ours_files)
        theirs = "".join(f"- [{f}]({f}.md) — t\n" for f in theirs_files)

        lines = merge_index(ours, theirs).splitlines()

        targets = [line.split("(")[1].split(".md")[0] for line in lines]
        assert sorted(set(ours_files) | set(theirs_files)) == sorted(targets)
        assert ours_files == [t for t in targets if t in ours_files]

    @given(st.text(max_size=400), st.text(max_size=400))
    def test_never_raises_and_keeps_every_line_of_ours(
        self, ours: str, theirs: str
    ) -> None:
        """On any text: no exception, and ours' lines are all there, in order."""
        merged = merge_index(ours, theirs).split("\n")

        remaining = iter(merged)
        assert all(line in remaining for line in ours.split("\n"))


class TestConflictCopies:
    def test_copy_name_uses_the_author_slug(self) -> None:
        """`notes/x.md` by "Ana María" -> `notes/x.from-ana-mar-a.md`."""
        assert "notes/x.from-ana-mar-a.md" == conflict_copy_path(
            "notes/x.md", "Ana María", frozenset()
        )

    def test_copy_name_is_numbered_past_taken_names(self) -> None:
        """An existing copy is never overwritten: the next one gets -2."""
        assert "x.from-bob-2.md" == conflict_copy_path(
            "x.md", "bob", frozenset({"x.from-bob.md"})
        )

    def test_an_author_without_letters_is_them(self) -> None:
        """A name with nothing file-safe becomes "them"."""
        assert "them" == author_slug("???")

    def test_copy_names_are_recognised(self) -> None:
        """Lint's T001 pattern matches what conflict_copy_path writes."""
        assert is_conflict_copy(conflict_copy_path("a/b.md", "Bob Smith", frozenset()))
        assert not is_conflict_copy("from-bob.md")

    def test_valid_theirs_is_kept_byte_for_byte(self) -> None:
        """Their file already lints: the copy is the same bytes."""
        data = b"---\nname: N\ndescription: a description\ntype: user\n---\nbody\n"

        assert data == conflict_copy_text("n.md", data, "bob")

    def test_broken_theirs_gets_frontmatter_that_parses(self) -> None:
        """Their file without frontmatter becomes the body of one with name/type."""
        copy = conflict_copy_text("n.md", b'say "hi"\n', 'bo"b')

        parsed = parse_memory_file("n.from-bo-b.md", copy)
        assert ('n (from bo"b)', "project") == (parsed.name, parsed.type)
        assert [] == [d for d in parsed.diagnostics if str(d.severity) == "error"]
        assert copy.endswith(b'say "hi"\n')

    def test_link_copies_puts_the_copy_after_the_original(self) -> None:
        """The copy's entry follows the original's; a second call adds nothing."""
        index = "- [A](a.md) — a\n- [B](b.md) — b\n"
        copies = (("a.md", "a.from-bob.md", "bob"),)

        once = link_copies(index, copies)

        assert (
            "- [A](a.md) — a\n- [a.md from bob](a.from-bob.md) — both sides changed"
            " a.md; merge into it, then delete this\n- [B](b.md) — b\n"
        ) == once
        assert once == link_copies(once, copies)
