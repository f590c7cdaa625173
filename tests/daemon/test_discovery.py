"""Which memory directories the daemon watches."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from memd.config import load_config
from memd.daemon.discovery import WatchRoot, discover, memory_dir_of, plan_watch_roots
from memd.state import remember_project
from tests.conftest import sanitized_by_hand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conftest import Home


def _mkdirs(*paths: Path) -> None:
    for path in paths:
        path.mkdir(parents=True)


class TestDiscover:
    def test_project_memory_dirs(self, isolated_home: Home) -> None:
        """Every <base>/projects/*/memory directory is found; other folders are not."""
        projects = isolated_home.claude / "projects"
        _mkdirs(projects / "a" / "memory", projects / "b" / "memory", projects / "c")

        found = discover(load_config())

        expected = (str(projects / "a" / "memory"), str(projects / "b" / "memory"))
        assert expected == found.memory_dirs
        assert (WatchRoot(str(projects), True),) == tuple(
            r for r in found.watch_roots if r.recursive
        )

    def test_symlinked_project_skipped(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """A memory dir reached through a symlink is not followed."""
        projects = isolated_home.claude / "projects"
        _mkdirs(projects, tmp_path / "elsewhere" / "memory")
        (projects / "evil").symlink_to(tmp_path / "elsewhere")

        assert () == discover(load_config()).memory_dirs

    def test_missing_base_watches_ancestor(self, isolated_home: Home) -> None:
        """Without <base>/projects, its nearest existing ancestor is watched flat."""
        found = discover(load_config())

        assert WatchRoot(str(isolated_home.home), False) in found.watch_roots
        assert not any(root.recursive for root in found.watch_roots)

    def test_config_watch_dirs(self, isolated_home: Home, tmp_path: Path) -> None:
        """A configured directory outside the base gets its own recursive watch."""
        extra = tmp_path / "team-mem"
        extra.mkdir()
        config = dataclasses.replace(load_config(), watch_dirs=(str(extra),))

        found = discover(config)

        assert (str(extra),) == found.memory_dirs
        assert "config:watch_dirs" == found.sources[str(extra)]
        assert WatchRoot(str(extra), True) in found.watch_roots

    def test_env_override(self, isolated_home: Home, tmp_path: Path) -> None:
        """CLAUDE_COWORK_MEMORY_PATH_OVERRIDE in the daemon's environment is watched."""
        target = tmp_path / "override"
        env = isolated_home.env(CLAUDE_COWORK_MEMORY_PATH_OVERRIDE=str(target))

        found = discover(load_config(env), env=env)

        assert (str(target),) == found.memory_dirs
        # Not there yet: its parent is watched until it appears.
        assert WatchRoot(str(tmp_path), False) in found.watch_roots

    def test_user_settings_directory(self, isolated_home: Home, tmp_path: Path) -> None:
        """A user settings autoMemoryDirectory is watched, and the file itself too."""
        isolated_home.claude.mkdir()
        settings = isolated_home.claude / "settings.json"
        settings.write_text(json.dumps({"autoMemoryDirectory": str(tmp_path / "m")}))

        found = discover(load_config())

        assert (str(tmp_path / "m"),) == found.memory_dirs
        assert str(settings) in found.files

    def test_bad_settings_is_a_diagnostic(self, isolated_home: Home) -> None:
        """Invalid JSON in the user settings gives a diagnostic, not an exception."""
        isolated_home.claude.mkdir()
        (isolated_home.claude / "settings.json").write_text("{nope")

        found = discover(load_config())

        assert 1 == len(found.diagnostics)

    def test_known_and_configured_projects(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """Projects `memd prompt --project` remembered resolve like the agent does."""
        config = load_config()
        remember_project(config.state_dir, str(git_repo))
        from memd.state import known_projects

        found = discover(config, known_projects=known_projects)

        sanitized = sanitized_by_hand(str(git_repo.resolve()))
        expected = f"{isolated_home.claude}/projects/{sanitized}/memory"
        assert (expected,) == found.memory_dirs
        assert "state:projects" == found.sources[expected]

    def test_disabled_project_left_out(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """A project whose settings switch memory off is not watched, and says why."""
        (git_repo / ".claude").mkdir()
        (git_repo / ".claude" / "settings.json").write_text(
            '{"autoMemoryEnabled": false}'
        )
        config = dataclasses.replace(load_config(), watch_projects=(str(git_repo),))

        found = discover(config)

        assert () == found.memory_dirs
        assert [os.path.realpath(git_repo)] == [root for root, _ in found.disabled]

    def test_trust_decides_and_is_watched(
        self, isolated_home: Home, git_repo: Path, tmp_path: Path
    ) -> None:
        """Under 2.1.332 a trusted project's settings choose its dir; ~/.claude.json
        is one of the files whose change re-runs discovery (2.1.112: not read)."""
        root = os.path.realpath(git_repo)
        (git_repo / ".claude").mkdir()
        chosen = tmp_path / "proj-mem"
        (git_repo / ".claude" / "settings.json").write_text(
            json.dumps({"autoMemoryDirectory": str(chosen)})
        )
        trust_file = isolated_home.home / ".claude.json"
        config = dataclasses.replace(load_config(), watch_projects=(str(git_repo),))

        untrusted = discover(config)
        trust_file.write_text(
            json.dumps({"projects": {root: {"hasTrustDialogAccepted": True}}})
        )
        trusted = discover(config)
        old = discover(config, profile="2.1.112")

        assert str(chosen) not in untrusted.memory_dirs
        assert str(trust_file) in untrusted.files
        assert str(chosen) in trusted.memory_dirs
        assert str(chosen) not in old.memory_dirs
        assert str(trust_file) not in old.files


class TestPlanWatchRoots:
    def test_dirs_under_projects_need_no_watch(self, tmp_path: Path) -> None:
        """One recursive watch covers every project under the projects root."""
        projects = tmp_path / "projects"
        _mkdirs(projects / "a" / "memory")

        roots = plan_watch_roots([str(projects / "a" / "memory")], str(projects))

        assert (WatchRoot(str(projects), True),) == roots

    def test_file_dirs_watched_flat(self, tmp_path: Path) -> None:
        """A settings file is covered by a flat watch on its directory."""
        (tmp_path / "cfg").mkdir()

        roots = plan_watch_roots(
            [], str(tmp_path / "cfg" / "projects"), [str(tmp_path / "cfg" / "x.json")]
        )

        assert (WatchRoot(str(tmp_path / "cfg"), False),) == roots


class TestMemoryDirOf:
    def test_inside_and_outside(self) -> None:
        """Paths map to the memory dir containing them, or to nothing."""
        dirs = frozenset({"/a/memory", "/b/memory"})

        assert "/a/memory" == memory_dir_of("/a/memory/team/x.md", dirs)
        assert "/a/memory" == memory_dir_of("/a/memory", dirs)
        assert memory_dir_of("/a/memoryx/y.md", dirs) is None


class TestDisabledEverywhere:
    def test_env_switch_watches_nothing(self, isolated_home: Home) -> None:
        """With CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 the daemon watches nothing."""
        (isolated_home.claude / "projects" / "a" / "memory").mkdir(parents=True)
        env = isolated_home.env(CLAUDE_CODE_DISABLE_AUTO_MEMORY="1")

        found = discover(load_config(env), env=env)

        assert () == found.memory_dirs
        assert (("*", "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY"),) == found.disabled
