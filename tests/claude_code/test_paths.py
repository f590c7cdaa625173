"""Path resolution: sanitizePath, validateMemoryPath, base dir and getAutoMemPath."""

from __future__ import annotations

import datetime
import json
import os
import string
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given

from memd.claude_code.jscompat import java_string_hash, utf16_len
from memd.claude_code.paths import (
    MemoryLocation,
    auto_mem_path,
    daily_log_path,
    js_normalize,
    memory_base_dir,
    resolve_memory_location,
    sanitize_path,
    validate_memory_path,
)
from tests.conftest import Home, sanitized_by_hand
from tests.strategies import any_text, path_text

# 201 'a's then a tail chosen so that the x31 hash is exactly -2**31.
MIN_HASH_LONG_NAME = "a" * 201 + "02lm\\rlr"
SANITIZED_CHARS = frozenset(string.ascii_letters + string.digits + "-")


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def expected_default(home: Home, root: Path) -> str:
    """The default memory dir, with the root sanitized by the reference's rule."""
    return f"{home.claude}/projects/{sanitized_by_hand(str(root))}/memory/"


class TestSanitizePath:
    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("", ""),
            ("/home/u/proj", "-home-u-proj"),
            ("AbC09", "AbC09"),
            ("a_b.c-d", "a-b-c-d"),
            ("é", "-"),
            ("e\u0301", "e-"),
            ("😀", "--"),
            ("\ud83d", "-"),
            ("C:\\Users\\x", "C--Users-x"),
            ("--//", "----"),
        ],
    )
    def test_replaces_each_non_alphanumeric_unit(
        self, name: str, expected: str
    ) -> None:
        """Every UTF-16 unit outside [A-Za-z0-9] becomes one dash; no collapsing."""
        assert expected == sanitize_path(name)

    def test_200_units_stay_unhashed(self) -> None:
        """A 200-unit result is returned as is."""
        assert "-" * 200 == sanitize_path("/" * 200)

    def test_100_emoji_are_200_units(self) -> None:
        """Astral characters count two units towards the limit."""
        assert "-" * 200 == sanitize_path("😀" * 100)

    def test_201_units_get_the_hash(self) -> None:
        """Past 200 units: the first 200, a dash, the base-36 hash of the original."""
        assert "a" * 200 + "-rkvsv5" == sanitize_path("a" * 201)

    def test_astral_overflow_gets_the_hash(self) -> None:
        """100 emoji and one letter are 201 units, so the hash is appended."""
        actual = sanitize_path("😀" * 100 + "a")

        assert "-" * 200 + "-hnk40b" == actual

    def test_minimum_hash_is_zik0zk(self) -> None:
        """abs(-2**31) is 2147483648, written zik0zk."""
        assert -(2**31) == java_string_hash(MIN_HASH_LONG_NAME)

        assert "a" * 200 + "-zik0zk" == sanitize_path(MIN_HASH_LONG_NAME)

    def test_hash_is_of_the_original_string(self) -> None:
        """Two names that sanitize alike but differ get different suffixes."""
        first = sanitize_path("/" * 201)
        second = sanitize_path("." * 201)

        assert first[:201] == second[:201]
        assert first != second

    @given(any_text)
    @example(MIN_HASH_LONG_NAME)
    @example("😀" * 101)
    def test_charset_and_length(self, name: str) -> None:
        """The result is dashes and ASCII alphanumerics, one per input unit."""
        actual = sanitize_path(name)

        assert set(actual) <= SANITIZED_CHARS
        assert actual == sanitize_path(name)
        if utf16_len(name) <= 200:
            assert utf16_len(name) == len(actual)
        else:
            assert "-" == actual[200]
            assert 202 <= len(actual) <= 207


class TestJsNormalize:
    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("", "."),
            ("/a//b/./c/..", "/a/b"),
            ("/a/b/", "/a/b/"),
            ("//server/share", "/server/share"),
            ("///x", "/x"),
            ("//", "/"),
            ("a/..", "."),
            ("a/../", "./"),
            ("../x", "../x"),
            ("/..", "/"),
        ],
    )
    def test_matches_node_posix_normalize(self, path: str, expected: str) -> None:
        """Trailing slashes stay; a leading `//` collapses unlike posixpath."""
        assert expected == js_normalize(path)


