"""What a team sync does not take, it carries through unchanged (#41 class 10).

A teammate's entry this machine skips (a name that is not UTF-8, a control
character, a backslash, a link, a gitlink, a `.gitattributes`) is never
written here, and the next push must not delete it from the remote: every
teammate would lose it. A real bare remote, the real `memd team sync`.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.team.conftest import Member, Team, topic_text
from tests.team.test_hostile_remote import (  # noqa: F401 -- _ana: the fixture
    _ana,
    _blob,
    _plumb,
    _push_commit,
    _tip_entries,
)

# name -> mode; each is one the member skips
SKIPPED = {
    "bad-\udcff-name.md": "100644",  # not UTF-8
    "ctl-\x01-name.md": "100644",  # a control character
    "back\\slash.md": "100644",  # a backslash
    "zero\u200cwidth.md": "100644",  # an invisible character
    "l" * 300 + ".md": "100644",  # a component longer than 255 bytes
    "link.md": "120000",  # a symlink
    ".gitattributes": "100644",  # git's own settings
}


def _remote_tree(remote: Path) -> dict[bytes, tuple[str, str]]:
    """Raw path bytes -> (mode, oid) of the remote's main, every entry."""
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--full-tree", "main"],
        cwd=remote,
        capture_output=True,
        check=True,
    ).stdout
    tree = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            tree[path] = (mode, oid)
    return tree


def _raw(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("name", sorted(SKIPPED))
@pytest.mark.parametrize("diverged", [False, True], ids=["fast-forward", "merge"])
def test_a_skipped_entry_survives_the_next_push(
    ana: tuple[Team, Member], name: str, diverged: bool
) -> None:
    """Skipped here, still on the remote after this member pushes, byte for byte."""
    team, member = ana
    mode = SKIPPED[name]
    data = b"/etc/passwd" if mode == "120000" else topic_text("theirs").encode()
    oid = _blob(team.remote, data)
    _push_commit(team.remote, [*_tip_entries(team.remote), (mode, name, oid)], "odd")
    if not diverged:
        first = member.sync()  # takes the rest, skips the entry
        assert 0 == first.returncode, first.stdout + first.stderr
    member.write("mine.md", topic_text("mine", body="Written here."))

    done = member.sync()

    assert 0 == done.returncode, done.stdout + done.stderr
    tree = _remote_tree(team.remote)
    assert (mode, oid) == tree.get(_raw(name)), sorted(tree)
    assert b"mine.md" in tree
    assert "Written here." in _plumb(team.remote, "show", "main:mine.md")


def test_two_members_keep_a_skipped_entry_through_many_syncs(team: Team) -> None:
    """Both members push in turn; the entry neither can take is still there."""
    ana, ben = team.members[:2]
    assert 0 == ana.init(team.url).returncode
    ana.write("start.md", topic_text("start"))
    assert 0 == ana.sync().returncode
    assert 0 == ben.init(team.url).returncode
    name = "bad-\udcfe-name.md"
    oid = _blob(team.remote, topic_text("odd").encode())
    _push_commit(team.remote, [*_tip_entries(team.remote), ("100644", name, oid)], "x")

    for round_ in range(2):
        for member in (ana, ben):
            member.write(f"{member.name}-{round_}.md", topic_text(f"r{round_}"))
            done = member.sync()
            assert 0 == done.returncode, done.stdout + done.stderr

    assert ("100644", oid) == _remote_tree(team.remote).get(_raw(name))
    assert _plumb(team.remote, "rev-parse", "main")


def test_a_file_too_big_to_travel_from_here_stays_on_the_remote(
    ana: tuple[Team, Member],
) -> None:
    """A teammate's file over this machine's cap is never deleted by its pushes."""
    from memd.team.sync import MAX_TEAM_FILE_BYTES

    team, member = ana
    data = topic_text("huge").encode() + b"x" * (MAX_TEAM_FILE_BYTES + 1)
    oid = _blob(team.remote, data)
    _push_commit(
        team.remote, [*_tip_entries(team.remote), ("100644", "huge.md", oid)], "big"
    )
    member.write("mine.md", topic_text("mine", body="Written here."))

    for _ in range(2):
        done = member.sync()
        assert 0 == done.returncode, done.stdout + done.stderr

    assert ("100644", oid) == _remote_tree(team.remote).get(b"huge.md")
    assert "Written here." in _plumb(team.remote, "show", "main:mine.md")
