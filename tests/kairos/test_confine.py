"""The confined dream agent cannot act through memd itself (issue 41, class 1).

A real `memd run` (its viewer on loopback TCP, `ui.json` with the token,
`hooks.sock`) and a real dream whose `dream.command` is a probe: each test
makes it try one way to reach memd, its dirs, a writable device or the
network, and the way must be shut (the probe prints DENIED or REACHED on
stdout, which memd logs). Before issue 41 only writes were confined: the
probe read the token, connected to the viewer and to `hooks.sock`, read and
wrote memd's dirs and `/dev/shm`, and found XDG_RUNTIME_DIR in its
environment.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import structlog

from memd.config import Config, load_config
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import DreamResult, run_dream
from memd.locks import CONSOLIDATE_LOCK_NAME
from tests.daemon.conftest import Daemon, Starter, _start_daemon, wait_for
from tests.kairos.agents import with_stdout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Home

__all__ = ["_start_daemon"]  # the real daemon's fixture, used here

NOW = datetime(2026, 11, 29, 14, 5).astimezone()
LOG = structlog.get_logger()
TOPIC = b"---\nname: Old\ndescription: The old notes\ntype: project\n---\n- keep me\n"
INDEX = b"# Index\n\n- [Old](old.md) \xe2\x80\x94 The old notes\n"

# Runs each attempt named in argv[1] (JSON: name -> code), prints one verdict a line.
PROBE = textwrap.dedent(
    """
    import json, os, socket, sys
    for name, code in json.loads(sys.argv[1]).items():
        try:
            exec(code, {"os": os, "socket": socket})
        except OSError as error:
            print(name, "DENIED", error.errno, flush=True)
        else:
            print(name, "REACHED", flush=True)
    """
)


class World:
    """A memory dir beside a running daemon; `probe` dreams with one attempt."""

    def __init__(self, daemon: Daemon, home: Home) -> None:
        self.daemon = daemon
        self.home = home
        self.memory = home.claude / "projects" / "-work-app" / "memory"
        self.memory.mkdir(parents=True)
        (self.memory / "old.md").write_bytes(TOPIC)
        (self.memory / "MEMORY.md").write_bytes(INDEX)
        append_entry(str(self.memory), "#notes the wiki is at w.example", now=NOW)
        self.config: Config = load_config()
        self.runtime = home.runtime / "memd"
        self.ui_json = self.runtime / "ui.json"
        self.hooks_sock = self.runtime / "hooks.sock"
        wait_for(self.ui_json.exists, what="the viewer's ui.json")
        wait_for(self.hooks_sock.exists, what="the daemon's hooks.sock")
        record = json.loads(self.ui_json.read_text())
        self.viewer_port = int(urlsplit(record["url"]).port or 0)
        self.token = str(record["token"])

    def files(self) -> dict[str, bytes]:
        return {
            str(p.relative_to(self.memory)): p.read_bytes()
            for p in sorted(self.memory.rglob("*"))
            if p.is_file() and p.name != CONSOLIDATE_LOCK_NAME
        }

    def probe(self, attempts: dict[str, str]) -> tuple[DreamResult, dict[str, str]]:
        """Dream with the probe; return the result and each attempt's verdict."""
        config = replace(
            self.config,
            dream_command=(sys.executable, "-c", PROBE, json.dumps(attempts)),
            dream_timeout_seconds=60.0,
        )
        result, out = with_stdout(
            lambda: run_dream(str(self.memory), config, now=NOW, log=LOG)
        )
        verdicts = dict(line.split(" ", 1) for line in out.splitlines() if line)
        return result, verdicts


@pytest.fixture(name="world")
def _world(start_daemon: Starter, isolated_home: Home) -> World:
    return World(start_daemon(), isolated_home)


def _reads(path: object) -> str:
    return f"open({str(path)!r}, 'rb').read()"


def _lists(path: object) -> str:
    return f"os.listdir({str(path)!r})"


def _writes(path: object) -> str:
    return f"open({str(path)!r}, 'wb').write(b'x')"


def _connects_tcp(port: int) -> str:
    return f"socket.create_connection(('127.0.0.1', {port}), 5).close()"


def _connects_unix(path: str) -> str:
    return (
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        f"s.settimeout(5)\ns.connect({path!r})\ns.close()"
    )


