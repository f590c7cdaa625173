"""`memd team` with real git: a bare remote and three members, each its own memd."""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING

from memd.claude_code.paths import sanitize_path
from tests.team.conftest import git, make_team, memd_script, topic_text

if TYPE_CHECKING:
    from pathlib import Path

    from tests.team.conftest import Member, Team


def synced(member: Member) -> None:
    done = member.sync()
    assert done.returncode == 0, (done.stdout, done.stderr)


class TestSetup:
    def test_init_pushes_existing_files_then_clones_them(self, tmp_path: Path) -> None:
        """The first member's files reach the remote; the next init fetches them."""
        team = make_team(tmp_path, 2)
        ana, bob = team.members
        assert ana.init(team.url).returncode == 0
        ana.write("style.md", topic_text("style"))
        synced(ana)

        done = bob.init(team.url)

        assert 0 == done.returncode
        assert topic_text("style") == bob.read("style.md")
        assert {"style.md"} == set(team.remote_files())

    def test_init_over_existing_files_merges_unrelated_histories(
        self, tmp_path: Path
    ) -> None:
        """Bob already has his own x.md when he joins: both versions are kept."""
        team = make_team(tmp_path, 2)
        ana, bob = team.members
        assert ana.init(team.url).returncode == 0
        ana.write("x.md", topic_text("x", "Ana's x."))
        synced(ana)
        projects = bob.root / "home" / ".claude" / "projects"
        before = projects / sanitize_path(os.path.realpath(bob.project)) / "memory"
        (before / "team").mkdir(parents=True)
        (before / "team" / "x.md").write_text(topic_text("x", "Bob's own x."))

        done = bob.init(team.url)

        assert 0 == done.returncode, done.stderr
        assert topic_text("x", "Bob's own x.") == bob.read("x.md")
        assert topic_text("x", "Ana's x.") == bob.read("x.from-ana.md")

    def test_init_without_a_remote_is_one_line_and_exit_2(self, tmp_path: Path) -> None:
        """No --remote and nothing in config.toml: a usage error, no traceback."""
        (member,) = make_team(tmp_path, 1).members

        done = member.memd("team", "init", "--project", str(member.project))

        assert 2 == done.returncode
        assert [
            "memd: no remote: pass --remote URL or set [team.remotes] for this project"
        ] == done.stderr.splitlines()

    def test_init_reads_the_remote_from_config(self, tmp_path: Path) -> None:
        """[team.remotes] in config.toml names the remote for a project."""
        team = make_team(tmp_path, 1)
        (member,) = team.members
        config = member.root / "config" / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'[team.remotes]\n"{member.project}" = "{team.url}"\n')

        done = member.memd("team", "init", "--project", str(member.project))

        assert 0 == done.returncode, done.stderr
        assert team.url == git("config", "remote.origin.url", cwd=member.team).strip()

    def test_sync_before_init_is_one_line_and_exit_2(self, tmp_path: Path) -> None:
        """A project whose team dir is not shared: a usage error, no traceback."""
        (member,) = make_team(tmp_path, 1).members

        done = member.sync()

        assert 2 == done.returncode
        assert 1 == len(done.stderr.splitlines())
        assert done.stderr.endswith("not a team repository (run `memd team init`)\n")

    def test_memd_config_never_prints_a_token(self, tmp_path: Path) -> None:
        """[team.remotes] with a token in a URL: `memd config` shows it redacted."""
        (member,) = make_team(tmp_path, 1).members
        config = member.root / "config" / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            f'[team.remotes]\n"{member.project}" = "https://x:tok3n@example.org/m.git"\n'
        )

        done = member.memd("config")

        assert 0 == done.returncode, done.stderr
        assert "tok3n" not in done.stdout
        assert "https://***@example.org/m.git" in done.stdout

    def test_status_shows_remote_branch_and_counts(self, team: Team) -> None:
        """`memd team status` names the remote, the branch and ahead/behind."""
        ana = team.members[0]
        ana.write("a.md", topic_text("a"))
        synced(ana)

        lines = ana.memd("team", "status", "--project", str(ana.project)).stdout

        assert f"  remote: {team.url}" in lines.splitlines()
        assert "  branch: main" in lines.splitlines()
        assert "  ahead/behind: 0/0" in lines.splitlines()
        assert "  conflicts waiting: 0" in lines.splitlines()


