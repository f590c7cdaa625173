"""Personal sync: the fourth hardening round (#32) and the first ten minutes (#35).

Real machines (own HOME, installed `memd`), a real bare remote, and a remote
rewritten by plain git from an "evil" clone, as an attacker or a bad tool
would. Each class names the rule it pins.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memd.gitsync.scan import MAX_SCAN_FILES
from tests.sync.conftest import (
    FOLDER,
    IDENTITY,
    Machine,
    Machines,
    git,
    session_start,
    synced,
    topic_text,
)


def _init(machine: Machine, url: str, **extra: str) -> subprocess.CompletedProcess[str]:
    done = machine.memd("sync", "init", "--remote", url, **extra)
    assert 0 == done.returncode, done.stdout + done.stderr
    return done


def _evil_push(machines: Machines, change: object) -> None:
    """Clone the remote, let `change(clone)` edit it, commit everything and push."""
    evil = machines.remote.parent / f"evil-{time.monotonic_ns()}"
    git("clone", "-q", machines.url, str(evil), cwd=machines.remote.parent)
    change(evil)  # type: ignore[operator]
    git("add", "-A", "-f", ".", cwd=evil)
    git(
        *("-c", "user.name=e", "-c", "user.email=e@e"),
        *("commit", "-q", "--allow-empty", "-m", "rewritten"),
        cwd=evil,
    )
    git("push", "-q", "origin", "main", cwd=evil)


def _remote_names(machines: Machines) -> set[str]:
    """The paths on the remote's main, from one `ls-tree` (no read per file)."""
    listed = git("ls-tree", "-r", "-z", "--name-only", "main", cwd=machines.remote)
    return {name for name in listed.split("\0") if name}


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


