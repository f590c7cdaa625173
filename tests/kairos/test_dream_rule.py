"""The dream never merges two facts into one, and never loses one (issue 34)."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from memd.claude_code.manifest import build_manifest
from memd.config import Config
from memd.kairos.consolidate import (
    HISTORY_KEPT,
    LogEntry,
    fits_index,
    plan_consolidation,
)
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import run_dream
from memd.kairos.facts import Changes, FactBook
from memd.memory.reader import load_memdir

LOG = structlog.get_logger()

# Pairs that share a template but state two facts (not the bench's pairs).
DISTINCT = [
    (
        "Incident 2207 was caused by the DNS change",
        "Incident 2231 was caused by the DNS change",
    ),
    (
        "issue #118 tracks the flaky upload test",
        "issue #131 tracks the flaky upload test",
    ),
    ("node gpu-12 has the new driver", "node gpu-15 has the new driver"),
    (
        "the replica lag alert pages the db team",
        "the primary lag alert pages the db team",
    ),
    ("the staging queue is RabbitMQ 3.12", "the production queue is RabbitMQ 3.12"),
    ("bucket logs-eu-2 keeps 90 days", "bucket logs-us-1 keeps 90 days"),
    ("cluster c-41 runs the batch jobs", "cluster c-44 runs the batch jobs"),
    ("vlan 40 carries the office wifi", "vlan 41 carries the office wifi"),
    ("order 99812 was refunded twice", "order 99830 was refunded twice"),
    ("release 2.3 ships on friday", "release 2.4 ships on friday"),
    ("server 10.0.0.12 runs the cache", "server 10.0.0.13 runs the cache"),
    ("JIRA-4411 is blocked on legal", "JIRA-4502 is blocked on legal"),
    ("rack B2 holds the GPU boxes", "rack B3 holds the GPU boxes"),
    (
        "the EU region uses Stripe for payments",
        "the US region uses Stripe for payments",
    ),
]
# Updates of a value in a value position.
UPDATES = [
    ("the upload limit is 10 MB", "the upload limit was raised to 25 MB"),
    ("the canary gets 5% of traffic", "the canary gets 20% of traffic"),
    ("the worker pool has 4 workers", "the worker pool has 8 workers"),
    ("the frontend uses React 17", "the frontend uses React 18"),
    ("the cutover is 2026-12-01", "the cutover is 2026-12-08"),
    ("the lock timeout is 5 minutes", "the lock timeout is 10 minutes"),
    ("we pin terraform 1.5.7", "we pin terraform 1.6.2"),
    ("the standup is at 9:30", "moved the standup to 10:00"),
    ("we're on Postgres 15", "we are on Postgres 16"),
    ("the cache TTL is 60s", "the cache TTL was bumped to 120s"),
]


def _file(*texts: str) -> FactBook:
    book = FactBook()
    for day, text in enumerate(texts, start=1):
        book.file(text, f"2026-11-{day:02}", Changes())
    return book


class TestRule:
    @pytest.mark.parametrize(("one", "other"), DISTINCT)
    def test_distinct_facts_stay_two_current_facts(self, one: str, other: str) -> None:
        """An identifier or a different content word makes a different subject."""
        book = _file(one, other)

        assert [one, other] == [f.text for f in book.facts]
        assert all(not f.history for f in book.facts)

    @pytest.mark.parametrize(("old", "new"), UPDATES)
    def test_a_value_in_a_value_position_supersedes(self, old: str, new: str) -> None:
        """A version, quantity, percentage, count, date or duration: one fact."""
        book = _file(old, new)

        assert [(new, [old])] == [
            (f.text, [p.text for p in f.history]) for f in book.facts
        ]

    @given(
        noun=st.sampled_from(
            ["ticket", "PR", "host", "rack", "build", "port", "account"]
        ),
        one=st.integers(1, 99999),
        other=st.integers(1, 99999),
        rest=st.sampled_from(
            ["is blocked by the auth bug", "serves the orders database", "failed again"]
        ),
    )
    def test_a_number_that_names_a_thing_never_merges(
        self, noun: str, one: int, other: int, rest: str
    ) -> None:
        """`<noun> N ...` and `<noun> M ...` are two facts whenever N != M."""
        book = _file(f"{noun} {one} {rest}", f"{noun} {other} {rest}")

        assert (1 if one == other else 2) == len(book.facts)
        assert all(not f.history for f in book.facts)

    @given(code=st.from_regex(r"[a-z]{1,4}-?[0-9]{1,3}", fullmatch=True))
    def test_a_code_is_part_of_the_subject(self, code: str) -> None:
        """`db-7` and `db-9`, `p3` and `p4`: a code names, it is never a value."""
        other = code + "1"
        book = _file(
            f"{code} is the primary for billing", f"{other} is the primary for billing"
        )

        assert 2 == len(book.facts)


def _memory(tmp_path: Path) -> tuple[Path, Config]:
    memory = tmp_path / "memory"
    memory.mkdir()
    return memory, Config(cache_dir=str(tmp_path / "c"), state_dir=str(tmp_path / "s"))


def _entry(text: str, day: str, offset: int) -> LogEntry:
    return LogEntry(
        log=f"logs/{day[:4]}/{day[5:7]}/{day}.md",
        offset=offset,
        end=offset + 1,
        date=day,
        time=None,
        text=text,
    )


def _every_line(files: dict[str, bytes]) -> str:
    return "\n".join(
        data.decode() for rel, data in files.items() if not rel.startswith("logs/")
    )


class TestNothingLost:
    def test_ten_entries_of_one_template_are_ten_facts(self) -> None:
        """The issue's "entry pN nN … keep tests real": every one stays current."""
        entries = [
            _entry(
                f"#quality entry p{n} n{n} of the suite: keep tests real",
                "2026-11-30",
                n,
            )
            for n in range(10)
        ]

        plan = plan_consolidation(entries, {}, None)
        text = next(
            e for e in plan.edits if e.relpath == "project_quality.md"
        ).new.decode()

        assert all(f"- entry p{n} n{n} of the suite" in text for n in range(10))
        assert "previously" not in text

    def test_history_past_the_file_moves_to_the_archive(self) -> None:
        """A value changed 14 times: the file shows 5 older ones, the archive all."""
        files: dict[str, bytes] = {}
        for n in range(15):
            day = f"2026-11-{n + 1:02}"
            plan = plan_consolidation(
                [_entry(f"#infra the proxy timeout is {10 + n} s", day, 0)],
                files,
                files.get("MEMORY.md"),
            )
            files.update({e.relpath: e.new for e in plan.edits})
        topic = files["project_infra.md"].decode()
        everything = _every_line(files)

        assert HISTORY_KEPT == topic.count("previously:")
        assert all(f"the proxy timeout is {10 + n} s" in everything for n in range(15))
        assert "- the proxy timeout is 24 s <!--" in topic
        assert ".archive/project_infra/1.md" in files


