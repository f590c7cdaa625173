"""Planning safe fixes: orphans, gone and duplicate entries, CRLF/BOM, and no-touch."""

from __future__ import annotations

from pathlib import Path

from memd.lint.engine import lint_memdir
from memd.lint.fixes import FileEdit, entry_line, plan_fixes
from memd.memory.memfile import parse_memory_file
from memd.memory.reader import load_memdir


def _plan(root: Path) -> tuple[FileEdit, ...]:
    memdir = load_memdir(str(root))
    raw = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.md")}
    return plan_fixes(memdir, raw)


def _apply(root: Path, edits: tuple[FileEdit, ...]) -> None:
    for edit in edits:
        (root / edit.relpath).write_bytes(edit.new)


class TestIndexFixes:
    def test_adds_orphans_with_name_and_description(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """An orphan gets `- [name](relpath) — description` at the end of the index;
        a team file is team/MEMORY.md's, never written into the private index."""
        make_memdir.write("MEMORY.md", "# Index\n\n- [A](a.md) — first\n\n")
        make_memdir.topic(
            "a.md", name="A", description="the first memory here", type="user"
        )
        make_memdir.topic(
            "sub/b.md", name="Sub B", description="a nested memory", type="reference"
        )
        make_memdir.topic(
            "team/c.md", name="Team C", description="a team memory", type="reference"
        )

        [edit] = _plan(make_memdir.root)

        assert "MEMORY.md" == edit.relpath
        assert (
            b"# Index\n\n- [A](a.md) \xe2\x80\x94 first\n"
            b"- [Sub B](sub/b.md) \xe2\x80\x94 a nested memory\n" == edit.new
        )

    def test_drops_gone_and_duplicate_entries(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """Gone and repeated entries go; headings, prose and URLs stay."""
        make_memdir.write(
            "MEMORY.md",
            "# Index\nSome prose.\n- [A](a.md) — first\n- [Gone](gone.md) — deleted\n"
            "- [A again](./a.md) — dup\n- [Site](https://example.com) — url\n",
        )
        make_memdir.topic(
            "a.md", name="A", description="the first memory here", type="user"
        )

        [edit] = _plan(make_memdir.root)

        assert (
            "# Index\nSome prose.\n- [A](a.md) — first\n"
            "- [Site](https://example.com) — url\n"
        ) == edit.new.decode()
        assert (
            "drop 1 entry whose file is gone, collapse 1 duplicate entry" == edit.reason
        )

    def test_creates_a_missing_index(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """With topic files and no MEMORY.md, the plan creates one."""
        make_memdir.topic(
            "a.md", name="A", description="the first memory here", type="user"
        )

        [edit] = _plan(make_memdir.root)

        assert (None, b"- [A](a.md) \xe2\x80\x94 the first memory here\n") == (
            edit.old,
            edit.new,
        )

    def test_result_is_lint_clean_for_the_fixed_rules(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """After the plan no orphan, dangling, duplicate or CRLF finding is left."""
        make_memdir.write(
            "MEMORY.md",
            "- [Gone](gone.md) — x\r\n- [A](a.md) — a\r\n- [A](a.md) — a\r\n",
        )
        make_memdir.write(
            "a.md",
            "\ufeff---\r\nname: A\r\ndescription: the first memory\r\n"
            "type: user\r\n---\r\nx\r\n",
        )
        make_memdir.topic(
            "b.md", name="B", description="the second memory", type="user"
        )
        _apply(make_memdir.root, _plan(make_memdir.root))

        codes = {d.code for d in lint_memdir(load_memdir(str(make_memdir.root)))}

        assert set() == codes & {"I005", "I006", "I007", "F006", "F007"}
        assert () == _plan(make_memdir.root)


class TestFileFixes:
    def test_normalises_crlf_and_bom(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """CRLF becomes LF and a BOM goes, nothing else changes."""
        make_memdir.write("MEMORY.md", "- [A](a.md) — a\n")
        make_memdir.write(
            "a.md",
            b"\xef\xbb\xbf---\r\nname: A\r\ndescription: d is long enough\r\n"
            b"type: user\r\n---\r\nx\r\n",
        )

        [edit] = _plan(make_memdir.root)

        assert ("a.md", "drop BOM, CRLF to LF") == (edit.relpath, edit.reason)
        assert (
            b"---\nname: A\ndescription: d is long enough\ntype: user\n---\nx\n"
            == edit.new
        )

    def test_never_touches_unparsable_yaml(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """A CRLF file whose YAML does not parse is left alone, and is not indexed."""
        make_memdir.write("MEMORY.md", "# Index\n")
        make_memdir.write("bad.md", "---\r\nname: a: b: [\r\n---\r\nx\r\n")

        assert () == _plan(make_memdir.root)

    def test_unread_file_is_left_alone(self, make_memdir) -> None:  # type: ignore[no-untyped-def]
        """A file the caller did not pass bytes for is not edited."""
        make_memdir.write("MEMORY.md", "- [A](a.md) — a\n")
        make_memdir.write(
            "a.md",
            "---\r\nname: A\r\ndescription: d is long enough\r\n"
            "type: user\r\n---\r\nx\r\n",
        )

        assert () == plan_fixes(load_memdir(str(make_memdir.root)), {})


class TestEntryLine:
    def test_long_description_is_shortened(self) -> None:
        """The hook is cut so the entry stays near 150 characters."""
        f = parse_memory_file(
            "x.md",
            f"---\nname: X\ndescription: {'word ' * 60}\ntype: user\n---\nb\n".encode(),
        )

        line = entry_line(f)

        assert 150 >= len(line)
        assert line.startswith("- [X](x.md) — word word")
        assert line.endswith("…")

    def test_brackets_are_escaped(self) -> None:
        """A name with brackets cannot break the link."""
        f = parse_memory_file(
            "x.md", b"---\nname: a [b]\ndescription: d\ntype: user\n---\nb\n"
        )

        assert "- [a \\[b\\]](x.md) — d" == entry_line(f)