class TestConcurrentEdits:
    def test_different_files_from_three_members_all_arrive(self, team: Team) -> None:
        """Three members sync at once; after one more round everyone has every file."""
        for member in team.members:
            member.write(f"{member.name}.md", topic_text(member.name))
        running = [
            member.popen("team", "sync", "--project", str(member.project))
            for member in team.members
        ]
        outputs = [process.communicate(timeout=120) for process in running]
        codes = [process.returncode for process in running]
        for member in team.members:
            synced(member)
        for member in team.members:
            synced(member)

        assert [0, 0, 0] == codes, outputs
        expected = {"ana.md", "bob.md", "cy.md"}
        assert expected == set(team.remote_files())
        for member in team.members:
            assert expected <= {p.name for p in member.team.iterdir()}

    def test_same_file_keeps_ours_and_writes_theirs_beside_it(self, team: Team) -> None:
        """Both change rules.md: ana keeps hers and gets bob's as a linked copy."""
        ana, bob, _ = team.members
        ana.write("rules.md", topic_text("rules", "Original."))
        ana.write("MEMORY.md", "# Team\n- [Rules](rules.md) — the rules\n")
        synced(ana)
        synced(bob)
        bob.write("rules.md", topic_text("rules", "Bob's version."))
        ana.write("rules.md", topic_text("rules", "Ana's version."))
        synced(bob)

        done = ana.sync()

        assert 0 == done.returncode, done.stderr
        assert topic_text("rules", "Ana's version.") == ana.read("rules.md")
        assert topic_text("rules", "Bob's version.") == ana.read("rules.from-bob.md")
        assert (
            "# Team\n- [Rules](rules.md) — the rules\n"
            "- [rules.md from bob](rules.from-bob.md) — both sides changed rules.md;"
            " merge into it, then delete this\n"
        ) == ana.read("MEMORY.md")
        assert (
            "  conflict: theirs written as rules.from-bob.md"
            in done.stdout.splitlines()
        )
        status = ana.memd("team", "status", "--project", str(ana.project)).stdout
        assert "  conflicts waiting: 1" in status.splitlines()
        lint = ana.memd("lint", "--format", "json", str(ana.team))
        assert 0 == lint.returncode, lint.stdout  # the copy has valid frontmatter
        assert [("T001", str(ana.team / "rules.from-bob.md"))] == [
            (d["code"], d["path"])
            for d in json.loads(lint.stdout)["diagnostics"]
            if d["code"] == "T001"
        ]
        overall = ana.memd("status").stdout.splitlines()
        assert "    conflict waiting: team/rules.from-bob.md" in overall
        hook = subprocess.run(
            [memd_script(), "hook", "session-start"],
            input=json.dumps(
                {"hook_event_name": "SessionStart", "cwd": str(ana.project)}
            ),
            env=ana.env(),
            capture_output=True,
            text=True,
            check=False,
        )
        context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        assert (
            "team/rules.from-bob.md [T001 team-conflict-copy] both sides of a team "
            "sync changed team/rules.md"
        ) in context

    def test_a_broken_copy_of_theirs_gets_frontmatter(self, team: Team) -> None:
        """Theirs pushed with plain git without frontmatter: the copy still lints."""
        ana, bob, _ = team.members
        ana.write("x.md", topic_text("x"))
        synced(ana)
        synced(bob)
        (bob.team / "x.md").write_text("no frontmatter here\n")
        bob.git("commit", "-qam", "plain git")
        bob.git("push", "-q", "origin", "main")
        ana.write("x.md", topic_text("x", "Changed by ana."))

        synced(ana)

        assert (
            '---\nname: "x (from bob)"\n'
            'description: "Their x.md, kept by a team sync"\n'
            "type: project\n---\nno frontmatter here\n"
        ) == ana.read("x.from-bob.md")

    def test_delete_on_one_side_and_change_on_the_other_keeps_the_file(
        self, team: Team
    ) -> None:
        """Ana deletes notes.md while bob edits it: bob's edit survives everywhere."""
        ana, bob, _ = team.members
        ana.write("notes.md", topic_text("notes", "First."))
        synced(ana)
        synced(bob)
        (ana.team / "notes.md").unlink()
        synced(ana)
        bob.write("notes.md", topic_text("notes", "Bob kept working on it."))

        done = bob.sync()
        synced(ana)

        assert 0 == done.returncode, done.stderr
        assert topic_text("notes", "Bob kept working on it.") == bob.read("notes.md")
        assert topic_text("notes", "Bob kept working on it.") == ana.read("notes.md")
        assert "  kept notes.md (deleted on one side)" in done.stdout.splitlines()

    def test_a_deletion_alone_travels(self, team: Team) -> None:
        """A file nobody else touched, once deleted, goes for everyone, entry too."""
        ana, bob, _ = team.members
        ana.write("old.md", topic_text("old"))
        ana.write("MEMORY.md", "- [Old](old.md) — old\n")
        synced(ana)
        synced(bob)
        (ana.team / "old.md").unlink()
        ana.write("MEMORY.md", "")
        bob.write("MEMORY.md", "- [Old](old.md) — old\n- [New](new.md) — new\n")
        bob.write("new.md", topic_text("new"))
        synced(ana)

        synced(bob)

        assert not (bob.team / "old.md").exists()
        assert "- [New](new.md) — new\n" == bob.read("MEMORY.md")


