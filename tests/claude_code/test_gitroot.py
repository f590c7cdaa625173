"""findGitRoot and findCanonicalGitRoot on real git repositories (REFERENCE.md §2)."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest

from memd.claude_code.gitroot import (
    autofs_mount_points,
    find_canonical_git_root,
    find_git_root,
    git_root_inputs,
)
from tests.conftest import git


@pytest.fixture(name="repo")
def _repo(git_repo: Path) -> Path:
    return git_repo.resolve()


@pytest.fixture(name="plain_dir")
def _plain_dir(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "plain" / "deeper"
    path.mkdir(parents=True)
    return path


def _both(start: Path) -> tuple[str | None, str | None]:
    """The canonical root of `start` under 2.1.112, then under 2.1.332."""
    return (
        find_canonical_git_root(str(start), profile="2.1.112"),
        find_canonical_git_root(str(start), profile="2.1.332"),
    )


def _crafted_worktree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A main repo's hand-made worktree entry and the worktree that uses it.

    Returns (main, entry, other): entry is `main/.git/worktrees/w`, other has
    a `.git` file naming it, and the entry's commondir and gitdir agree.
    """
    main = tmp_path.resolve() / "main"
    entry = main / ".git" / "worktrees" / "w"
    entry.mkdir(parents=True)
    other = tmp_path.resolve() / "w"
    other.mkdir()
    (other / ".git").write_text(f"gitdir: {entry}\n")
    (entry / "commondir").write_text("../..\n")
    (entry / "gitdir").write_text(f"{other}/.git\n")
    return main, entry, other


