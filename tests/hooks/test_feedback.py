"""What a tool call caused, told apart from what was already there (pure decisions)."""

from __future__ import annotations

import pytest

from memd.hooks.feedback import caused_by_call, judge
from memd.hooks.session_state import SessionState
from memd.hooks.wording import MAX_CONTEXT_UNITS, session_start_context

OVER = {"code": "I002", "severity": "error", "path": "MEMORY.md", "name": "x"}
TOO_LARGE = {"code": "I003", "severity": "error", "path": "MEMORY.md", "name": "x"}
BAD = {"code": "M008", "severity": "error", "path": "a.md", "name": "type-invalid"}
NOTHING: frozenset[str] = frozenset()


def caused(finding: dict[str, object], **facts: object) -> bool:
    arguments: dict[str, object] = {
        "changed": NOTHING,
        "maybe_changed": NOTHING,
        "errors_before": frozenset(),
        "index_before": None,
        "index_after": None,
    }
    arguments.update(facts)
    return caused_by_call(finding, **arguments)


class TestCausedByCall:
    def test_an_error_in_a_changed_file_is_caused(self) -> None:
        assert caused(BAD, changed=frozenset({"a.md"}))

    def test_an_error_in_an_untouched_file_is_not(self) -> None:
        assert not caused(BAD, changed=frozenset({"b.md"}))

    def test_an_old_over_budget_index_untouched_is_not_caused(self) -> None:
        """Writing a topic file does not make an over-budget index this call's fault."""
        assert not caused(
            OVER,
            changed=frozenset({"b.md"}),
            errors_before=frozenset({("I002", "MEMORY.md")}),
        )

    def test_growing_an_over_budget_index_is_caused(self) -> None:
        assert caused(
            OVER,
            changed=frozenset({"MEMORY.md"}),
            errors_before=frozenset({("I002", "MEMORY.md")}),
            index_before=(230, 9000),
            index_after=(231, 9040),
        )

    def test_shrinking_an_over_budget_index_is_not_caused(self) -> None:
        assert not caused(
            OVER,
            changed=frozenset({"MEMORY.md"}),
            errors_before=frozenset({("I002", "MEMORY.md")}),
            index_before=(230, 9000),
            index_after=(220, 8600),
        )

    @pytest.mark.parametrize(
        ("finding", "before", "after", "expected"),
        [
            (OVER, (230, 9000), (230, 9100), False),  # lines same, units grew
            (OVER, (230, 9000), (231, 8900), True),  # one line more
            (TOO_LARGE, (150, 30000), (150, 30000), False),  # same
            (TOO_LARGE, (150, 30000), (151, 30000), False),  # lines grew, units same
            (TOO_LARGE, (150, 30000), (150, 30001), True),  # one unit more
            (TOO_LARGE, (150, 30000), (140, 29999), False),  # shorter
        ],
    )
    def test_an_old_index_error_is_caused_only_when_its_measure_grew(
        self,
        finding: dict[str, object],
        before: tuple[int, int],
        after: tuple[int, int],
        expected: bool,
    ) -> None:
        """I002 compares lines and I003 units, and only a strictly larger one counts."""
        actual = caused(
            finding,
            changed=frozenset({"MEMORY.md"}),
            errors_before=frozenset({(str(finding["code"]), "MEMORY.md")}),
            index_before=before,
            index_after=after,
        )

        assert expected == actual

    def test_an_over_budget_index_edited_to_the_same_size_is_not_caused(self) -> None:
        """Worse versus same: an edit that keeps 230 lines is not this call's fault."""
        assert not caused(
            OVER,
            changed=frozenset({"MEMORY.md"}),
            errors_before=frozenset({("I002", "MEMORY.md")}),
            index_before=(230, 9000),
            index_after=(230, 9000),
        )

    def test_an_untouched_index_is_not_measured(self) -> None:
        """Sizes known but MEMORY.md not written: an old I002 is not caused."""
        assert not caused(
            OVER,
            changed=frozenset({"b.md"}),
            errors_before=frozenset({("I002", "MEMORY.md")}),
            index_before=None,
            index_after=(230, 9000),
        )

    def test_crossing_the_limit_is_caused(self) -> None:
        """An index that was fine and now is over the limit is this call's doing."""
        assert caused(
            OVER,
            changed=frozenset({"MEMORY.md"}),
            index_before=(200, 8000),
            index_after=(201, 8040),
        )

    def test_a_racy_file_is_caused_only_for_a_new_error(self) -> None:
        """Same stat within the racy window: only an error not seen before counts."""
        maybe = frozenset({"a.md"})

        assert caused(BAD, maybe_changed=maybe)
        assert not caused(
            BAD, maybe_changed=maybe, errors_before=frozenset({("M008", "a.md")})
        )


