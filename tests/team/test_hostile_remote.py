"""A hostile team remote, built with git's plumbing, against the real `memd team` CLI.

`git hash-object -t tree --literally` writes any tree, and fetch does not
check one: each test pushes such a commit into a real bare remote and runs
the installed `memd` as a member would. Nothing may be written, the local
branch must not move, status must name the commit and the path, and a sync
after the remote's history is cleaned must work again.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.team.conftest import Member, Team, make_team, topic_text

FSMONITOR_CONFIG = b'[core]\n\tfsmonitor = "touch CANARY"\n'


def _plumb(remote: Path, *args: str, data: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=remote,
        input=data,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def _blob(remote: Path, data: bytes) -> str:
    return _plumb(remote, "hash-object", "-w", "--stdin", data=data)


def _literal_tree(remote: Path, entries: list[tuple[str, str, str]]) -> str:
    """Write a tree of (mode, name, oid) exactly as given, unchecked."""
    raw = b"".join(
        mode.encode()
        + b" "
        + name.encode("utf-8", "surrogateescape")
        + b"\0"
        # bytes.fromhex: the tree format holds the raw 20-byte id
        + bytes.fromhex(oid)
        for mode, name, oid in entries
    )
    return _plumb(
        remote, "hash-object", "-t", "tree", "--literally", "-w", "--stdin", data=raw
    )


def _nested(remote: Path, path: str, mode: str, oid: str) -> tuple[str, str, str]:
    """Return the top entry of `path` as nested trees (".git/hooks/x" as 3 trees)."""
    parts = path.split("/")
    entry = (mode, parts[-1], oid)
    for part in reversed(parts[:-1]):
        entry = ("40000", part, _literal_tree(remote, [entry]))
    return entry


def _tip_entries(remote: Path) -> list[tuple[str, str, str]]:
    out = _plumb(remote, "ls-tree", "main")
    entries = []
    for line in out.splitlines():
        meta, name = line.split("\t", 1)
        mode, _kind, oid = meta.split(" ")
        entries.append((mode, name, oid))
    return entries


def _push_commit(remote: Path, entries: list[tuple[str, str, str]], msg: str) -> str:
    """Commit a literal tree on top of the remote's main and move main to it."""
    tree = _literal_tree(remote, sorted(entries, key=lambda e: e[1]))
    parent = _plumb(remote, "rev-parse", "main")
    commit = _plumb(remote, "commit-tree", tree, "-p", parent, "-m", msg)
    _plumb(remote, "update-ref", "refs/heads/main", commit)
    return commit


def _local_main(member: Member) -> str:
    return member.git("rev-parse", "refs/heads/main").strip()


def _hostile_entry(remote: Path, spelling: str, tmp_path: Path) -> tuple[str, str, str]:
    """One hostile tree entry for `spelling` (see SPELLINGS)."""
    payload = _blob(remote, FSMONITOR_CONFIG)
    markdown = _blob(remote, topic_text("evil").encode())
    if spelling == "absolute":
        return ("100644", f"{tmp_path}/absolute-canary.md", markdown)
    if spelling.startswith("nested:"):
        return _nested(remote, spelling.removeprefix("nested:"), "100644", payload)
    if spelling == "symlink":
        return ("120000", "link.md", _blob(remote, str(tmp_path).encode()))
    if spelling == "gitlink":
        return ("160000", "module", _plumb(remote, "rev-parse", "main"))
    if spelling == "attributes":
        return ("100644", ".gitattributes", _blob(remote, b"* filter=evil\n"))
    return ("100644", spelling, payload if "config" in spelling else markdown)


SPELLINGS = [
    "../../../../../.gitconfig",
    "../x.md",
    ".git/hooks/post-checkout",
    ".git/commondir",
    "sub/.git/config",
    ".GIT/config",
    ".git./x",
    "..\\x.md",
    "sub\\..\\..\\x.md",
    "absolute",
    "./x.md",
    "a//x.md",
    "nested:.git/hooks/post-checkout",
    "nested:.git/config",
    "nested:sub/.Git/config",
    "nested:../x.md",
    "nested:..",
    "nested:git~1/config",
    "nested:.g\u200cit/config",
    "x\u2215y.md",
    "symlink",
    "gitlink",
    "attributes",
]


def _everything_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(name="ana")
def _ana(tmp_path: Path) -> tuple[Team, Member]:
    """A remote with one clean commit, and one member who has synced it."""
    team = make_team(tmp_path, 1)
    (ana,) = team.members
    done = ana.init(team.url)
    assert 0 == done.returncode, done.stderr
    ana.write("clean.md", topic_text("clean"))
    done = ana.sync()
    assert 0 == done.returncode, done.stdout + done.stderr
    return team, ana


