"""memd.truth against real git repositories with real history (issue 43, items 1, 2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd.cli.main import main
from memd.truth.check import check_memory
from tests.truth.conftest import Project


def findings(
    project: Project, **kwargs: object
) -> list[tuple[str, str, int | None, str]]:
    """(code, path, line, message) of what check_memory reports for `project`."""
    report = check_memory(
        str(project.memory), str(project.root), cache_dir=None, **kwargs
    )
    return [(d.code, d.path, d.line, d.message) for d in report.diagnostics]


def history(project: Project) -> tuple[str, str]:
    """A project that renamed session.ts, removed legacy.py: (rename, removal) sha."""
    project.write("src/auth/session.ts", "export const session = () => 42;\n" * 5)
    project.write("src/legacy.py", "print('old')\n")
    project.write("src/keep.py", "print('kept')\n")
    project.write(".gitignore", "dist/\n.env\n")
    project.commit("init", date="2026-11-01T10:00:00+00:00")
    project.git("mv", "src/auth/session.ts", "src/auth/sessions.ts")
    renamed = project.commit("rename", date="2026-11-10T10:00:00+00:00")
    (project.root / "src" / "legacy.py").unlink()
    removed = project.commit("drop legacy", date="2026-11-20T10:00:00+00:00")
    return renamed, removed


class TestPaths:
    def test_renamed_path_says_what_took_its_place(self, project: Project) -> None:
        """A backticked path git renamed is a D001 naming the new path, sha and date."""
        renamed, _ = history(project)
        project.memory_file(
            "project_auth.md", "Sessions live in `src/auth/session.ts`.\n"
        )

        found = findings(project)

        assert [
            (
                "D001",
                "project_auth.md",
                6,
                f"`src/auth/session.ts` no longer exists: renamed to "
                f"`src/auth/sessions.ts` in {renamed} on 2026-11-10",
            )
        ] == found

    def test_removed_path_says_when(self, project: Project) -> None:
        """A path git removed is a D001 with the removing commit and its date."""
        _, removed = history(project)
        project.memory_file("project_x.md", "Old entry point: src/legacy.py (prose).\n")

        found = findings(project)

        assert [
            (
                "D001",
                "project_x.md",
                6,
                f"`src/legacy.py` no longer exists: removed in {removed} on 2026-11-20",
            )
        ] == found

    def test_left_alone(self, project: Project) -> None:
        """Never-existing, ignored, fenced, URL, /tmp, ~ and present paths: nothing."""
        history(project)
        (project.root / "untracked").mkdir()
        (project.root / "untracked" / "new.py").write_text("x\n")
        project.memory_file(
            "project_y.md",
            "Planned: `src/auth/oauth.ts` (never written).\n"
            "Built output: `dist/bundle.js`; secrets in `.env`.\n"
            "See https://example.com/src/legacy.py and `/tmp/src/legacy.py`.\n"
            "Home: `~/src/legacy.py`. Current: `src/keep.py`, `src/auth/sessions.ts`.\n"
            "New, not committed yet: `untracked/new.py`. Folder `src/auth/` is fine.\n"
            "```\nsrc/legacy.py in a fence\n`src/auth/session.ts`\n```\n"
            "~~~sh\nmake gone && npm run gone\n~~~\n"
            "A link [legacy](src/legacy.py) is the index rules' business.\n",
        )

        assert [] == findings(project)

    def test_ignored_path_once_tracked_is_left_alone(self, project: Project) -> None:
        """A path git removed and now ignores (maybe on someone's disk): nothing."""
        project.write("config/local.json", "{}\n")
        project.commit("add local config")
        (project.root / "config" / "local.json").unlink()
        project.write(".gitignore", "config/local.json\n")
        project.commit("stop tracking local config")
        project.memory_file("project_c.md", "Local settings: `config/local.json`.\n")

        assert [] == findings(project)

    def test_bare_name_of_one_file(self, project: Project) -> None:
        """A bare name that named exactly one file counts; a name of two does not."""
        _, removed = history(project)
        project.write("a/util.py", "x\n")
        project.write("b/util.py", "y\n")
        project.commit("two utils")
        (project.root / "a" / "util.py").unlink()
        (project.root / "b" / "util.py").unlink()
        project.commit("drop utils")
        project.memory_file("project_n.md", "See `legacy.py` and `util.py`.\n")

        found = findings(project)

        assert [
            (
                "D001",
                "project_n.md",
                6,
                f"`legacy.py` (`src/legacy.py`) no longer exists: removed in {removed}"
                " on 2026-11-20",
            )
        ] == found

    def test_folder_gone(self, project: Project) -> None:
        """A folder whose every file went is gone; the newest removal dates it."""
        project.write("old/a.py", "a\n")
        project.write("old/b.py", "b\n")
        project.write("main.py", "m\n")
        project.commit("init")
        project.git("rm", "-q", "old/a.py")
        project.commit("drop a")
        project.git("rm", "-q", "old/b.py")
        last = project.commit("drop b")
        project.memory_file("project_f.md", "Old code sits in `old/`.\n")

        found = findings(project)

        assert ["D001"] == [code for code, *_ in found]
        assert last in found[0][3]

    def test_path_with_a_line_number(self, project: Project) -> None:
        """`src/legacy.py:12` names src/legacy.py; the finding quotes it as written."""
        history(project)
        project.memory_file("project_l.md", "The bug is at `src/legacy.py:12`.\n")

        found = findings(project)

        assert found[0][3].startswith("`src/legacy.py:12` no longer exists")

    def test_index_claims_are_checked(self, project: Project) -> None:
        """MEMORY.md is memory too: a path it names is checked, on its own line."""
        history(project)
        (project.memory / "MEMORY.md").write_text(
            "# Index\nEntry point was `src/legacy.py`.\n"
        )

        found = findings(project)

        assert [("D001", "MEMORY.md", 2)] == [f[:3] for f in found]


class TestCommands:
    def test_removed_scripts_targets_and_recipes(self, project: Project) -> None:
        """npm/pnpm/yarn scripts, make targets, just recipes, project scripts gone."""
        project.write(
            "package.json",
            json.dumps({"scripts": {"build": "tsc", "lint": "eslint .", "e2e": "x"}}),
        )
        project.write("Makefile", "build:\n\tcc x.c\ndeploy: build\n\t./deploy\n")
        project.write("justfile", "test:\n  pytest\nrelease version:\n  echo\n")
        project.write(
            "pyproject.toml",
            '[project]\nname = "x"\n[project.scripts]\nshop-admin = "x:main"\n'
            'shop-cli = "x:cli"\n',
        )
        project.commit("init")
        project.write("package.json", json.dumps({"scripts": {"build": "tsc"}}))
        project.write("Makefile", "build:\n\tcc x.c\n")
        project.write("justfile", "test:\n  pytest\n")
        project.write(
            "pyproject.toml",
            '[project]\nname = "x"\n[project.scripts]\nshop-cli = "x:cli"\n',
        )
        went = project.commit("trim")
        project.memory_file(
            "project_cmd.md",
            "Run `npm run lint`, `pnpm e2e`, `yarn build`, `make deploy`,\n"
            "`just release 1.2`, `uv run shop-admin` and `shop-cli --help`.\n"
            "Also `make build` and `just test`, `pnpm install`.\n",
        )

        found = findings(project)

        assert [
            (6, "`npm run lint` is no longer defined: script `lint` was removed from"
             f" package.json in {went}"),
            (6, "`pnpm e2e` is no longer defined: script `e2e` was removed from"
             f" package.json in {went}"),
            (6, "`make deploy` is no longer defined: target `deploy` was removed from"
             f" Makefile in {went}"),
            (7, "`just release` is no longer defined: recipe `release` was removed from"
             f" justfile in {went}"),
            (7, "`uv run shop-admin` is no longer defined: script `shop-admin` was"
             f" removed from pyproject.toml in {went}"),
        ] == [(ln, msg.rsplit(" on ", 1)[0]) for _, _, ln, msg in found]  # fmt: skip

    def test_definition_file_removed(self, project: Project) -> None:
        """A Makefile that went takes its targets with it, and the finding says so."""
        project.write("Makefile", "deploy:\n\t./deploy\n")
        project.write("main.py", "x\n")
        project.commit("init")
        (project.root / "Makefile").unlink()
        went = project.commit("no more make")
        project.memory_file("project_m.md", "Ship with `make deploy`.\n")

        found = findings(project)

        assert [
            f"`make deploy` is no longer defined: Makefile was removed in {went}"
        ] == [message.rsplit(" on ", 1)[0] for *_, message in found]

    def test_never_defined_and_other_folders_left_alone(self, project: Project) -> None:
        """A script no version defined, and one run in another folder, give nothing."""
        project.write("package.json", json.dumps({"scripts": {"dev": "vite"}}))
        project.write("web/package.json", json.dumps({"scripts": {"serve": "x"}}))
        project.commit("init")
        project.write("package.json", json.dumps({"scripts": {}}))
        project.commit("drop dev from the root")
        project.write(
            "web/package.json", json.dumps({"scripts": {"serve": "x", "dev": "y"}})
        )
        project.commit("web gets dev")
        project.memory_file(
            "project_n.md",
            "Run `npm run typo`, `cd web && npm run old`, `npm run serve`,"
            " `npm run dev`.\n",
        )

        assert [] == findings(project)


class TestUnreadable:
    def test_no_git_is_one_info(self, tmp_path: Path) -> None:
        """A project outside any repository gives one D003 info, nothing else."""
        from memd.claude_code.paths import auto_mem_path

        root = tmp_path / "plain"
        root.mkdir()
        memory = Path(auto_mem_path(str(root)))
        memory.mkdir(parents=True)
        (memory / "MEMORY.md").write_text("- `src/a.py` and `make x`\n")

        report = check_memory(str(memory), str(root), cache_dir=None)

        assert [("D003", "info")] == [
            (d.code, str(d.severity)) for d in report.diagnostics
        ]

    def test_hostile_config_runs_nothing(
        self, project: Project, tmp_path: Path
    ) -> None:
        """fsmonitor, hooks, filters, textconv, a pager: one info, no program ran."""
        marker = tmp_path / "ran"
        script = tmp_path / "evil.sh"
        script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
        script.chmod(0o755)
        history(project)
        project.write(".gitattributes", "* filter=evil diff=evil\n")
        project.commit("attributes")
        for key in (
            "core.fsmonitor",
            "core.hooksPath",
            "filter.evil.clean",
            "filter.evil.smudge",
            "filter.evil.process",
            "diff.evil.textconv",
            "core.pager",
            "gpg.program",
        ):
            project.git("config", key, str(script))
        project.git("config", "log.showSignature", "true")
        hooks = project.root / ".git" / "hooks"
        for hook in ("post-checkout", "pre-commit", "reference-transaction"):
            (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
            (hooks / hook).chmod(0o755)
        project.memory_file("project_h.md", "Sessions: `src/auth/session.ts`.\n")

        found = findings(project)

        assert ["D003"] == [code for code, *_ in found]
        assert "core.fsmonitor" in found[0][3]
        assert not marker.exists()

    def test_filters_and_hooks_alone_still_read_and_never_run(
        self, project: Project, tmp_path: Path
    ) -> None:
        """A repository with LFS-like filters, husky-like hooks is read; none runs."""
        marker = tmp_path / "ran"
        script = tmp_path / "evil.sh"
        script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
        script.chmod(0o755)
        renamed, _ = history(project)
        project.write(".gitattributes", "* filter=evil diff=evil\n")
        project.commit("attributes")
        project.git("config", "filter.evil.clean", str(script))
        project.git("config", "filter.evil.smudge", str(script))
        project.git("config", "core.hooksPath", str(tmp_path))
        for hook in ("post-checkout", "pre-commit", "reference-transaction"):
            (tmp_path / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
            (tmp_path / hook).chmod(0o755)
        project.memory_file("project_h.md", "Sessions: `src/auth/session.ts`.\n")

        found = findings(project)

        assert ["D001"] == [code for code, *_ in found]
        assert renamed in found[0][3]
        assert not marker.exists()

    def test_an_included_config_is_not_followed(
        self, project: Project, tmp_path: Path
    ) -> None:
        """include.path could bring any key: the repository is not read; none runs."""
        marker = tmp_path / "ran"
        script = tmp_path / "evil.sh"
        script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
        script.chmod(0o755)
        evil = tmp_path / "evil.gitconfig"
        evil.write_text(
            f"[core]\n\tfsmonitor = {script}\n[log]\n\tshowSignature = true\n"
        )
        history(project)
        project.git("config", "include.path", str(evil))
        project.memory_file("project_i.md", "Sessions: `src/auth/session.ts`.\n")

        found = findings(project)

        assert ["D003"] == [code for code, *_ in found]
        assert "include.path" in found[0][3]
        assert not marker.exists()

    def test_a_history_too_slow_to_read_is_one_info(self, project: Project) -> None:
        """git past its deadline gives one D003 info, never a hang."""
        history(project)
        project.memory_file("project_s.md", "Sessions: `src/auth/session.ts`.\n")

        found = findings(project, timeout_seconds=0.000001)

        assert ["D003"] == [code for code, *_ in found]

    def test_git_output_past_the_bound_is_an_error(self, project: Project) -> None:
        """The one runner stops git past max_output_bytes and says so."""
        from memd.gitsync.git import Git, GitError

        history(project)

        with pytest.raises(GitError, match="more than 10 bytes"):
            Git(work_tree=str(project.root)).run("log", max_output_bytes=10)


class TestCache:
    def test_cached_by_head_and_refreshed_when_it_moves(
        self, project: Project, tmp_path: Path
    ) -> None:
        """The facts are kept per HEAD; a new commit is read on top of them."""
        history(project)
        project.memory_file("project_k.md", "Kept: `src/keep.py`.\n")
        cache = tmp_path / "cache"

        first = check_memory(
            str(project.memory), str(project.root), cache_dir=str(cache)
        )
        (project.root / "src" / "keep.py").unlink()
        gone = project.commit("drop keep")
        second = check_memory(
            str(project.memory), str(project.root), cache_dir=str(cache)
        )

        assert [] == [d.code for d in first.diagnostics]
        assert [f"`src/keep.py` no longer exists: removed in {gone}"] == [
            d.message.rsplit(" on ", 1)[0] for d in second.diagnostics
        ]
        assert second.head is not None
        assert [second.head] == [
            json.loads(p.read_text())["head"] for p in (cache / "truth").glob("*.json")
        ]


class TestCommandLine:
    def test_lint_project_and_inside_the_project(
        self,
        project: Project,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """`memd lint --project DIR` and `memd lint` run in the project report D001."""
        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")

        by_flag = main(["lint", "--project", str(project.root), "--format", "json"])
        flagged = json.loads(capsys.readouterr().out)["diagnostics"]
        monkeypatch.chdir(project.root / "src")
        inside = main(["lint", "--format", "json"])
        here = json.loads(capsys.readouterr().out)["diagnostics"]

        assert (0, 0) == (by_flag, inside)
        assert ["D001"] == [d["code"] for d in flagged] == [d["code"] for d in here]

    @pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
    def test_every_format(
        self, fmt: str, project: Project, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The finding shows in every output format with its code."""
        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")

        main(["lint", "--project", str(project.root), "--format", fmt])
        out = capsys.readouterr().out

        assert "D001" in out
        assert "src/auth/session.ts" in out

    def test_severity_is_configurable(
        self,
        project: Project,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """`[lint.severity] path-gone = "error"` makes the finding an error (exit 1)."""
        history(project)
        project.memory_file("project_auth.md", "Sessions: `src/auth/session.ts`.\n")
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text('[lint.severity]\npath-gone = "error"\nD004 = "off"\n')

        status = main(["lint", "--project", str(project.root)])

        assert 1 == status
        assert "error" in capsys.readouterr().out


class TestRenameFix:
    def test_offered_under_dry_run_applied_only_when_asked_and_undone(
        self, project: Project, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--dry-run shows the rename; fix leaves it; --renames applies; --undo."""
        history(project)
        path = project.memory_file(
            "project_auth.md",
            "Sessions: `./src/auth/session.ts:12` and `session.ts`.\n",
        )
        main(["lint", "--project", str(project.root)])  # remembers the root
        before = path.read_bytes()
        capsys.readouterr()

        main(["fix", str(project.memory), "--dry-run"])
        shown = capsys.readouterr().out
        main(["fix", str(project.memory)])
        untouched = path.read_bytes()
        main(["fix", str(project.memory), "--renames"])
        renamed = path.read_text()
        main(["fix", str(project.memory), "--undo"])

        assert "+Sessions: `./src/auth/sessions.ts:12` and `sessions.ts`." in shown
        assert before == untouched
        assert "`./src/auth/sessions.ts:12` and `sessions.ts`" in renamed
        assert before == path.read_bytes()


class TestLoneFile:
    def test_a_lone_file_gets_what_its_directory_gives_it(
        self, project: Project, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd lint FILE` reports the file's D001, and nothing about other files."""
        history(project)
        auth = project.memory_file(
            "project_auth.md", "Sessions: `src/auth/session.ts`.\n"
        )
        project.memory_file("project_old.md", "Old: `src/legacy.py`.\n")
        main(["lint", "--project", str(project.root)])  # remembers the root
        capsys.readouterr()

        main(["lint", str(auth), "--format", "json"])
        found = json.loads(capsys.readouterr().out)["diagnostics"]

        assert [("D001", str(auth))] == [(d["code"], d["path"]) for d in found]


class TestAmbiguousNames:
    def test_common_names_and_other_memories_need_a_folder(
        self, project: Project
    ) -> None:
        """A bare `settings.json` (whose?) or another memory's name: nothing."""
        project.write(".vscode/settings.json", "{}\n")
        project.write("notes/project_x.md", "x\n")
        project.write("main.go", "package main\n")
        project.commit("init")
        project.git("rm", "-q", ".vscode/settings.json", "notes/project_x.md")
        project.commit("drop")
        project.memory_file(
            "project_x.md", "Edit `settings.json`; see `project_x.md`.\n"
        )

        assert [] == findings(project)