class TestIndexUnion:
    def test_union_past_200_lines_is_compacted_never_truncated(
        self, team: Team
    ) -> None:
        """Three members add 110 entries each: all 330 stay, the index loads whole.

        The union would pass the agent's cut, so the merge compacts it into hub
        files (issue 36): each entry line survives word for word, in MEMORY.md
        or a hub it links, and lint finds no index over its limits.
        """
        from memd.lint.compact import loads_whole

        for member in team.members:
            synced(member)
        for member in team.members:
            lines = [
                f"- [{member.name} {n}]({member.name}-{n}.md) — note {n}"
                for n in range(110)
            ]
            member.write("MEMORY.md", "\n".join(lines) + "\n")
        for member in team.members:
            synced(member)
        for member in team.members:
            synced(member)

        for member in team.members:
            assert loads_whole(member.read("MEMORY.md"))
            every = [
                line
                for path in sorted(member.team.glob("*.md"))
                for line in path.read_text("utf-8").splitlines()
            ]
            for name in ("ana", "bob", "cy"):
                mine = [line for line in every if line.startswith(f"- [{name} ")]
                assert sorted(
                    f"- [{name} {n}]({name}-{n}.md) — note {n}" for n in range(110)
                ) == sorted(mine)
        lint = team.members[0].memd(
            "lint", "--format", "json", str(team.members[0].team)
        )
        found = json.loads(lint.stdout)["diagnostics"]
        assert [] == [d["name"] for d in found if d["severity"] == "error"]

    def test_a_held_back_index_takes_incoming_entries_in(self, team: Team) -> None:
        """Ana's index holds a secret and stays home, yet bob's new entry joins it."""
        ana, bob, _ = team.members
        ana.write("MEMORY.md", "- [Start](start.md) — start\n")
        synced(ana)
        synced(bob)
        bob.write("MEMORY.md", "- [Start](start.md) — start\n- [Bob](bob.md) — bob\n")
        synced(bob)
        mine = "- [Ana](ana.md) — token ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J\n"
        ana.write("MEMORY.md", "- [Start](start.md) — start\n" + mine)

        done = ana.sync()

        assert 0 == done.returncode, done.stderr
        assert any(
            line.startswith("  left out MEMORY.md: ") and "secret" in line
            for line in done.stdout.splitlines()
        ), done.stdout
        assert (
            "- [Start](start.md) — start\n- [Bob](bob.md) — bob\n" + mine
        ) == ana.read("MEMORY.md")
        assert "ghp_" not in "".join(team.remote_files().values())

    def test_an_over_budget_index_still_travels(self, team: Team) -> None:
        """An index over the line budget is reported by lint, never held back."""
        ana, bob, _ = team.members
        mine = [f"- [Ana {n}](ana-{n}.md) — note {n}" for n in range(210)]
        for n in range(210):
            ana.write(f"ana-{n}.md", topic_text(f"ana-{n}"))
        ana.write("MEMORY.md", "\n".join(mine) + "\n")

        done = ana.sync()
        synced(bob)

        assert 0 == done.returncode, done.stderr
        assert "left out MEMORY.md" not in done.stdout
        assert bob.read("MEMORY.md") == ana.read("MEMORY.md")

    def test_links_to_a_held_back_file_never_dangle_elsewhere(self, team: Team) -> None:
        """A topic file held back takes its index entry with it; ana keeps both."""
        ana, bob, _ = team.members
        ana.write("ok.md", topic_text("ok"))
        ana.write("broken.md", "no frontmatter at all\n")
        index = "- [Ok](ok.md) — fine\n- [Broken](broken.md) — held back\n"
        ana.write("MEMORY.md", index)

        done = ana.sync()
        synced(bob)

        assert 0 == done.returncode, done.stderr
        assert "  left out broken.md: lint error:" in done.stdout
        assert "- [Ok](ok.md) — fine\n" == bob.read("MEMORY.md")
        assert index == ana.read("MEMORY.md")
        synced(ana)  # nothing to send again, nothing lost here
        assert index == ana.read("MEMORY.md")

    def test_same_entry_added_on_both_sides_is_listed_once(self, team: Team) -> None:
        """Both add an entry for shared.md with different hooks: ours is kept, once."""
        ana, bob, _ = team.members
        synced(ana)
        synced(bob)
        ana.write("MEMORY.md", "- [Shared](shared.md) — ana's words\n- [A](a.md) — a\n")
        bob.write("MEMORY.md", "- [B](b.md) — b\n- [Shared](shared.md) — bob's words\n")
        synced(bob)

        synced(ana)

        assert (
            "- [B](b.md) — b\n- [Shared](shared.md) — ana's words\n- [A](a.md) — a\n"
        ) == ana.read("MEMORY.md")