class TestArchiveOutOfTheWay:
    def test_archive_pages_never_reach_the_recall_manifest(
        self, tmp_path: Path
    ) -> None:
        """A busy topic's archive is a dot folder: the manifest lists topics only."""
        memory, config = _memory(tmp_path)
        for night in range(3):
            now = dt.datetime(2026, 11, 1 + night, 9, 0).astimezone()
            for n in range(60):
                append_entry(
                    str(memory),
                    f"#ops the service-{night}-{n} logs to the central graylog",
                    now=now,
                )
            assert run_dream(str(memory), config, now=now, log=LOG).ok

        pages = sorted(p.name for p in (memory / ".archive" / "project_ops").iterdir())
        manifest = [e.relpath for e in build_manifest(load_memdir(str(memory)))]
        everything = "".join(
            p.read_text() for p in memory.rglob("*.md") if "logs" not in p.parts
        )

        assert pages
        assert ["project_ops.md"] == manifest
        assert all(
            # once as a fact (the description may name it too)
            everything.count(
                f"the service-{night}-{n} logs to the central graylog <!--"
            )
            == 1
            for night in range(3)
            for n in range(60)
        )


class TestDescriptions:
    def test_untagged_facts_group_by_subject_and_files_name_them(
        self, tmp_path: Path
    ) -> None:
        """No journal.md for everything: a few subject files, each naming its facts."""
        memory, config = _memory(tmp_path)
        now = dt.datetime(2026, 11, 30, 9, 0).astimezone()
        for text in [
            "Ticket 4411 is blocked by the auth bug",
            "Ticket 4502 is blocked by the auth bug",
            "the ingest queue is RabbitMQ 3.12",
            "the ingest queue has 3 consumers",
            "the TLS certificate expires on 2027-01-15",
        ]:
            append_entry(str(memory), text, now=now)

        assert run_dream(str(memory), config, now=now, log=LOG).ok

        names = sorted(p.name for p in memory.glob("*.md"))
        index = (memory / "MEMORY.md").read_text()
        assert "project_journal.md" not in names
        assert {"project_ticket.md", "project_ingest.md", "project_tls.md"} <= set(
            names
        )
        line = next(x for x in index.splitlines() if "(project_ticket.md)" in x)
        assert "Ticket 4411" in line
        assert "Ticket 4502" in line
        topic = (memory / "project_ticket.md").read_text()
        assert re.search(r"description: .*Ticket 4411", topic)

    def test_a_description_follows_its_facts_but_not_a_users_edit(self) -> None:
        """memd's own line is refreshed as facts change; a line someone edited stays."""
        first = plan_consolidation(
            [_entry("#ops the api runs on k8s", "2026-11-01", 0)], {}, None
        )
        files = {e.relpath: e.new for e in first.edits}

        second = plan_consolidation(
            [_entry("#ops the backup bucket is s3-backups", "2026-11-02", 0)] * 2,
            files,
            files["MEMORY.md"],
        )
        files.update({e.relpath: e.new for e in second.edits})
        edited = files["MEMORY.md"].decode().replace("— Daily-log facts", "— My ops")
        third = plan_consolidation(
            [_entry("#ops the cdn is fastly", "2026-11-03", 0)] * 3,
            {**files, "MEMORY.md": edited.encode()},
            edited.encode(),
        )

        index = files["MEMORY.md"].decode()
        assert "api" in index
        assert "backup bucket" in index
        assert all(e.relpath != "MEMORY.md" for e in third.edits)


