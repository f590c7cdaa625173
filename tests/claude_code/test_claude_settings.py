"""Reading the agent's settings files: locations, layers, bad files, merging."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from memd.claude_code.settings import (
    LINUX_MANAGED_SETTINGS,
    SettingsLayer,
    layer_diagnostics,
    load_settings,
    managed_settings_path,
    merged_settings,
    read_settings_file,
    settings_paths,
)
from memd.diagnostics import Severity
from tests.conftest import Home


def layer(source: str, data: Mapping[str, object] | None) -> SettingsLayer:
    return SettingsLayer(
        source=source, path=f"/{source}.json", data=data, diagnostic=None
    )


class TestSettingsPaths:
    def test_default_locations(self, isolated_home: Home, tmp_path: Path) -> None:
        """User, project, local and policy files, in merge order."""
        actual = settings_paths(str(tmp_path))

        expected = (
            ("user", str(isolated_home.claude / "settings.json")),
            ("project", str(tmp_path / ".claude" / "settings.json")),
            ("local", str(tmp_path / ".claude" / "settings.local.json")),
            ("policy", str(isolated_home.root / "managed-settings.json")),
        )
        assert expected == actual

    def test_claude_config_dir_holds_user_settings(self, tmp_path: Path) -> None:
        """A non-empty CLAUDE_CONFIG_DIR replaces ~/.claude."""
        env = {"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/h"}

        assert ("user", "/cfg/settings.json") == settings_paths(str(tmp_path), env)[0]

    def test_empty_claude_config_dir_falls_back_to_home(self, tmp_path: Path) -> None:
        """An empty CLAUDE_CONFIG_DIR is not used for reading settings."""
        env = {"CLAUDE_CONFIG_DIR": "", "HOME": "/h"}

        assert ("user", "/h/.claude/settings.json") == settings_paths(
            str(tmp_path), env
        )[0]

    def test_platform_policy_path_without_override(self) -> None:
        """Without MEMD_MANAGED_SETTINGS_PATH the Linux path is used on Linux."""
        assert LINUX_MANAGED_SETTINGS == managed_settings_path({})


class TestReadSettingsFile:
    def test_missing_file_is_skipped_silently(self, tmp_path: Path) -> None:
        """No file: no data and no diagnostic."""
        actual = read_settings_file("user", str(tmp_path / "none.json"))

        assert (None, None) == (actual.data, actual.diagnostic)

    def test_object_is_read(self, tmp_path: Path) -> None:
        """A JSON object becomes the layer's data, a BOM notwithstanding."""
        path = tmp_path / "s.json"
        path.write_bytes(b'\xef\xbb\xbf{"autoMemoryEnabled": false}')

        actual = read_settings_file("local", str(path))

        assert ({"autoMemoryEnabled": False}, None) == (actual.data, actual.diagnostic)

    @pytest.mark.parametrize(
        ("content", "line", "column"),
        [
            (b'{\n  "a": 1,\n}', 3, 1),
            (b"", 1, 1),
            (b"{'a': 1}", 1, 2),
        ],
    )
    def test_invalid_json_points_at_the_error(
        self, tmp_path: Path, content: bytes, line: int, column: int
    ) -> None:
        """Invalid JSON gives an S001 warning with the parser's line and column."""
        path = tmp_path / "s.json"
        path.write_bytes(content)

        actual = read_settings_file("project", str(path))

        diagnostic = actual.diagnostic
        assert diagnostic is not None
        assert ("S001", "settings-invalid", Severity.WARNING, str(path)) == (
            diagnostic.code,
            diagnostic.name,
            diagnostic.severity,
            diagnostic.path,
        )
        assert (line, column) == (diagnostic.line, diagnostic.column)
        assert None is actual.data

    @pytest.mark.parametrize(
        "content",
        [
            b"[1, 2]",
            b'"text"',
            b"null",
            b'{"a": NaN}',
            b'{"a": Infinity}',
            b"\xff\xfe{}",
            b"[" * 100_000 + b"]" * 100_000,
        ],
    )
    def test_non_object_or_non_json_is_skipped(
        self, tmp_path: Path, content: bytes
    ) -> None:
        """Arrays, scalars, NaN, bad UTF-8 and deep nesting are diagnostics."""
        path = tmp_path / "s.json"
        path.write_bytes(content)

        actual = read_settings_file("user", str(path))

        assert None is actual.data
        assert actual.diagnostic is not None
        assert "S001" == actual.diagnostic.code

    def test_directory_in_place_of_file(self, tmp_path: Path) -> None:
        """An unreadable path (a directory) is a diagnostic."""
        path = tmp_path / "settings.json"
        path.mkdir()

        actual = read_settings_file("user", str(path))

        assert actual.diagnostic is not None
        assert actual.diagnostic.message.startswith("cannot read settings")

    def test_oversized_file(self, tmp_path: Path) -> None:
        """A settings file over the size cap is refused."""
        path = tmp_path / "s.json"
        path.write_bytes(b'{"a": "' + b"x" * (4 * 1024 * 1024) + b'"}')

        actual = read_settings_file("project", str(path))

        assert actual.diagnostic is not None
        assert None is actual.data