class TestNeverDeletesWhatItDidNotSee:
    def test_a_file_deeper_than_the_scan_reaches_is_not_seen_not_deleted(
        self, machines: Machines
    ) -> None:
        """A file the walk does not reach stays on the remote, and is reported."""
        linux = machines.all[0]
        linux.write("a.md", topic_text("a"))
        _init(linux, machines.url)
        deep = "d1/d2/d3/d4/d5/d6/d7/d8/d9/deep.md"

        def add_deep(clone: Path) -> None:
            path = clone / FOLDER / deep
            path.parent.mkdir(parents=True)
            path.write_text(topic_text("deep"))

        _evil_push(machines, add_deep)
        synced(linux)  # receives it: written below the scan's depth
        done = synced(linux)
        synced(linux)

        assert f"{FOLDER}{deep}" in machines.remote_files()
        assert "not seen" in done.stdout
        assert (linux.expected_memory_dir() / deep).is_file()

    def test_files_past_the_file_cap_are_not_seen_not_deleted(
        self, machines: Machines
    ) -> None:
        """More files than the walk reads: the unread ones are never deletions."""
        linux = machines.all[0]
        logs = linux.expected_memory_dir() / "logs"
        first = datetime.date(1990, 1, 1)
        for n in range(MAX_SCAN_FILES):
            day = first + datetime.timedelta(days=n)
            path = logs / f"{day:%Y}" / f"{day:%m}" / f"{day.isoformat()}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"- 10:00 note {n}\n")
        _init(linux, machines.url)
        on_remote = _remote_names(machines)
        assert MAX_SCAN_FILES < len(on_remote)
        # The top folder is read first: these use up the walk's budget, so
        # some folders of logs go unread on the next sync.
        for n in range(2000):
            linux.write(f"scratch-{n}.md", "not a topic file\n")

        done = synced(linux)

        assert "deleted" not in done.stdout
        assert "not seen" in done.stdout
        assert on_remote == _remote_names(machines)

    def test_nested_identities_never_claim_each_others_files(
        self, tmp_path: Path, machines: Machines
    ) -> None:
        """host/infra and host/infra/terraform are two projects, not one prefix."""
        linux = machines.all[0]
        projects = []
        for name, url in (
            ("infra", "git@host.example:infra.git"),
            ("terraform", "git@host.example:infra/terraform.git"),
        ):
            project = linux.root / "src" / name
            project.mkdir(parents=True)
            git("init", "-q", cwd=project)
            git("remote", "add", "origin", url, cwd=project)
            projects.append(project)
        watch = {"MEMD_WATCH_PROJECTS": os.pathsep.join(map(str, projects))}
        munged = [
            linux.root
            / "home"
            / ".claude"
            / "projects"
            / "".join(c if c.isalnum() else "-" for c in str(p))
            / "memory"
            for p in projects
        ]
        for memory, name in zip(munged, ("infra", "terraform"), strict=True):
            memory.mkdir(parents=True)
            for n in range(5):
                (memory / f"{name}-{n}.md").write_text(topic_text(f"{name}-{n}"))

        _init(linux, machines.url, **watch)
        for _ in range(2):
            again = linux.memd("sync", **watch)

            assert 0 == again.returncode, again.stdout + again.stderr
            remote = _remote_names(machines)
            for n in range(5):
                assert f"projects/host.example/infra/infra-{n}.md" in remote
                assert (
                    f"projects/host.example/infra/terraform/terraform-{n}.md" in remote
                )
        assert all((munged[1] / f"terraform-{n}.md").is_file() for n in range(5))
        assert not (munged[0] / "terraform").exists()

    def test_a_remote_that_drops_every_file_stops_and_asks(
        self, machines: Machines
    ) -> None:
        """A rewritten remote deletes no local memory unless --allow-deletes."""
        linux, mac, _ = machines.all
        for name in ("a", "b", "c", "d", "e"):
            linux.write(f"{name}.md", topic_text(name))
        _init(linux, machines.url)
        _init(mac, machines.url)
        before = mac.files()

        def drop_all(clone: Path) -> None:
            for path in (clone / FOLDER).glob("*.md"):
                path.unlink()

        _evil_push(machines, drop_all)
        stopped = mac.memd("sync")

        assert 1 == stopped.returncode
        assert "--allow-deletes" in stopped.stdout
        assert before == mac.files()
        _no_traceback(stopped)

        allowed = mac.memd("sync", "--allow-deletes")

        assert 0 == allowed.returncode, allowed.stdout + allowed.stderr
        assert "deleted" in allowed.stdout
        assert {} == mac.files()

    def test_deleting_many_local_files_stops_and_asks(self, machines: Machines) -> None:
        """Four files gone here: the sync asks before it deletes them everywhere."""
        linux = machines.all[0]
        for name in ("a", "b", "c", "d", "e", "f", "g", "h", "i"):
            linux.write(f"{name}.md", topic_text(name))
        _init(linux, machines.url)
        for name in ("a", "b", "c", "d"):
            (linux.expected_memory_dir() / f"{name}.md").unlink()

        stopped = linux.memd("sync")

        assert 1 == stopped.returncode
        assert "--allow-deletes" in stopped.stdout
        assert f"{FOLDER}a.md" in machines.remote_files()
        assert 0 == linux.memd("sync", "--allow-deletes").returncode
        assert f"{FOLDER}a.md" not in machines.remote_files()


class TestBoundedArguments:
    def test_a_first_sync_of_thousands_of_logs_works(self, machines: Machines) -> None:
        """3,000 daily logs: no argument list or message grows with the file count."""
        linux = machines.all[0]
        logs = linux.expected_memory_dir() / "logs"
        start = time.mktime((2015, 1, 1, 12, 0, 0, 0, 0, -1))
        for n in range(3000):
            day = time.strftime("%Y-%m-%d", time.localtime(start + n * 86400))
            path = logs / day[:4] / day[5:7] / f"{day}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"- 10:00 note {n}\n")

        done = linux.memd("sync", "init", "--remote", machines.url)

        assert 0 == done.returncode, done.stdout + done.stderr
        assert 3000 == sum(1 for name in _remote_names(machines) if "/logs/" in name)


