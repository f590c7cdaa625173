"""The loss rule alone (`memd.history.loss`, pure); `--loss` and `dismiss` misuse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from memd.history.loss import (
    Burst,
    FileFate,
    body_of,
    burst_causes,
    is_emptied,
    judge,
    may_be_loss,
)
from memd.history.store import History

MEMD = (sys.executable, "-m", "memd")
TOPIC = b"---\nname: t\ndescription: a memory\ntype: user\n---\nA fact worth keeping.\n"


def _burst(
    cause: str,
    files: list[FileFate],
    before: dict[str, bytes] | None = None,
    after: dict[str, bytes] | None = None,
) -> Burst:
    before, after = before or {}, after or {}
    return Burst(
        cause=cause,
        files=tuple(files),
        read_before=before.get,
        existed_before=lambda: frozenset(before),
        read_after=after.get,
        exists_after=lambda: frozenset(after),
        everything_after=lambda: list(after.values()),
    )


@pytest.mark.parametrize(
    ("before", "after", "emptied"),
    [
        (TOPIC, b"x", True),  # cut to one character
        (TOPIC, b"", True),
        (TOPIC, b"  \n\n", True),
        (TOPIC, b"---\nname: t\n---\n", True),  # the body gone, frontmatter left
        (TOPIC, TOPIC.replace(b"A fact worth keeping.", b"A fact."), False),
        (b"x" * 5000, b"x" * 2000, False),  # much shorter is not emptied
        (b"x" * 50_000, b"x" * 900, True),  # 98 % of it gone: almost nothing left
        (b"x" * 50_000, b"x" * 1100, False),
        (b"hello world, a note\n", b"hello world", False),  # 11 bytes: not a quarter
        (b"  \n", b"", False),  # nothing to lose
    ],
)
def test_emptied_is_cut_to_almost_nothing(
    before: bytes, after: bytes, emptied: bool
) -> None:
    assert is_emptied(before, after) is emptied


def test_body_of_strips_the_frontmatter() -> None:
    assert body_of(TOPIC) == b"A fact worth keeping."
    assert body_of(b"no frontmatter \n") == b"no frontmatter"
    assert body_of(b"---\nunclosed: yes\n") == b"---\nunclosed: yes"


def test_which_changes_are_judged_and_with_what() -> None:
    assert not may_be_loss("restore", 10_000)
    assert not may_be_loss("edit", 0)
    assert may_be_loss("fix", 1)
    assert burst_causes("edit") == burst_causes("mcp")
    assert "fix-undo" not in burst_causes("edit")
    assert burst_causes("fix-undo") == ()  # memd's own change is judged alone


def test_five_files_emptied_and_deleted_are_counted_exactly() -> None:
    fates = [
        FileFate(relpath=f"t{i}.md", before=TOPIC, before_rev=3, after=b"x")
        for i in range(3)
    ] + [
        FileFate(relpath=f"gone{i}.md", before=TOPIC, before_rev=4, after=None)
        for i in range(2)
    ]
    loss = judge(_burst("edit", fates))
    assert loss is not None
    assert loss.sentence == "2 memory files were deleted and 3 emptied"
    assert loss.count == 5
    assert dict(loss.taken) == {
        **{f"t{i}.md": 3 for i in range(3)},
        **{f"gone{i}.md": 4 for i in range(2)},
    }


def test_hubs_and_logs_are_never_lost_files() -> None:
    hub = b"---\nname: hub\n---\n<!-- memd:hub -->\n- [A](a.md) - a\n"
    fates = [
        FileFate(relpath=f"index-{i}.md", before=hub, before_rev=1, after=None)
        for i in range(4)
    ] + [
        FileFate(
            relpath=f"logs/2026/12/0{i}.md", before=TOPIC, before_rev=1, after=None
        )
        for i in range(4)
    ]
    assert judge(_burst("edit", fates)) is None


def test_an_undo_taking_back_memds_own_files_is_no_loss_anyone_elses_is() -> None:
    mine = [
        FileFate(
            relpath=f"t{i}.md",
            before=TOPIC + b"%d\n" % i,
            before_rev=5,
            after=None,
            memd_wrote=True,
        )
        for i in range(3)
    ]
    assert judge(_burst("dream-undo", mine)) is None
    edited = [  # the same files, last written by someone else: a real loss
        FileFate(relpath=f.relpath, before=f.before, before_rev=6, after=None)
        for f in mine
    ]
    loss = judge(_burst("dream-undo", edited))
    assert loss is not None
    assert loss.sentence == "3 memory files were deleted"


def test_memds_own_change_dropping_links_is_judged_by_what_is_reached() -> None:
    links = "".join(f"- [T{i}](t{i}.md) - fact {i}\n" for i in range(10)).encode()
    hub = b"---\nname: hub\n---\n<!-- memd:hub -->\n" + links[links.index(b"- [T5]") :]
    files = {f"t{i}.md": TOPIC for i in range(10)}
    before = {"MEMORY.md": links, **files}
    kept = links[: links.index(b"- [T5]")] + b"- [More](index-more.md) - the rest\n"
    into_hub = {"MEMORY.md": kept, "index-more.md": hub, **files}
    index = FileFate(relpath="MEMORY.md", before=links, before_rev=1, after=kept)
    assert judge(_burst("fix", [index], before, into_hub)) is None
    dropped = {"MEMORY.md": links[: links.index(b"- [T5]")], **files}
    index = FileFate(
        relpath="MEMORY.md", before=links, before_rev=1, after=dropped["MEMORY.md"]
    )
    loss = judge(_burst("fix", [index], before, dropped))
    assert loss is not None
    assert loss.sentence == "MEMORY.md no longer reaches 5 of its 10 memory files"
    assert loss.taken == (("MEMORY.md", 1),)


def _memd(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMD, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("restore", "--loss", "x"), "x: not a loss revision"),
        (("restore", "--loss", "9" * 30), "not a loss revision"),
        (("restore", "--loss", "7"), "no loss 7 in the history"),
        (("restore", "a.md", "--loss", "1"), "--loss REV restores what that loss"),
        (("history", "dismiss"), "usage: memd history dismiss REV"),
        (("history", "dismiss", "9" * 30), "not a loss revision"),
        (("history", "dismiss", "1"), "no loss 1 in the history"),
    ],
)
def test_loss_mistakes_are_one_line(
    git_repo: Path, args: tuple[str, ...], message: str
) -> None:
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.mkdir(parents=True)
    (memory / "a.md").write_bytes(TOPIC)
    with History.open(os.path.join(os.environ["XDG_STATE_HOME"], "memd")) as history:
        history.record(str(memory), cause="edit")
    done = _memd(*args, cwd=git_repo)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_wiki_links_reach_their_files_by_stem() -> None:
    links = "".join(f"- [[t{i}]] - fact {i}\n" for i in range(10)).encode()
    files = {f"t{i}.md": TOPIC for i in range(10)}
    before = {"MEMORY.md": links, **files}
    after = {"MEMORY.md": links[: links.index(b"- [[t6]]")], **files}
    index = FileFate(
        relpath="MEMORY.md", before=links, before_rev=1, after=after["MEMORY.md"]
    )
    loss = judge(_burst("edit", [index], before, after))
    assert loss is not None
    assert loss.sentence == "MEMORY.md no longer reaches 4 of its 10 memory files"


def test_a_fact_is_its_words_not_its_marks() -> None:
    from memd.history.loss import facts_of

    moved = b"- the wiki is at w.example <!-- memd:fact 2026-11-01 2026-11-03 3 -->\n"
    logged = b"- 09:00 the wiki is at w.example\n"
    assert facts_of(moved) == facts_of(logged) == {"the wiki is at w.example"}
    assert facts_of(b"<!-- unclosed " + b"<!--" * 10_000) == {
        "<!-- unclosed " + "<!--" * 10_000
    }


def test_a_hub_unlinked_from_the_index_takes_what_it_reached() -> None:
    hub_links = "".join(f"- [H{i}](h{i}.md) - fact {i}\n" for i in range(10))
    hub = f"---\nname: hub\n---\n<!-- memd:hub -->\n{hub_links}".encode()
    direct = b"".join(b"- [T%d](t%d.md) - fact\n" % (i, i) for i in range(3))
    index = direct + b"- [More](index-more.md) - the rest\n"
    files = {
        **{f"h{i}.md": TOPIC for i in range(10)},
        **{f"t{i}.md": TOPIC for i in range(3)},
        "index-more.md": hub,
    }
    before = {"MEMORY.md": index, **files}
    one_less = {"MEMORY.md": index.replace(b"- [T0](t0.md) - fact\n", b""), **files}
    fate = FileFate(
        relpath="MEMORY.md", before=index, before_rev=2, after=one_less["MEMORY.md"]
    )
    assert judge(_burst("edit", [fate], before, one_less)) is None
    unhubbed = {"MEMORY.md": direct, **files}
    fate = FileFate(relpath="MEMORY.md", before=index, before_rev=2, after=direct)
    loss = judge(_burst("edit", [fate], before, unhubbed))
    assert loss is not None
    assert loss.sentence == "MEMORY.md no longer reaches 11 of its 14 memory files"


def test_an_index_deleted_with_the_files_is_taken_not_counted() -> None:
    index = b"- [T0](t0.md) - the one entry\n"
    fates = [
        FileFate(relpath=f"t{i}.md", before=TOPIC, before_rev=4, after=None)
        for i in range(5)
    ] + [FileFate(relpath="MEMORY.md", before=index, before_rev=2, after=None)]
    before = {"MEMORY.md": index, **{f"t{i}.md": TOPIC for i in range(5)}}
    loss = judge(_burst("edit", fates, before, {}))
    assert loss is not None
    assert loss.sentence == "5 memory files were deleted"
    assert dict(loss.taken) == {"MEMORY.md": 2, **{f"t{i}.md": 4 for i in range(5)}}
