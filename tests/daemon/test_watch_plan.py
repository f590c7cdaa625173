"""memd.daemon.watch_plan: the watches a discovery makes, and what a watch misses."""

from __future__ import annotations

import os
from pathlib import Path

from memd.daemon.discovery import WatchRoot
from memd.daemon.watch_plan import (
    MAX_WATCH_DEPTH,
    TOO_DEEP,
    bounded_subdirectories,
    can_split,
    coverage_problems,
    expand_roots,
    stat_signature,
    subdirs,
)
from tests.daemon.conftest import chain

PROJECTS = "/b/projects"
MEMORY = "/b/projects/-a/memory"
TREE = {
    PROJECTS: [f"{PROJECTS}/-a", f"{PROJECTS}/-b"],
    f"{PROJECTS}/-a": [MEMORY, f"{PROJECTS}/-a/tmp"],
}


def _expand(roots: list[WatchRoot], **state: object) -> list[WatchRoot]:
    options: dict[str, object] = {
        "split": (),
        "shallow": (),
        "shed": (),
        "stormed": (),
        "projects_root": PROJECTS + "/",
        "memory_dirs": frozenset({MEMORY}),
        "list_subdirs": lambda path: TREE.get(path, []),
    }
    options.update(state)
    return sorted(expand_roots(roots, **options), key=lambda r: r.path)  # type: ignore[arg-type]


class TestExpandRoots:
    def test_a_plain_root_is_watched_as_it_is(self) -> None:
        """Nothing split, shallow or shed: the root itself."""
        assert [WatchRoot(PROJECTS, recursive=True)] == _expand(
            [WatchRoot(PROJECTS, recursive=True)]
        )

    def test_split_projects_watch_each_project_and_a_project_only_its_memory(
        self,
    ) -> None:
        """projects/: flat plus every project; a split project: flat plus memory/."""
        expanded = _expand(
            [WatchRoot(PROJECTS, recursive=True)],
            split={PROJECTS, f"{PROJECTS}/-a"},
        )

        assert [
            WatchRoot(PROJECTS, recursive=False),
            WatchRoot(f"{PROJECTS}/-a", recursive=False),
            WatchRoot(MEMORY, recursive=True),
            WatchRoot(f"{PROJECTS}/-b", recursive=True),
        ] == expanded

    def test_shallow_is_flat_and_shed_or_stormed_is_left_out(self) -> None:
        """A shallow memory dir: its top level; shed and stormed: no watch."""
        shallow = _expand([WatchRoot(MEMORY, recursive=True)], shallow={MEMORY})
        shed = _expand(
            [WatchRoot(PROJECTS, recursive=True)],
            split={PROJECTS},
            shed={WatchRoot(f"{PROJECTS}/-b", recursive=True)},
            stormed={f"{PROJECTS}/-a"},
        )

        assert [WatchRoot(MEMORY, recursive=False)] == shallow
        assert [WatchRoot(PROJECTS, recursive=False)] == shed


class TestCanSplit:
    def test_projects_and_a_project_dir_split_but_not_a_memory_dir(self) -> None:
        """Only directories above the memory dirs are split."""
        dirs = frozenset({MEMORY})

        assert can_split(PROJECTS, projects_root=PROJECTS + "/", memory_dirs=dirs)
        assert can_split(
            f"{PROJECTS}/-a", projects_root=PROJECTS + "/", memory_dirs=dirs
        )
        assert not can_split(MEMORY, projects_root=PROJECTS + "/", memory_dirs=dirs)
        assert not can_split("/b", projects_root=PROJECTS + "/", memory_dirs=dirs)


class TestTheTree:
    def test_a_chain_past_the_depth_is_the_frontier_and_a_gap(
        self, tmp_path: Path
    ) -> None:
        """Too deep: named by the memory dir holding it, never the whole root."""
        memory = tmp_path / "-a" / "memory"
        memory.mkdir(parents=True)
        chain(memory, MAX_WATCH_DEPTH + 3)

        found, frontier = bounded_subdirectories(str(tmp_path), MAX_WATCH_DEPTH)
        gaps = coverage_problems(str(tmp_path), frozenset({str(memory)}), watched=None)

        assert 1 == len(frontier)
        assert MAX_WATCH_DEPTH + 1 == len(found)
        assert [(str(memory), TOO_DEEP)] == gaps

    def test_directories_a_watch_lacks_are_counted_per_memory_dir(
        self, tmp_path: Path
    ) -> None:
        """A recursive watch that skipped two subdirectories: one gap, counted."""
        memory = tmp_path / "-a" / "memory"
        (memory / "x" / "y").mkdir(parents=True)
        watched = {os.fsencode(p) for p in (tmp_path, tmp_path / "-a", memory)}

        gaps = coverage_problems(
            str(tmp_path), frozenset({str(memory)}), watched=watched
        )

        assert [(str(memory), "2 subdirectories not watched")] == gaps

    def test_the_signature_moves_with_an_entry_and_not_otherwise(
        self, tmp_path: Path
    ) -> None:
        """A new file changes what a watch would see; looking twice does not."""
        (tmp_path / "d").mkdir()
        root = WatchRoot(str(tmp_path), recursive=True)
        before = stat_signature(root)

        same = stat_signature(root)
        (tmp_path / "d" / "new.md").write_text("x")

        assert before == same
        assert before != stat_signature(root)
        assert [str(tmp_path / "d")] == subdirs(str(tmp_path))