class TestSafety:
    def test_files_with_lint_errors_stay_home(self, team: Team) -> None:
        """A file without frontmatter is left out, reported, and never reaches bob."""
        ana, bob, _ = team.members
        ana.write("good.md", topic_text("good"))
        ana.write("broken.md", "no frontmatter\n")

        done = ana.sync()
        synced(bob)

        assert 0 == done.returncode
        assert {"good.md"} == set(team.remote_files())
        assert not (bob.team / "broken.md").exists()
        assert any(
            line.startswith("  left out broken.md: lint error: M001")
            for line in done.stdout.splitlines()
        )
        assert "no frontmatter\n" == ana.read("broken.md")

    def test_incoming_change_to_a_file_held_back_is_written_beside_it(
        self, team: Team
    ) -> None:
        """Ana's broken local edit is not overwritten; bob's change is a copy."""
        ana, bob, _ = team.members
        ana.write("f.md", topic_text("f"))
        synced(ana)
        synced(bob)
        bob.write("f.md", topic_text("f", "Bob improved it."))
        synced(bob)
        ana.write("f.md", "ana broke it while editing\n")

        synced(ana)

        assert "ana broke it while editing\n" == ana.read("f.md")
        assert topic_text("f", "Bob improved it.") == ana.read("f.from-bob.md")

    def test_symlinks_and_other_files_are_never_committed(self, team: Team) -> None:
        """A symlink, a non-Markdown file and the private index stay out."""
        ana = team.members[0]
        secret = ana.root / "secret.md"
        secret.write_text(topic_text("secret"))
        os.symlink(secret, ana.team / "link.md")
        ana.write("notes.txt", "plain text\n")
        (ana.memory_dir / "MEMORY.md").write_text("- [Private](private.md) — mine\n")
        ana.write("ok.md", topic_text("ok"))

        done = ana.sync()

        assert 0 == done.returncode
        assert {"ok.md"} == set(team.remote_files())
        assert (
            "  left out link.md: symlink (never committed)" in done.stdout.splitlines()
        )
        assert "  left out notes.txt: not a Markdown file" in done.stdout.splitlines()

    def test_a_token_in_the_url_is_never_logged_or_stored_by_memd(
        self, tmp_path: Path
    ) -> None:
        """An https URL with a token: logs, output, state and config never show it."""
        (member,) = make_team(tmp_path, 1).members
        token = "ghp_SuperSecretToken1234567890"  # noqa: S105 -- the fake token
        url = f"https://ci:{token}@127.0.0.1:9/team/memory.git"

        init = member.memd(
            "team", "init", "--remote", url, "--project", str(member.project)
        )
        sync = member.sync()
        status = member.memd("team", "status", "--project", str(member.project))

        assert 1 == init.returncode  # the remote is unreachable
        assert "127.0.0.1:9/team/memory.git" in init.stderr
        projects = member.root / "home" / ".claude" / "projects"
        assert [] == list(projects.glob("*/memory/team/.git"))  # nothing set up
        everything = [init.stdout, init.stderr, sync.stdout, sync.stderr, status.stdout]
        for folder in ("state", "cache", "config"):
            for path in (member.root / folder).rglob("*"):
                if path.is_file():
                    everything.append(path.read_text("utf-8", "replace"))
        assert all(token not in text for text in everything)


