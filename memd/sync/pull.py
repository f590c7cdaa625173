"""The SessionStart hook's pull: sync first when the last personal sync is old.

Bounded: one `os.stat` of the repository's marker and one of ``sync.json``
when a pull is not due (the common case: `memd run` syncs every few
minutes), and a `memd sync` subprocess stopped with SIGKILL after
`PULL_TIMEOUT_SECONDS` when it is (a killed sync tears nothing and the next
one finishes its work). The project of the session is remembered first, so
a project first seen on this machine receives its memory before the agent
reads it. The state dir is `$MEMD_STATE_DIR` or the default one: the hook
does not read config.toml.

Standard library `os`, `sys` and `time` only at import: the hook's warm path
imports this module.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PULL_AFTER_SECONDS = 600.0  # no pull when a sync was attempted this recently
PULL_TIMEOUT_SECONDS = 10.0


def hook_state_dir(env: Mapping[str, str]) -> str:
    from memd.dirs import default_state_dir

    return env.get("MEMD_STATE_DIR") or default_state_dir(env)


def is_pull_due(env: Mapping[str, str], *, now: float | None = None) -> bool:
    """Return True when personal sync is on and its last attempt is old."""
    import time

    state_dir = hook_state_dir(env)
    try:
        os.stat(os.path.join(state_dir, "sync", "repo", ".git", "memd"))
    except OSError:
        return False  # personal sync is off
    try:
        last = os.stat(os.path.join(state_dir, "sync.json")).st_mtime
    except OSError:
        return True
    return (time.time() if now is None else now) - last > PULL_AFTER_SECONDS


def pull_before_session(cwd: object, env: Mapping[str, str]) -> bool:
    """Run a bounded `memd sync` for the session at `cwd` when due; True if it ran."""
    if not isinstance(cwd, str) or not os.path.isdir(cwd) or not is_pull_due(env):
        return False
    import signal
    import subprocess
    import sys

    from memd.agent.paths import project_root_of
    from memd.state import remember_project

    remember_project(hook_state_dir(env), project_root_of(cwd))
    process = subprocess.Popen(
        [sys.executable, "-m", "memd", "sync"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=True,  # its git children go with it on a timeout
    )
    try:
        process.wait(PULL_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        try:  # noqa: SIM105 -- contextlib is an import the hook does without
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    return True
