"""Change.kind is one of the names memd.daemon.settle gives, never a built string."""

from __future__ import annotations

import itertools

from memd.daemon import settle

KINDS = {
    name: value
    for name, value in vars(settle).items()
    if name.isupper() and isinstance(value, str)
}


class TestChangeKind:
    def test_every_event_the_watcher_hears_has_a_named_kind(self) -> None:
        """Each watchdog event type the filter lets through, file or directory."""
        events = ("closed", "created", "deleted", "modified", "attrib")
        kinds = {
            settle.change_kind(event, is_directory=is_dir)
            for event, is_dir in itertools.product(events, (False, True))
        } | {
            settle.change_kind("moved", is_directory=is_dir, half=half)
            for is_dir, half in itertools.product((False, True), ("from", "to"))
        }

        assert set() == kinds - set(KINDS.values())

    def test_every_event_in_the_watchers_filter_is_in_the_table(self) -> None:
        """No event class the observer is asked for falls back to "modified"."""
        from memd.daemon.watcher import _event_filter

        events = {(c.event_type, c.is_directory) for c in _event_filter(polling=True)}
        halves = {"moved": ("from", "to")}

        assert set() == {
            (event, is_dir, half)
            for event, is_dir in events
            for half in halves.get(event, ("",))
            if (event, is_dir, half) not in settle._KINDS
        }

    def test_a_move_splits_into_its_halves(self) -> None:
        """A file's move is moved_from and moved_to; a directory's is dir_moved_*."""
        assert (settle.MOVED_FROM, settle.DIR_MOVED_TO) == (
            settle.change_kind("moved", is_directory=False, half="from"),
            settle.change_kind("moved", is_directory=True, half="to"),
        )

    def test_an_unexpected_event_reads_as_a_modification(self) -> None:
        """An event type the filter should drop still names a kind."""
        assert (settle.MODIFIED, settle.DIR_MODIFIED) == (
            settle.change_kind("opened", is_directory=False),
            settle.change_kind("opened", is_directory=True),
        )

    def test_the_names_are_unique(self) -> None:
        """No two names give the same kind."""
        assert len(set(KINDS.values())) == len(KINDS)
