"""A real systemd user manager for a throwaway user, without PID-1 systemd.

As root: mark the machine as systemd-booted (`/run/systemd/system`), add a
user with a `/run/user/UID` runtime dir, give it a delegated child cgroup in
every mounted hierarchy memd's user manager needs (cgroup2, and v1
`name=systemd` on a hybrid host), then start `systemd --user` as that user
from a shell that first moved itself into those cgroups. `systemctl --user`
reaches it over `$XDG_RUNTIME_DIR/systemd/private`, with no D-Bus. Everything
is undone in reverse order.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

SYSTEMD_BINARIES = ("/lib/systemd/systemd", "/usr/lib/systemd/systemd")
BOOTED_MARKER = Path("/run/systemd/system")


def why_unavailable() -> str | None:
    """Return why this machine cannot run a user manager here, or None if it can."""
    if os.geteuid() != 0:
        return "needs root to add a user and delegate a cgroup"
    if systemd_binary() is None or shutil.which("systemctl") is None:
        return f"no systemd binary ({' or '.join(SYSTEMD_BINARIES)}) or systemctl"
    for tool in ("useradd", "userdel", "setpriv"):
        if shutil.which(tool) is None:
            return f"no {tool} to make and run as a throwaway user"
    hierarchies = cgroup_hierarchies()
    if not hierarchies:
        return "no cgroup2 or name=systemd cgroup hierarchy is mounted"
    for root in hierarchies:
        probe = root / f"memd-probe-{os.getpid()}"
        try:
            probe.mkdir()
            probe.rmdir()
        except OSError as error:
            return f"cgroup hierarchy {root} is not writable ({error.strerror})"
    return None


def systemd_binary() -> str | None:
    return next((path for path in SYSTEMD_BINARIES if os.access(path, os.X_OK)), None)


def cgroup_hierarchies() -> list[Path]:
    """Return the mount points of cgroup2 and of the v1 `name=systemd` hierarchy."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as mounts:
        for line in mounts:
            before, _, after = line.partition(" - ")
            fstype, _, options = after.split(" ", 2)
            point = Path(before.split(" ")[4])
            if fstype == "cgroup2" or (
                fstype == "cgroup" and "name=systemd" in options.split(",")
            ):
                found.append(point)
    return found


@dataclass
class UserManager:
    """A running `systemd --user` for a throwaway user; `run` acts as that user."""

    name: str
    extra_path: str = ""  # put in front of PATH for commands run as the user
    uid: int = -1
    home: Path = Path()
    runtime: Path = Path()
    cgroups: list[Path] = field(default_factory=list)
    manager: subprocess.Popen[bytes] | None = None
    made_marker: bool = False

    def env(self) -> dict[str, str]:
        path = (
            f"{self.extra_path}:/usr/bin:/bin" if self.extra_path else "/usr/bin:/bin"
        )
        return {
            "HOME": str(self.home),
            "USER": self.name,
            "LOGNAME": self.name,
            "XDG_RUNTIME_DIR": str(self.runtime),
            "PATH": path,
            "LANG": "C.UTF-8",
        }

    def as_user(self, *argv: str) -> list[str]:
        """Return `argv` run as the user with a clean environment (no root's vars)."""
        switch = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}"]
        environ = [f"{key}={value}" for key, value in self.env().items()]
        return [*switch, "--init-groups", "env", "-i", *environ, *argv]

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.as_user(*argv),
            capture_output=True,
            text=True,
            check=False,
            cwd=self.home,
            timeout=timeout,
        )

    def write(self, path: Path, text: str) -> None:
        """Write `path` in the user's home, owned (like its new parents) by the user."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        for part in [path, *path.relative_to(self.home).parents]:
            os.chown(self.home / part, self.uid, self.uid)

    def show(self, unit: str, *props: str) -> dict[str, str]:
        """Return `systemctl --user show unit -p ...` as a dict."""
        result = self.run(
            "systemctl", "--user", "show", unit, *(f"--property={p}" for p in props)
        )
        return dict(
            line.partition("=")[::2] for line in result.stdout.splitlines() if line
        )

    def start(self) -> None:
        subprocess.run(["useradd", "--create-home", self.name], check=True)
        entry = pwd.getpwnam(self.name)
        self.uid, self.home = entry.pw_uid, Path(entry.pw_dir)
        if not BOOTED_MARKER.exists():
            BOOTED_MARKER.mkdir(parents=True)
            self.made_marker = True
        self.runtime = Path(f"/run/user/{self.uid}")
        self.runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chown(self.runtime, self.uid, entry.pw_gid)
        for root in cgroup_hierarchies():
            cgroup = root / f"memd-test-{self.name}"
            cgroup.mkdir()
            self.cgroups.append(cgroup)
            subprocess.run(["chown", "-R", f"{self.uid}:{entry.pw_gid}", str(cgroup)])
        # The shell joins the delegated cgroups, then becomes the user's manager.
        joins = "; ".join(f'echo $$ > "{c}/cgroup.procs"' for c in self.cgroups)
        script = (
            f"{joins}; exec {' '.join(self.as_user(str(systemd_binary()), '--user'))}"
        )
        self.manager = subprocess.Popen(
            ["sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            state = self.run("systemctl", "--user", "is-system-running").stdout.strip()
            if state in ("running", "degraded"):
                return
            if self.manager.poll() is not None:
                raise RuntimeError(f"systemd --user exited {self.manager.returncode}")
            time.sleep(0.1)
        raise RuntimeError(f"systemd --user did not come up (state {state!r})")

    def stop(self) -> None:
        if self.manager is not None and self.manager.poll() is None:
            self.manager.send_signal(signal.SIGTERM)
            try:
                self.manager.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.manager.kill()
                self.manager.wait()
        for cgroup in self.cgroups:
            _kill_and_remove(cgroup)
        if self.runtime != Path():
            shutil.rmtree(self.runtime, ignore_errors=True)
        if self.made_marker:
            with contextlib.suppress(OSError):
                BOOTED_MARKER.rmdir()
        if self.uid >= 0:
            subprocess.run(
                ["userdel", "--remove", self.name], capture_output=True, check=False
            )


def _kill_and_remove(cgroup: Path) -> None:
    """Kill whatever is left in `cgroup` and its children, then remove them."""
    for _ in range(50):
        dirs = sorted(
            (p for p in cgroup.rglob("*") if p.is_dir()),
            key=lambda p: len(p.parts),
            reverse=True,
        )
        for directory in [*dirs, cgroup]:
            with contextlib.suppress(OSError):
                for pid in (directory / "cgroup.procs").read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(OSError):
                directory.rmdir()
        if not cgroup.exists():
            return
        time.sleep(0.1)