class TestRemoteJson:
    def test_a_deeply_nested_manifest_is_reported_never_a_crash(
        self, machines: Machines
    ) -> None:
        """RecursionError never: the manifest is "not valid", said in one line."""
        linux = machines.all[0]
        linux.write("a.md", topic_text("a"))
        _init(linux, machines.url)
        before = linux.files()

        _evil_push(
            machines, lambda clone: (clone / "manifest.json").write_text("[" * 200_000)
        )
        done = linux.memd("sync")

        assert 1 == done.returncode
        assert "manifest.json is not valid" in done.stdout
        assert before == linux.files()
        _no_traceback(done)

    def test_a_deeply_nested_dream_claim_never_ends_the_dream_pass(
        self, machines: Machines
    ) -> None:
        """A claim nested 200,000 deep is no claim: the machine may dream."""
        linux = machines.all[0]
        linux.write("a.md", topic_text("a"))
        _init(linux, machines.url)
        night = "2026-12-01"

        def deep_claim(clone: Path) -> None:
            path = clone / "dreams" / IDENTITY / f"{night}.json"
            path.parent.mkdir(parents=True)
            path.write_text('{"machine": ' + "[" * 200_000)

        _evil_push(machines, deep_claim)
        synced(linux)
        code = (
            "import datetime, sys\n"
            "from memd.config import load_config\n"
            "from memd.logconfig import get_logger\n"
            "from memd.sync.schedule import may_dream_here\n"
            "now = datetime.datetime(2026, 12, 1, 23, 0, tzinfo=datetime.UTC)\n"
            "print(may_dream_here(load_config(), sys.argv[1], now, log=get_logger()))\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(linux.expected_memory_dir())],
            env={**linux.env(), "MEMD_DREAM_TIMEZONE": "UTC"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

        assert 0 == done.returncode, done.stderr
        assert "True" in done.stdout
        _no_traceback(done)


def _silent_http_server() -> tuple[socket.socket, list[socket.socket]]:
    """A loopback server that accepts every connection and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return server, held


def _lock_is_free(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _git_children_of(repo: Path) -> list[str]:
    """Command lines of running processes that name `repo` (Linux /proc)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(repo).encode() in cmdline and b"git" in cmdline:
            found.append(cmdline.replace(b"\0", b" ").decode("utf-8", "replace"))
    return found


class TestSessionNeverWaitsOnTheNetwork:
    @pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
    def test_a_remote_that_never_answers_leaves_no_git_and_no_lock(
        self, machines: Machines
    ) -> None:
        """The hook gives up, says so, and no `git remote-http` keeps the lock."""
        linux = machines.all[0]
        linux.write("a.md", topic_text("a"))
        _init(linux, machines.url)
        repo = linux.root / "state" / "memd" / "sync" / "repo"
        server, held = _silent_http_server()
        port = server.getsockname()[1]
        git(
            "--git-dir",
            str(repo / ".git"),
            "config",
            "remote.origin.url",
            f"http://127.0.0.1:{port}/never.git",
            cwd=repo,
        )
        record = linux.root / "state" / "memd" / "sync.json"
        os.utime(record, (time.time() - 3600, time.time() - 3600))
        try:
            done = session_start(linux)
            lock_free = _lock_is_free(repo / ".git" / "memd" / "sync.lock")
            lingering = _git_children_of(repo)
        finally:
            server.close()
            for conn in held:
                conn.close()

        assert 0 == done.returncode, done.stderr
        assert held, "the pull never reached the remote"
        assert "personal sync did not finish" in done.stdout
        assert lock_free
        assert [] == lingering

    def test_with_a_daemon_running_the_hook_never_pulls(
        self, machines: Machines
    ) -> None:
        """The daemon keeps memory fresh: SessionStart does not sync at all."""
        linux = machines.all[0]
        linux.write("a.md", topic_text("a"))
        _init(linux, machines.url)
        record = linux.root / "state" / "memd" / "sync.json"
        stale = time.time() - 3600
        os.utime(record, (stale, stale))
        lock_dir = linux.root / "runtime" / "memd"
        lock_dir.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(lock_dir / "memd.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # what a running `memd run` holds
        try:
            done = session_start(linux)
        finally:
            os.close(fd)

        assert 0 == done.returncode, done.stderr
        assert stale == pytest.approx(record.stat().st_mtime, abs=1)


class TestPrivateRemoteIsNeverATeamRemote:
    @pytest.mark.parametrize("spelling", ["file", "symlink", "dotgit-slash"])
    def test_a_team_remote_spelled_another_way_is_refused(
        self, machines: Machines, tmp_path: Path, spelling: str
    ) -> None:
        """file://, a symlink or a trailing slash: the same repository, refused."""
        linux = machines.all[0]
        team_remote = tmp_path / "team.git"
        git("init", "-q", "--bare", str(team_remote), cwd=tmp_path)
        init = linux.memd(
            "team",
            "init",
            "--remote",
            str(team_remote),
            "--project",
            str(linux.project),
        )
        assert 0 == init.returncode, init.stdout + init.stderr
        if spelling == "file":
            personal = f"file://{team_remote}"
        elif spelling == "symlink":
            link = tmp_path / "mine.git"
            link.symlink_to(team_remote)
            personal = str(link)
        else:
            personal = f"{team_remote}/"

        done = linux.memd("sync", "init", "--remote", personal)

        assert 2 == done.returncode, done.stdout + done.stderr
        assert "team remote" in done.stderr
        _no_traceback(done)


class TestSmallTruths:
    def test_paths_names_where_a_pinned_identity_comes_from(
        self, machines: Machines
    ) -> None:
        """identity_from is the [sync.projects] key, even with a remote configured."""
        linux = machines.all[0]
        config = linux.root / "config" / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[sync.projects]\n"{linux.project}" = "pinned/app"\n')

        done = linux.memd("paths", "--format", "json", cwd=linux.project)

        assert 0 == done.returncode, done.stderr
        data = json.loads(done.stdout)
        assert ("pinned/app", "config", str(linux.project)) == (
            data["identity"],
            data["identity_source"],
            data["identity_from"],
        )


class TestTheFirstTenMinutes:
    def test_two_homes_sync_a_project_with_only_init_and_sync_run_inside_it(
        self, machines: Machines
    ) -> None:
        """No prompt, no hook, no watch list: running inside the project is enough."""
        linux, mac, _ = machines.all
        nothing = {"MEMD_WATCH_PROJECTS": ""}
        linux.write("a.md", topic_text("a", "from linux"))
        linux.write("MEMORY.md", "- [A](a.md) — a\n")

        first = linux.memd(
            "sync", "init", "--remote", machines.url, cwd=linux.project, **nothing
        )
        second = mac.memd(
            "sync", "init", "--remote", machines.url, cwd=mac.project, **nothing
        )
        mac.write("b.md", topic_text("b", "from mac"))
        assert 0 == mac.memd("sync", cwd=mac.project, **nothing).returncode
        assert 0 == linux.memd("sync", **nothing).returncode  # known from now on

        assert (0, 0) == (first.returncode, second.returncode), first.stdout
        assert "received" not in first.stdout
        assert f"shared {IDENTITY}" in first.stdout
        assert f"received {IDENTITY}" in second.stdout
        assert linux.files() == mac.files()
        assert "from mac" in linux.read("b.md")

    def test_status_lists_the_known_projects_and_how_to_add_one(
        self, machines: Machines
    ) -> None:
        linux = machines.all[0]
        _init(linux, machines.url)

        done = linux.memd("sync", "status")

        assert 0 == done.returncode, done.stderr
        assert f"project {IDENTITY}: " in done.stdout
        assert "to add a project: run `memd sync` inside a project" in done.stdout

    def test_an_over_budget_index_travels_and_held_back_links_do_not(
        self, machines: Machines
    ) -> None:
        """The index goes even over budget; an entry for a held-back file does not."""
        linux, mac, _ = machines.all
        lines = [f"- [N{n}](n{n}.md) — note {n}" for n in range(205)]
        for n in range(205):
            linux.write(f"n{n}.md", topic_text(f"n{n}"))
        token = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105 -- test secret
        linux.write("creds.md", topic_text("creds", f"token {token}"))
        index = "\n".join([*lines, "- [Creds](creds.md) — the CI token"]) + "\n"
        linux.write("MEMORY.md", index)

        _init(linux, machines.url)
        _init(mac, machines.url)

        assert index == linux.read("MEMORY.md")
        assert "\n".join(lines) + "\n" == mac.read("MEMORY.md")
        assert not (mac.expected_memory_dir() / "creds.md").exists()
