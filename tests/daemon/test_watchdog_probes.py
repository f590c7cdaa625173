"""memd.daemon.watchdog_probes: memd's coupling to watchdog's private attributes.

Each probe reads a private name of the installed watchdog. These tests pin
each name on a real observer, so a watchdog release that renames or moves
one fails here, by name, instead of memd quietly losing its health checks
(a probe that cannot see answers "cannot tell", never an error).
"""

from __future__ import annotations

import inspect
import os
import threading
import warnings
from importlib.metadata import version
from pathlib import Path

from watchdog.events import FileSystemEventHandler
from watchdog.observers.inotify import InotifyEmitter, InotifyObserver
from watchdog.observers.inotify_c import InotifyFD, Watch

from memd.daemon.watchdog_probes import (
    inotify_alive,
    memd_inotify_observer,
    natively_watched,
    reset_shared_inotify,
)

# The release the probes were written against; see the module's docstring.
PROBED_MAJOR = 7


class _Callback:
    """A watch callback that only has to exist (nothing changes in its dir)."""

    def on_event(self, event: object) -> None:
        pass

    def on_watch_deleted(self, wd: object) -> None:
        pass

    def on_queue_overflow(self) -> None:
        pass


class TestThePrivateNamesExist:
    def test_the_installed_watchdog_is_the_release_probed(self) -> None:
        """A new major release: re-check every name below, then move this pin."""
        assert PROBED_MAJOR == int(version("watchdog").split(".")[0])

    def test_the_reader_and_its_shared_instance(self) -> None:
        """`InotifyObserver._inotify_fd`; `InotifyFD._instance` and `_global_lock`."""
        assert isinstance(InotifyFD._global_lock, type(threading.Lock()))
        assert InotifyFD._instance is None or isinstance(InotifyFD._instance, InotifyFD)
        observer = InotifyObserver()
        try:
            assert isinstance(observer._inotify_fd, InotifyFD)
        finally:
            observer.stop()

    def test_what_memd_observer_subclasses(self) -> None:
        """`_add_callback`, `_get_or_create_watch`, `Watch.callbacks`, `inotify_fd=`."""
        assert callable(InotifyFD._add_callback)
        assert callable(InotifyFD._get_or_create_watch)
        assert "callbacks" in {f.name for f in Watch.__dataclass_fields__.values()}
        assert "inotify_fd" in inspect.signature(InotifyEmitter.__init__).parameters
        assert memd_inotify_observer() is not None, "memd's observer no longer fits"


class TestTheProbesSee:
    def test_a_live_reader_is_alive_and_a_stopped_one_is_not(self) -> None:
        """`inotify_alive` follows the observer's own reader thread."""
        make = memd_inotify_observer()
        assert make is not None
        observer = make()
        observer.start()
        try:
            assert inotify_alive(observer)
        finally:
            observer.stop()
            observer.join(timeout=10)
        observer._inotify_fd.join(timeout=10)  # type: ignore[attr-defined]

        assert not inotify_alive(observer)

    def test_a_recursive_watch_lists_its_directories(self, tmp_path: Path) -> None:
        """`natively_watched` reads the watch group's `_active_callbacks_by_path`."""
        (tmp_path / "a" / "b").mkdir(parents=True)
        make = memd_inotify_observer()
        assert make is not None
        observer = make()
        observer.start()
        try:
            watch = observer.schedule(
                FileSystemEventHandler(), str(tmp_path), recursive=True
            )
            seen = natively_watched(observer, watch)
        finally:
            observer.stop()
            observer.join(timeout=10)

        expected = {
            os.fsencode(p) for p in (tmp_path, tmp_path / "a", tmp_path / "a" / "b")
        }
        assert seen is not None, "the watch group's directories are no longer visible"
        assert expected <= seen

    def test_forgetting_the_shared_reader_stops_it(self) -> None:
        """`reset_shared_inotify` clears `InotifyFD._instance` and stops that thread."""
        shared = InotifyFD.get_instance()

        reset_shared_inotify()
        shared.join(timeout=10)

        assert InotifyFD._instance is None
        assert not shared.is_alive()


class TestMemdReader:
    def test_the_same_callback_added_again_is_quiet(self, tmp_path: Path) -> None:
        """watchdog's walk re-adds what the creation events it raced with added.

        That re-add warned with a repr of the whole watch group (700 KB under a
        400-level chain, 300 MiB of log in seconds; issue 22). Another callback
        under a taken id still warns, in one short line.
        """
        make = memd_inotify_observer()
        assert make is not None
        observer = make()
        reader = observer._inotify_fd  # type: ignore[attr-defined]
        path, mask = os.fsencode(tmp_path), 0x100  # IN_CREATE
        mine, other = _Callback(), _Callback()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                first = reader.add_callback(path, mask, mine, 1)
                again = reader.add_callback(path, mask, mine, 1)
                quiet = list(caught)
                reader.add_callback(path, mask, other, 1)
        finally:
            observer.stop()

        assert (first, []) == (again, quiet)
        assert 1 == len(caught)
        assert len(str(caught[0].message)) < 100
