"""Where `memd ui` finds the running viewer: `ui.json` in the runtime dir.

The daemon writes it (memd.ui.server, mode 0600) with its pid, the URL and
the token of this start; `memd ui` reads it here without loading the viewer.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

URL_FILE = "ui.json"


def url_file_path(env: Mapping[str, str], *, state_dir: str) -> str:
    """Return the path of `ui.json` for this user's daemon."""
    from memd.dirs import runtime_dir

    return os.path.join(runtime_dir(env, state_dir=state_dir), URL_FILE)


def read_viewer(env: Mapping[str, str], *, state_dir: str) -> dict[str, str] | None:
    """Return {"url", "token"} of the running daemon's viewer, or None.

    None when the file is missing, unreadable, not memd's, or names a
    process that is gone (a daemon killed before it could remove it).
    """
    from memd.fastjson import loads
    from memd.fsread import read_bytes_or_none
    from memd.locks import pid_alive

    try:
        data = read_bytes_or_none(url_file_path(env, state_dir=state_dir), 4096)
        record = loads(data, max_depth=4) if data else None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    pid, url, token = record.get("pid"), record.get("url"), record.get("token")
    if not (isinstance(pid, int) and isinstance(url, str) and isinstance(token, str)):
        return None
    if not url.startswith("http://") or pid <= 0 or not pid_alive(pid):
        return None
    return {"url": url, "token": token}