# name -> the code of the attempt, given the world. Each must be DENIED.
PATHS = {
    "read the viewer's token file": lambda w: _reads(w.ui_json),
    "list memd's runtime dir": lambda w: _lists(w.runtime),
    "connect to the viewer's TCP port": lambda w: _connects_tcp(w.viewer_port),
    "connect to the viewer's port on localhost by name": lambda w: (
        f"socket.create_connection(('localhost', {w.viewer_port}), 5).close()"
    ),
    "connect to the daemon's hooks.sock": lambda w: _connects_unix(str(w.hooks_sock)),
    "connect to an abstract unix socket": lambda w: _connects_unix(
        "\0" + w.abstract_name
    ),
    "listen on a TCP port": lambda w: (
        "s = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen()"
    ),
    "read memd's state dir": lambda w: _lists(w.config.state_dir),
    "write memd's state dir": lambda w: _writes(
        os.path.join(w.config.state_dir, "planted")
    ),
    "read a file in memd's state dir": lambda w: _reads(
        os.path.join(w.config.state_dir, "target")
    ),
    "read memd's cache dir": lambda w: _lists(w.config.cache_dir),
    "read a file in memd's cache dir": lambda w: _reads(
        os.path.join(w.config.cache_dir, "target")
    ),
    "write memd's cache dir": lambda w: _writes(
        os.path.join(w.config.cache_dir, "planted")
    ),
    "read memd's config": lambda w: _reads(w.home.config / "memd" / "config.toml"),
    "write memd's config": lambda w: _writes(w.home.config / "memd" / "config.toml"),
    "read the live memory": lambda w: _reads(w.memory / "MEMORY.md"),
    "read another project's memory": lambda w: _reads(w.other / "MEMORY.md"),
    "read the agent's real settings": lambda w: _reads(
        w.home.claude / "settings.json"
    ),
    "rewrite a file in /dev/shm": lambda w: _writes(w.shm),
    "create a file in /dev/shm": lambda w: _writes(f"{w.shm}-new"),
    "read a file in /dev/shm": lambda w: _reads(w.shm),
    "write /dev/urandom": lambda w: _writes("/dev/urandom"),
    "read memd's dirs through /proc/PID/root": lambda w: _reads(
        f"/proc/{w.daemon.proc.pid}/root{w.ui_json}"
    ),
    "signal the daemon": lambda w: f"os.kill({w.daemon.proc.pid}, 0)",
    # The scratch folder lives in memd's state dir: the agent's own copy (its
    # cwd) may be named, nothing else of memd's.
    "memd's dirs or the token named in the environment": lambda w: (
        "scratch = os.environ['MEMD_DREAM_SCRATCH']\n"
        "leaks = [k for k, v in os.environ.items() if any(p in v.replace(scratch, '')"
        f" for p in {w.secret_paths!r})]\n"
        "if not leaks: raise PermissionError(13, 'nothing of memd named')\n"
        "print('leaked:', leaks)"
    ),
    "XDG_RUNTIME_DIR in the environment": lambda w: (
        "if 'XDG_RUNTIME_DIR' not in os.environ: raise PermissionError(13, 'unset')"
    ),
}


class TestTheAgentCannotReachMemd:
    @pytest.mark.parametrize("path", sorted(PATHS))
    def test_each_way_is_shut(
        self, world: World, path: str, tmp_path: Path, isolated_home: Home
    ) -> None:
        """The attempt is refused; the dream is reported as it was; no live byte moves."""
        (isolated_home.config / "memd").mkdir(exist_ok=True)
        (isolated_home.config / "memd" / "config.toml").write_text("")
        (isolated_home.claude / "settings.json").write_text("{}\n")
        world.other = isolated_home.claude / "projects" / "-work-other" / "memory"
        world.other.mkdir(parents=True)
        (world.other / "MEMORY.md").write_bytes(INDEX)
        world.shm = f"/dev/shm/memd-test-{os.getpid()}-{os.urandom(4).hex()}"
        Path(world.shm).write_bytes(b"mine\n")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        world.abstract_name = f"memd-test-{os.urandom(6).hex()}"
        listener.bind("\0" + world.abstract_name)
        listener.listen()
        world.secret_paths = [
            str(isolated_home.runtime),
            str(isolated_home.state),
            str(isolated_home.cache),
            str(isolated_home.config),
            world.token,
        ]
        for folder in (world.config.state_dir, world.config.cache_dir):
            os.makedirs(folder, exist_ok=True)
            Path(folder, "target").write_bytes(b"memd's\n")
        before = world.files()
        try:
            result, verdicts = world.probe({"attempt": PATHS[path](world)})
        finally:
            listener.close()
            shm = Path(world.shm).read_bytes()
            for leftover in (world.shm, f"{world.shm}-new"):
                Path(leftover).unlink(missing_ok=True)

        # EACCES or EPERM: refused, not missing (every target exists).
        assert verdicts["attempt"] in ("DENIED 13", "DENIED 1"), (
            verdicts,
            result.message,
        )
        assert "ok" == result.status, result.message  # the probe changed nothing
        after = world.files()  # the daemon may start today's log meanwhile
        assert before == {rel: after.get(rel) for rel in before}
        assert all(rel.startswith("logs/") for rel in after.keys() - before.keys())
        assert b"mine\n" == shm
        assert not os.path.exists(os.path.join(world.config.state_dir, "planted"))
        assert not os.path.exists(os.path.join(world.config.cache_dir, "planted"))
        assert "" == (isolated_home.config / "memd" / "config.toml").read_text()
        world.daemon.assert_alive()
