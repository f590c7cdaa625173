"""isAutoMemoryEnabled's chain: env switch, bare mode, remote, settings, default."""

from __future__ import annotations

import pytest

from memd.claude_code.enablement import (
    Enablement,
    is_auto_memory_enabled,
    is_env_defined_falsy,
    is_env_truthy,
)

DISABLE = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"


class TestEnvHelpers:
    @pytest.mark.parametrize(
        ("value", "truthy", "falsy"),
        [
            (None, False, False),
            ("", False, False),
            ("1", True, False),
            (" TRUE ", True, False),
            ("Yes", True, False),
            ("on\n", True, False),
            ("\ufeffon", True, False),
            ("0", False, True),
            ("False", False, True),
            (" no", False, True),
            ("OFF", False, True),
            ("2", False, False),
            ("y", False, False),
            ("\x85on", False, False),
        ],
    )
    def test_lists(self, value: str | None, truthy: bool, falsy: bool) -> None:
        """Lower-cased, JS-trimmed values match the truthy or defined-falsy list."""
        assert (truthy, falsy) == (is_env_truthy(value), is_env_defined_falsy(value))


class TestIsAutoMemoryEnabled:
    @pytest.mark.parametrize(
        ("env", "settings", "expected"),
        [
            ({}, None, Enablement(True, "default")),
            ({}, {}, Enablement(True, "default")),
            ({DISABLE: "1"}, None, Enablement(False, f"env:{DISABLE}")),
            (
                {DISABLE: "true"},
                {"autoMemoryEnabled": True},
                Enablement(False, f"env:{DISABLE}"),
            ),
            (
                {DISABLE: "0"},
                {"autoMemoryEnabled": False},
                Enablement(True, f"env:{DISABLE}"),
            ),
            (
                {DISABLE: "off", "CLAUDE_CODE_SIMPLE": "1"},
                None,
                Enablement(True, f"env:{DISABLE}"),
            ),
            (
                {DISABLE: "", "CLAUDE_CODE_SIMPLE": "1"},
                None,
                Enablement(False, "env:CLAUDE_CODE_SIMPLE"),
            ),
            ({DISABLE: "maybe"}, None, Enablement(True, "default")),
            (
                {"CLAUDE_CODE_SIMPLE": "yes"},
                None,
                Enablement(False, "env:CLAUDE_CODE_SIMPLE"),
            ),
            ({"CLAUDE_CODE_SIMPLE": "0"}, None, Enablement(True, "default")),
            (
                {"CLAUDE_CODE_REMOTE": "1"},
                None,
                Enablement(False, "env:CLAUDE_CODE_REMOTE"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": ""},
                None,
                Enablement(False, "env:CLAUDE_CODE_REMOTE"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"},
                None,
                Enablement(True, "default"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "1", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"},
                {"autoMemoryEnabled": False},
                Enablement(False, "settings:autoMemoryEnabled"),
            ),
            (
                {},
                {"autoMemoryEnabled": False},
                Enablement(False, "settings:autoMemoryEnabled"),
            ),
            (
                {},
                {"autoMemoryEnabled": True},
                Enablement(True, "settings:autoMemoryEnabled"),
            ),
            ({}, {"autoMemoryEnabled": "false"}, Enablement(True, "default")),
            ({}, {"autoMemoryEnabled": None}, Enablement(True, "default")),
        ],
    )
    def test_chain(
        self,
        env: dict[str, str],
        settings: dict[str, object] | None,
        expected: Enablement,
    ) -> None:
        """The first decisive rule wins and is named in the reason."""
        assert expected == is_auto_memory_enabled(env, settings)

    def test_reads_os_environ_at_call_time(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without `env`, the process environment of the moment is used."""
        before = is_auto_memory_enabled()
        monkeypatch.setenv(DISABLE, "yes")

        after = is_auto_memory_enabled()

        assert (True, False) == (before.enabled, after.enabled)
