"""Fuzz fix planning: any memory dir gets safe edits that keep every file's meaning."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memd.claude_code.terms import INDEX_NAME
from memd.lint.fixes import FileEdit, normalise_bytes, plan_fixes
from memd.memory.index import is_hub
from memd.memory.memdir import MemDir
from memd.memory.memfile import decode_text, parse_memory_file
from tests.strategies import index_markdown, topic_bytes

relpath = st.sampled_from(
    ["a.md", "b.md", "team/c.md", "a b (1).md", "<x>.md", "[y].md", "é.md"]
)
files = st.dictionaries(relpath, topic_bytes, max_size=5)
index_bytes = st.one_of(
    st.none(),
    index_markdown.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\xef\xbb\xbf- [a](a.md) - x\r\n", b"- [gone](gone.md)\n" * 2]),
    st.binary(max_size=100),
)


def _memdir(raw: dict[str, bytes]) -> MemDir:
    parsed = tuple(
        parse_memory_file(r, data) for r, data in sorted(raw.items()) if r != INDEX_NAME
    )
    if INDEX_NAME not in raw:
        return MemDir(path="/fuzz/memory", files=parsed)
    text, diags, _, _ = decode_text(
        INDEX_NAME, raw[INDEX_NAME], normalize_newlines=False
    )
    return MemDir(
        path="/fuzz/memory", index_text=text, files=parsed, diagnostics=tuple(diags)
    )


def _is_memd_hub(edit: FileEdit) -> bool:
    return edit.is_removal or is_hub(parse_memory_file(edit.relpath, edit.new).body)


def _meaning(data: bytes) -> tuple[object, ...]:
    f = parse_memory_file("x.md", data)
    return (f.name, f.description, f.type, f.dialect, dict(f.metadata))


class TestPlanFixesFuzz:
    @given(files, index_bytes)
    def test_fixes_keep_meaning_and_settle(
        self, topics: dict[str, bytes], index: bytes | None
    ) -> None:
        """Edits keep name/description/type; a second plan has nothing to do."""
        raw = dict(topics)
        if index is not None:
            raw[INDEX_NAME] = index
        edits = plan_fixes(_memdir(raw), raw)
        assert len({e.relpath for e in edits}) == len(edits)
        for edit in edits:
            assert raw.get(edit.relpath) == edit.old
            assert edit.new != edit.old
            assert edit.reason
            if edit.relpath == INDEX_NAME:
                edit.new.decode("utf-8")
            elif not _is_memd_hub(edit):  # a compaction's hubs are memd's own files
                assert _meaning(edit.old or b"") == _meaning(edit.new)
        fixed = {**raw, **{e.relpath: e.new for e in edits}}
        again = plan_fixes(_memdir(fixed), fixed)
        assert [] == [e.relpath for e in again]


class TestPlanFixesRegressions:
    def test_cr_cr_lf_is_fixed_in_one_pass(self) -> None:
        """CR CR LF becomes LF at once, so a second `memd fix` has nothing to do."""
        assert b"a\nb\n" == normalise_bytes(b"a\r\r\nb\r\n")

    def test_trailing_cr_does_not_become_crlf(self) -> None:
        """An index ending in a lone CR is fixed to LF, not to a new CRLF."""
        raw = {INDEX_NAME: b"# Memory\r\r"}
        [edit] = plan_fixes(_memdir(raw), raw)
        assert b"# Memory\n" == edit.new
        assert () == plan_fixes(_memdir({INDEX_NAME: edit.new}), {INDEX_NAME: edit.new})

    def test_no_orphan_entry_inside_an_unclosed_fence(self) -> None:
        """An orphan is not appended where an unclosed ``` fence would hide it."""
        topic = b"---\nname: a\ndescription: about a\ntype: user\n---\nFact.\n"
        raw = {"a.md": topic, INDEX_NAME: b"# Memory\n```\n"}
        assert () == plan_fixes(_memdir(raw), raw)

    def test_orphan_entry_after_a_closed_fence(self) -> None:
        """After a closed fence the orphan entry is appended once and then settles."""
        topic = b"---\nname: a\ndescription: about a\ntype: user\n---\nFact.\n"
        raw = {"a.md": topic, INDEX_NAME: b"# Memory\n```\nx\n```\n"}
        [edit] = plan_fixes(_memdir(raw), raw)
        assert b"# Memory\n```\nx\n```\n- [a](a.md) \xe2\x80\x94 about a\n" == edit.new
        fixed = {**raw, INDEX_NAME: edit.new}
        assert () == plan_fixes(_memdir(fixed), fixed)