class TestIndexBudget:
    def test_the_dream_never_places_a_line_past_the_cut(self, tmp_path: Path) -> None:
        """A full index: compacted into hubs (memd.lint.compact), never cut.

        Every line the user wrote survives word for word, in MEMORY.md or a
        hub it links, and the dream's new file is reached too.
        """
        memory = tmp_path / "memory"
        memory.mkdir()
        user = [
            f"- [Mine {i}](mine{i}.md) — my own note number {i}" for i in range(200)
        ]
        (memory / "MEMORY.md").write_text("".join(line + "\n" for line in user))
        config = Config(cache_dir=str(tmp_path / "c"), state_dir=str(tmp_path / "s"))
        now = dt.datetime(2026, 11, 30, 9, 0).astimezone()
        append_entry(str(memory), "#docs the wiki moved to notion", now=now)

        result = run_dream(str(memory), config, now=now, log=LOG)

        index = (memory / "MEMORY.md").read_text()
        hubs = "".join(p.read_text() for p in sorted(memory.glob("index-*.md")))
        assert () == result.unindexed
        assert fits_index(index)
        assert [] == [line for line in user if line not in index + hubs]
        assert "(project_docs.md)" in index + hubs


class TestUpgradeInPlace:
    def test_facts_merged_by_the_old_rule_come_back_from_the_logs(
        self, tmp_path: Path
    ) -> None:
        """A fact block the masking rule wrote is rebuilt from the logs still there."""
        memory, config = _memory(tmp_path)
        now = dt.datetime(2026, 11, 29, 9, 0).astimezone()
        for text in [
            "#work Ticket 4411 is blocked by the auth bug",
            "#work Ticket 4502 is blocked by the auth bug",
        ]:
            append_entry(str(memory), text, now=now)
        assert run_dream(str(memory), config, now=now, log=LOG).ok
        # What the old rule left: one fact, counted twice, 4502 gone everywhere.
        (memory / "work.md").write_text(
            "---\nname: Work\ndescription: 'Daily-log notes tagged #work, filed "
            "nightly by memd''s dream'\ntype: project\n---\nFacts from the KAIROS "
            "daily logs, each once: first and last seen, how often.\n\n**Why:** "
            "recorded in "
            "the daily logs as it happened.\n**How to apply:** the current value is "
            "the bullet; verify it before use.\n\n<!-- memd:facts -->\n- Ticket 4411 "
            "is blocked by the auth bug <!-- memd:fact 2026-11-29 2026-11-29 2 -->\n"
            "- the build cache lives in S3 <!-- memd:fact 2026-10-01 2026-10-02 3 -->\n"
            "<!-- memd:end -->\n"
        )

        later = dt.datetime(2026, 11, 30, 9, 0).astimezone()
        result = run_dream(str(memory), config, now=later, log=LOG)

        text = (memory / "work.md").read_text()
        assert result.ok
        assert (
            "- Ticket 4411 is blocked by the auth bug "
            "<!-- memd:fact 2026-11-29 2026-11-29 1 -->" in text
        )
        assert "- Ticket 4502 is blocked by the auth bug <!-- memd:fact" in text
        assert (
            "- the build cache lives in S3 <!-- memd:fact 2026-10-01 2026-10-02 3 -->"
            in text
        )
        assert "<!-- memd:facts v2 -->" in text
        assert "Daily-log facts: " in text  # the description names the subjects now
        again = run_dream(str(memory), config, now=later, log=LOG)
        assert "nothing" == again.status
        assert os.path.exists(memory / "MEMORY.md")

    def test_a_kept_old_value_never_stands_beside_a_newer_one(self) -> None:
        """A rebuild keeps the old file's newer value current over an older log."""
        old_file = (
            b"<!-- memd:facts -->\n- the proxy timeout is 60 s <!-- memd:fact "
            b"2026-11-10 2026-11-20 6 -->\n<!-- memd:end -->\n"
        )
        replay = [_entry("#infra the proxy timeout is 30 s", "2026-11-01", 0)]

        plan = plan_consolidation(
            [_entry("#infra the cdn is fastly", "2026-11-21", 0)],
            {"infra.md": old_file},
            None,
            replay=replay,
        )
        text = next(e for e in plan.edits if e.relpath == "infra.md").new.decode()

        assert (
            "- the proxy timeout is 60 s <!-- memd:fact 2026-11-10 2026-11-20 6" in text
        )
        assert "  - previously: the proxy timeout is 30 s, until 2026-11-10" in text
        assert 1 == text.count("- the proxy timeout is")

    def test_monthly_archive_pages_of_0x_move_to_the_dot_folder(self) -> None:
        """`archive/<topic>/YYYY-MM.md` (in the scan) folds into `.archive/`."""
        from memd.memory.yaml_safe import dump_yaml

        front = {
            "name": "ops-archive-2026-09",
            "description": (
                "Facts from ops.md last seen in 2026-09, moved here by memd's "
                "dream to keep the topic file within what recall reads"
            ),
            "type": "project",
        }
        legacy = (
            f"---\n{dump_yaml(front).rstrip()}\n---\nArchived from ops.md.\n\n"
            "<!-- memd:facts -->\n- the old wiki is at w1.example <!-- memd:fact "
            "2026-09-01 2026-09-03 2 -->\n<!-- memd:end -->\n"
        ).encode()
        topic = (
            b"<!-- memd:facts -->\n- the cdn is fastly <!-- memd:fact 2026-10-01 "
            b"2026-10-02 2 -->\nOlder facts, by the month last seen: "
            b"[[ops-archive-2026-09]]\n<!-- memd:end -->\n"
        )

        plan = plan_consolidation(
            [_entry("#ops the cdn is fastly", "2026-11-01", 0)],
            {"ops.md": topic, "archive/ops/2026-09.md": legacy},
            None,
        )
        files = {e.relpath: e.new.decode() for e in plan.edits}

        assert ("archive/ops/2026-09.md",) == plan.deletes
        assert (
            "- the cdn is fastly <!-- memd:fact 2026-10-01 2026-11-01 3"
            in files["ops.md"]
        )
        assert "- the old wiki is at w1.example <!-- memd:fact 2026-09-01" in (
            files["ops.md"] + files.get(".archive/ops/1.md", "")
        )
        assert "[[ops-archive" not in files["ops.md"]

    def test_an_old_journal_is_split_into_subject_files(self, tmp_path: Path) -> None:
        """The old catch-all journal.md gives its facts to subject files and goes."""
        memory, config = _memory(tmp_path)
        now = dt.datetime(2026, 11, 20, 9, 0).astimezone()
        for text in [
            "Ticket 4411 is blocked by the auth bug",
            "Ticket 4502 is blocked by the auth bug",
            "the gateway timeout is 30 s",
        ]:
            append_entry(str(memory), text, now=now)
        # As the rule of main at 0fe0191 wrote it, with its index line.
        (memory / "journal.md").write_text(
            "---\nname: Journal\ndescription: Untagged notes from the KAIROS daily "
            "logs, filed nightly by memd\ntype: project\n---\nFacts from the KAIROS "
            "daily logs, each once: first and last seen, how often.\n\n**Why:** "
            "recorded in the daily logs as it happened.\n**How to apply:** the "
            "current value is the bullet; verify it before use.\n\n<!-- memd:facts -->"
            "\n- Ticket 4411 is blocked by the auth bug <!-- memd:fact 2026-11-20 "
            "2026-11-20 2 -->\n- the gateway timeout is 30 s <!-- memd:fact "
            "2026-11-20 2026-11-20 1 -->\n<!-- memd:end -->\n"
        )
        (memory / "MEMORY.md").write_text(
            "- [Journal](journal.md) — Untagged notes from the KAIROS daily logs, "
            "filed nightly by memd\n"
        )

        result = run_dream(str(memory), config, now=now, log=LOG)

        assert result.ok
        assert not (memory / "journal.md").exists()
        index = (memory / "MEMORY.md").read_text()
        assert "journal.md" not in index
        tickets = (memory / "project_ticket.md").read_text()
        assert "- Ticket 4411 is blocked by the auth bug" in tickets
        assert "- Ticket 4502 is blocked by the auth bug" in tickets
        assert (
            "- the gateway timeout is 30 s"
            in (memory / "project_gateway.md").read_text()
        )
        assert "(project_ticket.md)" in index