class TestHostileTree:
    @pytest.mark.parametrize("spelling", SPELLINGS)
    def test_an_entry_that_breaks_the_rule_is_skipped_and_the_rest_arrives(
        self, ana: tuple[Team, Member], tmp_path: Path, spelling: str
    ) -> None:
        """One odd entry never blocks the team: skipped, reported, nothing run."""
        team, member = ana
        canary = tmp_path / "CANARY"
        # A filter the user's own config defines: an attributes file that
        # reached git's index would start it.
        (member.root / "gitconfig").write_text(
            f'[filter "evil"]\n\tclean = touch {canary}\n\tsmudge = touch {canary}\n'
        )
        entries = _tip_entries(team.remote)
        good = ("100644", "arrives.md", _blob(team.remote, topic_text("ok").encode()))
        hostile = _push_commit(
            team.remote,
            [*entries, good, _hostile_entry(team.remote, spelling, tmp_path)],
            "hostile",
        )
        member.write("mine.md", topic_text("mine"))
        before_home = _everything_under(member.root)

        sync = member.sync()
        member.write("later.md", topic_text("later"))  # a commit on top of it
        again = member.sync()

        assert (0, 0) == (sync.returncode, again.returncode), sync.stdout + sync.stderr
        assert "skipped from the remote" in sync.stdout
        assert (member.team / "arrives.md").is_file()
        new_paths = _everything_under(member.root) - before_home
        stray = {
            p
            for p in new_paths
            if not p.startswith(("state", "cache", "config"))
            and "/team/.git/" not in p
            and not p.endswith(("/team/arrives.md", "/team/later.md"))
        }
        assert set() == stray
        assert not (member.root / "home" / ".gitconfig").exists()
        assert not (member.memory_dir / "x.md").exists()
        assert not (member.team / ".gitattributes").exists()
        assert not (member.team / "link.md").exists()
        assert not (member.team / ".git" / "commondir").exists()
        assert not (member.team / ".git" / "hooks" / "post-checkout").exists()
        assert not (tmp_path / "absolute-canary.md").exists()
        assert not list(tmp_path.rglob("CANARY"))
        remote = team.remote_files()
        assert {"arrives.md", "mine.md", "later.md"} <= set(remote)
        assert hostile == _plumb(team.remote, "merge-base", hostile, "main")

    def test_an_undecodable_name_never_blocks_a_merge(
        self, ana: tuple[Team, Member], tmp_path: Path
    ) -> None:
        """Diverged histories with a name that is not UTF-8: the rest merges."""
        team, member = ana
        entries = _tip_entries(team.remote)
        markdown = _blob(team.remote, topic_text("evil").encode())
        good = ("100644", "theirs.md", _blob(team.remote, topic_text("t").encode()))
        _push_commit(
            team.remote,
            [*entries, good, ("100644", "bad-\udcff-name.md", markdown)],
            "odd name",
        )
        member.write("clean.md", topic_text("clean", body="Changed locally."))

        sync = member.sync()

        assert 0 == sync.returncode, sync.stdout + sync.stderr
        assert "skipped from the remote" in sync.stdout
        assert (member.team / "theirs.md").is_file()
        assert not [p for p in member.team.iterdir() if p.name.startswith("bad-")]
        assert "Changed locally." in team.remote_files()["clean.md"]


class TestSteeredGit:
    def test_a_local_config_that_runs_a_program_is_refused(
        self, ana: tuple[Team, Member], tmp_path: Path
    ) -> None:
        """core.fsmonitor, include.path or sshCommand in team/.git/config: no sync."""
        _team, member = ana
        canary = tmp_path / "CANARY"
        evil = f'[core]\n\tfsmonitor = "touch {canary}"\n'
        for key, value in (
            ("core.fsmonitor", f"touch {canary}"),
            ("core.sshCommand", f"touch {canary}; ssh"),
            ("include.path", str(tmp_path / "evil.config")),
        ):
            (tmp_path / "evil.config").write_text(evil)
            member.git("config", "--local", key, value)
            member.write("mine.md", topic_text("mine"))

            sync = member.sync()

            assert 1 == sync.returncode
            assert key.lower() in sync.stdout
            assert not canary.exists()
            member.git("config", "--local", "--unset", key)

        assert 0 == member.sync().returncode
        assert not canary.exists()

    def test_hooks_never_run(self, ana: tuple[Team, Member], tmp_path: Path) -> None:
        """A hook in team/.git/hooks (or core.hooksPath globally) is never started."""
        team, member = ana
        canary = tmp_path / "CANARY"
        hooks = member.team / ".git" / "hooks"
        hooks.mkdir(exist_ok=True)
        for name in ("reference-transaction", "pre-push", "post-index-change"):
            hook = hooks / name
            hook.write_text(f"#!/bin/sh\ntouch {canary}\n")
            hook.chmod(0o755)
        member.write("mine.md", topic_text("mine"))

        sync = member.sync()

        assert 0 == sync.returncode, sync.stdout + sync.stderr
        assert "mine.md" in team.remote_files()
        assert not canary.exists()


class TestFailedInit:
    @pytest.mark.parametrize(
        "url",
        [
            "-oProxyCommand=false:x",
            "--upload-pack=touch CANARY",
            "ext::sh -c touch% CANARY",
            "fd::3",
            "unreachable",  # a path that is not a repository
            "ssh://-oProxyCommand=touch%20CANARY/x",
            "file:///nonexistent/remote.git",
        ],
    )
    def test_a_failed_init_leaves_nothing_and_a_good_one_follows(
        self, tmp_path: Path, url: str
    ) -> None:
        """No .git, no folders made; the next init with a good URL works."""
        team = make_team(tmp_path, 1)
        (member,) = team.members
        if url == "unreachable":
            url = str(tmp_path / "nowhere.git")
        home = member.root / "home"
        before = _everything_under(home)

        failed = member.memd(
            "team", "init", f"--remote={url}", "--project", str(member.project)
        )

        assert failed.returncode in (1, 2)
        assert 1 == len(failed.stderr.strip().splitlines()), failed.stderr
        assert "Traceback" not in failed.stderr
        assert before == _everything_under(home)
        assert not list(tmp_path.rglob("CANARY"))

        good = member.init(team.url)

        assert 0 == good.returncode, good.stderr
        assert (member.team / ".git").is_dir()
