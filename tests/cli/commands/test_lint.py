"""`memd lint`: targets, formats, exit codes, config severities, the real script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memd.claude_code.paths import auto_mem_path
from memd.cli.main import main
from tests.conftest import Home

CORPUS = Path(__file__).parents[2] / "lint" / "corpus" / "clean"
MEMD = str(Path(sys.executable).parent / "memd")
GOOD = (
    "---\nname: A\ndescription: a specific enough description\ntype: user\n---\nFact.\n"
)


def _clean(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("- [A](a.md) — a\n")
    (root / "a.md").write_text(GOOD)
    return root


class TestExitCodes:
    def test_clean_directory_exits_0(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A clean memory directory prints no findings and exits 0."""
        root = _clean(tmp_path / "memory")

        code = main(["lint", str(root)])

        assert 0 == code
        assert "no problems found\n" == capsys.readouterr().out

    def test_errors_exit_1(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file without frontmatter is an error: exit 1."""
        root = _clean(tmp_path / "memory")
        (root / "a.md").write_text("no frontmatter\n")

        code = main(["lint", str(root)])

        assert 1 == code
        assert "M001" in capsys.readouterr().out

    def test_warnings_fail_only_with_strict(self, tmp_path: Path) -> None:
        """An orphan is a warning: exit 0, or 1 with --strict."""
        root = _clean(tmp_path / "memory")
        (root / "b.md").write_text(GOOD.replace("name: A", "name: B"))

        assert (0, 1) == (
            main(["lint", str(root)]),
            main(["lint", "--strict", str(root)]),
        )

    def test_missing_path_exits_2_with_one_line(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A path that does not exist is a usage error: one stderr line, exit 2."""
        code = main(["lint", str(tmp_path / "nope")])

        err = capsys.readouterr().err
        assert 2 == code
        assert [
            f"memd: {tmp_path / 'nope'}: no such file or directory"
        ] == err.splitlines()


class TestAFileAsTheAgentNamesIt:
    """Inside a project, a memory file's name is relative to its memory dir."""

    def test_lint_and_fix_take_the_name_the_index_uses(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        memory = _clean(Path(auto_mem_path(str(git_repo))))
        (memory / "feedback_tests.md").write_text("no frontmatter\n")
        monkeypatch.chdir(git_repo)

        code = main(["lint", "feedback_tests.md"])

        out = capsys.readouterr().out
        assert 1 == code
        assert "feedback_tests.md" in out
        assert "M001" in out
        assert 0 == main(["fix", "--dry-run", "a.md"])

    def test_a_name_in_neither_place_says_where_it_looked(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        memory = _clean(Path(auto_mem_path(str(git_repo))))
        monkeypatch.chdir(git_repo)

        assert 2 == main(["lint", "nope.md"])
        assert [
            f"memd: nope.md: no such file here or in this project's memory ({memory})"
        ] == capsys.readouterr().err.splitlines()

    def test_a_file_beside_the_cwd_still_wins_and_dotdot_never_reaches_out(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        _clean(Path(auto_mem_path(str(git_repo))))
        (git_repo / "a.md").write_text("no frontmatter\n")
        monkeypatch.chdir(git_repo)

        assert 1 == main(["lint", "a.md"])  # the working tree's a.md, not memory's
        capsys.readouterr()
        assert 2 == main(["lint", "../memory/a.md"])


class TestTargets:
    def test_all_lints_every_project_memory(
        self,
        isolated_home,
        capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
    ) -> None:
        """With --all, every <base>/projects/*/memory directory is linted."""
        _clean(isolated_home.claude / "projects" / "-one" / "memory")
        broken = _clean(isolated_home.claude / "projects" / "-two" / "memory")
        (broken / "a.md").write_text("no frontmatter\n")

        code = main(["lint", "--all", "--format", "json"])

        paths = {d["path"] for d in json.loads(capsys.readouterr().out)["diagnostics"]}
        assert 1 == code
        assert {str(broken / "a.md")} == paths

    def test_default_is_the_current_project(
        self,
        git_repo: Path,
        isolated_home: Home,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """No PATH: only the current directory's project, as prompt and log do."""
        other = _clean(isolated_home.claude / "projects" / "-other" / "memory")
        (other / "a.md").write_text("no frontmatter\n")
        mine = _clean(Path(auto_mem_path(str(git_repo))))
        (mine / "a.md").write_text(GOOD.replace("type: user", "type: usr"))
        monkeypatch.chdir(git_repo)

        code = main(["lint", "--format", "json"])

        paths = {d["path"] for d in json.loads(capsys.readouterr().out)["diagnostics"]}
        assert 1 == code
        assert {str(mine / "a.md")} == paths

    def test_no_memory_is_not_no_problems(
        self,
        git_repo: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """A project with no memory yet: says so, never "no problems found"."""
        monkeypatch.chdir(git_repo)

        code = main(["lint"])

        out = capsys.readouterr().out
        assert 0 == code
        assert "no problems found" not in out
        assert out.startswith("no memory for this project yet (")
        assert "`--all` acts on every project" in out

    def test_all_with_no_memory_at_all(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code = main(["lint", "--all"])

        out = capsys.readouterr().out
        assert 0 == code
        assert out.startswith("no memory yet: no project has a memory directory")

    def test_paths_and_all_together_is_a_usage_error(self, tmp_path: Path) -> None:
        assert 2 == main(["lint", "--all", str(tmp_path)])

    def test_project_root_resolves_like_the_agent(
        self, git_repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A project root is linted at the memory directory the agent would use."""
        memory = _clean(Path(auto_mem_path(str(git_repo))))
        (memory / "a.md").write_text(GOOD.replace("type: user", "type: usr"))

        code = main(["lint", "--format", "github", str(git_repo)])

        out = capsys.readouterr().out
        assert 1 == code
        assert out.startswith(
            f"::error file={memory / 'a.md'},line=4,title=M008 type-invalid::"
        )

    def test_project_without_memory_is_a_usage_error(
        self, git_repo: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A project root with no memory directory exits 2 and names where it looked."""
        code = main(["lint", str(git_repo)])

        assert 2 == code
        assert "its project has none at" in capsys.readouterr().err

    def test_single_file_and_relative_paths(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """A lone .md file is linted by itself; paths print relative to the cwd."""
        (tmp_path / "note.md").write_text(GOOD.replace("type: user", ""))
        monkeypatch.chdir(tmp_path)

        code = main(["lint", "--format", "json", "note.md"])

        [finding] = json.loads(capsys.readouterr().out)["diagnostics"]
        assert (1, "note.md", "M007") == (code, finding["path"], finding["code"])

    def test_corpus_is_clean(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The real-world corpus passes even with --strict."""
        root = tmp_path / "memory"
        shutil.copytree(CORPUS, root)

        assert 0 == main(["lint", "--strict", str(root)])

    def test_files_inside_a_linted_directory_are_not_reported_twice(
        self,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:
        """pre-commit passes MEMORY.md and a topic file: each finding appears once."""
        root = _clean(tmp_path / "memory")
        (root / "a.md").write_text(GOOD.replace("type: user", "type: usr"))
        monkeypatch.chdir(tmp_path)

        main(["lint", "--format", "json", "memory/MEMORY.md", "memory/a.md"])

        found = json.loads(capsys.readouterr().out)["diagnostics"]
        assert [("memory/a.md", "M008")] == [(d["path"], d["code"]) for d in found]


class TestPreCommitHook:
    def test_hook_definition(self) -> None:
        """The memd-lint hook runs `memd lint` on memory markdown, not daily logs."""
        import re

        import yaml

        hooks = yaml.safe_load(
            (Path(__file__).parents[3] / ".pre-commit-hooks.yaml").read_text()
        )
        [hook] = hooks
        files, exclude = re.compile(hook["files"]), re.compile(hook["exclude"])

        def picked(path: str) -> bool:
            return bool(files.search(path)) and not exclude.search(path)

        assert ("memd-lint", "memd lint", "python") == (
            hook["id"],
            hook["entry"],
            hook["language"],
        )
        assert [True, True, True, True, False, False, False, False, False, False] == [
            picked(p)
            for p in (
                "memory/user_role.md",
                ".claude/memory/team/x.md",
                "projects/-home-me-app/memory/MEMORY.md",
                ".claude/agent-memory/reviewer/MEMORY.md",
                "MEMORY.md",
                "memory/logs/2026/11/2026-11-28.md",
                "docs/guide.md",
                ".claude/commands/x.md",
                ".claude/agents/team/x.md",
                "skills/memory/SKILL.md",
            )
        ]


class TestConfig:
    def test_config_severities_apply(
        self,
        isolated_home,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
    ) -> None:
        """`[lint.severity]` in config.toml turns an orphan into an error."""
        (isolated_home.config / "memd").mkdir()
        (isolated_home.config / "memd" / "config.toml").write_text(
            '[lint.severity]\ntopic-orphan = "error"\n'
        )
        root = _clean(tmp_path / "memory")
        (root / "b.md").write_text(GOOD.replace("name: A", "name: B"))

        code = main(["lint", "--format", "sarif", str(root)])

        [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
        assert (1, "I006", "error") == (code, result["ruleId"], result["level"])


class TestConsoleScript:
    def test_exit_codes_through_the_real_script(
        self, tmp_path: Path, isolated_home
    ) -> None:  # type: ignore[no-untyped-def]
        """The installed `memd` exits 1 on errors, 2 (one stderr line) on a bad path."""
        root = _clean(tmp_path / "memory")
        (root / "a.md").write_bytes(b"\x00binary")
        env = isolated_home.env()

        bad = subprocess.run(
            [MEMD, "lint", "--color", "never", str(root)],
            capture_output=True,
            text=True,
            env=env,
        )
        usage = subprocess.run(
            [MEMD, "lint", str(tmp_path / "nope")],
            capture_output=True,
            text=True,
            env=env,
        )

        assert (1, "F002") == (
            bad.returncode,
            "F002" if "F002" in bad.stdout else bad.stdout,
        )
        assert (2, 1, "") == (
            usage.returncode,
            len(usage.stderr.splitlines()),
            usage.stdout,
        )

    def test_color_always(self, tmp_path: Path, isolated_home) -> None:  # type: ignore[no-untyped-def]
        """--color always colours even when stdout is a pipe."""
        root = _clean(tmp_path / "memory")
        (root / "a.md").write_text("no frontmatter\n")

        out = subprocess.run(
            [MEMD, "lint", "--color", "always", str(root)],
            capture_output=True,
            text=True,
            env=isolated_home.env(),
        ).stdout

        assert "\033[31m" in out
        assert os.sep in out
