"""Tests for memd.kairos.consolidate: log bullets, routing by tag, planning edits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memd.kairos.consolidate import (
    LogEntry,
    Router,
    cut_at_word,
    fits_index,
    parse_log_entries,
    plan_consolidation,
    render_diff,
    route,
)
from memd.kairos.factfile import parse_fact_file, render_fact_file
from memd.kairos.facts import FactBook, normalise, shape
from memd.memory.memfile import parse_memory_file

LOG = "logs/2026/11/2026-11-29.md"


def _entry(text: str, offset: int = 0, time: str | None = "09:00") -> LogEntry:
    return LogEntry(
        log=LOG, offset=offset, end=offset + 1, date="2026-11-29", time=time, text=text
    )


class TestParseLogEntries:
    def test_bullets_and_continuations(self) -> None:
        """Bullets are entries, indented lines continue them, headings are skipped."""
        data = b"# 2026-11-29\n\n- 09:00 one\n- 09:05 two\n  more\n"

        entries, cut = parse_log_entries(LOG, data)

        assert [("09:00", "one"), ("09:05", "two\nmore")] == [
            (e.time, e.text) for e in entries
        ]
        assert len(data) == cut

    def test_partial_last_line_left(self) -> None:
        """A line without its newline is left for the next run."""
        data = b"- 09:00 one\n- 09:01 half"

        entries, cut = parse_log_entries(LOG, data)

        assert ["one"] == [e.text for e in entries]
        assert data.index(b"- 09:01") == cut

    def test_resume_from_offset(self) -> None:
        """Starting at the watermark yields only the newer entries, same offsets."""
        data = b"- 09:00 one\n- 09:01 two\n"
        first, cut = parse_log_entries(LOG, data[:12])

        later, end = parse_log_entries(LOG, data, cut)

        assert ["two"] == [e.text for e in later]
        assert (12, len(data)) == (later[0].offset, end)
        assert first[0].entry_id != later[0].entry_id

    def test_bullet_without_time(self) -> None:
        """A bullet an agent wrote without HH:MM still counts."""
        entries, _ = parse_log_entries(LOG, b"- plain note\n")

        assert [(None, "plain note")] == [(e.time, e.text) for e in entries]

    def test_invalid_utf8_never_raises(self) -> None:
        """Bad bytes are replaced, not fatal."""
        entries, _ = parse_log_entries(LOG, b"- 09:00 caf\xe9\n")

        assert ["caf\ufffd"] == [e.text for e in entries]


class TestRoute:
    def test_topic_and_type(self) -> None:
        """`#topic` and `[feedback]` name the file as the agent does (`<type>_<topic>`);
        leading tags are dropped."""
        target = route(_entry("[feedback] #testing use a real database"))

        assert ("feedback_testing.md", "feedback", "use a real database") == (
            target.relpath,
            target.type,
            target.text,
        )

    def test_untagged_goes_to_the_file_of_its_subject(self) -> None:
        """An untagged entry lands in its subject's file as a project memory."""
        target = route(_entry("the build cache is stale"))
        again = route(_entry("The build cache was moved to S3"))

        assert ("project_build.md", "project") == (target.relpath, target.type)
        assert target.relpath == again.relpath

    def test_untagged_without_a_subject_goes_to_journal(self) -> None:
        """Nothing to group by (no word of three letters): project_journal.md."""
        assert "project_journal.md" == route(_entry("ok 42")).relpath

    def test_type_only(self) -> None:
        """A type tag without topic gets a per-type notes file."""
        assert "user_notes.md" == route(_entry("[user] prefers tabs")).relpath

    def test_a_file_of_the_older_naming_keeps_its_topic(self) -> None:
        """`orders.md`, `user-notes.md`, `build-notes.md`, `journal.md` already
        there: their facts keep coming, never split across two files."""
        router = Router(["orders.md", "user-notes.md", "build-notes.md", "journal.md"])

        assert [
            "orders.md",
            "user-notes.md",
            "build-notes.md",
            "journal.md",
            "project_deploy.md",
        ] == [
            route(_entry(text), router).relpath
            for text in (
                "#orders ship on Friday",
                "[user] prefers tabs",
                "the build cache is stale",
                "ok 42",
                "the deploy is blue green",
            )
        ]

    def test_a_tag_that_names_its_type_is_taken_as_is(self) -> None:
        assert "feedback_testing.md" == route(_entry("#feedback_testing x")).relpath

    def test_mid_sentence_tag_stays(self) -> None:
        """A tag inside the sentence routes but is kept in the text."""
        target = route(_entry("the #build-cache is stale"))

        assert ("project_build_cache.md", "the #build-cache is stale") == (
            target.relpath,
            target.text,
        )

    def test_reserved_slug(self) -> None:
        """`#memory` can never become MEMORY.md's twin on a case-insensitive disk."""
        assert "project_memory.md" == route(_entry("#MEMORY trimmed")).relpath


