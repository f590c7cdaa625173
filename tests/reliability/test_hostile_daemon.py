"""Hostile inputs against one running `memd run`: it lives, says why, stays correct."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.state import remember_project
from tests.conftest import NOBODY, Home, as_nobody
from tests.daemon.conftest import MEMD, Daemon, Starter, topic, wait_for
from tests.reliability.conftest import scale

pytestmark = [pytest.mark.daemon, pytest.mark.slow]

SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nMEMD-SECRET-b3f1c9e2d4a7\n"  # noqa: S105
SECRET_TOKEN = b"MEMD-SECRET-b3f1c9e2d4a7"
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a},*{a}]\n"
    for a, b in zip("abcdefghi", "bcdefghij", strict=True)
)


def _diagnosed(daemon: Daemon, memory: Path, relpath: str) -> list[str]:
    """Return the codes of the published snapshot's findings about `relpath`."""
    return [
        d.code
        for d in daemon.store.read_diagnostics(str(memory), "standard")
        if d.path == relpath
    ]


def _status(daemon: Daemon) -> dict[str, object]:
    return daemon.status()


def _dir_status(daemon: Daemon, memory: Path, pid: int) -> dict[str, object] | None:
    """Return the status entry of `memory` once it counts lint errors, else None."""
    status = _status(daemon)
    assert pid == status["pid"]
    dirs = status["dirs"]
    assert isinstance(dirs, dict)
    entry = dirs.get(str(memory)) or dirs.get(str(memory) + "/")
    return entry if entry and entry.get("lint_errors", 0) >= 1 else None


def _settle(daemon: Daemon, memory: Path, relpath: str) -> list[str]:
    """Wait for a fresh snapshot that has findings about `relpath`; return them."""
    daemon.wait_fresh(memory)
    wait_for(
        lambda: daemon.is_fresh(memory) and _diagnosed(daemon, memory, relpath),
        what=f"a finding about {relpath!r}",
    )
    daemon.assert_alive()
    return _diagnosed(daemon, memory, relpath)


def _alias_bomb(memory: Path) -> str:
    (memory / "bomb.md").write_text(f"---\n{BOMB}---\nbody\n")
    return "bomb.md"


def _huge(memory: Path) -> str:
    with open(memory / "huge.md", "w") as f:
        f.write(topic("huge", body=""))
        line = "x" * 1023 + "\n"
        f.write(line * (50 * 1024))  # 50 MiB written at test time
    return "huge.md"


def _binary(memory: Path) -> str:
    (memory / "binary.md").write_bytes(bytes(range(256)) * 64)
    return "binary.md"


def _invalid_utf8(memory: Path) -> str:
    (memory / "latin1.md").write_bytes(
        b"---\nname: caf\xe9\ndescription: d\xff\xfe\ntype: user\n---\n\xc3\x28\n"
    )
    return "latin1.md"


def _odd_name(memory: Path) -> str:
    # NUL cannot occur in a POSIX file name (the kernel ends the path there),
    # so the oddest bytes possible are control characters and bad UTF-8.
    name = os.fsdecode(b"odd\x01\x7fname\xff.md")
    (memory / name).write_text("no frontmatter\n")
    return name


def _symlink_loop(memory: Path) -> str:
    (memory / "loop_a.md").symlink_to("loop_b.md")
    (memory / "loop_b.md").symlink_to("loop_a.md")
    return "loop_a.md"


def _bad_links(memory: Path) -> str:
    (memory / "MEMORY.md").write_text(
        "- [Role](user_role.md) — who the user is\n"
        "- [Up](../../secret.md) — escapes the directory\n"
        "- [Passwd](/etc/passwd) — absolute\n"
        "- [File](file:///etc/passwd) — a file URL\n"
    )
    return "MEMORY.md"


STEPS: tuple[Callable[[Path], str], ...] = (
    _alias_bomb,
    _huge,
    _binary,
    _invalid_utf8,
    _odd_name,
    _symlink_loop,
    _bad_links,
)


