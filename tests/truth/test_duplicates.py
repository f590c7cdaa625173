"""Two topic files that say the same thing, and near misses that stay apart (D004)."""

from __future__ import annotations

from pathlib import Path

from memd.memory.reader import load_memdir
from memd.truth.check import check_memory
from memd.truth.duplicates import find_duplicates
from tests.conftest import MemDirMaker

STAGING = (
    "The staging database runs on db-staging.internal.example.com port {port}. "
    "Connect through the bastion host, never directly from a laptop, and use the "
    "read-only role for ad hoc queries. Ticket {ticket} tracks the migration."
)


def codes(maker: MemDirMaker) -> list[tuple[str, str, str]]:
    found = find_duplicates(load_memdir(str(maker.root)).files)
    return [(d.code, d.path, d.message) for d in found]


class TestDuplicates:
    def test_a_rewrite_is_flagged_on_one_naming_the_other(
        self, make_memdir: MemDirMaker
    ) -> None:
        """The same fact in other words and order: one warning, naming the other."""
        make_memdir.topic(
            "project_staging_db.md",
            name="Staging database",
            description="where the staging database runs and how to reach it",
            type="reference",
            body=STAGING.format(port=5432, ticket="OPS-4411") + "\n",
        )
        make_memdir.topic(
            "reference_db_access.md",
            name="Reaching the staging db",
            description="how to connect to the staging database safely",
            type="reference",
            body=(
                "Use the read-only role for ad hoc queries against staging. The "
                "staging database is db-staging.internal.example.com, port 5432; "
                "always connect "
                "via the bastion host, never straight from a laptop. Migration: ticket "
                "OPS-4411.\n"
            ),
        )

        found = codes(make_memdir)

        assert [("D004", "reference_db_access.md")] == [f[:2] for f in found]
        assert "project_staging_db.md" in found[0][2]

    def test_a_short_memory_repeated_inside_a_long_one(
        self, make_memdir: MemDirMaker
    ) -> None:
        """A memory whose whole content another holds is flagged, not the longer one."""
        make_memdir.topic(
            "feedback_tests.md",
            name="Real database in tests",
            description="integration tests hit a real database, never mocks",
            type="feedback",
            body="Integration tests must hit a real Postgres database, never mocks.\n",
        )
        make_memdir.topic(
            "project_testing.md",
            name="Testing",
            description="everything about how this project tests",
            type="project",
            body=(
                "Integration tests must hit a real Postgres database, never mocks. "
                "Unit tests run with pytest -x in under a minute. Flaky tests get a "
                "quarantine marker and an issue. Coverage is reported, not enforced.\n"
            ),
        )

        assert [("D004", "feedback_tests.md")] == [f[:2] for f in codes(make_memdir)]

    def test_near_misses_stay_apart(self, make_memdir: MemDirMaker) -> None:
        """Another port, another ticket, another host: different facts, no warning."""
        make_memdir.topic(
            "a.md",
            name="a",
            description="staging db",
            type="reference",
            body=STAGING.format(port=5432, ticket="OPS-4411") + "\n",
        )
        make_memdir.topic(
            "b.md",
            name="b",
            description="staging db",
            type="reference",
            body=STAGING.format(port=5433, ticket="OPS-4411") + "\n",
        )
        make_memdir.topic(
            "c.md",
            name="c",
            description="staging db",
            type="reference",
            body=STAGING.format(port=5432, ticket="OPS-4412") + "\n",
        )
        make_memdir.topic(
            "d.md", name="d", description="staging db", type="reference",
            body=STAGING.format(port=5432, ticket="OPS-4411").replace(
                "db-staging.internal", "db-prod.internal"
            ) + "\n",
        )  # fmt: skip

        assert [] == codes(make_memdir)

    def test_unrelated_memories_are_not_duplicates(
        self, make_memdir: MemDirMaker
    ) -> None:
        """Two memories on different subjects sharing common words give nothing."""
        make_memdir.topic(
            "user_role.md",
            name="Role",
            description="who the user is",
            type="user",
            body="The user is a backend developer working mostly in Go and Postgres.\n",
        )
        make_memdir.topic(
            "feedback_style.md", name="Style", description="review style",
            type="feedback",
            body="Keep pull requests small and explain why in the description.\n",
        )  # fmt: skip

        assert [] == codes(make_memdir)

    def test_lint_reports_it_without_a_repository(self, tmp_path: Path) -> None:
        """D004 needs no project: check_memory reports it with no root known."""
        maker = MemDirMaker(tmp_path)
        for name in ("x.md", "y.md"):
            maker.topic(
                name, name="n", description="staging db", type="reference",
                body=STAGING.format(port=5432, ticket="OPS-1") + "\n",
            )  # fmt: skip

        report = check_memory(str(tmp_path), None, cache_dir=None)

        assert [("D004", "y.md")] == [(d.code, d.path) for d in report.diagnostics]
