"""Every reach into watchdog's private attributes, in one place (watchdog 7.1).

watchdog offers no public way to see its inotify reader thread, the inotify
watches a recursive watch holds, or to quiet its re-adds; memd needs all
three to notice a deaf watch and to survive a deep tree (memd.daemon.watcher).
Each probe degrades to "cannot tell" when the layout differs, and
`tests/daemon/test_watchdog_probes.py` pins each name against the installed
watchdog, so an upgrade that renames one fails there, by name:

- `InotifyObserver._inotify_fd`: the observer's own reader (7.1); older
  releases share `InotifyFD._instance` under `InotifyFD._global_lock`.
- `InotifyEmitter._inotify` (the watch group) and its
  `_active_callbacks_by_path`: the directories a recursive watch covers.
- `InotifyFD._add_callback` / `_get_or_create_watch`, `Watch.callbacks`,
  `InotifyEmitter.__init__(inotify_fd=)` and `_event_filter`: what memd's
  own observer subclasses (`memd_inotify_observer`).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import warnings

from watchdog.events import DirAttribEvent, FileAttribEvent
from watchdog.observers.api import BaseObserver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from watchdog.observers.api import ObservedWatch


def inotify_alive(observer: BaseObserver) -> bool:
    """Whether the inotify reader thread `observer`'s emitters share still runs.

    watchdog 7.1's `InotifyObserver` owns one (`_inotify_fd`); other versions
    share a process-wide one. Both are private: the only way to see them.
    """
    own = getattr(observer, "_inotify_fd", None)
    if isinstance(own, threading.Thread):
        return own.is_alive()
    try:
        from watchdog.observers.inotify_c import InotifyFD
    except ImportError:  # not Linux: no shared reader
        return True
    instance = getattr(InotifyFD, "_instance", None)
    return instance is None or instance.is_alive()


def reset_shared_inotify() -> None:
    """Forget watchdog's dead shared inotify reader, so the next watch starts one."""
    try:
        from watchdog.observers.inotify_c import InotifyFD
    except ImportError:
        return
    lock = getattr(InotifyFD, "_global_lock", None)
    if lock is None:  # a layout with no shared reader: nothing to forget
        return
    with lock:
        instance, InotifyFD._instance = InotifyFD._instance, None
    if instance is not None:
        with contextlib.suppress(Exception):
            instance.stop()


def natively_watched(observer: BaseObserver, watch: ObservedWatch) -> set[bytes] | None:
    """The directories a native recursive watch has inotify watches on, if visible."""
    for emitter in list(observer.emitters):
        if emitter.watch == watch:
            group = getattr(emitter, "_inotify", None)
            paths = getattr(group, "_active_callbacks_by_path", None)
            return None if paths is None else set(dict(paths))
    return None


def memd_inotify_observer() -> Callable[[], BaseObserver] | None:
    """watchdog's inotify observer with quiet re-adds and IN_ATTRIB, if it fits.

    It builds on watchdog 7.1's reader (`InotifyFD` with `_add_callback`
    and `_get_or_create_watch`, an emitter taking `inotify_fd`); with any
    other layout memd takes watchdog's observer as it comes.
    """
    try:
        from watchdog.observers.api import DEFAULT_OBSERVER_TIMEOUT
        from watchdog.observers.inotify import InotifyEmitter, InotifyObserver
        from watchdog.observers.inotify_c import (
            CallbackId,
            InotifyConstants,
            InotifyFD,
            Mask,
            WatchCallback,
            WatchDescriptor,
        )
    except ImportError:
        return None
    fits = getattr(InotifyFD, "_get_or_create_watch", None) is not None and (
        "inotify_fd" in inspect.signature(InotifyEmitter.__init__).parameters
    )
    if not fits:
        return None

    class _InotifyFD(InotifyFD):
        """watchdog's inotify reader, where adding a callback again is a no-op.

        The recursive walk and the creation events it raced with add the
        same directory for the same watch group twice (see memd.daemon.
        watcher's docstring); watchdog would warn each time with a repr of
        the group. A different callback under a taken id still replaces it,
        with a warning of bounded length.
        """

        def _add_callback(
            self, path: bytes, mask: Mask, callback: WatchCallback, id_: CallbackId
        ) -> WatchDescriptor:
            watch = self._get_or_create_watch(path, mask)
            known = watch.callbacks.get(id_)
            if known is not callback:
                if known is not None:
                    warnings.warn(
                        f"inotify callback {id_} replaced for watch {watch.wd}",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                watch.callbacks[id_] = callback
            return watch.wd

    class _InotifyEmitter(InotifyEmitter):
        """Asks the kernel for IN_ATTRIB when attribute events are wanted.

        watchdog 7.1 maps only `FileModifiedEvent` to IN_ATTRIB, and with it
        IN_MODIFY, an event per write(2): memd wants the `touch` alone.
        """

        def get_event_mask_from_filter(self) -> Mask:
            mask = super().get_event_mask_from_filter()
            wanted = self._event_filter or ()
            if FileAttribEvent in wanted or DirAttribEvent in wanted:
                mask = Mask(mask | InotifyConstants.IN_ATTRIB)
            return mask

    class _InotifyObserver(InotifyObserver):
        """`InotifyObserver` over `_InotifyFD`, its own reader thread as upstream."""

        def __init__(self) -> None:
            self._inotify_fd = _InotifyFD()
            self._inotify_fd.start()
            BaseObserver.__init__(
                self,
                _InotifyEmitter,
                timeout=DEFAULT_OBSERVER_TIMEOUT,
                inotify_fd=self._inotify_fd,
            )

    return _InotifyObserver
