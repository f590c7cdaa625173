"""Team sync, hardening round four (#32): what it deletes, pushes and accepts."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.team.conftest import Member, Team, make_team, topic_text

TOKEN = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105 -- the test secret


def _synced(member: Member) -> subprocess.CompletedProcess[str]:
    done = member.sync()
    assert 0 == done.returncode, done.stdout + done.stderr
    return done


def _two(tmp_path: Path) -> Team:
    team = make_team(tmp_path, 2)
    for member in team.members:
        assert 0 == member.init(team.url).returncode
    return team


class TestDeletions:
    def test_deleting_many_team_files_stops_and_asks(self, tmp_path: Path) -> None:
        """Four team files gone at once: nothing is pushed until --allow-deletes."""
        team = _two(tmp_path)
        ana, bob = team.members
        for n in range(8):
            ana.write(f"t{n}.md", topic_text(f"t{n}"))
        _synced(ana)
        _synced(bob)
        for n in range(4):
            (ana.team / f"t{n}.md").unlink()

        stopped = ana.sync()

        assert 1 == stopped.returncode
        assert "--allow-deletes" in stopped.stdout
        assert "t0.md" in team.remote_files()
        allowed = ana.memd(
            "team", "sync", "--allow-deletes", "--project", str(ana.project)
        )
        assert 0 == allowed.returncode, allowed.stdout + allowed.stderr
        assert "t0.md" not in team.remote_files()
        done = _synced(bob)  # a teammate receives what the user agreed to
        assert "deleted" in done.stdout
        assert not (bob.team / "t0.md").exists()


class TestSecretGate:
    def test_the_bytes_pushed_are_scanned_whatever_lint_is_told(
        self, tmp_path: Path
    ) -> None:
        """S001 turned off in lint: the token still never reaches the team remote."""
        team = _two(tmp_path)
        ana = team.members[0]
        config = ana.root / "config" / "memd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[lint.severity]\nS001 = "off"\n')
        ana.write("ci.md", topic_text("ci", f"The CI token is {TOKEN}."))
        ana.write("ok.md", topic_text("ok"))

        done = _synced(ana)

        remote = team.remote_files()
        assert "ok.md" in remote
        assert TOKEN not in "".join(remote.values())
        assert "left out ci.md: line" in done.stdout


class TestPersonalRemote:
    def test_the_personal_remote_is_never_a_team_remote(self, tmp_path: Path) -> None:
        """`memd team init` with the personal remote, spelled as file://: refused."""
        team = make_team(tmp_path, 1)
        (ana,) = team.members
        personal = tmp_path / "personal.git"
        subprocess.run(["git", "init", "-q", "--bare", str(personal)], check=True)
        on = ana.memd("sync", "init", "--remote", str(personal))
        assert 0 == on.returncode, on.stdout + on.stderr

        done = ana.memd(
            "team",
            "init",
            "--remote",
            f"file://{personal}",
            "--project",
            str(ana.project),
        )

        assert 2 == done.returncode, done.stdout + done.stderr
        assert "personal sync remote" in done.stderr
        assert not (ana.memory_dir / "team" / ".git").exists()