class TestHostileSequence:
    def test_each_input_survived_diagnosed_and_fresh(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """Seven hostile inputs, one daemon: after each it lives, reports, is right."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        pid = daemon.proc.pid
        for step in STEPS:
            relpath = step(project)
            codes = _settle(daemon, project, relpath)
            assert codes, f"{step.__name__}: no finding"
            entry = wait_for(
                lambda: _dir_status(daemon, project, pid), what="status with errors"
            )
            assert isinstance(entry, dict)
            assert "error" not in entry, step.__name__
        (project / "user_role.md").write_text(topic("user_role", body="Still here.\n"))
        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")

    def test_newline_in_a_name_is_never_served_warm(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """A name with a line break is reported; its snapshot is never served warm."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        name = "two\nlines.md"
        (project / name).write_text(topic("two"))
        wait_for(
            lambda: _diagnosed(daemon, project, name), what="a finding about the name"
        )
        # meta.txt cannot record the path, so the store refuses to serve it warm.
        assert None is daemon.store.read(str(project), "standard")
        assert None is daemon.store.read_fresh(str(project), "standard")
        (project / name).unlink()
        daemon.wait_fresh(project)
        assert [] == daemon.events("memory_dir_rebuild_failed")


class TestUndecodableNameRegression:
    def test_snapshot_json_readable_with_undecodable_file_name(
        self, tmp_path: Path
    ) -> None:
        """A name that is not UTF-8 keeps diagnostics.json and meta.json readable."""
        from memd.snapshot.build import load_and_build
        from memd.snapshot.publish import SnapshotStore

        memory = tmp_path / "memory"
        memory.mkdir()
        name = os.fsdecode(b"odd\xff.md")
        (memory / name).write_text("no frontmatter\n")
        (memory / "MEMORY.md").write_text("- [Odd](odd.md) — odd\n")
        store = SnapshotStore(str(tmp_path / "cache"))
        store.write(load_and_build(str(memory), "standard"))

        found = {
            d.code
            for d in store.read_diagnostics(str(memory), "standard")
            if d.path == name
        }
        meta = store.read_meta(str(memory), "standard")

        assert {"M001", "I006"} <= found
        assert meta is not None
        inputs = meta["inputs"]
        assert isinstance(inputs, list)
        assert str(memory / name) in {i["path"] for i in inputs}


def _leaks(roots: list[Path], token: bytes) -> list[str]:
    """Return every file under `roots` whose bytes contain `token`."""
    found = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink() and token in path.read_bytes():
                found.append(str(path))
    return found


class TestSecrets:
    def test_symlinked_key_never_leaks(
        self, start_daemon: Starter, project: Path, isolated_home: Home
    ) -> None:
        """A key reached by symlinks appears in no prompt, snapshot, status or log."""
        ssh = isolated_home.home / ".ssh"
        ssh.mkdir()
        (ssh / "id_rsa").write_text(SECRET)
        daemon = start_daemon()
        daemon.wait_fresh(project)
        (project / "key.md").symlink_to(ssh / "id_rsa")
        (project / "keys").symlink_to(ssh)
        (project / "rel.md").symlink_to("../../../.ssh/id_rsa")
        (project / "MEMORY.md").write_text(
            "- [Role](user_role.md) — who the user is\n"
            "- [Key](key.md) — a key\n- [Keys](keys/id_rsa) — keys\n"
            "- [Up](../../../.ssh/id_rsa) — up\n"
        )
        codes = _settle(daemon, project, "key.md")
        assert codes
        daemon.stop()

        leaks = _leaks(
            [isolated_home.cache, isolated_home.state, isolated_home.runtime],
            SECRET_TOKEN,
        )
        assert [] == leaks
        assert SECRET_TOKEN not in daemon.log_path.read_bytes()


class TestProjectSettings:
    def test_committed_settings_cannot_move_memory(
        self,
        start_daemon: Starter,
        isolated_home: Home,
        git_repo: Path,
        tmp_path: Path,
    ) -> None:
        """`.claude/settings.json` naming another memory dir is ignored."""
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "MEMORY.md").write_text("- [E](e.md) — must not be watched\n")
        (elsewhere / "e.md").write_text(topic("e"))
        (git_repo / ".claude").mkdir()
        (git_repo / ".claude" / "settings.json").write_text(
            json.dumps({"autoMemoryDirectory": str(elsewhere)})
        )
        remember_project(str(isolated_home.state / "memd"), str(git_repo))
        memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- [R](r.md) — the real one\n")
        (memory / "r.md").write_text(topic("r"))
        daemon = start_daemon()

        daemon.wait_fresh(memory)

        assert str(isolated_home.claude / "projects") in str(memory)
        assert None is daemon.store.read(str(elsewhere), "standard")
        dirs = _status(daemon)["dirs"]
        assert isinstance(dirs, dict)
        assert not [d for d in dirs if d.rstrip("/") == str(elsewhere)]