class TestValidateMemoryPath:
    @pytest.mark.parametrize(
        ("raw", "expand_tilde", "expected"),
        [
            (None, True, None),
            ("", True, None),
            ("~/", True, None),
            ("~/.", True, None),
            ("~/..", True, None),
            ("~/foo/..", True, None),
            ("~\\", True, None),
            ("~/../other", True, "/home/other/"),
            ("~/mem", True, "/home/u/mem/"),
            ("~\\mem", True, "/home/u/mem/"),
            ("~/./", True, "/home/u/"),
            ("~/mem", False, None),
            ("~", True, None),
            ("~user/mem", True, None),
            ("/", True, None),
            ("/a", True, None),
            ("/ab", True, "/ab/"),
            ("/😀", True, "/😀/"),
            ("/a/b///", True, "/a/b/"),
            ("/a/b\\\\", True, "/a/b/"),
            ("/a/./b/../c", True, "/a/c/"),
            ("//server/share", True, "/server/share/"),
            ("\\\\server\\share", True, None),
            ("C:", True, None),
            ("C:\\mem", True, None),
            ("relative/mem", True, None),
            ("./mem", True, None),
            ("/mem\0x", True, None),
            ("/cafe\u0301", True, "/caf\u00e9/"),
        ],
    )
    def test_reference_rules(
        self, raw: str | None, expand_tilde: bool, expected: str | None
    ) -> None:
        """Each validateMemoryPath rule, with HOME at /home/u."""
        actual = validate_memory_path(
            raw, expand_tilde, home="/home/u", profile="2.1.112"
        )

        assert expected == actual

    def test_home_defaults_to_the_environment(self, isolated_home: Home) -> None:
        """Without `home`, `~/` expands to $HOME."""
        actual = validate_memory_path("~/mem", True)

        assert f"{isolated_home.home}/mem/" == actual

    @given(path_text, path_text)
    @example("~/../x", "")
    def test_none_or_nfc_with_one_trailing_separator(
        self, raw: str, suffix: str
    ) -> None:
        """Any result is absolute, NFC, and ends in exactly one separator."""
        for expand in (True, False):
            actual = validate_memory_path(raw + suffix, expand, home="/home/u")

            if actual is not None:
                assert unicodedata.normalize("NFC", actual) == actual
                assert actual.startswith("/")
                assert actual.endswith(os.sep)
                assert not actual.endswith(os.sep * 2)
                assert "\0" not in actual


class TestMemoryBaseDir:
    def test_defaults_to_claude_home(self, isolated_home: Home) -> None:
        """Without variables the base is ~/.claude."""
        assert str(isolated_home.claude) == memory_base_dir()

    @pytest.mark.parametrize(
        ("env", "expected"),
        [
            ({"CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote"}, "/remote"),
            (
                {"CLAUDE_CODE_REMOTE_MEMORY_DIR": "/remote", "CLAUDE_CONFIG_DIR": "/c"},
                "/remote",
            ),
            ({"CLAUDE_CODE_REMOTE_MEMORY_DIR": "", "CLAUDE_CONFIG_DIR": "/c"}, "/c"),
            ({"CLAUDE_CONFIG_DIR": ""}, ""),
            ({"CLAUDE_CONFIG_DIR": "/cafe\u0301"}, "/caf\u00e9"),
            ({"HOME": "/h"}, "/h/.claude"),
        ],
    )
    def test_variables(self, env: dict[str, str], expected: str) -> None:
        """Remote dir if non-empty, else CLAUDE_CONFIG_DIR even when empty, NFC."""
        assert expected == memory_base_dir(env)


class TestDailyLogPath:
    @pytest.mark.parametrize(
        ("date", "expected"),
        [
            (datetime.date(2026, 1, 5), "/m/memory/logs/2026/01/2026-01-05.md"),
            (datetime.date(2026, 12, 31), "/m/memory/logs/2026/12/2026-12-31.md"),
            (datetime.date(987, 3, 4), "/m/memory/logs/987/03/987-03-04.md"),
        ],
    )
    def test_layout(self, date: datetime.date, expected: str) -> None:
        """Month and day are padded to two digits, the year is not."""
        assert expected == daily_log_path("/m/memory/", date)