_TEMPLATES = [
    "#ops ticket {n} is blocked by the {w} bug",
    "#ops the {w} timeout is {n} s",
    "#ops host web-{n} runs the {w} export",
    "the {w} queue has {n} consumers",
    "the {w} rollout is at {n}%",
    "#ops we deploy {w} with helm chart version 1.{n}.0",
]


@given(
    nights=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(_TEMPLATES),
                st.integers(1, 40),
                st.sampled_from(["auth", "billing", "search"]),
            ),
            min_size=1,
            max_size=12,
        ),
        min_size=1,
        max_size=8,
    )
)
def test_every_text_logged_stays_findable(
    nights: list[list[tuple[str, int, str]]],
) -> None:
    """Whatever is logged, night after night, is in a topic file or its archive."""
    from memd.kairos.facts import normalise

    files: dict[str, bytes] = {}
    logged: set[str] = set()
    for night, items in enumerate(nights):
        day = f"2026-11-{night + 1:02}"
        entries = []
        for i, (template, n, w) in enumerate(items):
            text = template.format(n=n, w=w)
            entries.append(_entry(text, day, i))
            logged.add(normalise(text))
        plan = plan_consolidation(
            entries, files, files.get("MEMORY.md"), existing=sorted(files)
        )
        files.update({e.relpath: e.new for e in plan.edits})
        for rel in plan.deletes:
            del files[rel]
    everything = " | ".join(
        normalise(line) for data in files.values() for line in data.decode().split("\n")
    )

    assert all(text in everything for text in logged)


