"""`memd fix` compacts a long MEMORY.md into hubs: reachable, lint-clean, undoable.

Real directories on disk, planned by `plan_directory` and applied by
`apply_edits` as `memd fix` does; generated indexes of 250, 600 and 2,000
entries (sections, tables, prose, CRLF, long lines) and the real-corpus
shapes grown past the cut.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memd.cli.main import main
from memd.lint.compact import (
    TARGET,
    Topics,
    index_size,
    loads_whole,
    needs_compaction,
    place_entries,
)
from memd.lint.engine import lint_memdir
from memd.lint.fix_files import FixUndoError, apply_edits, plan_directory, undo_fix
from memd.lint.reach import classify_links, hub_targets
from memd.memory.index import is_hub, parse_index
from memd.memory.reader import load_memdir

TYPES = ("user", "feedback", "project", "reference")
CORPUS = Path(__file__).parent / "corpus"


def _topic(name: str, kind: str) -> str:
    return (
        f"---\nname: {name}\ndescription: What {name} is about, specifically\n"
        f"type: {kind}\n---\nThe fact.\n\n**Why:** a reason.\n"
        "**How to apply:** when it matters.\n"
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _reachable(root: Path) -> set[str]:
    """The files MEMORY.md links, directly or through one hub it links."""
    memdir = load_memdir(str(root))
    links = parse_index(memdir.index_text or "")
    direct = {r for r, _ in classify_links(links, memdir.files) if r is not None}
    return direct | hub_targets(direct, memdir.files)


def _errors(root: Path) -> set[tuple[str, str]]:
    return {
        (d.code, d.path)
        for d in lint_memdir(load_memdir(str(root)))
        if d.severity == "error"
    }


def _hub_findings(root: Path) -> list[str]:
    memdir = load_memdir(str(root))
    hubs = {f.relpath for f in memdir.files if is_hub(f.body)}
    return [
        f"{d.code} {d.path}: {d.message}"
        for d in lint_memdir(memdir)
        if d.path in hubs and d.severity in ("error", "warning")
    ]


def _fix(root: Path, state: Path) -> int:
    edits = plan_directory(str(root))
    assert apply_edits(str(root), edits, str(state))
    return len(edits)


def _check_compaction(root: Path, state: Path, *, hubs_clean: bool = True) -> None:
    """Compact `root`; check budget, reach, lint, idempotence and undo."""
    before_files = _snapshot(root)
    before_reach = _reachable(root)
    before_errors = _errors(root)
    assert needs_compaction((root / "MEMORY.md").read_text("utf-8"))

    original = (root / "MEMORY.md").read_text("utf-8").split("\n")

    assert _fix(root, state) > 0

    text = (root / "MEMORY.md").read_text("utf-8")
    size = index_size(text)
    assert size.lines <= TARGET.lines
    assert size.units <= TARGET.units
    assert before_reach <= _reachable(root)
    written = {
        line.removesuffix("\r")
        for path in (root / "MEMORY.md", *root.glob("index-*.md"))
        for line in path.read_text("utf-8").split("\n")
    }
    lost = [
        line
        for line in (raw.removesuffix("\r") for raw in original)
        if line.strip() and "](index-" not in line and line not in written
    ]
    assert [] == lost  # every line of the index, word for word, somewhere
    new_errors = _errors(root) - before_errors
    assert set() == {e for e in new_errors if e[0] not in ("I002", "I003")}
    assert not {e for e in _errors(root) if e[0] in ("I002", "I003")}
    if hubs_clean:
        assert [] == _hub_findings(root)
    assert () == plan_directory(str(root))  # a second run changes nothing

    undo_fix(str(root), str(state))

    assert before_files == _snapshot(root)


@st.composite
def _indexes(draw: st.DrawFn) -> dict[str, object]:
    return {
        "entries": draw(st.sampled_from((250, 600, 2000))),
        "sections": draw(st.integers(0, 12)),
        "tables": draw(st.booleans()),
        "prose_every": draw(st.sampled_from((0, 7, 40))),
        "crlf": draw(st.booleans()),
        "long_every": draw(st.sampled_from((0, 11))),
        "title": draw(st.booleans()),
        "seed": draw(st.integers(0, 1000)),
        "extras": draw(st.booleans()),
    }


def _generate(root: Path, spec: dict[str, object]) -> None:
    entries = int(str(spec["entries"]))
    sections = int(str(spec["sections"]))
    prose_every = int(str(spec["prose_every"]))
    long_every = int(str(spec["long_every"]))
    seed = int(str(spec["seed"]))
    root.mkdir(parents=True, exist_ok=True)
    lines = ["# Memory", ""] if spec["title"] else []
    per_section = max(entries // max(sections, 1), 1)
    in_table = False
    definitions: list[str] = []
    extras = bool(spec.get("extras"))
    for i in range(entries):
        kind = TYPES[(i * 7 + seed) % 4]
        relpath = f"{kind}_m{i}.md"
        name = f"Memory {i}" if seed % 3 else f"记忆 {i} 号"
        (root / relpath).write_text(_topic(name, kind))
        stamp = 10**18 + ((i * 7919 + seed) % entries) * 10**9
        os.utime(root / relpath, ns=(stamp, stamp))
        if sections and i % per_section == 0:
            word = "部署与发布的记录" if seed % 2 else "ünïcode"  # wide and narrow
            lines += ["", f"## Section {i // per_section} {word}", ""]
            in_table = bool(spec["tables"]) and (i // per_section) % 2 == 1
            if in_table:
                lines += ["| Memory | What |", "| --- | --- |"]
        hook = f"what memory {i} is about"
        if long_every and i % long_every == 0:
            hook += " and more" * 20  # a long line: lint warns, compaction keeps it
        shape = i % 9 if extras and not in_table else -1
        if in_table:
            lines.append(f"| [{name}]({relpath}) | {hook} |")
        elif shape == 1:  # reference style, defined at the bottom
            lines.append(f"- [Memory {i}][r{i}] — {hook}")
            definitions.append(f"[r{i}]: {relpath}")
        elif shape == 2:  # a wiki-link by name
            lines.append(f"- [[{name}]] — {hook}")
        elif shape == 3:  # with a sub-bullet of detail
            lines += [f"- [Memory {i}]({relpath}) — {hook}", "  - a detail, no link"]
        elif shape == 4:  # in a blockquote
            lines.append(f"> - [Memory {i}](./{relpath}) — {hook}")
        elif shape == 5:  # then a fence with a blank line and a fake heading
            lines += [
                f"- [Memory {i}]({relpath}) — {hook}",
                "",
                "```sh",
                "# not a heading",
                "",
                "echo [x](nowhere.md)",
                "```",
            ]
        elif shape == 6:  # then a comment over two lines
            lines += [
                f"- [Memory {i}]({relpath}) — {hook}",
                "<!-- a note to self",
                "over two lines -->",
            ]
        else:
            lines.append(f"- [Memory {i}]({relpath}) — {hook}")
        if prose_every and i % prose_every == 0 and not in_table:
            lines += ["", f"A note the user wrote after memory {i}.", ""]
    if definitions:
        lines += ["", *definitions]
    eol = "\r\n" if spec["crlf"] else "\n"
    (root / "MEMORY.md").write_bytes((eol.join(lines) + eol).encode("utf-8"))


class TestGenerated:
    @settings(
        max_examples=8,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(spec=_indexes())
    def test_compacts_to_budget_reachable_idempotent_undoable(
        self, tmp_path: Path, spec: dict[str, object]
    ) -> None:
        """Any generated long index fits, reaches every file, and undoes exactly."""
        root = tmp_path / f"m{abs(hash(repr(spec)))}"
        shutil.rmtree(root, ignore_errors=True)
        _generate(root, spec)

        _check_compaction(root, tmp_path / "state")

    def test_compacting_again_after_growth(self, tmp_path: Path) -> None:
        """A compacted index that grew past the trigger compacts again, hubs reused."""
        spec = {
            "entries": 250,
            "sections": 3,
            "tables": False,
            "prose_every": 20,
            "crlf": False,
            "long_every": 0,
            "title": True,
            "seed": 1,
            "extras": True,
        }
        root = tmp_path / "memory"
        _generate(root, spec)
        _fix(root, tmp_path / "state")
        with (root / "MEMORY.md").open("a") as index:
            for i in range(40):
                (root / f"late_{i}.md").write_text(_topic(f"Late {i}", "project"))
                index.write(f"- [Late {i}](late_{i}.md) — written after the fix\n")

        _check_compaction(root, tmp_path / "state2")

        hubs = sorted(p.name for p in root.glob("index-*.md"))
        assert len(hubs) == len(set(hubs))
        assert "(late_39.md)" in (root / "MEMORY.md").read_text()

    @pytest.mark.parametrize("entries", [250, 600, 2000])
    def test_sizes(self, tmp_path: Path, entries: int) -> None:
        """250, 600 and 2,000 entries in mixed sections and tables, CRLF, long lines."""
        spec = {
            "entries": entries,
            "sections": 9,
            "tables": True,
            "prose_every": 13,
            "crlf": entries == 600,
            "long_every": 0,
            "title": True,
            "seed": 3,
            "extras": entries != 2000,
        }
        _generate(tmp_path / "memory", spec)

        _check_compaction(tmp_path / "memory", tmp_path / "state")

    def test_newest_entries_stay_in_memory_md(self, tmp_path: Path) -> None:
        """The entries whose files changed last stay in MEMORY.md itself."""
        spec = {
            "entries": 300,
            "sections": 0,
            "tables": False,
            "prose_every": 0,
            "crlf": False,
            "long_every": 0,
            "title": False,
            "seed": 0,
        }
        root = tmp_path / "memory"
        _generate(root, spec)
        newest = max(root.glob("*_m*.md"), key=lambda p: p.stat().st_mtime_ns)

        _fix(root, tmp_path / "state")

        assert f"]({newest.name})" in (root / "MEMORY.md").read_text()


def _grow(shape: Path, root: Path, copies: int) -> None:
    """Copy a corpus directory, then repeat its index with renamed topic files."""
    shutil.copytree(shape, root)
    index = (shape / "MEMORY.md").read_text("utf-8")
    topics = [p for p in shape.rglob("*.md") if p.name != "MEMORY.md"]
    lines = index.rstrip("\n").split("\n")
    for n in range(2, copies + 2):
        copy = index
        for topic in topics:
            rel = str(topic.relative_to(shape))
            new = rel.removesuffix(".md") + f"-{n}.md"
            data = topic.read_text("utf-8", "replace")
            (root / new).parent.mkdir(parents=True, exist_ok=True)
            (root / new).write_text(data)
            copy = copy.replace(f"({rel})", f"({new})").replace(f": {rel}", f": {new}")
        # Reference labels and wiki names stay shared: they still resolve.
        lines += ["", f"## Copy {n}", *copy.rstrip("\n").split("\n")]
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")


class TestRealCorpus:
    @pytest.mark.parametrize(
        "shape",
        sorted(
            p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "flat_logs"
        ),
    )
    def test_grown_corpus_shape_compacts(self, tmp_path: Path, shape: str) -> None:
        """Each real index shape, grown past the cut, compacts with nothing lost."""
        root = tmp_path / "memory"
        _grow(CORPUS / shape, root, copies=60)

        _check_compaction(root, tmp_path / "state")

    @pytest.mark.parametrize("case", ["I002", "I003"])
    def test_lint_cases_compact(self, tmp_path: Path, case: str) -> None:
        """The lint cases of an index over each limit compact; prose moves, kept."""
        root = tmp_path / "memory"
        shutil.copytree(Path(__file__).parent / "cases" / case / "bad", root)
        prose = [
            line
            for line in (root / "MEMORY.md").read_text().split("\n")
            if line.strip() and "](" not in line and not line.startswith("#")
        ]

        _check_compaction(root, tmp_path / "state")
        _fix(root, tmp_path / "state")

        moved = "\n".join(p.read_text() for p in root.glob("index-*.md"))
        assert all(line in moved for line in prose)


class TestPlaceEntries:
    def test_refuses_past_the_cut_naming_memd_fix(self) -> None:
        """Without a directory to compact into, an entry past the cut is refused."""
        index = "".join(f"- [M{i}](m{i}.md) — memory {i}\n" for i in range(200))

        placement = place_entries(index, ["- [New](new.md) — new"], None)

        assert placement.index_text is None
        assert "memd fix" in (placement.refusal or "")

    def test_appends_while_it_loads_whole(self) -> None:
        """An entry that fits is appended as the last line."""
        placement = place_entries("- [A](a.md) — a\n", ["- [B](b.md) — b"], None)

        assert "- [A](a.md) — a\n- [B](b.md) — b\n" == placement.index_text

    def test_compacts_when_it_would_cross_the_trigger(self, tmp_path: Path) -> None:
        """With the directory known, a crowded index is compacted, the entry in it."""
        for i in range(190):
            (tmp_path / f"m{i}.md").write_text(_topic(f"M{i}", "user"))
        (tmp_path / "new.md").write_text(_topic("New", "user"))
        index = "".join(f"- [M{i}](m{i}.md) — memory {i}\n" for i in range(190))
        (tmp_path / "MEMORY.md").write_text(index)
        memdir = load_memdir(str(tmp_path))

        placement = place_entries(
            index, ["- [New](new.md) — new"], Topics.of(memdir, {})
        )

        assert placement.compaction is not None
        assert placement.index_text is not None
        assert loads_whole(placement.index_text)
        assert "- [New](new.md) — new" in placement.index_text


class TestCommand:
    def _orphan_past_the_cut(self, root: Path) -> None:
        root.mkdir()
        lines = ["# Memory", ""]
        for i in range(209):
            (root / f"project_m{i}.md").write_text(_topic(f"Memory {i}", "project"))
            lines.append(f"- [Memory {i}](project_m{i}.md) — about memory {i}")
        (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
        (root / "project_orphan.md").write_text(_topic("The orphan", "project"))

    def test_orphan_is_not_appended_past_the_cut(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A 211-line index and an orphan: fix compacts, and the orphan loads."""
        root = tmp_path / "memory"
        self._orphan_past_the_cut(root)

        assert 0 == main(["fix", str(root)])

        text = (root / "MEMORY.md").read_text()
        assert "(project_orphan.md)" in text
        assert loads_whole(text)
        assert 0 == main(["lint", str(root)])
        capsys.readouterr()

    def test_dry_run_shows_every_file_and_writes_nothing(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run prints the diff of the hubs and of MEMORY.md, writes nothing."""
        root = tmp_path / "memory"
        self._orphan_past_the_cut(root)
        before = _snapshot(root)

        assert 0 == main(["fix", "--dry-run", str(root)])

        out = capsys.readouterr().out
        assert before == _snapshot(root)
        assert f"+++ {root}/MEMORY.md" in out
        assert f"+++ {root}/index-project.md" in out

    def test_undo_restores_byte_for_byte(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--undo takes the whole fix back, and then has nothing left to undo."""
        root = tmp_path / "memory"
        self._orphan_past_the_cut(root)
        before = _snapshot(root)
        assert 0 == main(["fix", str(root)])

        assert 0 == main(["fix", "--undo", str(root)])
        assert before == _snapshot(root)
        assert 1 == main(["fix", "--undo", str(root)])
        assert "nothing to undo" in capsys.readouterr().err

    def test_undo_refuses_after_a_change(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file edited since the fix: undo refuses in one line, changes nothing."""
        root = tmp_path / "memory"
        self._orphan_past_the_cut(root)
        assert 0 == main(["fix", str(root)])
        capsys.readouterr()
        with (root / "MEMORY.md").open("a") as index:
            index.write("- [Later](project_m1.md) — edited after the fix\n")
        after = _snapshot(root)

        assert 1 == main(["fix", "--undo", str(root)])

        err = capsys.readouterr().err
        assert 1 == len(err.strip().split("\n"))
        assert "MEMORY.md changed since memd fix" in err
        assert after == _snapshot(root)

    def test_killed_fix_is_taken_back(self, tmp_path: Path) -> None:
        """A journal left 'applying' (a kill mid-write) is rolled back next time."""
        root = tmp_path / "memory"
        self._orphan_past_the_cut(root)
        before = _snapshot(root)
        state = tmp_path / "state"
        edits = plan_directory(str(root))
        assert apply_edits(str(root), edits, str(state))
        from memd.lint.fix_files import _read_manifest, _write_manifest, undo_dir

        journal = undo_dir(str(state), str(root))
        manifest = _read_manifest(journal)
        assert manifest is not None
        _write_manifest(journal, {**manifest, "state": "applying"})

        with pytest.raises(FixUndoError):
            undo_fix(str(root), str(state))  # recovered first: nothing left to undo

        assert before == _snapshot(root)


_TRICKY = (
    "- [A](a.md) — a",
    "- [B](./b.md#part) — b",
    "* [C](<c d.md>) — spaced",
    "1. [D](d.md) — numbered",
    "- [[A]] — by name",
    "- [E][e] — reference",
    "[e]: e.md",
    "[unused]: a.md",
    "| [F](f.md) | row |",
    "| --- | --- |",
    "| plain | row |",
    "> - [G](g.md) quoted",
    "  - [H](h.md) nested",
    "  - detail",
    "```",
    "~~~",
    "<!--",
    "-->",
    "<!-- [I](i.md) -->",
    "# Title",
    "## Section",
    "### Sub [J](j.md)",
    "prose with [K](k.md) inside",
    "plain prose",
    "- bullet without a link",
    "- [out](../x.md) — outside",
    "- [url](https://example.com) — url",
    "---",
    "",
    "\t- [L](l.md)\ttabbed",
    "- [M](m.md) " + "long " * 60,
    "- `[N](n.md)` in code",
    "- [O](o.md) \u2028 odd",
)


class TestHostile:
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(
        lines=st.lists(st.sampled_from(_TRICKY), min_size=190, max_size=400),
        crlf=st.booleans(),
    )
    def test_never_raises_and_never_loses_a_link(
        self, tmp_path: Path, lines: list[str], crlf: bool
    ) -> None:
        """Any mix of entries, fences, comments and tables: no crash, nothing lost."""
        from memd.lint.compact import compact_index, reachable

        text = ("\r\n" if crlf else "\n").join(lines) + "\n"
        memdir = load_memdir(str(tmp_path))
        topics = Topics.of(memdir, {})

        compaction = compact_index(text, topics)

        if compaction is not None:
            texts = {h.relpath: h.new.decode("utf-8") for h in compaction.hubs}
            assert reachable(text, {}) <= reachable(compaction.index, texts)
            assert _within_target(compaction.index)


def _within_target(text: str) -> bool:
    size = index_size(text)
    return size.lines <= TARGET.lines and size.units <= TARGET.units
