"""The one naming of a memory dir: its project's folder, from every source memd knows.

Real folders, real git repositories, real transcript files under a fresh HOME.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memd.claude_code.paths import auto_mem_path
from memd.projects.naming import ProjectNames, project_label, tilde
from memd.projects.roots import (
    TRANSCRIPT_HEAD_BYTES,
    load_project_names,
    roots_by_memory_dir,
    transcript_cwds,
)
from memd.state import remember_project
from tests.conftest import Home, git, make_git_repo


def _transcript(
    home: Home, cwd: Path, *, name: str = "s1", lines: list[str] | None = None
) -> Path:
    folder = home.claude / "projects" / str(cwd).replace("/", "-").replace(".", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    records = lines or [
        json.dumps({"type": "summary", "summary": "a session"}),
        json.dumps({"type": "user", "cwd": str(cwd), "message": {"content": "hi"}}),
    ]
    path.write_text("\n".join(records) + "\n")
    return path


def _user_settings(home: Home, settings: dict[str, object]) -> None:
    home.claude.mkdir(exist_ok=True)
    (home.claude / "settings.json").write_text(json.dumps(settings))


def _key(memory_dir: str) -> str:
    return memory_dir.rstrip(os.sep)


class TestLabel:
    def test_one_root_is_its_folder_under_home(self) -> None:
        assert (
            project_label("/h/.claude/projects/-h-code-w/memory", ["/h/code/w"], "/h")
            == "~/code/w"
        )

    def test_two_roots_are_both_named(self) -> None:
        label = project_label("/m", ["/h/code/a", "/h/code/b"], "/h")

        assert label == "~/code/a and ~/code/b"

    def test_many_roots_stay_one_line(self) -> None:
        label = project_label("/m", [f"/h/p{i}" for i in range(6)], "/h")

        assert label == "~/p0, ~/p1, ~/p2 and 3 more"

    def test_no_root_keeps_the_path(self) -> None:
        memory_dir = "/h/.claude/projects/-srv-x/memory/"

        assert project_label(memory_dir, [], "/h") == "~/.claude/projects/-srv-x/memory"

    def test_home_itself_and_a_neighbour_of_home(self) -> None:
        assert tilde("/h", "/h") == "~"
        assert tilde("/hx/code", "/h") == "/hx/code"
        assert tilde("/srv/code", "/") == "/srv/code"

    def test_an_unknown_dir_is_named_by_its_path(self) -> None:
        names = ProjectNames({}, "/h")

        assert names.both("/h/m/") == "~/m"


class TestRoots:
    def test_a_transcript_cwd_in_a_subfolder_names_the_git_root(
        self, isolated_home: Home
    ) -> None:
        # a directory set in settings: no folder name to spell, only the transcript
        _user_settings(isolated_home, {"autoMemoryDirectory": "~/mem"})
        (isolated_home.home / "code").mkdir()
        repo = make_git_repo(isolated_home.home / "code" / "webshop")
        (repo / "src").mkdir()
        memory_dir = auto_mem_path(str(repo))
        _transcript(isolated_home, repo / "src")

        names = load_project_names([memory_dir])

        assert names.label(memory_dir) == "~/code/webshop"
        assert names.detail(memory_dir) == "~/mem"

    def test_two_projects_sharing_one_directory_are_both_named(
        self, isolated_home: Home
    ) -> None:
        shared = isolated_home.home / "shared-memory"
        _user_settings(isolated_home, {"autoMemoryDirectory": "~/shared-memory"})
        for name in ("api", "web"):
            (isolated_home.home / "code" / name).mkdir(parents=True)
            _transcript(isolated_home, isolated_home.home / "code" / name)

        roots = roots_by_memory_dir([str(shared)])

        assert roots == {
            str(shared): (
                str(isolated_home.home / "code" / "api"),
                str(isolated_home.home / "code" / "web"),
            )
        }
        label = load_project_names([str(shared) + "/"]).label(str(shared))
        assert label == "~/code/api and ~/code/web"

    def test_a_cwd_of_another_project_names_nothing(self, isolated_home: Home) -> None:
        mine = isolated_home.home / "code" / "mine"
        other = isolated_home.home / "code" / "other"
        mine.mkdir(parents=True)
        other.mkdir(parents=True)
        memory_dir = auto_mem_path(str(mine))
        os.rmdir(mine)  # unspellable now: only a root that maps back may name it
        _transcript(isolated_home, other)

        roots = roots_by_memory_dir([memory_dir])

        assert roots == {_key(memory_dir): ()}

    def test_a_remembered_root_names_its_directory(self, isolated_home: Home) -> None:
        (isolated_home.home / "code").mkdir()
        repo = make_git_repo(isolated_home.home / "code" / "shop.v2")
        remember_project(str(isolated_home.state / "memd"), str(repo))
        memory_dir = auto_mem_path(str(repo))

        names = load_project_names([memory_dir], transcripts=False)

        assert names.label(memory_dir) == "~/code/shop.v2"

    def test_a_worktree_cwd_names_the_main_working_tree(
        self, isolated_home: Home
    ) -> None:
        (isolated_home.home / "code").mkdir()
        repo = make_git_repo(isolated_home.home / "code" / "app")
        tree = isolated_home.home / "wt-app"
        git("worktree", "add", "-q", str(tree), cwd=repo)
        memory_dir = auto_mem_path(str(repo))
        _transcript(isolated_home, tree)

        assert load_project_names([memory_dir]).label(memory_dir) == "~/code/app"

    def test_a_default_directory_spells_its_folder_back(
        self, isolated_home: Home
    ) -> None:
        folder = isolated_home.home / "code" / "infra-terraform"
        folder.mkdir(parents=True)
        memory_dir = auto_mem_path(str(folder))

        names = load_project_names([memory_dir])

        assert names.label(memory_dir) == "~/code/infra-terraform"


class TestBoundedReads:
    def test_a_huge_first_line_is_skipped_not_read_whole(
        self, isolated_home: Home
    ) -> None:
        cwd = isolated_home.home / "code" / "big"
        cwd.mkdir(parents=True)
        huge = json.dumps(
            {"cwd": "/elsewhere", "pad": "x" * (4 * TRANSCRIPT_HEAD_BYTES)}
        )
        _transcript(isolated_home, cwd, lines=[huge, json.dumps({"cwd": str(cwd)})])

        assert transcript_cwds() == []

    def test_a_fifo_a_symlink_and_a_deep_line_neither_hang_nor_count(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        cwd = isolated_home.home / "code" / "ok"
        cwd.mkdir(parents=True)
        good = _transcript(isolated_home, cwd)
        folder = good.parent
        os.mkfifo(folder / "fifo.jsonl")
        outside = tmp_path / "outside.jsonl"
        outside.write_text(json.dumps({"cwd": "/from/a/link"}) + "\n")
        (folder / "link.jsonl").symlink_to(outside)
        _transcript(
            isolated_home,
            cwd,
            name="deep",
            lines=['{"cwd": "/deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"],
        )

        assert transcript_cwds() == [str(cwd)]


class TestRootIn:
    def test_a_subfolder_names_the_folder_the_directory_is_named_for(self) -> None:
        from memd.projects.naming import root_in

        memory_dir = "/h/.claude/projects/-h-code-web-shop/memory/"

        assert root_in(memory_dir, "/h/code/web.shop/src/app") == "/h/code/web.shop"
        assert root_in(memory_dir, "/elsewhere") == "/elsewhere"


def test_a_name_cut_and_hashed_past_200_characters_is_spelled_back(
    isolated_home: Home,
) -> None:
    folder = isolated_home.home.joinpath(
        "code", "a" * 70, "b.b" * 25, "c-" * 30 + "end"
    )
    folder.mkdir(parents=True)
    memory_dir = auto_mem_path(str(folder))
    assert len(Path(memory_dir).parent.name) > 200  # the agent cut and hashed it

    names = load_project_names([memory_dir], transcripts=False)

    assert names.label(memory_dir) == "~/" + str(folder.relative_to(isolated_home.home))