def test_another_wording_of_the_same_value_is_kept_too() -> None:
    """Merged as one fact, each wording stays findable; an update takes them all."""
    book = FactBook()
    for day, text in enumerate(
        [
            "the gateway timeout is 60 s",
            "gateway timeout: 60s",
            "The gateway timeout is 60 s.",
            "the gateway timeout was lowered to 45 s",
        ],
        start=1,
    ):
        book.file(text, f"2026-11-{day:02}", Changes())

    [fact] = book.facts
    assert ("the gateway timeout was lowered to 45 s", []) == (fact.text, fact.also)
    assert ["the gateway timeout is 60 s", "gateway timeout: 60s"] == [
        p.text for p in fact.history
    ]


def test_a_kept_wording_reads_back() -> None:
    """`- also:` lines round-trip: a second dream over the same facts adds nothing."""
    entries = [
        _entry("#gw the gateway timeout is 60 s", "2026-11-01", 0),
        _entry("#gw gateway timeout: 60s", "2026-11-01", 40),
    ]
    first = plan_consolidation(entries, {}, None)
    files = {e.relpath: e.new for e in first.edits}
    text = files["project_gw.md"].decode()

    again = plan_consolidation(
        [_entry("#gw the gateway timeout is 60 s", "2026-11-01", 80)],
        files,
        files["MEMORY.md"],
    )
    later = next(e for e in again.edits if e.relpath == "project_gw.md").new.decode()

    assert "  - also: gateway timeout: 60s <!-- memd:also -->\n" in text
    assert later == text.replace("2026-11-01 2 -->", "2026-11-01 3 -->")
