"""Incremental work gives the same results as work from scratch (SPEC §7, §12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memd.lint.engine import LintCache, lint_memdir
from memd.memdir import ParseCache, load_memdir
from memd.pipeline import build_snapshot

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
