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
from typing import Any
from urllib.parse import urlsplit

import pytest
import structlog

from memd.config import Config, load_config
from memd.kairos import confine as confine_module
from memd.kairos.confine import Unconfinable, policy
from memd.kairos.daily_log import append_entry
from memd.kairos.dream import DreamResult, run_dream
from memd.kairos.external import agent_environ, model_ports
from memd.locks import CONSOLIDATE_LOCK_NAME
from tests.daemon.conftest import Daemon, Starter, _start_daemon, wait_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from tests.conftest import Home

__all__ = ["_start_daemon"]  # the real daemon's fixture, used here

NOW = datetime(2026, 11, 29, 14, 5).astimezone()
MEMD = str(Path(sys.executable).with_name("memd"))  # the installed script
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
        with structlog.testing.capture_logs() as logs:
            result = run_dream(str(self.memory), config, now=NOW, log=LOG)
        out = "".join(  # the probe's stdout; none when the agent never ran
            str(e["stdout"]) for e in logs if e["event"] == "dream_command_finished"
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
    "read the agent's real settings": lambda w: _reads(w.home.claude / "settings.json"),
    "rewrite a file in /dev/shm": lambda w: _writes(w.shm),
    "create a file in /dev/shm": lambda w: _writes(f"{w.shm}-new"),
    "read a file in /dev/shm": lambda w: _reads(w.shm),
    "write /dev/urandom": lambda w: _writes("/dev/urandom"),
    "read memd's dirs through /proc/PID/root": lambda w: _reads(
        f"/proc/{w.daemon.proc.pid}/root{w.ui_json}"
    ),
    "read the daemon's environment": lambda w: _reads(
        f"/proc/{w.daemon.proc.pid}/environ"
    ),
    "read the daemon's command line": lambda w: _reads(
        f"/proc/{w.daemon.proc.pid}/cmdline"
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
    # memd itself, run by the agent, given the real dirs: it finds no viewer.
    "memd ui --print inside the agent": lambda w: (
        "import subprocess\n"
        f"env = dict(os.environ, XDG_RUNTIME_DIR={str(w.home.runtime)!r}, "
        f"MEMD_STATE_DIR={w.config.state_dir!r})\n"
        f"done = subprocess.run([{MEMD!r}, 'ui', '--print'], env=env, "
        "capture_output=True, text=True, timeout=60)\n"
        f"if {w.token!r} not in done.stdout + done.stderr:\n"
        "    raise PermissionError(13, 'no token')"
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
        """The attempt is refused, the dream reported as it was, no live byte moved."""
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


# Makes this process's kernel "have no Landlock": a real seccomp filter fails
# landlock_create_ruleset with ENOSYS, as on Linux before 5.13.
HIDE_LANDLOCK = textwrap.dedent(
    """
    import ctypes, os, struct

    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[os.uname().machine]
    steps = [
        (0x20, 0, 0, 4), (0x15, 1, 0, arch), (0x06, 0, 0, 0x7FFF0000),
        (0x20, 0, 0, 0), (0x15, 0, 1, 444), (0x06, 0, 0, 0x00050000 | 38),
        (0x06, 0, 0, 0x7FFF0000),
    ]
    raw = b"".join(struct.pack("=HBBI", *step) for step in steps)
    program = ctypes.create_string_buffer(raw, len(raw))
    fprog = ctypes.create_string_buffer(
        struct.pack("@HP", len(steps), ctypes.addressof(program))
    )
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(38, ctypes.c_ulong(1), 0, 0, 0) == 0
    pointer = ctypes.c_void_p(ctypes.addressof(fprog))
    assert libc.prctl(22, ctypes.c_ulong(2), pointer, 0, 0) == 0
    """
)
# Runs one dream there: argv = memory dir, confine (1/0), the command as JSON.
WITHOUT_LANDLOCK = HIDE_LANDLOCK + textwrap.dedent(
    """
    import json, sys
    from dataclasses import replace
    from datetime import datetime
    import structlog
    from memd.config import load_config
    from memd.kairos.dream import run_dream

    memory, confine = sys.argv[1], sys.argv[2] == "1"
    command = json.loads(sys.argv[3])
    config = replace(load_config(), dream_command=tuple(command), dream_confine=confine)
    now = datetime(2026, 11, 29, 14, 5).astimezone()
    result = run_dream(memory, config, now=now, log=structlog.get_logger())
    print(json.dumps({"status": result.status, "message": result.message}))
    """
)
# A well-behaved agent: files the entries into old.md.
FILES_ENTRIES = (
    "import json, sys\n"
    "entries = [json.loads(line)['text'] for line in sys.stdin]\n"
    "open('old.md', 'a').write(''.join(f'- {t}\\n' for t in entries))\n"
)


@pytest.mark.skipif(
    os.uname().machine not in ("x86_64", "aarch64"), reason="the filter's arch"
)
class TestWithoutTheKernelsHelp:
    def _dream(self, tmp_path: Path, *, confine: bool) -> dict[str, str]:
        memory = tmp_path / "memory"
        memory.mkdir()
        (memory / "old.md").write_bytes(TOPIC)
        (memory / "MEMORY.md").write_bytes(INDEX)
        append_entry(str(memory), "#notes the wiki is at w.example", now=NOW)
        command = [sys.executable, "-c", FILES_ENTRIES]
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                WITHOUT_LANDLOCK,
                str(memory),
                str(int(confine)),
                json.dumps(command),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        self.memory = memory
        return dict(json.loads(done.stdout.splitlines()[-1]))

    def test_the_agent_dream_is_refused_with_the_reason(self, tmp_path: Path) -> None:
        """No Landlock: the agent is never run unconfined behind the user's back."""
        result = self._dream(tmp_path, confine=True)

        assert "failed" == result["status"]
        assert "cannot be confined" in result["message"]
        assert "no Landlock" in result["message"]
        assert "confine = false" in result["message"]
        assert TOPIC == (self.memory / "old.md").read_bytes()

    def test_the_user_may_opt_out(self, tmp_path: Path) -> None:
        """`dream.confine = false` runs it unconfined, as the user chose."""
        result = self._dream(tmp_path, confine=False)

        assert "ok" == result["status"], result["message"]
        assert b"w.example" in (self.memory / "old.md").read_bytes()


class TestTheModelAlone:
    def test_the_models_port_is_reachable_and_no_other(
        self, world: World, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """TCP reaches the port of the agent's model (ANTHROPIC_BASE_URL) only."""
        with (
            socket.create_server(("127.0.0.1", 0)) as model,
            socket.create_server(("127.0.0.1", 0)) as other,
        ):
            port, other_port = model.getsockname()[1], other.getsockname()[1]
            monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")

            result, verdicts = world.probe(
                {"model": _connects_tcp(port), "other": _connects_tcp(other_port)}
            )

        assert "REACHED" == verdicts["model"], (verdicts, result.message)
        assert "DENIED 13" == verdicts["other"]

    def test_a_model_on_the_viewers_port_is_refused(
        self, world: World, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Port rules cannot tell the model from the viewer there: nothing runs."""
        url = f"http://127.0.0.1:{world.viewer_port}"
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        before = world.files()

        result, verdicts = world.probe({"model": _connects_tcp(world.viewer_port)})

        assert "failed" == result.status
        assert f"port {world.viewer_port} is memd's viewer's" in result.message
        assert {} == verdicts  # the agent never ran
        after = world.files()
        assert before == {rel: after.get(rel) for rel in before}


class TestTheAgentsOwnFiles:
    def test_an_agent_kept_in_memds_state_is_refused(self, world: World) -> None:
        """Its install would have to be readable: memd refuses rather than expose."""
        planted = Path(world.config.state_dir, "agent.py")
        planted.write_text("print('ran')\n")
        config = replace(world.config, dream_command=(sys.executable, str(planted)))

        result = run_dream(str(world.memory), config, now=NOW, log=LOG)

        assert "failed" == result.status
        assert "among memd's own files" in result.message


def _doctor(*prelude: str, **env: str) -> dict[str, str]:
    """Return `memd doctor`'s "dream agent" check, run after `prelude` (code)."""
    code = (prelude[0] if prelude else "") + (
        "\nimport sys\nfrom memd.cli.main import main\n"
        "sys.exit(main(['doctor', '--format', 'json']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    return dict(checks["dream agent"])


class TestDoctorSays:
    def test_a_confined_agent_is_ok(self) -> None:
        check = _doctor(MEMD_DREAM_AGENT="claude")

        assert "ok" == check["verdict"]
        assert "confined" in check["message"]

    def test_an_unconfined_agent_is_a_warning(self) -> None:
        check = _doctor(MEMD_DREAM_AGENT="claude", MEMD_DREAM_CONFINE="false")

        assert "warn" == check["verdict"]
        assert "unconfined" in check["message"]

    @pytest.mark.skipif(
        os.uname().machine not in ("x86_64", "aarch64"), reason="the filter's arch"
    )
    def test_a_service_filter_that_denies_landlock_is_named(self) -> None:
        """EPERM, as systemd's SystemCallFilter gives: named, not the kernel."""
        eperm = HIDE_LANDLOCK.replace("0x00050000 | 38", "0x00050000 | 1")
        check = _doctor(eperm, MEMD_DREAM_AGENT="claude")

        assert "fail" == check["verdict"]
        assert "a seccomp filter denies Landlock" in check["message"]
        assert "memd service install" in check["message"]

    @pytest.mark.skipif(
        os.uname().machine not in ("x86_64", "aarch64"), reason="the filter's arch"
    )
    def test_a_kernel_that_cannot_confine_it_fails(self) -> None:
        check = _doctor(HIDE_LANDLOCK, MEMD_DREAM_AGENT="claude")

        assert "fail" == check["verdict"]
        assert "no Landlock" in check["message"]
        assert "confine = false" in check["fix"]


class TestWhatTheAgentMayReach:
    def test_the_models_ports_come_from_its_urls_and_proxies(self) -> None:
        env = {
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:8123/v1",
            "OPENAI_BASE_URL": "https://api.example.com",
            "https_proxy": "proxy.example.com:3128",
            "HTTP_PROXY": "http://proxy.example.com",
            "OTHER_BASE_URL": "http://host:99999",  # no such port: ignored
            "HOME": "/home/someone",
        }

        assert (80, 443, 3128, 8123) == model_ports(env)

    def test_nothing_that_holds_memds_dirs_is_readable(self, tmp_path: Path) -> None:
        """A program beside memd's state is readable alone, never its folder."""
        home = tmp_path / "home"
        state = home / ".local" / "state" / "memd"
        state.mkdir(parents=True)
        tool = home / "bin" / "tool"
        tool.parent.mkdir()
        tool.write_text("#!/bin/sh\n")
        loose = home / "agent"
        loose.write_text("#!/bin/sh\n")

        rules = policy(
            str(state / "dream-staging" / "x"),
            [str(tool), str(loose)],
            os.defpath,
            protected=(str(state),),
        )

        readable = rules["read"] + rules["read_files"]
        assert str(home / "bin") in readable  # the tool's folder holds nothing
        assert str(loose) in readable  # the file alone: home holds memd's state
        assert not any(
            str(state).startswith(str(path) + os.sep) or str(path) == str(state)
            for path in readable
        )

    def test_an_agent_inside_protected_memory_is_refused(self, tmp_path: Path) -> None:
        memory = tmp_path / "projects" / "x" / "memory"
        memory.mkdir(parents=True)
        (memory / "agent").write_text("#!/bin/sh\n")

        with pytest.raises(Unconfinable, match="among memd's own files"):
            policy(
                str(tmp_path / "scratch"),
                [str(memory / "agent")],
                os.defpath,
                protected=(str(tmp_path / "projects"),),
            )

    def test_the_environment_keeps_the_models_and_drops_memds(self) -> None:
        protected = ("/home/u/.local/state/memd", "/run/user/1000")
        env = {
            "ANTHROPIC_API_KEY": "sk-x",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:8123",
            "MEMD_STATE_DIR": "/elsewhere",
            "XDG_RUNTIME_DIR": "/run/user/1000",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
            "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
            "SOME_TOOL_HOME": "/home/u/.local/state/memd/tool",
            "PATH": "/usr/bin:/run/user/1000/bin:/bin",
            "LANG": "C.UTF-8",
        }

        assert {
            "ANTHROPIC_API_KEY": "sk-x",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:8123",
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
        } == agent_environ(env, protected)


# Run by memd's own unit (as the user): is Landlock there, and does a confined
# probe find memd's state shut? Writes what it saw to argv[1] as JSON.
UNIT_CHECK = textwrap.dedent(
    """
    import json, subprocess, sys
    home, rules, scratch = sys.argv[2], sys.argv[3], sys.argv[4]
    sys.path.insert(0, home)
    import confine
    probe = (
        "import os, socket\\n"
        "for name, act in (('state', lambda: open(os.environ['SECRET']).read()),"
        " ('unix', lambda: socket.socket(socket.AF_UNIX)),"
        " ('shm', lambda: open('/dev/shm/x-' + str(os.getpid()), 'w'))):\\n"
        "    try:\\n"
        "        act(); print(name, 'REACHED')\\n"
        "    except OSError as error:\\n"
        "        print(name, 'DENIED', error.errno)\\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", confine.__file__, "--policy", rules, scratch, "--",
         sys.executable, "-c", probe],
        capture_output=True, text=True, cwd=scratch, timeout=60,
    )
    seen = {"abi": confine.landlock_abi(), "unsupported": confine.unsupported(),
            "stdout": done.stdout, "stderr": done.stderr, "status": done.returncode}
    open(sys.argv[1], "w").write(json.dumps(seen))
    """
)


class TestUnderMemdsService:
    """memd's own systemd unit lets the dream agent be confined (issue 41).

    `SystemCallFilter=@system-service` (systemd 252) lacks Landlock's system
    calls, so under the service Landlock was EPERM: the agent ran unconfined
    before, and would now be refused. The unit allows them; a real user
    manager runs memd's rendered unit (the program swapped for a check).
    """

    @pytest.mark.slow
    def test_the_agent_is_confined_under_the_unit(self, tmp_path: Path) -> None:
        from memd.service import units
        from tests.service.conftest import one_at_a_time
        from tests.service.usermanager import UserManager, why_unavailable

        unavailable = why_unavailable()
        if unavailable is not None:
            pytest.skip(f"no live systemd user manager: {unavailable}")
        with one_at_a_time("systemd-user-manager"):
            manager = UserManager(name=f"memdc{os.getpid() % 100000}")
            try:
                manager.start()
                seen = self._check(manager, units.render_systemd_unit("/x", {}))
            finally:
                manager.stop()

        assert seen["abi"] >= 4, seen
        assert "" == seen["unsupported"]
        assert 0 == seen["status"], seen["stderr"]
        verdicts = dict(line.split(" ", 1) for line in str(seen["stdout"]).splitlines())
        assert {"state": "DENIED 13", "unix": "DENIED 13", "shm": "DENIED 13"} == (
            verdicts
        )

    def _check(self, manager: Any, unit: str) -> dict[str, Any]:
        home = Path(manager.home)
        state = home / ".local" / "state" / "memd"
        scratch = state / "dream-staging" / "check"
        secret = state / "secret"
        manager.write(secret, "memd's\n")
        manager.write(scratch / "keep", "")
        manager.write(home / "confine.py", Path(confine_module.__file__).read_text())
        manager.write(home / "check.py", UNIT_CHECK)
        rules = policy(
            str(scratch),
            ["/usr/bin/python3", "-c", "x"],
            "/usr/bin:/bin",
            protected=(str(state),),
        )
        result = home / "result.json"
        exec_start = (
            f"ExecStart=/usr/bin/python3 -I {home / 'check.py'} {result} {home} "
            f"'{json.dumps(rules)}' {scratch}"
        )
        text = unit.replace("ExecStart=/x run", exec_start)
        text = text.replace("Type=notify", "Type=oneshot").replace(
            "WatchdogSec=60s\n", ""
        )
        text = text.replace(
            "[Service]\n", f"[Service]\nEnvironment=SECRET={secret}\n", 1
        )
        manager.write(home / ".config/systemd/user/memd-check.service", text)
        manager.run("systemctl", "--user", "daemon-reload")
        started = manager.run(
            "systemctl", "--user", "start", "memd-check.service", timeout=120
        )
        assert 0 == started.returncode, started.stderr
        return dict(json.loads(result.read_text()))
