"""Tests for the dream's consolidation: similarity, supersession, dates, bounds."""

from __future__ import annotations

import itertools

from memd.kairos.consolidate import (
    PAGE_BYTES,
    TOPIC_BYTES,
    LogEntry,
    fits_index,
    plan_consolidation,
)
from memd.kairos.factfile import parse_fact_file, render_fact_file
from memd.kairos.facts import (
    Changes,
    FactBook,
    normalise,
    resolve_relative_dates,
    shape,
)


def _entry(text: str, day: str, offset: int = 0) -> LogEntry:
    log = f"logs/{day[:4]}/{day[5:7]}/{day}.md"
    return LogEntry(
        log=log, offset=offset, end=offset + 1, date=day, time=None, text=text
    )


def _file(book: FactBook, *items: tuple[str, str]) -> Changes:
    changes = Changes()
    for text, day in items:
        book.file(text, day, changes)
    return changes


class TestNormalise:
    def test_case_punctuation_time_tags(self) -> None:
        """Case, punctuation, spacing, a leading time and tags do not matter."""
        assert normalise("09:14  The Wiki,  is at  wiki.example!! #docs") == normalise(
            "[reference] the wiki is at wiki example"
        )

    def test_numbers_split_from_units(self) -> None:
        """`60s` and `60 s` are the same tokens."""
        one, other = shape("timeout is 60s"), shape("timeout is 60 s")
        assert (one.key, one.value) == (other.key, other.value)


class TestFactBook:
    def test_repeats_are_one_fact_with_count_and_dates(self) -> None:
        """The same fact on three days is one fact: first, last and how often."""
        book = FactBook()
        changes = _file(
            book,
            ("Use a real database, never mocks", "2026-11-01"),
            ("use a real database never mocks.", "2026-11-03"),
            ("USE A REAL DATABASE, NEVER MOCKS", "2026-11-09"),
        )

        [fact] = book.facts
        assert ("2026-11-01", "2026-11-09", 3) == (fact.first, fact.last, fact.seen)
        assert (1, 2, 0) == (changes.added, changes.merged, changes.superseded)

    def test_new_value_same_subject_supersedes(self) -> None:
        """A new value replaces the old, which is kept as history with its end date."""
        book = FactBook()
        changes = _file(
            book,
            ("the gateway timeout is 30 s", "2026-11-01"),
            ("the gateway timeout is 30 s", "2026-11-05"),
            ("the gateway timeout was raised to 60 s", "2026-11-16"),
        )

        [fact] = book.facts
        assert "the gateway timeout was raised to 60 s" == fact.text
        assert [("the gateway timeout is 30 s", "2026-11-01", "2026-11-16")] == [
            (p.text, p.first, p.until) for p in fact.history
        ]
        assert 1 == changes.superseded

    def test_version_in_the_same_wording_supersedes(self) -> None:
        """Near-duplicates whose numbers differ: the newer version is current."""
        book = FactBook()
        _file(
            book,
            ("we deploy with helm chart version 1.4.2 for the api", "2026-11-01"),
            ("we deploy with helm chart version 1.5.0 for the api", "2026-11-10"),
        )

        assert ["we deploy with helm chart version 1.5.0 for the api"] == [
            f.text for f in book.facts
        ]

    def test_names_after_the_subject_supersede(self) -> None:
        """`<subject> is <name>`: a new name replaces the old one."""
        book = FactBook()
        _file(
            book,
            ("the on-call lead is Alice", "2026-11-01"),
            ("The on-call lead is Bob", "2026-11-08"),
        )

        [fact] = book.facts
        assert ("The on-call lead is Bob", "the on-call lead is Alice") == (
            fact.text,
            fact.history[0].text,
        )

    def test_other_spellings_of_an_update(self) -> None:
        """A colon, `=`, another verb, a time: each restatement supersedes."""
        pairs = [
            ("Moved the standup to 10:00", "moved the standup to 9:30"),
            ("The gateway timeout: 30 s", "gateway timeout = 60s"),
            ("staging is Postgres 15", "Staging runs Postgres 16"),
            ("We use Node 18", "we use node 20 now"),
        ]
        for old, new in pairs:
            book = FactBook()
            _file(book, (old, "2026-11-01"), (new, "2026-11-05"))
            assert [(new, [old])] == [
                (f.text, [p.text for p in f.history]) for f in book.facts
            ]

    def test_a_different_relation_is_another_fact(self) -> None:
        """`staging is X` and `staging uses Y` are two facts."""
        book = FactBook()
        _file(
            book,
            ("staging is Postgres 15", "2026-11-01"),
            ("staging uses Redis 7", "2026-11-02"),
        )

        assert 2 == len(book.facts)

    def test_unrelated_facts_stay_apart(self) -> None:
        """Facts sharing a word or two are not merged."""
        book = FactBook()
        _file(
            book,
            ("deploys happen on Tuesdays after standup", "2026-11-01"),
            ("the standup moved to the big room", "2026-11-01"),
        )

        assert 2 == len(book.facts)

    def test_an_old_value_logged_late_is_history_only(self) -> None:
        """An entry older than the current value never replaces it."""
        book = FactBook()
        _file(
            book,
            ("staging is Postgres 16", "2026-11-20"),
            ("staging is Postgres 15", "2026-11-02"),
        )

        [fact] = book.facts
        assert "staging is Postgres 16" == fact.text
        assert ["staging is Postgres 15"] == [p.text for p in fact.history]

    def test_going_back_to_an_old_value_drops_it_from_history(self) -> None:
        """A value that comes back is current once, not also history."""
        book = FactBook()
        _file(
            book,
            ("the gateway timeout is 30 s", "2026-11-01"),
            ("the gateway timeout is 60 s", "2026-11-05"),
            ("the gateway timeout is 30 s", "2026-11-09"),
        )

        [fact] = book.facts
        assert ["the gateway timeout is 60 s"] == [p.text for p in fact.history]