class TestPlanConsolidation:
    def test_new_topic_file_is_valid_memory(self) -> None:
        """A new topic file has classic frontmatter with name, description and type."""
        plan = plan_consolidation([_entry("[reference] #docs see the wiki")], {}, None)
        topic = next(e for e in plan.edits if e.relpath == "reference_docs.md")

        parsed = parse_memory_file("reference_docs.md", topic.new)

        assert ("reference", "classic", ()) == (
            parsed.type,
            parsed.dialect,
            parsed.diagnostics,
        )
        assert (
            "- see the wiki <!-- memd:fact 2026-11-29 2026-11-29 1 -->" in parsed.body
        )

    def test_index_entry_added(self) -> None:
        """MEMORY.md gains one link per new topic file, user lines kept."""
        plan = plan_consolidation([_entry("#docs a")], {}, b"# My index\n")
        index = next(e for e in plan.edits if e.relpath == "MEMORY.md")

        lines = index.new.decode().splitlines()

        assert "# My index" == lines[0]
        assert lines[1].startswith("- [Docs](project_docs.md) — ")

    def test_appends_to_existing_bytes(self) -> None:
        """An existing topic file is appended to, its old bytes untouched."""
        old = b"---\nname: Docs\ndescription: d\ntype: reference\n---\nBody\r\n"
        index = b"- [Docs](./docs.md) - hook\n"

        plan = plan_consolidation([_entry("#docs new")], {"docs.md": old}, index)

        assert ["docs.md"] == [e.relpath for e in plan.edits]
        assert plan.edits[0].new.startswith(old)

    def test_old_format_entries_are_not_filed_twice(self) -> None:
        """An entry whose `memd:entry` bullet an older memd wrote counts as filed."""
        entry = _entry("#docs one", 0)
        old = (
            "---\nname: Docs\ndescription: d\ntype: project\n---\n\n## 2026-11-29\n\n"
            f"- 09:00 one <!-- memd:entry {entry.entry_id} -->\n"
        ).encode()

        plan = plan_consolidation([entry], {"docs.md": old}, b"- [Docs](docs.md)\n")
        text = plan.edits[0].new.decode()

        assert ((), 1) == (plan.filed, len(plan.already_filed))
        assert "- one <!-- memd:fact 2026-11-29 2026-11-29 1 -->" in text

    def test_repeat_on_a_second_dream_merges(self) -> None:
        """A fact logged again after a dream is counted, never filed twice."""
        first = plan_consolidation(
            [_entry("#docs the wiki is at w.example", 0)], {}, None
        )
        files = {e.relpath: e.new for e in first.edits}

        second = plan_consolidation(
            [_entry("#docs The wiki is at w.example.", 40)], files, files["MEMORY.md"]
        )
        text = second.edits[0].new.decode()

        assert 1 == text.count("- the wiki is at w.example <!-- memd:fact")
        assert "<!-- memd:fact 2026-11-29 2026-11-29 2 -->" in text
        assert (0, 1) == (second.summary.added, second.summary.merged)

    def test_full_index_is_reported_not_cut(self) -> None:
        """An index at 200 lines is never cut; the new file is reported unindexed."""
        index = "".join(f"- [T{i}](t{i}.md) — hook\n" for i in range(200)).encode()

        plan = plan_consolidation([_entry("#docs one")], {}, index)

        assert ("project_docs.md",) == plan.unindexed
        assert ["project_docs.md"] == [e.relpath for e in plan.edits]

    def test_multiline_entry(self) -> None:
        """Continuation lines stay indented under their bullet."""
        plan = plan_consolidation([_entry("#docs first\nsecond")], {}, None)

        text = plan.edits[0].new.decode()

        assert "  second\n" in text

    def test_diff_names_files(self) -> None:
        """The rendered diff shows a new file against /dev/null."""
        plan = plan_consolidation([_entry("#docs first")], {}, None)

        diff = render_diff(plan)

        assert "--- /dev/null\n+++ b/project_docs.md\n" in diff


class TestFitsIndex:
    def test_limits(self) -> None:
        """200 lines fit, 201 do not; 25,000 UTF-16 units fit, 25,001 do not."""
        assert fits_index("x\n" * 200) is True
        assert fits_index("x\n" * 201) is False
        assert fits_index("😀" * 12_500) is True
        assert fits_index("😀" * 12_500 + "x") is False


_TEXTS = st.lists(
    st.text(
        alphabet=st.sampled_from("ab #-[]\nuserfdkpjtcé😀<>!"), min_size=1, max_size=40
    ).filter(lambda t: t.strip()),
    min_size=1,
    max_size=8,
)