class TestRemoteAway:
    def test_unreachable_remote_is_shown_then_recovers(self, team: Team) -> None:
        """The remote goes away: offline, the commit is kept and pushed later."""
        ana, bob, _ = team.members
        away = team.remote.with_name("away.git")
        team.remote.rename(away)
        ana.write("while-away.md", topic_text("while away"))

        down = ana.sync()
        status = ana.memd("team", "status", "--project", str(ana.project))
        overall = ana.memd("status").stdout
        away.rename(team.remote)
        up = ana.sync()
        synced(bob)

        assert 1 == down.returncode
        assert "offline" in down.stdout.splitlines()[0]
        assert any(
            line.startswith("  remote unreachable:")
            for line in status.stdout.splitlines()
        )
        assert any(
            line.startswith("    remote unreachable (1 failure(s)):")
            for line in overall.splitlines()
        )
        assert 0 == up.returncode, up.stderr
        assert topic_text("while away") == bob.read("while-away.md")

    def test_backoff_grows_with_each_failure(self, team: Team) -> None:
        """Each failed attempt pushes the next one further out."""
        ana = team.members[0]
        team.remote.rename(team.remote.with_name("gone.git"))
        waits = []
        for _ in range(3):
            ana.sync()
            state = json.loads((ana.root / "state" / "memd" / "team.json").read_text())
            (record,) = state.values()
            waits.append(round(record["next_attempt"] - record["last_attempt"]))

        assert [30, 60, 120] == waits


class TestKilledSync:
    def test_sigkill_at_random_points_loses_nothing(self, team: Team) -> None:
        """Kill `memd team sync` at many instants; the next sync converges, all kept."""
        import random

        ana, bob, cy = team.members
        rng = random.Random(17)  # noqa: S311 -- kill points, not secrets
        expected: dict[str, str] = {}
        shared_versions: dict[str, str] = {}  # member -> their latest version
        for round_number in range(12):
            for member in (ana, bob):
                name = f"{member.name}-{round_number}.md"
                member.write(name, topic_text(f"{member.name} {round_number}"))
                expected[name] = topic_text(f"{member.name} {round_number}")
                # Both edit one file too: each one's latest version must survive.
                version = f"{member.name} wrote shared.md in round {round_number}."
                member.write("shared.md", topic_text("shared", version))
                shared_versions[member.name] = version
            synced(bob)
            process = ana.popen("team", "sync", "--project", str(ana.project))
            try:
                process.communicate(timeout=rng.uniform(0.0, 0.4))
            except subprocess.TimeoutExpired:
                process.kill()  # SIGKILL
                process.communicate()
        synced(ana)
        synced(bob)
        synced(cy)

        remote = team.remote_files()
        assert expected == {k: v for k, v in remote.items() if k in expected}
        everything = "".join(remote.values())
        assert [] == [v for v in shared_versions.values() if v not in everything]
        assert set(remote) - set(expected) <= {"shared.md", "MEMORY.md"} | {
            name for name in remote if name.startswith("shared.from-")
        }
        for member in team.members:
            assert "" == git("status", "--porcelain", cwd=member.team)
            head = git("rev-parse", "HEAD", cwd=member.team)
            assert head == git("rev-parse", "main", cwd=team.remote)
            for name, text in expected.items():
                assert text == member.read(name)
        git("fsck", "--no-dangling", cwd=ana.team)