class TestDeletedWhileReading:
    def test_create_delete_churn(self, start_daemon: Starter, project: Path) -> None:
        """Files created and deleted in a tight loop while it rescans: no failure."""
        daemon = start_daemon()
        daemon.wait_fresh(project)
        stop = threading.Event()

        def churn() -> None:
            for i in range(scale(3000)):
                path = project / f"flicker_{i % 7}.md"
                path.write_text(topic(f"flicker_{i % 7}"))
                path.unlink()
            stop.set()

        thread = threading.Thread(target=churn)
        thread.start()
        while not stop.is_set():
            daemon.proc.send_signal(signal.SIGHUP)  # rediscover while churning
            stop.wait(0.05)
        thread.join()
        (project / "broken.md").write_text("no frontmatter\n")

        assert _settle(daemon, project, "broken.md")
        assert [] == daemon.events("memory_dir_rebuild_failed")
        assert not [
            d
            for d in daemon.store.read_diagnostics(str(project), "standard")
            if d.path.startswith("flicker_")
        ]


class TestUnreadable:
    def test_chmod_000_file_and_directory(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """Unreadable files and dirs are F005 findings for a daemon that is not root."""
        if os.geteuid() != 0 and os.geteuid() != NOBODY:
            pytest.skip("needs root to drop to nobody (root itself reads chmod 000)")
        base = Path(tempfile.mkdtemp(prefix="memd-nobody-"))
        try:
            self._run(isolated_home, base, tmp_path)
        finally:
            for path in base.rglob("*"):
                if not path.is_symlink():
                    path.chmod(0o755)
            shutil.rmtree(base)

    def _run(self, isolated_home: Home, base: Path, tmp_path: Path) -> None:
        home = Home(
            root=base,
            home=base / "home",
            claude=base / "home" / ".claude",
            config=base / "config",
            cache=base / "cache",
            state=base / "state",
            runtime=base / "runtime",
        )
        memory = home.claude / "projects" / "-work-locked" / "memory"
        memory.mkdir(parents=True)
        for path in (home.config, home.cache, home.state, home.runtime):
            path.mkdir()
        (memory / "MEMORY.md").write_text("- [Ok](ok.md) — readable\n")
        (memory / "ok.md").write_text(topic("ok"))
        (memory / "locked.md").write_text(topic("locked", body=SECRET))
        (memory / "vault").mkdir()
        (memory / "vault" / "inner.md").write_text(topic("inner", body=SECRET))
        base.chmod(0o755)
        for path in (base, *base.rglob("*")):
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        home.runtime.chmod(0o700)
        (memory / "locked.md").chmod(0o000)
        (memory / "vault").chmod(0o000)
        env = {
            **isolated_home.env(),
            "HOME": str(home.home),
            "XDG_CONFIG_HOME": str(home.config),
            "XDG_CACHE_HOME": str(home.cache),
            "XDG_STATE_HOME": str(home.state),
            "XDG_RUNTIME_DIR": str(home.runtime),
            "MEMD_MANAGED_SETTINGS_PATH": str(base / "managed-settings.json"),
            "MEMD_SETTLE_SECONDS": "0.05",
        }
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = f"memd-test-{os.getpid()}-{os.urandom(6).hex()}"
        sock.bind("\0" + name)
        env["NOTIFY_SOCKET"] = "@" + name
        log_path = tmp_path / "memd-nobody.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                as_nobody(*MEMD, "run"),
                env=env,
                cwd=base,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        daemon = Daemon(home, proc, sock, log_path, env)
        try:
            daemon.wait_notify("READY=1")
            render = subprocess.run(
                as_nobody(sys.executable, "-c", RENDER, str(memory)),
                env=env,
                cwd=base,
                capture_output=True,
                check=True,
            ).stdout
            wait_for(
                lambda: (
                    (daemon.store.read(str(memory), "standard") or ({}, b""))[1]
                    == render
                ),
                what="the snapshot to equal nobody's render",
            )
            daemon.assert_alive()
            diagnostics = daemon.store.read_diagnostics(str(memory), "standard")
            found = {(d.code, d.path) for d in diagnostics}
            assert {("F005", "locked.md"), ("F005", "vault")} <= found, found
            assert [] == _leaks([home.cache, home.state], SECRET_TOKEN)
        finally:
            daemon.stop()
            sock.close()


RENDER = (
    "import sys\n"
    "from memd.snapshot.build import load_and_build\n"
    "from memd.snapshot.store import encode_prompt\n"
    "text = load_and_build(sys.argv[1], 'standard').text\n"
    "sys.stdout.buffer.write(encode_prompt(text))\n"
)
