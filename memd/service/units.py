"""Render memd's user service files: the systemd unit and the launchd plist.

Pure: text and bytes out of a path and an environment mapping, no I/O.
`memd.service` turns these into install plans and carries them out.

Outside behaviour relied on:

- systemd.unit(5)/systemd.service(5): `%` starts a specifier everywhere and `$`
  a variable in `Exec*=` lines, so both are doubled; double-quoted words take
  C escapes. `StandardOutput=append:PATH` takes the rest of the line as the
  path (specifiers expanded), opened with O_APPEND.
- launchd.plist(5): launchd expands neither `~` nor variables, so every path
  in the plist is absolute.
"""

from __future__ import annotations

import os

from memd.errors import ServiceError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

LABEL = "dev.memd.agent"
UNIT_NAME = "memd.service"
LOG_FILE_NAME = "memd.log"
# Where the shipped unit expects memd (`pipx install` / `pip install --user`).
SHIPPED_SYSTEMD_MEMD = "%h/.local/bin/memd"
SHIPPED_LAUNCHD_HOME = "/Users/USERNAME"
# The variables that change where memd reads and writes; copied into the unit.
PASSED_ENV = (
    *("CLAUDE_CONFIG_DIR", "MEMD_CONFIG"),
    *("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"),
)
LAUNCHD_DEFAULT_PATH = "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

# memd sends READY=1 after its first full scan and pings WATCHDOG=1 from its main
# loop every WatchdogSec/2.
UNIT_TEMPLATE = """\
# memd user service. `memd service install` renders it for this machine;
# change it with a drop-in (`systemctl --user edit memd`), not by hand.
[Unit]
Description=memd: keeps the coding agent's auto memory healthy

[Service]
Type=notify
NotifyAccess=main
ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5s
WatchdogSec=60s
{environment}\
# The single-instance lock lives in $XDG_RUNTIME_DIR/memd.
RuntimeDirectory=memd
RuntimeDirectoryMode=0700
RuntimeDirectoryPreserve=yes
UMask=0077

# Sandboxing: only options every user manager (systemd >= 245) applies without
# privileges; docs/service.md has the table of what the others need.
NoNewPrivileges=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
# Landlock, which @system-service lacks (systemd 252): without it the dream
# agent cannot be confined, and memd refuses to run it (memd.kairos.confine).
SystemCallFilter=landlock_create_ruleset landlock_add_rule landlock_restrict_self
SystemCallErrorNumber=EPERM
# AF_INET/AF_INET6 are for a configured dream command (an agent CLI); memd
# needs only AF_UNIX. MemoryDenyWriteExecute= is off: such a CLI may JIT (Node).
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
{log_output}
[Install]
WantedBy=default.target
"""


def service_environment(env: Mapping[str, str]) -> dict[str, str]:
    """Return the variables the service gets: PATH and those in PASSED_ENV that are set.

    PATH is copied so a dream command finds what it finds in the user's shell.
    Relative values are dropped, as the XDG spec says to ignore them.
    """
    chosen = {
        name: env[name] for name in PASSED_ENV if os.path.isabs(env.get(name, ""))
    }
    if env.get("PATH"):
        chosen["PATH"] = env["PATH"]
    return chosen


def writable_dirs(
    env: Mapping[str, str], home: str, extra: Iterable[str] = ()
) -> tuple[str, ...]:
    """Return the directories memd writes: memory base, its config, cache and state."""

    def xdg(name: str, fallback: str) -> str:
        value = env.get(name, "")
        return value if os.path.isabs(value) else f"{home}/{fallback}"

    claude = env.get("CLAUDE_CONFIG_DIR", "")
    dirs = [
        claude if os.path.isabs(claude) else f"{home}/.claude",
        os.path.join(xdg("XDG_CONFIG_HOME", ".config"), "memd"),
        os.path.join(xdg("XDG_CACHE_HOME", ".cache"), "memd"),
        os.path.join(xdg("XDG_STATE_HOME", ".local/state"), "memd"),
        *(path for path in extra if os.path.isabs(path)),
    ]
    return tuple(dict.fromkeys(os.path.normpath(path) for path in dirs))


def _check_plain(value: str) -> str:
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        raise ServiceError(
            f"cannot put {value!r} in a unit file: it contains a control character"
        )
    return value