class TestRelativeDates:
    def test_resolved_from_the_log_date(self) -> None:
        """Each phrase becomes an absolute date, from the log's own day (a Sunday)."""
        day = "2026-11-29"  # a Sunday
        cases = {
            "deployed today": "deployed 2026-11-29",
            "deployed yesterday": "deployed 2026-11-28",
            "release tomorrow": "release 2026-11-30",
            "shipped last Monday": "shipped on 2026-11-23",
            "demo next Friday": "demo on 2026-12-04",
            "fixed on Friday": "fixed on 2026-11-27",
            "freeze next week": "freeze the week of 2026-11-30",
            "broke 3 days ago": "broke on 2026-11-26",
            "due in 2 weeks": "due on 2026-12-13",
        }

        assert cases == {text: resolve_relative_dates(text, day) for text in cases}

    def test_a_repeated_relative_fact_on_two_days_supersedes(self) -> None:
        """ "The release is tomorrow" on two days is two dates: the newer is current."""
        entries = [
            _entry("#release the release is tomorrow", "2026-11-02"),
            _entry("#release the release is tomorrow", "2026-11-03"),
        ]

        plan = plan_consolidation(entries, {}, None)
        text = next(
            e for e in plan.edits if e.relpath == "project_release.md"
        ).new.decode()

        assert "- the release is 2026-11-04 <!--" in text
        assert "previously: the release is 2026-11-03, until 2026-11-03" in text


def _word(n: int) -> str:
    """A distinct letters-only word per n (numbers would be masked as one)."""
    syllables = ["ka", "lo", "mi", "nu", "pe", "ri", "so", "tu", "va", "ze"]
    return "".join(syllables[int(d)] for d in str(n)) + "x"


def _month(days: int, facts: int, start: int = 0) -> list[LogEntry]:
    entries = []
    for day in range(start, start + days):
        date = f"2026-{1 + day // 28:02}-{1 + day % 28:02}"
        for i in range(6):
            n = (day * 6 + i) % facts
            entries.append(
                _entry(f"#ops the {_word(n)} service logs to graylog", date, i * 50)
            )
    return entries


