"""The stable project identity: normalised remote URLs, root commits, config."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memd.claude_code.identity import choose_identity, is_identity, normalize_remote_url
from memd.sync.identity import project_identity
from tests.conftest import git


class TestNormalizeRemoteUrl:
    @pytest.mark.parametrize(
        "url",
        [
            "git@github.com:org/app.git",
            "git@github.com:org/app",
            "ssh://git@github.com/org/app",
            "ssh://git@github.com:22/org/app.git",
            "https://user:token@github.com/org/app.git",
            "https://github.com/org/app/",
            "https://GitHub.COM/Org/App.git",
            "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789AB@github.com/org/app",
            "git://github.com/org/app.git",
            "  git+ssh://git@github.com/org/app.git  ",
        ],
    )
    def test_every_spelling_of_one_repository_is_one_identity(self, url: str) -> None:
        """scp-like, ssh, https with credentials, case, port, slash, .git: one name."""
        assert "github.com/org/app" == normalize_remote_url(url)

    @pytest.mark.parametrize(
        "url",
        ["https://user:s3cr3t@gitlab.example.org/a/b.git", "tok3n@host:org/app"],
    )
    def test_credentials_are_never_kept(self, url: str) -> None:
        """Neither the password nor the user name survives normalisation."""
        identity = normalize_remote_url(url)

        assert identity is not None
        assert "s3cr3t" not in identity
        assert "tok3n" not in identity
        assert "@" not in identity

    @pytest.mark.parametrize(
        "url",
        [
            "/srv/git/app.git",
            "./app.git",
            "file:///srv/git/app.git",
            "C:/repos/app.git",
            "C:\\repos\\app",
            "https://host/../..",
            "https://host/",
            "",
            "hg::https://host/x",
        ],
    )
    def test_local_paths_and_nonsense_give_no_identity(self, url: str) -> None:
        """A path on one machine names no repository; `..` never becomes a folder."""
        assert None is normalize_remote_url(url)

    def test_subgroups_are_kept(self) -> None:
        """GitLab subgroups stay parts of the identity."""
        assert "gitlab.com/a/b/c" == normalize_remote_url("git@gitlab.com:a/b/c.git")

    @pytest.mark.parametrize("bad", ["..", "a/../b", ".git/x", "a//b", "A/b", "a\\b"])
    def test_identities_obey_the_folder_rule(self, bad: str) -> None:
        """Identities with `..`, hidden, empty or odd components are refused."""
        assert not is_identity(bad)


class TestChooseIdentity:
    def test_config_wins_then_origin_then_root_commit(self) -> None:
        """An explicit entry pins; origin beats other remotes; a commit is last."""
        remotes = {"upstream": "git@h:u/x.git", "origin": "git@h:o/x.git"}
        commit = "a" * 40

        assert (
            "pinned/me"
            == choose_identity(
                configured="pinned/me", remotes=remotes, root_commits=(commit,)
            ).identity
        )  # type: ignore[union-attr]
        assert (
            "h/o/x"
            == choose_identity(
                configured=None, remotes=remotes, root_commits=(commit,)
            ).identity
        )  # type: ignore[union-attr]
        assert (
            f"commit/{commit}"
            == choose_identity(
                configured=None, remotes={}, root_commits=("b" * 40, commit)
            ).identity
        )  # type: ignore[union-attr]
        assert None is choose_identity(configured=None, remotes={}, root_commits=())


class TestProjectIdentity:
    def test_clones_at_different_paths_share_the_identity(self, tmp_path: Path) -> None:
        """Two clones, a worktree: one identity; without a remote, the root commit."""
        source = tmp_path / "source"
        source.mkdir()
        git("init", "-q", cwd=source)
        git("commit", "-q", "--allow-empty", "-m", "root", cwd=source)
        root_commit = git("rev-parse", "HEAD", cwd=source).strip()
        home_clone = tmp_path / "home" / "ana" / "src" / "app"
        mac_clone = tmp_path / "Users" / "ana" / "code" / "app"
        for clone in (home_clone, mac_clone):
            clone.parent.mkdir(parents=True)
            git("clone", "-q", str(source), str(clone), cwd=tmp_path)
            git("remote", "remove", "origin", cwd=clone)
        worktree = tmp_path / "wt"
        git("worktree", "add", "-q", str(worktree), cwd=home_clone)

        found = {
            project_identity(str(p), {}).identity  # type: ignore[union-attr]
            for p in (home_clone, mac_clone, worktree)
        }
        assert {f"commit/{root_commit}"} == found
        git("remote", "add", "origin", "git@github.com:Org/App.git", cwd=home_clone)
        from_remote = project_identity(str(worktree), {})
        assert from_remote is not None
        assert ("github.com/org/app", "remote:origin") == (
            from_remote.identity,
            from_remote.source,
        )

    def test_no_git_needs_a_config_entry(self, tmp_path: Path) -> None:
        """A plain folder has an identity only from [sync.projects]."""
        folder = tmp_path / "notes"
        folder.mkdir()

        assert None is project_identity(str(folder), {})
        pinned = project_identity(str(folder), {str(folder): "me/notes"})
        assert pinned is not None
        assert ("me/notes", "config") == (pinned.identity, pinned.source)

    def test_memd_paths_shows_the_identity_and_its_source(self, git_repo: Path) -> None:
        """`memd paths` prints the identity with where it came from."""
        git(
            "remote",
            "add",
            "origin",
            "https://u:tok@example.org/me/app.git",
            cwd=git_repo,
        )
        done = subprocess.run(
            [
                str(Path(__import__("sys").executable).with_name("memd")),
                "paths",
                "--project",
                str(git_repo),
            ],
            capture_output=True,
            text=True,
            check=False,
        )

        assert 0 == done.returncode, done.stderr
        line = next(x for x in done.stdout.splitlines() if x.startswith("identity:"))
        assert (
            "example.org/me/app (remote:origin: https://***@example.org/me/app.git)"
            in line
        )
        assert "tok" not in done.stdout