def _quote(value: str, *, exec_line: bool = False, raw_prefix: str = "") -> str:
    """Quote one word for a unit file; escape specifiers (and `$` on Exec lines).

    `raw_prefix` (such as `-%h`) is put in front unescaped, inside the quotes.
    """
    text = _check_plain(value).replace("%", "%%")
    if exec_line:
        text = text.replace("$", "$$")
    text = raw_prefix + text
    if text and not any(char in text for char in " \"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_systemd_unit(
    memd_path: str, env: Mapping[str, str], *, log_file: str | None = None
) -> str:
    """Return the user unit that runs `memd_path run` with `env`'s variables.

    `log_file`: where stdout and stderr go when there is no journal to take them.
    """
    return _render_unit(_quote(memd_path, exec_line=True), env, log_file)


def shipped_systemd_unit() -> str:
    """Return `systemd/memd.service` as shipped: memd in ~/.local/bin, no env."""
    return _render_unit(SHIPPED_SYSTEMD_MEMD, {}, None)


def _render_unit(exec_word: str, env: Mapping[str, str], log_file: str | None) -> str:
    environment = "".join(
        f"Environment={_quote(f'{name}={value}')}\n"
        for name, value in sorted(service_environment(env).items())
    )
    return UNIT_TEMPLATE.format(
        exec_start=f"{exec_word} run",
        environment=environment,
        log_output=_log_output(log_file),
    )


def _log_output(log_file: str | None) -> str:
    """Return the unit's logging lines: the journal, or `log_file` that memd rotates."""
    if log_file is None:
        return "# Logs go to the journal: journalctl --user -u memd\n"
    if not os.path.isabs(log_file) or any(char.isspace() for char in log_file):
        raise ServiceError(
            f"cannot log to {log_file!r}: the path must be absolute, without spaces"
        )
    # No journald here: append to a file; memd itself rotates it by size.
    path = _check_plain(log_file).replace("%", "%%")
    return f"StandardOutput=append:{path}\nStandardError=inherit\n"


def render_launchd_plist(memd_path: str, env: Mapping[str, str], home: str) -> bytes:
    """Return the LaunchAgent plist (XML) running `memd_path run` for `home`'s user."""
    import plistlib

    environment = service_environment(env)
    environment.setdefault("PATH", LAUNCHD_DEFAULT_PATH)
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):  # memd's lock lives there; CLI and agent must agree
        environment["XDG_RUNTIME_DIR"] = runtime
    logs = launchd_log_dir(home)
    agent: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": [memd_path, "run"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restart only after a failure
        "ProcessType": "Background",
        "ThrottleInterval": 5,
        "StandardOutPath": f"{logs}/memd.log",
        "StandardErrorPath": f"{logs}/memd.err.log",
        "EnvironmentVariables": dict(sorted(environment.items())),
    }
    return plistlib.dumps(agent, sort_keys=False)


def shipped_launchd_plist() -> bytes:
    """Return `launchd/dev.memd.agent.plist` as shipped, for a user called USERNAME."""
    return render_launchd_plist(
        f"{SHIPPED_LAUNCHD_HOME}/.local/bin/memd", {}, SHIPPED_LAUNCHD_HOME
    )


def log_file_path(state_dir: str) -> str:
    """Return the log file a unit writes when there is no journal: in the state dir."""
    return os.path.join(state_dir, LOG_FILE_NAME)


def systemd_unit_path(env: Mapping[str, str], home: str) -> str:
    """Return `$XDG_CONFIG_HOME/systemd/user/memd.service` (default under ~/.config)."""
    config = env.get("XDG_CONFIG_HOME", "")
    base = config if os.path.isabs(config) else os.path.join(home, ".config")
    return os.path.join(base, "systemd", "user", UNIT_NAME)


def launchd_plist_path(home: str) -> str:
    """Return `~/Library/LaunchAgents/<label>.plist`."""
    return os.path.join(home, "Library", "LaunchAgents", f"{LABEL}.plist")


def launchd_log_dir(home: str) -> str:
    """Return `~/Library/Logs/memd`, where the agent's stdout and stderr go."""
    return os.path.join(home, "Library", "Logs", "memd")
