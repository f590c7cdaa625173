"""A real `memd run` subprocess with its own HOME and XDG dirs, and helpers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memd.snapshot.build import load_and_build
from memd.snapshot.publish import SnapshotStore
from memd.snapshot.store import encode_prompt
from memd.statkey import stat_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conftest import Home

TIMEOUT = 30.0
MEMD = (sys.executable, "-m", "memd")


def wait_for(
    predicate: Callable[[], object], *, timeout: float = TIMEOUT, what: str = ""
) -> object:
    """Poll `predicate` until it returns something truthy; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what or predicate}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


def topic(name: str, *, type_: str = "user", body: str = "Fact.\n") -> str:
    """A valid topic file."""
    return (
        f"---\nname: {name}\ndescription: A memory about {name} for the daemon tests\n"
        f"type: {type_}\n---\n{body}"
    )


@dataclass
class Daemon:
    """One running `memd run` and the means to observe it."""

    home: Home
    proc: subprocess.Popen[bytes]
    sock: socket.socket
    log_path: Path
    env: dict[str, str]
    store: SnapshotStore = field(init=False)
    messages: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.store = SnapshotStore(str(self.home.cache / "memd"))

    def wait_notify(self, text: str) -> str:
        """Receive datagrams until one contains `text`; return it."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for message in self.messages:
                if text in message:
                    return message
            exited = (
                self.proc.poll() is not None
            )  # checked before reading: drain what it sent
            self.sock.settimeout(max(0.01, min(0.5, deadline - time.monotonic())))
            try:
                self.messages.append(self.sock.recv(4096).decode())
                continue
            except TimeoutError:
                pass
            if exited:
                pytest.fail(
                    f"memd run exited {self.proc.returncode}:\n{self.log_text()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"no {text!r} from memd run:\n{self.log_text()}")

    def is_fresh(self, memory: Path, mode: str = "standard") -> bool:
        """True when the published snapshot equals a fresh render of `memory`.

        Every recorded input (each topic file's size, mtime and inode) must
        also stat the same, so a change the prompt text does not show still
        has to reach the snapshot. (The racy-clean rule is tested on its own.)
        """
        found = self.store.read(str(memory), mode)
        if found is None:
            return False
        meta, data = found
        inputs = meta["inputs"]
        assert isinstance(inputs, list)
        if any(
            stat_key(path) != (size, mtime_ns, inode)
            for size, mtime_ns, inode, path in inputs
        ):
            return False
        return data == encode_prompt(load_and_build(str(memory), mode).text)

    def wait_fresh(
        self, memory: Path, mode: str = "standard", *, config_text: str | None = None
    ) -> None:
        """Wait until the daemon's snapshot of `memory` matches a fresh render.

        Then check it against an independent render too: a `memd prompt`
        subprocess with an empty cache and state of its own, so the daemon
        is compared with the CLI's cold path, not with the library call
        `is_fresh` makes in this process. `config_text`: the config the daemon
        still runs with when the file on disk is not it (a rejected reload).
        """
        self.assert_alive()
        wait_for(
            lambda: self.is_fresh(memory, mode), what=f"fresh snapshot of {memory}"
        )
        found = self.store.read(str(memory), mode)
        assert found is not None
        cold = self.cold_prompt(memory, mode, config_text=config_text)
        assert cold == found[1], f"{memory} ({mode})"
        self.assert_alive()

    def cold_prompt(
        self, memory: Path, mode: str = "standard", *, config_text: str | None = None
    ) -> bytes:
        """The prompt a fresh `memd prompt` process renders for `memory`, no cache."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="memd-cold-") as scratch:
            env = {
                **self.env,
                "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": str(memory),
                "XDG_CACHE_HOME": os.path.join(scratch, "cache"),
                "XDG_STATE_HOME": os.path.join(scratch, "state"),
            }
            env.pop("NOTIFY_SOCKET", None)
            if config_text is not None:
                config = Path(scratch, "config", "memd")
                config.mkdir(parents=True)
                (config / "config.toml").write_text(config_text)
                env["XDG_CONFIG_HOME"] = str(config.parent)
            done = subprocess.run(
                [*MEMD, "prompt", "--mode", mode],
                env=env,
                cwd=scratch,
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        assert 0 == done.returncode, done.stderr.decode(errors="replace")
        return done.stdout

    def assert_alive(self) -> None:
        if self.proc.poll() is not None:
            pytest.fail(f"memd run exited {self.proc.returncode}:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def events(self, name: str) -> list[dict[str, object]]:
        """Return the JSON log records with event `name`."""
        found = []
        for line in self.log_text().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") == name:
                    found.append(record)
        return found

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send `signum` and return the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        try:
            return self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"memd run ignored signal {signum}:\n{self.log_text()}")

    def status(self) -> dict[str, object]:
        """`memd status --format json`, parsed."""
        done = self.memd("status", "--format", "json")
        assert 0 == done.returncode, done.stderr
        status = json.loads(done.stdout)
        assert isinstance(status, dict)
        return status

    def memd(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run another memd command in the same environment."""
        return subprocess.run(
            [*MEMD, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )


@dataclass(frozen=True)
class Starter:
    """Starts daemons; each one is stopped at teardown."""

    home: Home
    started: list[Daemon]
    tmp: Path

    def __call__(
        self,
        *,
        wait_ready: bool = True,
        settle: str | None = "0.05",
        wrapper: tuple[str, ...] = (),
        **extra_env: str,
    ) -> Daemon:
        """Start `memd run` (behind `wrapper`, e.g. faketime); settle None: default."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = f"memd-test-{os.getpid()}-{os.urandom(6).hex()}"
        sock.bind("\0" + name)
        log_path = self.tmp / f"memd-run-{len(self.started)}.log"
        settings = {} if settle is None else {"MEMD_SETTLE_SECONDS": settle}
        env = self.home.env(NOTIFY_SOCKET="@" + name, **settings, **extra_env)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [*wrapper, *MEMD, "run"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        daemon = Daemon(self.home, proc, sock, log_path, env)
        self.started.append(daemon)
        if wait_ready:
            daemon.wait_notify("READY=1")
        return daemon


@pytest.fixture(name="start_daemon")
def _start_daemon(isolated_home: Home, tmp_path: Path) -> Iterator[Starter]:
    starter = Starter(isolated_home, [], tmp_path)
    yield starter
    for daemon in starter.started:
        if daemon.proc.poll() is None:
            daemon.proc.kill()
            daemon.proc.wait()
        daemon.sock.close()


@pytest.fixture(name="project")
def _project(isolated_home: Home) -> Path:
    """A memory dir under ~/.claude/projects with an index and one topic file."""
    memory = isolated_home.claude / "projects" / "-work-app" / "memory"
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text(topic("user_role"))
    (memory / "MEMORY.md").write_text("- [Role](user_role.md) — who the user is\n")
    backdate(memory)
    return memory


def backdate(*paths: Path, seconds: float = 60.0) -> None:
    """Move mtimes into the past, so start-up snapshots are not racily clean.

    Otherwise the daemon's re-stamp a second later would rebuild anyway and
    hide a change it failed to see.
    """
    then = time.time() - seconds
    for path in paths:
        for item in (path, *path.rglob("*")):
            os.utime(item, (then, then), follow_symlinks=False)


def chain(top: Path, depth: int) -> None:
    """Nest `depth` directories named `d` below `top`, relative to descriptors."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def unchain(top: Path) -> None:
    """Remove a `chain` from the bottom up, without recursion."""
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    try:
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


def overflow_queue(
    daemon: Daemon, directory: Path, *, then: Callable[[], object]
) -> None:
    """Overflow the daemon's inotify queue with events in `directory`, then `then()`.

    Stopped, the daemon cannot drain its queue. Each round makes at least two
    events (create, delete), so as many rounds as the queue holds overflow it.
    """
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    daemon.proc.send_signal(signal.SIGSTOP)
    try:
        for i in range(limit):
            name = f"f{i}.tmp"
            os.close(os.open(name, os.O_CREAT | os.O_WRONLY, dir_fd=fd))
            os.unlink(name, dir_fd=fd)
        then()
    finally:
        os.close(fd)
        daemon.proc.send_signal(signal.SIGCONT)


# One process renaming each project onto the next one just deleted, recreating
# the source: bench/soak.py's `_rename_storm`, unthrottled.
_STORM = """
import os, shutil, sys
dirs = sys.argv[1:]
body = "---\\nname: storm\\ndescription: a storm project\\ntype: user\\n---\\nx\\n"
while True:
    for i, source in enumerate(dirs):
        target, moving = dirs[(i + 1) % len(dirs)], source + ".moving"
        try:
            os.rename(source, moving)
            shutil.rmtree(target, ignore_errors=True)
            os.rename(moving, target)
            os.makedirs(os.path.join(source, "memory"))
            with open(os.path.join(source, "memory", "user_storm.md"), "w") as f:
                f.write(body)
        except OSError:
            continue
"""


@contextlib.contextmanager
def rename_storm(project_dirs: list[Path]) -> Iterator[subprocess.Popen[bytes]]:
    """Rename `project_dirs` onto each other in a tight loop, in another process."""
    storm = subprocess.Popen(
        [sys.executable, "-c", _STORM, *map(str, project_dirs)],
        stdin=subprocess.DEVNULL,
    )
    try:
        yield storm
    finally:
        storm.kill()
        storm.wait()
