"""The racily-clean rule shared by snapshots, hooks and recall."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memd.hooks.session_state import changes, scan
from memd.racy import RACY_WINDOW_NS, is_racy
from memd.recall.index import stat_signature


class TestIsRacy:
    def test_the_window_is_two_sided_and_closed(self) -> None:
        at = 5_000_000_000_000
        assert is_racy(at, at)
        assert is_racy(at - RACY_WINDOW_NS, at)
        assert is_racy(at + RACY_WINDOW_NS, at)
        assert not is_racy(at - RACY_WINDOW_NS - 1, at)

    def test_a_future_mtime_past_the_window_is_not_racy(self) -> None:
        """Else a clock stepped back keeps a file "maybe changed" till it catches up."""
        at = 5_000_000_000_000
        assert not is_racy(at + RACY_WINDOW_NS + 1, at)
        assert not is_racy(at + 86_400 * 10**9, at)


def _date(path: Path, seconds_from_now: float) -> None:
    when = time.time() + seconds_from_now
    os.utime(path, (when, when))


class TestCallers:
    def test_hooks_trust_a_future_dated_file_that_did_not_change(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "a.md").write_text("x\n")
        _date(tmp_path / "a.md", 86_400)
        _date(tmp_path, -3600)
        entries = scan(str(tmp_path))
        assert (frozenset(), frozenset()) == changes(entries, entries, time.time_ns())

    def test_recall_keeps_the_signature_of_a_future_dated_directory(
        self, tmp_path: Path
    ) -> None:
        (tmp_path / "a.md").write_text("x\n")
        for path in (tmp_path / "a.md", tmp_path):
            _date(path, 86_400)
        found = stat_signature(str(tmp_path), time.time_ns())
        assert found is not None
        # ctime is the kernel's own now: racy just after the write, not later.
        taken = time.time_ns() + 2 * RACY_WINDOW_NS
        later = stat_signature(str(tmp_path), taken)
        assert (found[0], False) == later
