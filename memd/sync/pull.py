"""The SessionStart hook's pull: sync first when the last personal sync is old.

A session never waits on the network for long:

- when the daemon runs (its instance lock in the runtime dir is held: one
  `flock` probe), the hook never pulls: the daemon keeps personal memory
  fresh in the background;
- otherwise, when a pull is due, a `memd sync` subprocess gets at most
  `PULL_WAIT_SECONDS`: then SIGTERM (it kills its git children, each in its
  own process group, and exits), and SIGKILL a moment later. The hook's
  context then says the pull gave up (`session_note`).

Bounded when no pull is due: one `os.stat` of the repository's marker and
one of ``sync.json`` (the common case). The project of the session is
remembered first, so a project first seen on this machine receives its
memory before the agent reads it. The state dir is `$MEMD_STATE_DIR` or the
default one: the hook does not read config.toml.

Standard library `os` only at import: the hook's warm path imports this module.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

PULL_AFTER_SECONDS = 600.0  # no pull when a sync was attempted this recently
PULL_WAIT_SECONDS = 1.6  # then SIGTERM; with the grace below, 2 s at most
TERM_GRACE_SECONDS = 0.4
GAVE_UP_NOTE = (
    "memd: personal sync did not finish within 2 s (the remote is slow or "
    "unreachable); memory from your other machines may be behind. It syncs "
    "again later; `memd sync` syncs now."
)


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


def is_daemon_running(env: Mapping[str, str]) -> bool:
    """Return True when a `memd run` holds its instance lock (one flock probe)."""
    from memd.dirs import runtime_dir
    from memd.locks import is_lock_held

    return is_lock_held(runtime_dir(env, state_dir=hook_state_dir(env)))


def pull_before_session(cwd: object, env: Mapping[str, str]) -> str | None:
    """Run a bounded `memd sync` for the session at `cwd` when due and no daemon runs.

    Returns the note for the session's context when the pull gave up, else None.
    """
    if not isinstance(cwd, str) or not os.path.isdir(cwd) or not is_pull_due(env):
        return None
    if is_daemon_running(env):
        return None  # the daemon syncs in the background; never wait on the network
    import signal
    import subprocess
    import sys

    from memd.claude_code.paths import project_root_of
    from memd.state import remember_project

    remember_project(hook_state_dir(env), project_root_of(cwd))
    process = subprocess.Popen(
        [sys.executable, "-m", "memd", "sync"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=True,
    )
    try:
        process.wait(PULL_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    else:
        return None
    # SIGTERM first: `memd sync` kills each git child's process group (git
    # runs in its own session), so no `git remote-http` keeps the sync lock.
    for sig, grace in ((signal.SIGTERM, TERM_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:  # noqa: SIM105 -- contextlib is an import the hook does without
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            process.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    return GAVE_UP_NOTE


def with_note(
    output: dict[str, object] | None, note: str | None
) -> dict[str, object] | None:
    """Return the SessionStart output with `note` added to its context."""
    if note is None:
        return output
    output = dict(output or {})
    specific = output.get("hookSpecificOutput")
    specific = dict(specific) if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    specific["hookEventName"] = "SessionStart"
    specific["additionalContext"] = (
        f"{context}\n\n{note}" if isinstance(context, str) and context else note
    )
    output["hookSpecificOutput"] = specific
    return output
