"""A team sync whose index union would pass the cut compacts it in the merge.

Real members, a real bare remote and the real `memd team sync`: ana and bob
each add entries their own index holds whole; the union would not load
whole, so the merge compacts it into hubs, and what reaches the remote and
each member loads whole with every file reachable.
"""

from __future__ import annotations

from memd.lint.compact import loads_whole
from memd.lint.reach import reachable
from memd.memory.index import is_hub
from memd.memory.memfile import parse_memory_file
from tests.team.conftest import Member, Team, topic_text


def _synced(member: Member) -> None:
    done = member.sync()
    assert done.returncode == 0, (done.stdout, done.stderr)


def _add(member: Member, who: str, count: int) -> list[str]:
    names = []
    for n in range(count):
        relpath = f"{who}-{n}.md"
        member.write(relpath, topic_text(f"{who} note {n}"))
        names.append(relpath)
    return names


class TestMergedIndexBudget:
    def test_union_past_the_cut_is_compacted_in_the_merge(self, team: Team) -> None:
        """Two indexes of 110 entries merge into one that loads whole, nothing lost."""
        ana, bob, _ = team.members
        ana.write("MEMORY.md", "# Team\n")
        _synced(ana)
        _synced(bob)
        ours = _add(ana, "ana", 110)
        ana.write(
            "MEMORY.md",
            "# Team\n" + "".join(f"- [{r}]({r}) — ana's note\n" for r in ours),
        )
        theirs = _add(bob, "bob", 110)
        bob.write(
            "MEMORY.md",
            "# Team\n" + "".join(f"- [{r}]({r}) — bob's note\n" for r in theirs),
        )
        _synced(bob)

        _synced(ana)

        remote = team.remote_files()
        assert loads_whole(remote["MEMORY.md"])
        assert set(ours) | set(theirs) <= reachable(remote["MEMORY.md"], remote)
        assert loads_whole(ana.read("MEMORY.md"))
        assert any(
            is_hub(parse_memory_file(r, t.encode()).body) for r, t in remote.items()
        )

    def test_conflict_copy_entries_past_the_cut_are_compacted(self, team: Team) -> None:
        """Entries the merge adds for conflict copies go through the budget too.

        Neither index changed, so no union is made; 170 entries load whole,
        but 40 files both edited give 40 copy entries, which would not.
        """
        ana, bob, _ = team.members
        names = _add(ana, "topic", 170)
        ana.write(
            "MEMORY.md",
            "# Team\n" + "".join(f"- [{r}]({r}) — a note\n" for r in names),
        )
        _synced(ana)
        _synced(bob)
        for relpath in names[:40]:
            ana.write(relpath, topic_text(relpath, "Ana's version."))
            bob.write(relpath, topic_text(relpath, "Bob's version."))
        _synced(bob)

        _synced(ana)

        remote = team.remote_files()
        copies = {r for r in remote if ".from-" in r}
        assert len(copies) == 40
        assert loads_whole(remote["MEMORY.md"])
        assert set(names) | copies <= reachable(remote["MEMORY.md"], remote)

    def test_local_copy_entries_past_the_cut_are_compacted_on_disk(
        self, team: Team
    ) -> None:
        """Copies written beside files held back here are linked within the cut.

        Ana's 40 edits break their frontmatter, so they stay out of her commit
        (and stay hers); bob's versions of the same files arrive as copies in
        her memory dir, whose 170-entry index would then pass the cut.
        """
        ana, bob, _ = team.members
        names = _add(ana, "topic", 170)
        ana.write(
            "MEMORY.md",
            "# Team\n" + "".join(f"- [{r}]({r}) — a note\n" for r in names),
        )
        _synced(ana)
        _synced(bob)
        for relpath in names[:40]:
            ana.write(relpath, "no frontmatter: held back by lint\n")
            bob.write(relpath, topic_text(relpath, "Bob's version."))
        _synced(bob)

        ana.sync()

        index = ana.read("MEMORY.md")
        copies = {p.name for p in ana.team.iterdir() if ".from-" in p.name}
        here = {p.name: p.read_text() for p in ana.team.glob("*.md")}
        assert len(copies) == 40
        assert loads_whole(index)
        assert set(names) | copies <= reachable(index, here)
        assert all(
            ana.read(r) == "no frontmatter: held back by lint\n" for r in names[:40]
        )
