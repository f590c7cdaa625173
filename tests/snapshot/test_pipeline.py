"""Tests for memd.snapshot.build: a read directory becomes a fresh Snapshot."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from memd.claude_code.prompt import render_prompt
from memd.memory.memdir import ParseCache
from memd.memory.reader import load_memdir
from memd.racy import RACY_WINDOW_NS
from memd.snapshot.build import STEPS, build_snapshot, load_and_build
from memd.snapshot.publish import SnapshotStore
from memd.snapshot.store import encode_prompt
from tests.conftest import MemDirMaker

INDEX = "- [Testing](feedback_testing.md) — real database in tests\n"


def _populate(make_memdir: MemDirMaker) -> None:
    make_memdir.write("MEMORY.md", INDEX)
    make_memdir.topic(
        "feedback_testing.md",
        name="Real database",
        description="Integration tests must use a real database, never a mock",
        type="feedback",
        body="Use the real database.\n\n**Why:** mocks hid a bug.\n"
        "**How to apply:** every integration test.\n",
    )
    make_memdir.topic(
        "user_role.md",
        name="Role",
        description="The user is a data engineer",
        type="usr",
    )


def _age_tree(root: Path) -> None:
    then = time.time_ns() - 10 * RACY_WINDOW_NS
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(then, then), follow_symlinks=False)


class TestBuildSnapshot:
    def test_text_is_the_render(self, make_memdir: MemDirMaker) -> None:
        """The text is render_prompt of the index; sha256 hashes its bytes."""
        _populate(make_memdir)
        snapshot = build_snapshot(load_memdir(str(make_memdir.root)), "standard")
        expected, truncation = render_prompt(
            mode="standard", memory_dir=str(make_memdir.root) + os.sep, index_text=INDEX
        )

        assert expected == snapshot.text
        assert truncation == snapshot.truncation
        assert hashlib.sha256(encode_prompt(expected)).hexdigest() == snapshot.sha256
        assert str(make_memdir.root) + os.sep == snapshot.memory_dir

    def test_lint_manifest_and_counts(self, make_memdir: MemDirMaker) -> None:
        """Lint counts, the manifest and the directory counts are carried over."""
        _populate(make_memdir)
        (make_memdir.root / "team").mkdir()
        snapshot = build_snapshot(load_memdir(str(make_memdir.root)), "team")

        assert snapshot.lint_errors >= 1  # type "usr" is invalid
        assert any(d.path == "user_role.md" for d in snapshot.diagnostics)
        assert {"feedback_testing.md", "user_role.md"} == {
            m.relpath for m in snapshot.manifest
        }
        assert (3, 1) == (snapshot.total_file_count, snapshot.total_subdir_count)
        assert "team" == snapshot.mode

    def test_deterministic(self, make_memdir: MemDirMaker) -> None:
        """Two builds of the same directory give the same text and digest."""
        _populate(make_memdir)
        first = build_snapshot(load_memdir(str(make_memdir.root)), "kairos")
        second = build_snapshot(load_memdir(str(make_memdir.root)), "kairos")

        assert (first.text, first.sha256) == (second.text, second.sha256)

    def test_steps_in_order(self) -> None:
        """The chain renders, lints, builds the manifest, then hashes."""
        assert ["render", "lint", "manifest", "digest"] == [s.__name__ for s in STEPS]


class TestLoadAndBuild:
    def test_clock_read_before_inputs(self, make_memdir: MemDirMaker) -> None:
        """built_ns is taken before any input is read."""
        _populate(make_memdir)
        before = time.time_ns()
        snapshot = load_and_build(str(make_memdir.root) + os.sep, "standard")

        assert before <= snapshot.built_ns <= time.time_ns()
        assert str(make_memdir.root / "MEMORY.md") in {i.path for i in snapshot.inputs}

    def test_written_snapshot_is_fresh_until_edit(
        self, make_memdir: MemDirMaker, tmp_path: Path
    ) -> None:
        """A snapshot of old files is served fresh, and an edit makes it stale."""
        _populate(make_memdir)
        _age_tree(make_memdir.root)
        cache = ParseCache()
        store = SnapshotStore(str(tmp_path / "cache"))
        memory_dir = str(make_memdir.root) + os.sep
        snapshot = load_and_build(memory_dir, "standard", cache=cache)
        store.write(snapshot)

        assert snapshot.text == store.read_fresh(memory_dir, "standard")
        make_memdir.write("MEMORY.md", INDEX + "- [Role](user_role.md) — role\n")
        assert None is store.read_fresh(memory_dir, "standard")
        rebuilt = load_and_build(memory_dir, "standard", cache=cache)
        assert "- [Role](user_role.md) — role" in rebuilt.text

    def test_missing_directory(self, tmp_path: Path) -> None:
        """A missing directory renders the empty-index prompt without raising."""
        snapshot = load_and_build(str(tmp_path / "nope") + os.sep, "standard")

        assert snapshot.truncation is None
        assert snapshot.text.endswith("Memories you save will be listed here.\n")