class TestLoadSettings:
    def test_reads_each_layer(self, isolated_home: Home, tmp_path: Path) -> None:
        """Every present file is read; a broken one yields its diagnostic."""
        isolated_home.claude.mkdir()
        (isolated_home.claude / "settings.json").write_text(json.dumps({"k": "user"}))
        (tmp_path / ".claude").mkdir()
        (tmp_path / ".claude" / "settings.json").write_text("{broken")
        (isolated_home.root / "managed-settings.json").write_text('{"k": "policy"}')

        layers = load_settings(str(tmp_path))

        assert [
            ("user", {"k": "user"}),
            ("project", None),
            ("local", None),
            ("policy", {"k": "policy"}),
        ] == [(each.source, each.data) for each in layers]
        assert [str(tmp_path / ".claude" / "settings.json")] == [
            d.path for d in layer_diagnostics(layers)
        ]
        assert {"k": "policy"} == merged_settings(layers)


class TestMergedSettings:
    def test_later_layers_win(self) -> None:
        """policy over local over project over user, key by key."""
        layers = (
            layer("user", {"a": 1, "b": 1, "c": 1}),
            layer("project", {"b": 2}),
            layer("local", {"c": 3}),
            layer("policy", None),
        )

        assert {"a": 1, "b": 2, "c": 3} == merged_settings(layers)

    def test_objects_merge_deeply_and_arrays_concatenate(self) -> None:
        """Nested objects merge; arrays concatenate without duplicates."""
        layers = (
            layer("user", {"env": {"A": "1"}, "allow": ["x", "y"]}),
            layer("local", {"env": {"B": "2"}, "allow": ["y", "z"]}),
        )

        expected = {"env": {"A": "1", "B": "2"}, "allow": ["x", "y", "z"]}
        assert expected == merged_settings(layers)

    def test_does_not_mutate_layers(self) -> None:
        """Merging leaves the layers' data as it was."""
        user = {"env": {"A": "1"}}

        merged_settings((layer("user", user), layer("local", {"env": {"B": "2"}})))

        assert {"env": {"A": "1"}} == user


class TestHostileSettingsFiles:
    def test_symlink_to_a_fifo_does_not_block(self, tmp_path: Path) -> None:
        """A checked-in symlink to a FIFO is refused without waiting for a writer."""
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        link = tmp_path / "settings.json"
        link.symlink_to(fifo)

        actual = read_settings_file("project", str(link))

        assert actual.diagnostic is not None
        assert "cannot read settings: not a regular file" == actual.diagnostic.message

    def test_symlink_to_a_regular_file_is_followed(self, tmp_path: Path) -> None:
        """A settings symlink to a regular file is read, as the reference reads it."""
        target = tmp_path / "real.json"
        target.write_text('{"autoMemoryEnabled": true}')
        link = tmp_path / "settings.json"
        link.symlink_to(target)

        assert {"autoMemoryEnabled": True} == read_settings_file("user", str(link)).data

    def test_nul_in_the_project_path(self) -> None:
        """A NUL byte in a path is a diagnostic, not a ValueError."""
        layers = load_settings("/tmp/a\0b")

        assert ["project", "local"] == [
            each.source for each in layers if each.diagnostic is not None
        ]