class TestAutoMemPath:
    def test_plain_directory_uses_its_realpath(
        self, isolated_home: Home, tmp_path: Path
    ) -> None:
        """A non-git project is keyed by its own realpath, through a symlink too."""
        project = tmp_path / "plain"
        project.mkdir()
        link = tmp_path / "link"
        link.symlink_to(project)

        actual = auto_mem_path(str(link))

        assert expected_default(isolated_home, project.resolve()) == actual

    def test_subdirectory_of_a_repo_uses_the_repo_root(
        self, isolated_home: Home, git_repo: Path
    ) -> None:
        """Every directory inside a repository shares its memory."""
        sub = git_repo / "src" / "pkg"
        sub.mkdir(parents=True)

        actual = auto_mem_path(str(sub))

        assert expected_default(isolated_home, git_repo.resolve()) == actual

    def test_worktree_shares_the_main_repository(
        self, isolated_home: Home, git_repo: Path, worktree: Path
    ) -> None:
        """A `git worktree` resolves to the main working tree's memory."""
        assert expected_default(isolated_home, git_repo.resolve()) == auto_mem_path(
            str(worktree)
        )

    def test_env_override_wins(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A valid CLAUDE_COWORK_MEMORY_PATH_OVERRIDE beats settings and default."""
        monkeypatch.setenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "/srv/mem//")

        assert "/srv/mem/" == auto_mem_path(str(tmp_path))

    def test_env_override_is_not_tilde_expanded(
        self, isolated_home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """`~/x` in the variable is relative, so invalid, so the default applies."""
        monkeypatch.setenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "~/x")

        actual = auto_mem_path(str(tmp_path))

        assert expected_default(isolated_home, tmp_path.resolve()) == actual

    def test_explicit_env_mapping(self, tmp_path: Path) -> None:
        """An `env` mapping is used instead of os.environ."""
        env = {"HOME": "/h", "MEMD_MANAGED_SETTINGS_PATH": str(tmp_path / "none.json")}

        actual = auto_mem_path(str(tmp_path), env)

        assert (
            f"/h/.claude/projects/{sanitize_path(str(tmp_path.resolve()))}/memory/"
            == actual
        )

    def test_remote_base_dir(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """CLAUDE_CODE_REMOTE_MEMORY_DIR replaces the config home as the base."""
        monkeypatch.setenv("CLAUDE_CODE_REMOTE_MEMORY_DIR", "/remote/")

        actual = auto_mem_path(str(tmp_path))

        assert (
            f"/remote/projects/{sanitize_path(str(tmp_path.resolve()))}/memory/"
            == actual
        )


@pytest.fixture(name="project")
def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return project.resolve()


class TestSettingsChooseDirectory:
    def test_user_setting_with_tilde(self, isolated_home: Home, project: Path) -> None:
        """A user autoMemoryDirectory is tilde-expanded."""
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "~/mem"}
        )

        location = resolve_memory_location(str(project))

        assert (f"{isolated_home.home}/mem/", "settings:user") == (
            location.memory_dir,
            location.source,
        )
        assert str(isolated_home.claude / "settings.json") == location.source_path

    def test_local_beats_user_and_policy_beats_local(
        self, isolated_home: Home, project: Path
    ) -> None:
        """policy ?? local ?? user, highest first."""
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "/u-mem"}
        )
        local = write_json(
            project / ".claude" / "settings.local.json",
            {"autoMemoryDirectory": "/l-mem"},
        )

        assert ("/l-mem/", "settings:local", str(local)) == _choice(project)

        policy = write_json(
            isolated_home.root / "managed-settings.json",
            {"autoMemoryDirectory": "/p-mem"},
        )

        assert ("/p-mem/", "settings:policy", str(policy)) == _choice(project)

    def test_checked_in_project_settings_cannot_choose(
        self, isolated_home: Home, project: Path
    ) -> None:
        """A checked-in ~/.ssh directory is ignored; the off switch is obeyed."""
        write_json(
            project / ".claude" / "settings.json",
            {"autoMemoryDirectory": "~/.ssh", "autoMemoryEnabled": False},
        )

        location = resolve_memory_location(str(project))

        assert expected_default(isolated_home, project) == location.memory_dir
        assert "default" == location.source
        assert (False, "settings:autoMemoryEnabled") == (
            location.enablement.enabled,
            location.enablement.reason,
        )

    @pytest.mark.parametrize("hiding", ["", "relative", "~/", 5, ["/x"]])
    def test_set_but_invalid_hides_lower_layers(
        self, isolated_home: Home, project: Path, hiding: object
    ) -> None:
        """A local value that is set but invalid hides a valid user value (`??`)."""
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "/u-mem"}
        )
        write_json(
            project / ".claude" / "settings.local.json", {"autoMemoryDirectory": hiding}
        )

        assert (expected_default(isolated_home, project), "default", None) == _choice(
            project
        )

    def test_null_does_not_hide(self, isolated_home: Home, project: Path) -> None:
        """`??` passes over null, so the user value applies."""
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "/u-mem"}
        )
        write_json(
            project / ".claude" / "settings.local.json", {"autoMemoryDirectory": None}
        )

        assert "/u-mem/" == auto_mem_path(str(project))

    def test_invalid_json_layer_is_skipped(
        self, isolated_home: Home, project: Path
    ) -> None:
        """A broken local file is skipped with a diagnostic; the user value applies."""
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "/u-mem"}
        )
        broken = project / ".claude" / "settings.local.json"
        broken.parent.mkdir()
        broken.write_text('{"autoMemoryDirectory": ')

        location = resolve_memory_location(str(project))

        assert "/u-mem/" == location.memory_dir
        assert [("S001", str(broken))] == [
            (d.code, d.path) for d in location.diagnostics
        ]

    def test_claude_config_dir_moves_user_settings_and_base(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, project: Path
    ) -> None:
        """CLAUDE_CONFIG_DIR holds the user settings and is the memory base."""
        config = tmp_path / "config"
        write_json(config / "settings.json", {"autoMemoryEnabled": False})
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))

        location = resolve_memory_location(str(project))

        assert str(config) == location.base_dir
        assert (
            f"{config}/projects/{sanitize_path(str(project))}/memory/"
            == location.memory_dir
        )
        assert False is location.enablement.enabled


def _choice(project: Path) -> tuple[str, str, str | None]:
    location = resolve_memory_location(str(project), profile="2.1.112")
    return location.memory_dir, location.source, location.source_path


class TestResolveMemoryLocation:
    def test_fields(self, isolated_home: Home, git_repo: Path) -> None:
        """Index, team dir, inputs and enablement come with the directory."""
        root = git_repo.resolve()

        location = resolve_memory_location(str(git_repo))

        memory_dir = expected_default(isolated_home, root)
        assert str(root) == location.project_root
        assert str(isolated_home.claude) == location.base_dir
        assert memory_dir + "MEMORY.md" == location.index_path
        assert memory_dir + "team/" == location.team_dir
        assert (True, "default") == (
            location.enablement.enabled,
            location.enablement.reason,
        )
        assert (
            str(isolated_home.claude / "settings.json"),
            str(root / ".claude" / "settings.json"),
            str(root / ".claude" / "settings.local.json"),
            str(isolated_home.root / "managed-settings.json"),
            str(root / ".git"),
            str(isolated_home.home / ".claude.json"),  # trust, under 2.1.332
        ) == location.inputs
        assert () == location.diagnostics

    def test_is_frozen_and_comparable(self, project: Path) -> None:
        """Two resolutions of the same state are equal and cannot be mutated."""
        first = resolve_memory_location(str(project))

        assert first == resolve_memory_location(str(project))
        assert hash(first) == hash(resolve_memory_location(str(project)))
        with pytest.raises(AttributeError):
            first.memory_dir = "/elsewhere/"

    def test_to_dict_is_json_ready(self, project: Path) -> None:
        """to_dict() round-trips through json with the enablement flattened."""
        location = resolve_memory_location(str(project))

        data = json.loads(json.dumps(location.to_dict()))

        assert (location.memory_dir, True, "default") == (
            data["memory_dir"],
            data["enabled"],
            data["enabled_reason"],
        )

    def test_not_memoised(self, isolated_home: Home, project: Path) -> None:
        """A settings change is seen by the next call."""
        before = resolve_memory_location(str(project))
        write_json(
            isolated_home.claude / "settings.json", {"autoMemoryDirectory": "/later"}
        )

        after = resolve_memory_location(str(project))

        assert ("default", "/later/") == (before.source, after.memory_dir)
        assert isinstance(after, MemoryLocation)

    def test_nul_in_the_project_root_does_not_raise(self, isolated_home: Home) -> None:
        """A NUL byte is kept lexically and sanitized like any other unit."""
        location = resolve_memory_location("/tmp/a\0b")

        assert (
            f"{isolated_home.claude}/projects/-tmp-a-b/memory/" == location.memory_dir
        )
