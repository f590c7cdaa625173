"""Personal sync end to end: three machines, one private bare remote, real git."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

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


def _init(machines: Machines) -> None:
    for machine in machines.all:
        done = machine.memd("sync", "init", "--remote", machines.url)
        assert 0 == done.returncode, done.stdout + done.stderr


class TestConvergence:
    def test_edits_on_each_machine_reach_every_other(self, machines: Machines) -> None:
        """Linux, Mac-like and container clones at different paths converge."""
        linux, mac, container = machines.all
        linux.write("deploy.md", topic_text("deploy", "Deploys on Tuesdays."))
        linux.write("MEMORY.md", "- [Deploy](deploy.md) — when we ship\n")
        linux.write("logs/2026/12/2026-12-01.md", "- 10:00 linux note\n")
        _init(machines)  # linux pushes first, the others receive
        mac.write("testing.md", topic_text("testing"))
        synced(mac)
        container.write("logs/2026/12/2026-12-02.md", "- 09:00 container note\n")
        synced(container)
        for machine in machines.all:
            synced(machine)

        expected = linux.files()
        assert {
            "MEMORY.md",
            "deploy.md",
            "testing.md",
            "logs/2026/12/2026-12-01.md",
            "logs/2026/12/2026-12-02.md",
        } <= set(expected)
        for machine in machines.all:
            assert machine.memory_dir == machine.expected_memory_dir()
            assert expected == machine.files()
            assert not any(p.is_symlink() for p in machine.memory_dir.rglob("*"))
        remote = machines.remote_files()
        assert IDENTITY in json.loads(remote["manifest.json"])["projects"]
        assert all(n == "manifest.json" or n.startswith(FOLDER) for n in remote)

    def test_a_new_machine_receives_everything(self, machines: Machines) -> None:
        """A machine that never saw the project gets its memory at its first sync."""
        linux, mac, _ = machines.all
        linux.write("a.md", topic_text("a"))
        linux.write("MEMORY.md", "- [A](a.md) — a\n")
        assert 0 == linux.memd("sync", "init", "--remote", machines.url).returncode

        done = mac.memd("sync", "init", "--remote", machines.url)

        assert 0 == done.returncode, done.stderr
        assert f"received {IDENTITY}" in done.stdout
        assert linux.files() == mac.files()

    def test_a_conflict_keeps_both_sides_and_the_index_is_a_union(
        self, machines: Machines
    ) -> None:
        """Both edited deploy.md and the index: both versions and all entries stay."""
        linux, mac, _ = machines.all
        linux.write("deploy.md", topic_text("deploy", "base"))
        linux.write("MEMORY.md", "- [Deploy](deploy.md) — when\n")
        _init(machines)
        linux.write("deploy.md", topic_text("deploy", "Tuesdays, says linux."))
        linux.write("MEMORY.md", "- [Deploy](deploy.md) — when\n- [L](l.md) — l\n")
        linux.write("l.md", topic_text("l"))
        mac.write("deploy.md", topic_text("deploy", "Thursdays, says mac."))
        mac.write("MEMORY.md", "- [Deploy](deploy.md) — when\n- [M](m.md) — m\n")
        mac.write("m.md", topic_text("m"))
        synced(linux)
        done = synced(mac)
        synced(linux)

        assert "conflict: theirs written as" in done.stdout
        for machine in (linux, mac):
            everything = "".join(machine.files().values())
            assert "Tuesdays, says linux." in everything
            assert "Thursdays, says mac." in everything
            index = machine.read("MEMORY.md")
            assert "(l.md)" in index
            assert "(m.md)" in index
            assert "from-linux" in index
        assert linux.files() == mac.files()

    def test_a_delete_against_an_edit_keeps_the_edit(self, machines: Machines) -> None:
        """One machine deletes a file the other changed: the change survives."""
        linux, mac, _ = machines.all
        linux.write("x.md", topic_text("x", "old"))
        _init(machines)
        (linux.expected_memory_dir() / "x.md").unlink()
        mac.write("x.md", topic_text("x", "edited on mac"))
        synced(linux)
        synced(mac)
        synced(linux)

        assert "edited on mac" in linux.read("x.md") == mac.read("x.md")

    def test_a_project_memd_was_not_told_about_this_run_still_follows(
        self, machines: Machines
    ) -> None:
        """An attached dir is merged into even when its project is not listed."""
        linux, mac, _ = machines.all
        linux.write("x.md", topic_text("x", "old"))
        _init(machines)
        mac.write("x.md", topic_text("x", "new on mac"))
        synced(mac)

        done = linux.memd("sync", MEMD_WATCH_PROJECTS="")
        synced(linux)  # listed again: its files are not committed back as edits
        synced(mac)

        assert 0 == done.returncode, done.stderr
        assert "new on mac" in linux.read("x.md")
        assert "new on mac" in mac.read("x.md")


class TestNeverLeaves:
    def test_a_secret_is_refused_and_named_with_file_and_line(
        self, machines: Machines
    ) -> None:
        """A token in a topic file never reaches the remote; status names the line."""
        linux = machines.all[0]
        token = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105 -- the test secret
        linux.write("creds.md", topic_text("creds", f"The CI token is {token}."))
        linux.write("ok.md", topic_text("ok"))

        done = linux.memd("sync", "init", "--remote", machines.url)
        status = linux.memd("sync", "status")

        assert 0 == done.returncode
        assert token not in "".join(machines.remote_files().values())
        assert f"{FOLDER}ok.md" in machines.remote_files()
        assert "creds.md: line 6: likely secret (github-token" in status.stdout
        lint = linux.memd("lint", "--format", "json", str(linux.memory_dir))
        diagnostics = json.loads(lint.stdout)["diagnostics"]
        found = [d for d in diagnostics if d["code"] == "S001"]
        assert [("creds.md", 6)] == [(Path(d["path"]).name, d["line"]) for d in found]

    def test_team_memory_never_goes_to_the_personal_remote(
        self, machines: Machines
    ) -> None:
        """memory/team/ is left out of personal sync, and a team remote is refused."""
        linux = machines.all[0]
        linux.write("team/shared.md", topic_text("shared"))
        linux.write("mine.md", topic_text("mine"))
        assert 0 == linux.memd("sync", "init", "--remote", machines.url).returncode

        assert not any("team/" in n for n in machines.remote_files())
        team_remote = machines.remote.parent / "team.git"
        git("init", "-q", "--bare", str(team_remote), cwd=machines.remote.parent)
        mac = machines.all[1]
        assert (
            0
            == mac.memd(
                "team",
                "init",
                "--remote",
                str(team_remote),
                "--project",
                str(mac.project),
            ).returncode
        )
        refused = mac.memd("sync", "init", "--remote", str(team_remote))
        assert 2 == refused.returncode
        assert "team remote" in refused.stderr

    def test_personal_sync_is_off_until_init(self, machines: Machines) -> None:
        """Before `memd sync init`, nothing is pushed and `memd sync` says so."""
        linux = machines.all[0]
        linux.write("mine.md", topic_text("mine"))

        done = linux.memd("sync")

        assert 2 == done.returncode
        assert "personal sync is off" in done.stderr
        assert {} == machines.remote_files()


class TestHostileRemote:
    @pytest.mark.parametrize(
        "bad",
        [
            "team/post-merge.md",  # team memory in a personal remote
            "notes/.hidden.md",
            "a\u2215b.md",  # a division slash: a separator to a person
            "run.sh",
        ],
    )
    def test_a_tree_with_a_bad_path_is_refused_whole(
        self, machines: Machines, bad: str
    ) -> None:
        """A pushed tree with one path outside the rule writes nothing at all."""
        linux, mac, _ = machines.all
        linux.write("a.md", topic_text("a"))
        _init(machines)
        before = mac.files()
        evil = machines.remote.parent / "evil"
        git("clone", "-q", machines.url, str(evil), cwd=machines.remote.parent)
        (evil / FOLDER / "fine.md").write_text(topic_text("fine"))
        (evil / FOLDER / bad).parent.mkdir(parents=True, exist_ok=True)
        (evil / FOLDER / bad).write_text("#!/bin/sh\n")
        git("add", "-f", ".", cwd=evil)
        git(
            "-c",
            "user.name=e",
            "-c",
            "user.email=e@e",
            "commit",
            "-q",
            "-m",
            "x",
            cwd=evil,
        )
        git("push", "-q", "origin", "main", cwd=evil)

        done = mac.memd("sync")

        assert 1 == done.returncode
        assert "refused whole" in done.stdout
        assert before == mac.files()
        assert not (mac.expected_memory_dir() / "fine.md").exists()
        assert not (mac.expected_memory_dir() / bad).exists()


class TestKilled:
    def test_sigkill_at_every_write_point_tears_nothing(
        self, machines: Machines
    ) -> None:
        """Kill `memd sync` at each write point in turn; the next sync converges."""
        linux, mac, _ = machines.all
        linux.write("base.md", topic_text("base"))
        _init(machines)
        expected: dict[str, str] = {}
        point = 1
        while True:
            name = f"linux-{point}.md"
            linux.write(name, topic_text(name))
            expected[name] = topic_text(name)
            mac.write(f"mac-{point}.md", topic_text(f"mac {point}"))
            expected[f"mac-{point}.md"] = topic_text(f"mac {point}")
            synced(linux)
            done = mac.memd("sync", MEMD_TEST_CRASH_AT=str(point))
            for path in mac.expected_memory_dir().rglob("*.md"):
                text = path.read_text("utf-8")
                assert text.startswith("---\n") or path.name == "MEMORY.md", path
            if done.returncode == 0:
                break
            assert -9 == done.returncode, done.stderr
            point += 1
        synced(mac)
        synced(linux)

        assert point > 4  # the run passed several write points before finishing
        rounds = os.environ.get("CRASH_ROUNDS_FILE")  # as tests/reliability's harness
        if rounds:
            with open(rounds, "a", encoding="utf-8") as out:
                out.write(f"personal sync: {point - 1} killed, 1 unkilled\n")
        for machine in (linux, mac):
            files = machine.files()
            assert expected == {k: v for k, v in files.items() if k in expected}
        assert linux.files() == mac.files()
        git("fsck", "--no-dangling", cwd=mac.root / "state" / "memd" / "sync" / "repo")


class TestDaemon:
    def test_memd_run_syncs_by_itself(self, machines: Machines) -> None:
        """A real `memd run` pushes a save without anyone running `memd sync`."""
        linux = machines.all[0]
        linux.write("first.md", topic_text("first"))
        assert 0 == linux.memd("sync", "init", "--remote", machines.url).returncode
        process = linux.popen(
            "run", MEMD_SYNC_INTERVAL_SECONDS="1", MEMD_SYNC_SETTLE_SECONDS="0.2"
        )
        try:
            linux.write("later.md", topic_text("later"))
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                if f"{FOLDER}later.md" in machines.remote_files():
                    break
                time.sleep(0.5)
        finally:
            process.terminate()
            _out, err = process.communicate(timeout=60)

        assert f"{FOLDER}later.md" in machines.remote_files(), err[-3000:]
        assert 0 == process.returncode


def test_nothing_but_the_state_dir_holds_a_repository(machines: Machines) -> None:
    """Personal sync keeps its git repository in the state dir, never in memory."""
    linux = machines.all[0]
    linux.write("a.md", topic_text("a"))
    assert 0 == linux.memd("sync", "init", "--remote", machines.url).returncode

    assert not (linux.memory_dir / ".git").exists()
    assert (linux.root / "state" / "memd" / "sync" / "repo" / ".git").is_dir()
    assert [] == [p for p in Path(linux.memory_dir).rglob("*") if p.is_symlink()]


class TestOneDreamPerNight:
    def test_the_first_machine_to_claim_a_night_dreams_the_other_steps_aside(
        self, machines: Machines
    ) -> None:
        """Claims per night go through the remote; the first pushed one wins."""
        from memd.sync.claims import claim_path, may_dream

        linux, mac, _ = machines.all
        linux.write("logs/2026/12/2026-12-01.md", "- 10:00 a note\n")
        _init(machines)

        def ask(machine: Machine, night: str) -> bool:
            return may_dream(
                str(machine.root / "state" / "memd"),
                str(machine.expected_memory_dir()),
                night,
                branch="main",
                timeout_seconds=60,
                sync=lambda: synced(machine),
            )

        assert ask(linux, "2026-12-01")
        assert not ask(mac, "2026-12-01")
        assert ask(mac, "2026-12-02")
        assert not ask(linux, "2026-12-02")
        assert ask(linux, "2026-12-01")  # asking again keeps the answer
        remote = machines.remote_files()
        assert {claim_path(IDENTITY, n) for n in ("2026-12-01", "2026-12-02")} <= set(
            remote
        )


class TestSessionStartPull:
    def test_a_new_machines_first_session_pulls_its_memory_first(
        self, machines: Machines
    ) -> None:
        """SessionStart syncs when the last sync is old; right after, it does not."""
        linux, mac, _ = machines.all
        linux.write("a.md", topic_text("a", "from linux"))
        assert 0 == linux.memd("sync", "init", "--remote", machines.url).returncode
        unknown = {"MEMD_WATCH_PROJECTS": ""}  # memd has not seen the project
        assert (
            0
            == mac.memd("sync", "init", "--remote", machines.url, **unknown).returncode
        )
        record = mac.root / "state" / "memd" / "sync.json"
        os.utime(record, (time.time() - 3600, time.time() - 3600))
        first = session_start(mac, **unknown)
        pulled_at = record.stat().st_mtime_ns
        second = session_start(mac, **unknown)

        assert (0, 0) == (first.returncode, second.returncode), first.stderr
        assert "from linux" in mac.read("a.md")
        assert pulled_at == record.stat().st_mtime_ns  # not due again