class TestFindGitRoot:
    def test_repository_root(self, repo: Path) -> None:
        """The root of a repository is its own git root."""
        assert str(repo) == find_git_root(str(repo))

    def test_subdirectory(self, repo: Path) -> None:
        """The walk goes up to the directory holding `.git`."""
        sub = repo / "a" / "b"
        sub.mkdir(parents=True)

        assert str(repo) == find_git_root(str(sub))

    def test_start_need_not_exist(self, repo: Path) -> None:
        """The walk is lexical, so a missing start inside a repo still finds it."""
        assert str(repo) == find_git_root(str(repo / "not" / "there"))

    def test_relative_start_resolves_against_cwd(
        self, repo: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A relative start is resolved like path.resolve."""
        (repo / "src").mkdir()
        monkeypatch.chdir(repo / "src")

        assert str(repo) == find_git_root("..//src/./")

    def test_dot_git_file_counts(self, worktree: Path) -> None:
        """A worktree's `.git` regular file marks a root."""
        assert str(worktree) == find_git_root(str(worktree / "x"))

    def test_non_git_directory_is_none(self, plain_dir: Path) -> None:
        """Nothing up to the filesystem root: None."""
        assert None is find_git_root(str(plain_dir))

    def test_dot_git_that_is_neither_file_nor_dir_is_ignored(
        self, plain_dir: Path
    ) -> None:
        """A `.git` FIFO or dangling symlink is not a marker."""
        os.mkfifo(plain_dir / ".git")
        (plain_dir.parent / ".git").symlink_to(plain_dir / "missing")

        assert None is find_git_root(str(plain_dir))

    def test_symlinked_start_is_kept_lexically(
        self, repo: Path, tmp_path: Path
    ) -> None:
        """No realpath: a symlink to a repo is its own git root."""
        link = tmp_path / "link-to-repo"
        link.symlink_to(repo)

        assert str(link) == find_git_root(str(link))

    def test_result_is_nfc(self, tmp_path: Path) -> None:
        """A decomposed directory name comes back composed."""
        decomposed = tmp_path.resolve() / "cafe\u0301"
        decomposed.mkdir()
        (decomposed / ".git").mkdir()

        actual = find_git_root(str(decomposed))

        assert unicodedata.normalize("NFC", str(decomposed)) == actual


class TestFindCanonicalGitRoot:
    def test_main_repository(self, repo: Path) -> None:
        """A main working tree is canonical."""
        assert str(repo) == find_canonical_git_root(str(repo / "x"))

    def test_worktree_resolves_to_main(self, repo: Path, worktree: Path) -> None:
        """`git worktree add` shares the main repository's root."""
        assert str(repo) == find_canonical_git_root(str(worktree))

    def test_submodule_is_its_own_root(self, repo: Path, tmp_path: Path) -> None:
        """A submodule's gitdir has no commondir, so it stays separate."""
        upstream = tmp_path / "upstream"
        upstream.mkdir()
        git("init", "-q", cwd=upstream)
        (upstream / "f").write_text("f\n")
        git("add", "f", cwd=upstream)
        git("commit", "-q", "-m", "f", cwd=upstream)
        git(
            "-c", "protocol.file.allow=always",
            "submodule", "add", "-q", str(upstream), "mods/sub",
            cwd=repo,
        )  # fmt: skip
        submodule = repo / "mods" / "sub"

        assert (str(submodule), str(submodule)) == (
            find_git_root(str(submodule)),
            find_canonical_git_root(str(submodule)),
        )

    def test_worktree_of_a_bare_repository(self, repo: Path, tmp_path: Path) -> None:
        """A bare repository's worktree resolves to the bare directory itself."""
        bare = tmp_path.resolve() / "bare.git"
        git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
        bare_wt = tmp_path.resolve() / "bare-wt"
        git("worktree", "add", "-q", str(bare_wt), cwd=bare)

        assert str(bare) == find_canonical_git_root(str(bare_wt))

    def test_forged_back_link_keeps_itself(
        self, repo: Path, worktree: Path, tmp_path: Path
    ) -> None:
        """A `.git` file borrowing another worktree's entry fails the back-link."""
        entry = git("rev-parse", "--git-dir", cwd=worktree).strip()
        forged = tmp_path.resolve() / "forged"
        forged.mkdir()
        (forged / ".git").write_text(f"gitdir: {entry}\n")

        assert str(forged) == find_canonical_git_root(str(forged))

    def test_symlink_to_worktree_resolves_to_main(
        self, repo: Path, worktree: Path, tmp_path: Path
    ) -> None:
        """The back-link compares realpaths, so a symlinked worktree maps to main."""
        link = tmp_path / "link-to-wt"
        link.symlink_to(worktree)

        assert str(repo) == find_canonical_git_root(str(link))

    def test_non_git_directory_is_none(self, plain_dir: Path) -> None:
        """No git root at all gives None."""
        assert None is find_canonical_git_root(str(plain_dir))

    @pytest.mark.parametrize(
        "content",
        [
            "not a gitdir line\n",
            "",
            "gitdir: /nowhere/at/all\n",
            "gitdir: relative/missing\n",
            "\ufeff\tgitdir:\n",
            b"gitdir: \xff\xfe\n",
        ],
    )
    def test_unusable_dot_git_file_keeps_itself(
        self, tmp_path: Path, content: str | bytes
    ) -> None:
        """A `.git` file that leads nowhere leaves the lexical root as the answer."""
        root = tmp_path.resolve() / "odd"
        root.mkdir()
        data = content.encode() if isinstance(content, str) else content
        (root / ".git").write_bytes(data)

        assert str(root) == find_canonical_git_root(str(root))

    def test_entry_outside_a_worktrees_dir_keeps_itself(self, tmp_path: Path) -> None:
        """commondir must be the parent of the `worktrees` dir holding the entry."""
        root = tmp_path.resolve() / "r"
        entry = tmp_path.resolve() / "elsewhere" / "wt"
        entry.mkdir(parents=True)
        root.mkdir()
        (root / ".git").write_text(f"gitdir: {entry}\n")
        (entry / "commondir").write_text("..\n")
        (entry / "gitdir").write_text(f"{root}/.git\n")

        assert str(root) == find_canonical_git_root(str(root))

    def test_crafted_but_consistent_entry_is_followed(self, tmp_path: Path) -> None:
        """A hand-made entry that passes both checks resolves like git's own."""
        main, _, other = _crafted_worktree(tmp_path)

        assert str(main) == find_canonical_git_root(str(other))

    def test_fifo_commondir_does_not_hang(self, tmp_path: Path) -> None:
        """A hostile FIFO where commondir should be is an error, not a blocking read."""
        root = tmp_path.resolve() / "r"
        entry = tmp_path.resolve() / "x" / "worktrees" / "w"
        entry.mkdir(parents=True)
        root.mkdir()
        (root / ".git").write_text(f"gitdir: {entry}\n")
        os.mkfifo(entry / "commondir")

        assert str(root) == find_canonical_git_root(str(root))


class TestGitRootInputs:
    def test_worktree_inputs(self, repo: Path, worktree: Path) -> None:
        """The `.git` file and the entry's commondir and gitdir are the inputs."""
        entry = Path(git("rev-parse", "--git-dir", cwd=worktree).strip()).resolve()

        actual = git_root_inputs(str(worktree))

        expected = (
            str(worktree / ".git"),
            str(entry / "commondir"),
            str(entry / "gitdir"),
        )
        assert expected == actual

    def test_walk_lists_every_dot_git_it_looked_at(self, repo: Path) -> None:
        """A new `.git` in any directory walked past could change the answer."""
        sub = repo / "a" / "b"
        sub.mkdir(parents=True)

        actual = git_root_inputs(str(sub))

        assert (
            str(sub / ".git"),
            str(repo / "a" / ".git"),
            str(repo / ".git"),
        ) == actual

    def test_non_git_inputs_reach_the_filesystem_root(self, plain_dir: Path) -> None:
        """Without a repository, every level up to `/` is an input."""
        actual = git_root_inputs(str(plain_dir))

        assert (str(plain_dir / ".git"), "/.git") == (actual[0], actual[-1])
        assert len(plain_dir.parts) == len(actual)


class TestStricterChecks:
    """REFERENCE.md 2.1.332 "Git roots: stricter checks"; 2.1.112 is unchanged."""

    @pytest.mark.parametrize("profile", ["2.1.112", "2.1.332"])
    def test_compat_fixtures_agree_in_both_releases(
        self, profile: str, repo: Path, worktree: Path, tmp_path: Path
    ) -> None:
        """Main, subdirectory, worktree, bare worktree, forged, linked, non-git."""
        (repo / "sub").mkdir()
        bare = tmp_path.resolve() / "bare.git"
        git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
        bare_wt = tmp_path.resolve() / "bare-wt"
        git("worktree", "add", "-q", str(bare_wt), cwd=bare)
        entry = git("rev-parse", "--git-dir", cwd=worktree).strip()
        forged = tmp_path.resolve() / "forged"
        forged.mkdir()
        (forged / ".git").write_text(f"gitdir: {entry}\n")
        link = tmp_path / "link-to-wt"
        link.symlink_to(worktree)
        plain = tmp_path.resolve() / "plain"
        plain.mkdir()
        starts = (repo, repo / "sub", worktree, bare_wt, forged, link, plain, bare)

        actual = [find_canonical_git_root(str(s), profile=profile) for s in starts]

        # The bare repository itself has no `.git` entry and no git root above it.
        expected = [str(repo)] * 3 + [str(bare), str(forged), str(repo), None, None]
        assert expected == actual

    def test_dot_git_link_inside_its_folder_counts(self, repo: Path) -> None:
        """`.git -> .git-store` stays inside the folder: a root in both releases."""
        (repo / ".git").rename(repo / ".git-store")
        (repo / ".git").symlink_to(".git-store")

        assert (str(repo), str(repo)) == (
            find_git_root(str(repo / "x"), profile="2.1.112"),
            find_git_root(str(repo / "x"), profile="2.1.332"),
        )

    def test_dot_git_link_out_of_its_folder_is_ignored(
        self, repo: Path, tmp_path: Path
    ) -> None:
        """`.git -> ../repo/.git`: 2.1.112 follows it; 2.1.332 walks on past it."""
        project = tmp_path.resolve() / "project"
        project.mkdir()
        (project / ".git").symlink_to(repo / ".git")

        assert (str(project), None) == (
            find_git_root(str(project), profile="2.1.112"),
            find_git_root(str(project), profile="2.1.332"),
        )

    def test_dot_git_link_to_a_network_path_is_ignored(self, repo: Path) -> None:
        """`//…` is a network path to 2.1.332, even where Linux reads it as `/…`."""
        (repo / ".git").rename(repo / ".git-store")
        (repo / ".git").symlink_to(f"/{repo}/.git-store")  # "//tmp/…/.git-store"

        assert (str(repo), None) == (
            find_git_root(str(repo), profile="2.1.112"),
            find_git_root(str(repo), profile="2.1.332"),
        )

    def test_gitdir_with_a_backslash_is_refused(self, tmp_path: Path) -> None:
        """An entry named `w\\x` is fine to 2.1.112; 2.1.332 keeps the worktree."""
        main, entry, other = _crafted_worktree(tmp_path)
        odd = entry.rename(entry.parent / "w\\x")
        (other / ".git").write_text(f"gitdir: {odd}\n")

        assert (str(main), str(other)) == _both(other)

    def test_gitdir_on_a_network_path_is_refused(self, tmp_path: Path) -> None:
        """`gitdir: //tmp/…` names the same entry on Linux; 2.1.332 refuses it."""
        main, entry, other = _crafted_worktree(tmp_path)
        (other / ".git").write_text(f"gitdir: /{entry}\n")

        assert (str(main), str(other)) == _both(other)

    def test_commondir_on_a_network_path_is_refused(self, tmp_path: Path) -> None:
        """An absolute `//…` commondir: followed by 2.1.112, refused by 2.1.332."""
        main, entry, other = _crafted_worktree(tmp_path)
        (entry / "commondir").write_text(f"/{main}/.git\n")

        assert (str(main), str(other)) == _both(other)

    def test_commondir_with_a_backslash_is_refused(self, tmp_path: Path) -> None:
        """`..\\/` is a name, then `..`: still `../..`; 2.1.332 refuses it."""
        main, entry, other = _crafted_worktree(tmp_path)
        (entry / "commondir").write_text("..\\/../../..\n")

        assert (str(main), str(other)) == _both(other)

    def test_worktree_entry_linked_elsewhere_is_refused(
        self, repo: Path, worktree: Path, tmp_path: Path
    ) -> None:
        """A real entry moved out of `.git/worktrees` and linked back: an escape."""
        entry = Path(git("rev-parse", "--git-dir", cwd=worktree).strip()).resolve()
        moved = tmp_path.resolve() / "moved-entry"
        entry.rename(moved)
        entry.symlink_to(moved)

        assert (str(repo), str(worktree.resolve())) == _both(worktree)

    def test_common_dir_linked_out_of_its_folder_is_refused(
        self, tmp_path: Path
    ) -> None:
        """`main/.git` a link to a store elsewhere: 2.1.332 does not follow it."""
        main, _, other = _crafted_worktree(tmp_path)
        store = tmp_path.resolve() / "store"
        (main / ".git").rename(store)
        (main / ".git").symlink_to(store)

        assert (str(main), str(other)) == _both(other)

    @pytest.mark.parametrize("kind", ["dir", "file"])
    def test_bare_common_dir_holding_a_dot_git_gives_the_worktree(
        self, kind: str, repo: Path, tmp_path: Path
    ) -> None:
        """A bare repo with a `.git` entry inside: 2.1.332 keeps the worktree."""
        bare = tmp_path.resolve() / "bare.git"
        git("clone", "-q", "--bare", str(repo), str(bare), cwd=tmp_path)
        bare_wt = tmp_path.resolve() / "bare-wt"
        git("worktree", "add", "-q", str(bare_wt), cwd=bare)
        if kind == "dir":
            (bare / ".git").mkdir()
        else:
            (bare / ".git").write_text("gitdir: elsewhere\n")

        assert (str(bare), str(bare_wt)) == _both(bare_wt)

    def test_paths_key_the_memory_dir_by_the_profile_in_force(
        self, tmp_path: Path
    ) -> None:
        """The default memory dir follows the release's git root, via the profile."""
        from memd.claude_code.paths import default_memory_dir, sanitize_path

        main, _, other = _crafted_worktree(tmp_path)
        (main / ".git").rename(tmp_path / "store")
        (main / ".git").symlink_to(tmp_path / "store")
        env = {"CLAUDE_CONFIG_DIR": "/c"}

        assert (
            f"/c/projects/{sanitize_path(str(main))}/memory/",
            f"/c/projects/{sanitize_path(str(other))}/memory/",
        ) == (
            default_memory_dir(str(other), env, profile="2.1.112"),
            default_memory_dir(str(other), env, profile="2.1.332"),
        )


class TestAutofs:
    def test_mount_table_parsing(self) -> None:
        """Only `autofs` lines count; the kernel's octal escapes are undone."""
        mounts = (
            "sysfs /sys sysfs rw,nosuid 0 0\n"
            "auto.home /home/users autofs rw,fd=7,pgrp=1,timeout=300 0 0\n"
            "server:/export /home/users/ann nfs4 rw 0 0\n"
            "-hosts /net autofs rw,fd=13 0 0\n"
            "auto.x /mnt/my\\040maps autofs rw 0 0\n"
            "auto.y /mnt/back\\134040slash autofs rw 0 0\n"
            "truncated-line autofs\n"
        )

        expected = frozenset(
            {"/home/users", "/net", "/mnt/my maps", "/mnt/back\\040slash"}
        )
        assert expected == autofs_mount_points(mounts)

    def test_walk_never_probes_a_skipped_folder(self, repo: Path) -> None:
        """A map root's `.git` is neither checked nor an input; the walk goes on."""
        from memd.claude_code import gitroot
        from memd.claude_code.profile import STRICT_GIT_ROOTS

        inner = repo / "maps"
        (inner / "key").mkdir(parents=True)
        (inner / ".git").mkdir()

        root, looked = gitroot._walk(
            str(inner / "key"), STRICT_GIT_ROOTS, frozenset({str(inner)})
        )

        assert str(repo) == root
        assert (str(inner / "key" / ".git"), str(repo / ".git")) == looked

    def test_real_mount_table_is_read(self) -> None:
        """On Linux the walk reads the real table: every autofs root it lists."""
        from memd.claude_code import gitroot
        from memd.claude_code.profile import LENIENT_GIT_ROOTS, STRICT_GIT_ROOTS

        if not os.path.exists("/proc/self/mounts"):
            pytest.skip("no /proc/self/mounts on this system")
        with open("/proc/self/mounts", encoding="utf-8") as table:
            types = {line.split(" ")[2]: line.split(" ")[1] for line in table}

        strict = gitroot._skipped_folders(STRICT_GIT_ROOTS)

        assert frozenset() == gitroot._skipped_folders(LENIENT_GIT_ROOTS)
        assert ("autofs" in types) == bool(strict)