class TestProperties:
    @given(texts=_TEXTS)
    def test_every_entry_filed_once_and_rerun_is_noop(self, texts: list[str]) -> None:
        """Any text: each entry is filed exactly once and a rerun changes nothing."""
        data = "".join(
            "- 09:00 " + "\n  ".join(t.strip().splitlines()) + "\n" for t in texts
        ).encode()
        entries, _ = parse_log_entries(LOG, data)
        plan = plan_consolidation(entries, {}, None)
        files = {e.relpath: e.new for e in plan.edits}

        for entry in entries:  # every entry is a fact of its file, or folded into one
            target = route(entry)
            parsed = parse_fact_file(files[target.relpath].decode())
            book = FactBook(parsed.facts)
            assert book.find(shape(target.text)) is not None or not normalise(
                target.text
            )
        for rel, data in files.items():  # what memd wrote reads back the same
            if rel != "MEMORY.md":
                parsed = parse_fact_file(data.decode())
                again = render_fact_file(parsed, parsed.facts)
                assert data.decode() == again

    @given(data=st.binary(max_size=300))
    def test_parse_never_raises(self, data: bytes) -> None:
        """Arbitrary bytes parse into entries whose offsets stay inside the data."""
        entries, cut = parse_log_entries(LOG, data)

        assert all(0 <= e.offset < e.end <= cut <= len(data) for e in entries)


class TestIsLinkedAsTheIndexParserSays:
    """The dream asks memd.memory.index whether a file is linked, as MCP and fix do."""

    OLD = b"---\nname: Docs\ndescription: d\ntype: reference\n---\nBody\n"

    def test_a_link_with_an_anchor_is_not_indexed_again(self) -> None:
        """`./docs.md#usage` links docs.md: no second index line."""
        index = b"- [Docs](./docs.md#usage) - hook\n"

        plan = plan_consolidation([_entry("#docs new")], {"docs.md": self.OLD}, index)

        assert ["docs.md"] == [e.relpath for e in plan.edits]

    def test_a_link_in_a_code_fence_does_not_count(self) -> None:
        """A link shown in a ``` fence is not an entry: the dream adds a real one."""
        index = b"```\n- [Docs](docs.md) - hook\n```\n"

        plan = plan_consolidation([_entry("#docs new")], {"docs.md": self.OLD}, index)

        edit = next(e for e in plan.edits if e.relpath == "MEMORY.md")
        assert edit.new.startswith(index)
        assert b"\n- [Docs](docs.md) " in edit.new[len(index) - 1 :]


class TestDescriptions:
    def test_a_description_says_the_fact_not_a_few_of_its_tokens(self) -> None:
        """Issue 42: "user prefers pytest k" was four tokens of a fact."""
        plan = plan_consolidation(
            [_entry("[feedback] #testing user prefers pytest -k to pick tests")],
            {},
            None,
        )
        topic = next(e for e in plan.edits if e.relpath == "feedback_testing.md")

        description = parse_memory_file("feedback_testing.md", topic.new).description

        assert "Daily-log facts: user prefers pytest -k to pick tests" == description

    def test_a_long_description_is_cut_at_a_word_with_an_ellipsis(self) -> None:
        words = " ".join(f"fact{n} is value{n}" for n in range(40))
        plan = plan_consolidation([_entry(f"#ops {words}")], {}, None)
        topic = next(e for e in plan.edits if e.relpath == "project_ops.md")

        description = parse_memory_file("project_ops.md", topic.new).description

        assert isinstance(description, str)
        assert description.endswith("…")
        assert len(description) <= 110
        kept = description[: -len("…")].split(" ")
        assert kept == f"Daily-log facts: {words}".split(" ")[: len(kept)]

    def test_cut_at_word(self) -> None:
        assert "alpha beta…" == cut_at_word("alpha beta gamma", 12)
        assert "alpha beta gamma" == cut_at_word("alpha beta gamma", 16)
        assert "abcd…" == cut_at_word("abcdefghij", 5)
        assert "漢字…" == cut_at_word("漢字 漢字漢字", 6)  # wide: two columns each


def test_a_tag_with_and_without_its_type_lands_in_one_file() -> None:
    """`[feedback] #testing` then `#testing`: one file, feedback_testing.md."""
    router = Router()
    typed = route(_entry("[feedback] #testing use a real database"), router)
    plain = route(_entry("#testing second rule"), router)
    later = route(_entry("#testing third rule"), Router(["feedback_testing.md"]))

    assert ["feedback_testing.md"] * 3 == [
        typed.relpath,
        plain.relpath,
        later.relpath,
    ]
