"""Incremental work gives the same results as work from scratch (SPEC §7, §12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memd.lint.engine import LintCache, lint_memdir
from memd.memory.memdir import ParseCache
from memd.memory.reader import load_memdir
from memd.snapshot.build import build_snapshot

if TYPE_CHECKING:
    from pathlib import Path

TOPIC = "---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"


def _topic(name: str, *, kind: str = "user", body: str = "A fact.") -> str:
    return TOPIC.format(
        name=name,
        description=f"What {name} is about, specifically",
        kind=kind,
        body=body,
    )


def _fill(memory: Path) -> None:
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(
        "- [Alpha](alpha.md) — alpha\n- [Gone](gone.md) — dangling\n"
        "- [Alpha again](alpha.md) — duplicate entry\n"
    )
    (memory / "alpha.md").write_text(_topic("alpha"))
    (memory / "beta.md").write_text(_topic("beta", kind="feedback"))
    (memory / "gamma.md").write_text("no frontmatter at all\n")
    (memory / "delta.md").write_text("---\nname: [unclosed\n")
    (memory / "logs").mkdir()
    (memory / "logs" / "notes.md").write_text("misplaced log\n")


# Each edit: relpath -> new text (None deletes the file).
EDITS: tuple[dict[str, str | None], ...] = (
    {
        "MEMORY.md": "".join(f"- [{n}]({n}.md) — {n}\n" for n in ("beta", "zeta")),
        "zeta.md": _topic("zeta"),
    },
    {"zeta.md": _topic("beta")},  # linked, unreported: now a duplicate name
    {"zeta.md": _topic("zeta")},
    {
        "beta.md": _topic(
            "beta", kind="feedback", body="**Why:** x\n**How to apply:** y"
        )
    },
    {"gamma.md": _topic("alpha")},  # now a duplicate name, reported on gamma
    {"gamma.md": "---\n\nname: alpha\n---\nbody\n"},  # same name, another line
    {"alpha.md": _topic("alpha", kind="nonsense")},
    {"MEMORY.md": "- [Beta](beta.md) — beta\n"},
    {"epsilon.md": _topic("epsilon"), "delta.md": None},
    {"gamma.md": _topic("gamma"), "MEMORY.md": None},
)


class TestLintCache:
    def test_same_findings_after_each_edit(self, tmp_path: Path) -> None:
        """A cached lint after each edit equals a lint from scratch."""
        memory = tmp_path / "memory"
        _fill(memory)
        parse, cache = ParseCache(), LintCache()
        severities = {"I006": "error", "body-empty": "off"}
        expected, actual = [], []
        for edit in ({}, *EDITS):
            for relpath, text in edit.items():
                if text is None:
                    (memory / relpath).unlink()
                else:
                    (memory / relpath).write_text(text)
            memdir = load_memdir(str(memory), cache=parse)
            expected.append(lint_memdir(memdir, severities=severities))
            actual.append(lint_memdir(memdir, severities=severities, cache=cache))

        assert expected == actual
        assert all(expected)  # every step has findings to compare

    def test_repeat_is_cached(self, tmp_path: Path) -> None:
        """Linting the same MemDir twice with one cache gives equal results."""
        memory = tmp_path / "memory"
        _fill(memory)
        memdir = load_memdir(str(memory))
        cache = LintCache()

        first = lint_memdir(memdir, cache=cache)
        second = lint_memdir(memdir, cache=cache)

        assert lint_memdir(memdir) == first
        assert first == second


class TestBuildWithCaches:
    def test_snapshot_equals_fresh_build(self, tmp_path: Path) -> None:
        """A snapshot built with the daemon's caches equals one built from scratch."""
        memory = tmp_path / "memory"
        _fill(memory)
        parse, cache = ParseCache(), LintCache()
        build_snapshot(
            load_memdir(str(memory), cache=parse), "standard", lint_cache=cache
        )
        (memory / "beta.md").write_text(_topic("beta", body="Changed."))

        started = 1
        cached = build_snapshot(
            load_memdir(str(memory), cache=parse),
            "standard",
            lint_cache=cache,
            started_ns=started,
        )
        fresh = build_snapshot(load_memdir(str(memory)), "standard", started_ns=started)

        assert fresh.diagnostics == cached.diagnostics
        assert fresh.manifest == cached.manifest
        assert fresh.sha256 == cached.sha256


def _reload_pairs(memory: Path, edits: list[tuple[str, str | None]]) -> list[tuple]:
    """Apply each edit; return (incremental, full) MemDir facts after each."""
    parse = ParseCache()
    previous = load_memdir(str(memory), cache=parse)
    pairs = []
    for relpath, text in edits:
        path = memory / relpath
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        previous = load_memdir(
            str(memory), cache=parse, previous=previous, changed=[relpath]
        )
        full = load_memdir(str(memory))
        pairs.append((_facts(previous), _facts(full)))
    return pairs


def _facts(memdir: object) -> tuple:
    from memd.memory.memdir import MemDir

    assert isinstance(memdir, MemDir)
    return (
        memdir.index_text,
        memdir.files,
        dict(memdir.mtimes_ns),
        memdir.log_files,
        memdir.inputs,
        sorted(memdir.diagnostics, key=lambda d: (d.path, d.code, d.message)),
        memdir.total_file_count,
        memdir.total_subdir_count,
        memdir.unreadable_paths,
    )


class TestIncrementalLoad:
    def test_equals_full_read_after_each_change(self, tmp_path: Path) -> None:
        """Loading with previous + changed equals a full read, edit after edit."""
        memory = tmp_path / "memory"
        _fill(memory)
        (memory / "sub").mkdir()
        (memory / "sub" / "nested.md").write_text(_topic("nested"))
        edits: list[tuple[str, str | None]] = [
            ("beta.md", _topic("beta", body="Changed body.")),
            ("sub/nested.md", _topic("nested", body="Deeper change.")),
            ("MEMORY.md", "- [Beta](beta.md) — beta\r\n"),  # CRLF: a reader finding
            ("MEMORY.md", "- [Beta](beta.md) — beta\n"),
            ("alpha.md", "x" * 300_000),  # too large: F003
            ("alpha.md", _topic("alpha")),
            (".scratch.md", "hidden"),
            ("new.md", _topic("new")),  # a new file: the full read takes over
            ("gamma.md", None),  # a deletion, likewise
            ("logs/notes.md", "still misplaced\n"),
            ("notes.txt", "not markdown"),
        ]

        pairs = _reload_pairs(memory, edits)

        assert [full for _, full in pairs] == [mine for mine, _ in pairs]

    def test_symlink_swapped_in_is_not_followed(self, tmp_path: Path) -> None:
        """A topic file replaced by a symlink out of the directory is never read."""
        memory = tmp_path / "memory"
        _fill(memory)
        outside = tmp_path / "secret.md"
        outside.write_text(_topic("secret", body="SECRET"))
        parse = ParseCache()
        previous = load_memdir(str(memory), cache=parse)
        (memory / "beta.md").unlink()
        (memory / "beta.md").symlink_to(outside)

        memdir = load_memdir(
            str(memory), cache=parse, previous=previous, changed=["beta.md"]
        )

        assert "beta.md" not in {f.relpath for f in memdir.files}
        assert ["F004"] == [d.code for d in memdir.diagnostics if d.path == "beta.md"]
