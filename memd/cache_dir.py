"""Where memd's cache lives when nothing overrides it, for the warm paths.

`$XDG_CACHE_HOME/memd` (when that is absolute), else `~/.cache/memd`: the
default `memd.config` gives. The warm `memd prompt` and `memd recall --all`
need it without importing `memd.config` or `memd.snapshot.serve`, each of
which costs them more than the answer. Standard library `os` only.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def default_cache_dir(env: Mapping[str, str]) -> str:
    """Return `$XDG_CACHE_HOME/memd` as memd.config does, without importing it."""
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(home, ".cache")
    return os.path.join(base, "memd")
