"""Render memd's user service files: the systemd unit and the launchd plist.

Pure: text and bytes out of a path and an environment mapping, no I/O.
`memd.service` turns these into install plans and carries them out.

Outside behaviour relied on:

- systemd.unit(5)/systemd.service(5): `%` starts a specifier everywhere and `$`
  a variable in `Exec*=` lines, so both are doubled; double-quoted words take
  C escapes. `ReadWritePaths=` entries prefixed with `-` are skipped when
  missing instead of failing the start (exit 226/NAMESPACE).
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

# Sandboxing. The file-system options need unprivileged user namespaces
# (systemd >= 253 turns on PrivateUsers= for them in user units).
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths={read_write_paths}
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
RestrictNamespaces=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM
# AF_INET/AF_INET6 are for a configured dream command (an agent CLI); memd
# needs only AF_UNIX. MemoryDenyWriteExecute= is off: such a CLI may JIT (Node).
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6

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


def _read_write_word(path: str, home: str) -> str:
    """Return one `ReadWritePaths=` entry; paths under `home` become `%h/...`."""
    if home.startswith("/") and home != "/" and path.startswith(home + "/"):
        path = "%h" + path[len(home) :]
    if path.startswith("%h/"):
        # `%h` stays a specifier; the rest is escaped. `-`: a missing dir is skipped.
        return _quote(path[2:], raw_prefix="-%h")
    return _quote(f"-{path}")


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
    memd_path: str, env: Mapping[str, str], *, writable: Iterable[str] = ()
) -> str:
    """Return the user unit that runs `memd_path run` with `env`'s variables."""
    return _render_unit(_quote(memd_path, exec_line=True), env, writable)


def shipped_systemd_unit() -> str:
    """Return `systemd/memd.service` as shipped: memd in ~/.local/bin, no env."""
    return _render_unit(SHIPPED_SYSTEMD_MEMD, {}, ())


def _render_unit(
    exec_word: str, env: Mapping[str, str], writable: Iterable[str]
) -> str:
    home = env.get("HOME", "")
    home = home.rstrip("/") if os.path.isabs(home) else "%h"
    environment = "".join(
        f"Environment={_quote(f'{name}={value}')}\n"
        for name, value in sorted(service_environment(env).items())
    )
    return UNIT_TEMPLATE.format(
        exec_start=f"{exec_word} run",
        environment=environment,
        read_write_paths=" ".join(
            _read_write_word(path, home) for path in writable_dirs(env, home, writable)
        ),
    )


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