class TestJudge:
    def test_an_old_problem_is_said_once_per_stat(self) -> None:
        """The second look at an unchanged old error says nothing more."""
        entries = {"MEMORY.md": (10, 20, 30)}
        facts: dict[str, object] = {
            "changed": frozenset({"b.md"}),
            "maybe_changed": NOTHING,
            "index_before": None,
            "index_after": None,
            "entries": entries,
        }
        first_state = SessionState(
            memory_dir="/m/",
            recorded_ns=0,
            entries=entries,
            errors=frozenset({("I002", "MEMORY.md")}),
        )

        caused1, said1, keys = judge([OVER], state=first_state, **facts)
        second_state = SessionState(
            memory_dir="/m/",
            recorded_ns=0,
            entries=entries,
            errors=first_state.errors,
            said=keys,
        )
        caused2, said2, _ = judge([OVER], state=second_state, **facts)

        assert ([], [OVER]) == (caused1, said1)
        assert frozenset({"I002 MEMORY.md 10:20:30"}) == keys
        assert ([], []) == (caused2, said2)

    def _judge(
        self,
        findings: list[dict[str, object]],
        state: SessionState | None,
        **facts: object,
    ) -> tuple[list[dict[str, object]], list[dict[str, object]], frozenset[str]]:
        arguments: dict[str, object] = {
            "changed": NOTHING,
            "maybe_changed": NOTHING,
            "index_before": None,
            "index_after": None,
            "entries": {},
        }
        arguments.update(facts)
        return judge(findings, state=state, **arguments)  # type: ignore[arg-type]

    def test_without_a_record_a_changed_file_still_blocks(self) -> None:
        """No session record: an error in the file the call changed is caused."""
        caused_, said, _ = self._judge([BAD], None, changed=frozenset({"a.md"}))

        assert ([BAD], []) == (caused_, said)

    def test_warnings_are_skipped_and_every_error_after_them_judged(self) -> None:
        """Neither a warning nor a notice ends the judging: every error is looked at."""
        warning = {**BAD, "severity": "warning", "code": "M011", "path": "w.md"}
        old_b, old_c = {**BAD, "path": "b.md"}, {**BAD, "path": "c.md"}
        state = SessionState(
            memory_dir="/m/",
            recorded_ns=0,
            entries={},
            errors=frozenset({("M008", "b.md"), ("M008", "c.md")}),
        )

        caused_, said, _ = self._judge(
            [warning, old_b, old_c, BAD], state, changed=frozenset({"a.md"})
        )

        assert ([BAD], [old_b, old_c]) == (caused_, said)

    def test_a_new_error_in_a_racy_file_is_caused_given_a_record(self) -> None:
        """With a record that lacks it, a racy file's error is this call's doing."""
        state = SessionState(
            memory_dir="/m/", recorded_ns=0, entries={}, errors=frozenset()
        )

        caused_, _, _ = self._judge([BAD], state, maybe_changed=frozenset({"a.md"}))

        assert [BAD] == caused_


class TestSessionStartContext:
    def test_a_long_prompt_is_cut_and_points_at_its_file(self) -> None:
        """A prompt over the limit is cut at a line and names prompt.md."""
        prompt = "".join(f"line {i} " + "é" * 60 + "\n" for i in range(400))

        context = session_start_context("findings", prompt, "/c/prompt.md")

        assert context is not None
        assert len(context.encode("utf-16-le")) // 2 <= MAX_CONTEXT_UNITS
        assert "`/c/prompt.md`" in context
        assert context.endswith("findings")
        assert prompt.startswith(context.split("\n\n[memd:")[0] + "\n")

    def test_a_short_prompt_is_whole(self) -> None:
        assert "p\n\nf" == session_start_context("f", "p\n", "/c/prompt.md")

    def test_nothing_to_say_is_none(self) -> None:
        assert session_start_context(None, None, "/c/prompt.md") is None
