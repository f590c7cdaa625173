"""Every way editors, agents and git save ends in a snapshot equal to a fresh render."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.daemon.conftest import Daemon, Starter, topic

pytestmark = pytest.mark.daemon


@pytest.fixture(name="daemon")
def _daemon(start_daemon: Starter, project: Path) -> Daemon:
    daemon = start_daemon()
    daemon.wait_fresh(project)
    return daemon


class TestSaveStyles:
    def test_write_in_place(self, daemon: Daemon, project: Path) -> None:
        """Overwriting bytes in place (no truncation) is picked up."""
        with open(project / "MEMORY.md", "r+b") as handle:
            handle.write(
                b"- [Who](user_role.md) - the user's role and goals, in place\n"
            )

        daemon.wait_fresh(project)

    def test_truncate_and_write(self, daemon: Daemon, project: Path) -> None:
        """Truncate-then-write (the plain `open(..., "w")`) is picked up."""
        (project / "MEMORY.md").write_text("- [Role](user_role.md) — rewritten\n")

        daemon.wait_fresh(project)

    def test_temp_then_replace(self, daemon: Daemon, project: Path) -> None:
        """Write to a temp file then os.replace (VS Code, JetBrains, agents)."""
        temp = project / ".MEMORY.md.tmp"
        temp.write_text("- [Role](user_role.md) — replaced atomically\n")
        os.replace(temp, project / "MEMORY.md")

        daemon.wait_fresh(project)

    def test_vim_rename_dance(self, daemon: Daemon, project: Path) -> None:
        """vim's backup dance: rename to a~, write a new file, delete the backup."""
        target = project / "user_role.md"
        os.rename(target, project / "user_role.md~")
        target.write_text(topic("user_role", body="Vim wrote this.\n"))
        (project / "user_role.md~").unlink()

        daemon.wait_fresh(project)

    def test_delete_and_recreate(self, daemon: Daemon, project: Path) -> None:
        """Deleting a file and creating it again is picked up."""
        (project / "user_role.md").unlink()
        daemon.wait_fresh(project)
        (project / "user_role.md").write_text(topic("user_role", body="Back again.\n"))

        daemon.wait_fresh(project)

    def test_move_in_and_out(
        self, daemon: Daemon, project: Path, tmp_path: Path
    ) -> None:
        """Files moved into and out of the memory dir are picked up."""
        outside = tmp_path / "outside.md"
        outside.write_text(topic("moved_in"))
        os.rename(outside, project / "moved_in.md")
        daemon.wait_fresh(project)
        os.rename(project / "user_role.md", tmp_path / "gone.md")

        daemon.wait_fresh(project)

    def test_git_checkout_of_many_files(
        self, daemon: Daemon, project: Path, tmp_path: Path
    ) -> None:
        """A `git checkout` switching hundreds of files ends in one correct snapshot."""
        git = ["git", f"--git-dir={tmp_path / 'repo.git'}", f"--work-tree={project}"]

        def run(*args: str) -> None:
            subprocess.run([*git, *args], check=True, capture_output=True)

        run("init", "-q", "-b", "one")
        for i in range(300):
            (project / f"topic_{i}.md").write_text(topic(f"topic_{i}"))
        run("add", "-A")
        run("commit", "-q", "-m", "one")
        run("checkout", "-q", "-b", "two")
        for i in range(300):
            (project / f"topic_{i}.md").write_text(
                topic(f"topic_{i}", body="Branch two.\n")
            )
        run("commit", "-q", "-a", "-m", "two")
        daemon.wait_fresh(project)
        run("checkout", "-q", "one")

        daemon.wait_fresh(project)

    def test_storm_of_changes(self, daemon: Daemon, project: Path) -> None:
        """A storm of 2,000 writes, replaces and deletes ends in a correct snapshot."""
        for i in range(2000):
            path = project / f"storm_{i % 150}.md"
            if i % 7 == 6:
                path.unlink(missing_ok=True)
            elif i % 3 == 0:
                temp = project / f".storm_{i}.tmp"
                temp.write_text(topic(f"storm_{i % 150}", body=f"Round {i}.\n"))
                os.replace(temp, path)
            else:
                path.write_text(topic(f"storm_{i % 150}", body=f"Round {i}.\n"))

        daemon.wait_fresh(project)


class TestDirectories:
    def test_memory_dir_deleted_and_recreated(
        self, daemon: Daemon, project: Path
    ) -> None:
        """Removing the whole memory dir and recreating it with new content recovers."""
        shutil.rmtree(project)
        project.mkdir()
        (project / "fresh.md").write_text(topic("fresh"))
        (project / "MEMORY.md").write_text("- [Fresh](fresh.md) — recreated\n")

        daemon.wait_fresh(project)

    def test_new_project_appears(self, daemon: Daemon, project: Path) -> None:
        """A project created after start is rendered without a restart."""
        other = project.parent.parent / "-work-other" / "memory"
        other.mkdir(parents=True)
        (other / "MEMORY.md").write_text("- [Other](other.md) — another project\n")
        (other / "other.md").write_text(topic("other"))

        daemon.wait_fresh(other)

    def test_directory_moved_in(
        self, daemon: Daemon, project: Path, tmp_path: Path
    ) -> None:
        """A whole project directory moved into the projects root is picked up."""
        staged = tmp_path / "staged"
        (staged / "memory").mkdir(parents=True)
        (staged / "memory" / "MEMORY.md").write_text("- [M](m.md) — moved in\n")
        (staged / "memory" / "m.md").write_text(topic("m"))
        target = project.parent.parent / "-work-moved"
        os.rename(staged, target)

        daemon.wait_fresh(target / "memory")


class TestDefaultSettle:
    def test_saves_reach_the_snapshot_with_the_default_settle(
        self, start_daemon: Starter, project: Path
    ) -> None:
        """With no settle override the daemon runs its default and stays fresh."""
        import json

        daemon = start_daemon(settle=None)
        assert "MEMD_SETTLE_SECONDS" not in daemon.env
        shown = daemon.memd("config", "--format", "json")
        settle = json.loads(shown.stdout)["keys"]["watch.settle_seconds"]
        assert "default" == settle["source"]
        daemon.wait_fresh(project)

        temp = project / ".MEMORY.md.swp"
        temp.write_text("- [Role](user_role.md) — saved by an editor\n")
        os.replace(temp, project / "MEMORY.md")
        (project / "feedback_x.md").write_text(topic("feedback_x"))

        daemon.wait_fresh(project)
        assert 0 == daemon.stop()