def _replan(files: dict[str, bytes], entries: list[LogEntry]) -> dict[str, bytes]:
    plan = plan_consolidation(entries, files, files.get("MEMORY.md"))
    out = dict(files)
    out.update({e.relpath: e.new for e in plan.edits})
    for rel in plan.deletes:
        del out[rel]
    return out


class TestBounds:
    def test_topic_stays_within_recall_and_nothing_is_lost(self) -> None:
        """Many facts: the topic fits 4096 bytes, the rest is archived and named."""
        files = _replan({}, _month(20, 120))
        topic = files["project_ops.md"]
        pages = {
            rel: data
            for rel, data in files.items()
            if rel.startswith(".archive/project_ops/")
        }
        every = b"".join([topic, *pages.values()]).decode()

        assert len(topic) <= TOPIC_BYTES
        assert pages
        assert all(len(data) <= PAGE_BYTES for data in pages.values())
        assert all(
            every.count(f"the {_word(n)} service logs to graylog <!--") == 1
            for n in range(120)
        )
        assert ".archive/project_ops/ (1 page, outside the agent's recall scan)" in (
            topic.decode()
        )

    def test_a_second_night_of_the_same_facts_adds_nothing(self) -> None:
        """Night after night of the same facts, the memory does not grow."""
        files = _replan({}, _month(28, 8))
        size = sum(len(v) for v in files.values())

        later = _replan(files, _month(28, 8, start=28))

        assert sum(len(v) for v in later.values()) <= size + 64  # dates may widen
        assert 8 == later["project_ops.md"].decode().count("<!-- memd:fact ")

    def test_fact_block_round_trips(self) -> None:
        """Reading a file back and writing it with the same facts gives its bytes."""
        files = _replan({}, _month(3, 5))
        text = files["project_ops.md"].decode()
        parsed = parse_fact_file(text)

        again = render_fact_file(parsed, parsed.facts)

        assert text == again

    def test_user_lines_are_kept(self) -> None:
        """A line the user adds inside or around memd's block stays."""
        files = _replan({}, _month(1, 3))
        text = (
            files["project_ops.md"]
            .decode()
            .replace("<!-- memd:end -->", "my own note\n<!-- memd:end -->")
        )
        files["project_ops.md"] = (text + "user tail\n").encode()

        later = _replan(files, _month(1, 3, start=1))["project_ops.md"].decode()

        assert "my own note\n" in later
        assert "user tail\n" in later

    def test_old_format_file_is_consolidated(self) -> None:
        """A file of dated entry bullets memd wrote before becomes one fact per fact."""
        old = (
            b"---\nname: Ops\ndescription: d\ntype: project\n---\nIntro.\n\n"
            b"## 2026-11-01\n\n- 09:00 the wiki is at w.example <!-- memd:entry "
            b"0123456789abcdef -->\n\n## 2026-11-02\n\n- 09:00 the wiki is at w.example"
            b" <!-- memd:entry 1123456789abcdef -->\n"
        )

        files = _replan(
            {"ops.md": old}, [_entry("#ops the wiki is at w.example", "2026-11-03")]
        )
        text = files["ops.md"].decode()

        assert "Intro." in text
        assert "## 2026-11-0" not in text
        assert (
            "- the wiki is at w.example <!-- memd:fact 2026-11-01 2026-11-03 3 -->"
            in text
        )


class TestIndexGrouping:
    def test_full_index_groups_memds_own_lines_and_keeps_the_users(self) -> None:
        """At the index limit, memd's one-topic lines fold into one; the user's stay."""
        user = "".join(f"- [Mine {i}](mine{i}.md) — my note {i}\n" for i in range(150))
        files: dict[str, bytes] = {"MEMORY.md": user.encode()}
        for n in itertools.count():
            files = _replan(files, [_entry(f"#t{n} a fact about {n}", "2026-11-01")])
            if n == 80:
                break
        index = files["MEMORY.md"].decode()

        assert index.startswith(user)
        assert fits_index(index)
        assert all(f"(project_t{n}.md)" in index for n in range(81))
