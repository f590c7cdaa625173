"""memd.config: config.toml and MEMD_* variables over the defaults, with sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memd.config import Config, describe_config, load_config
from memd.config_keys import KEYS, MODES
from memd.dirs import config_path, runtime_dir
from memd.errors import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from conftest import Home


def write_config(home: Home, text: str) -> Path:
    """Write config.toml where memd looks for it by default."""
    path = home.config / "memd" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class TestConfigPath:
    def test_default_is_under_xdg_config_home(self, isolated_home: Home) -> None:
        """Without MEMD_CONFIG the file is $XDG_CONFIG_HOME/memd/config.toml."""
        expected = str(isolated_home.config / "memd" / "config.toml")

        assert expected == config_path()

    def test_falls_back_to_dot_config(self) -> None:
        """Without XDG_CONFIG_HOME the file is ~/.config/memd/config.toml."""
        assert "/h/.config/memd/config.toml" == config_path({"HOME": "/h"})

    def test_relative_xdg_value_is_ignored(self) -> None:
        """A relative XDG_CONFIG_HOME is invalid per the XDG spec and ignored."""
        env = {"HOME": "/h", "XDG_CONFIG_HOME": "rel"}

        assert "/h/.config/memd/config.toml" == config_path(env)

    def test_memd_config_overrides_and_expands_tilde(self) -> None:
        """MEMD_CONFIG names the file; a leading ~ uses the given HOME."""
        env = {"HOME": "/h", "MEMD_CONFIG": "~/memd.toml"}

        assert "/h/memd.toml" == config_path(env)


class TestDefaults:
    def test_no_file_gives_every_default(self, isolated_home: Home) -> None:
        """With no file and no variables every key is a default."""
        config = load_config()

        assert Config(
            cache_dir=str(isolated_home.cache / "memd"),
            state_dir=str(isolated_home.state / "memd"),
        ) == Config(**{k.field: getattr(config, k.field) for k in KEYS})
        assert {"default"} == set(config.sources.values())
        assert {k.field for k in KEYS} == set(config.sources)

    def test_dirs_default_without_xdg(self) -> None:
        """Without XDG variables the dirs are ~/.cache/memd and ~/.local/state/memd."""
        config = load_config({"HOME": "/h"})

        assert ("/h/.cache/memd", "/h/.local/state/memd") == (
            config.cache_dir,
            config.state_dir,
        )

    def test_modes_match_prompt(self) -> None:
        """The modes config accepts are the ones memd.claude_code.prompt renders."""
        from memd.claude_code.prompt import MODES as PROMPT_MODES

        assert tuple(PROMPT_MODES) == MODES


class TestFile:
    def test_sections_set_values_and_record_the_file(self, isolated_home: Home) -> None:
        """Values from config.toml win over defaults and name the file as source."""
        path = write_config(
            isolated_home,
            '[watch]\ndirs = ["~/mem"]\nsettle_seconds = 0.25\n'
            '[prompt]\nmodes = ["standard", "kairos"]\nkairos = true\n'
            '[dream]\ntime = "4:05"\ntimezone = "Europe/Paris"\n'
            "command = \"claude -p 'consolidate'\"\n"
            '[logs]\nretention_days = 30\nretention_action = "remove"\n'
            '[log]\nformat = "json"\nlevel = "DEBUG"\n'
            '[paths]\ncache_dir = "~/c"\n',
        )

        config = load_config()

        assert (str(isolated_home.home / "mem"),) == config.watch_dirs
        assert 0.25 == config.settle_seconds
        assert ("standard", "kairos") == config.modes
        assert config.kairos is True
        assert "04:05" == config.dream_time
        assert "Europe/Paris" == config.dream_timezone
        assert ("claude", "-p", "consolidate") == config.dream_command
        assert (30, "remove") == (
            config.log_retention_days,
            config.log_retention_action,
        )
        assert ("json", "debug") == (config.log_format, config.log_level)
        assert str(isolated_home.home / "c") == config.cache_dir
        assert str(path) == config.sources["settle_seconds"]
        assert "default" == config.sources["team_memory"]

    def test_empty_file_is_all_defaults(self, isolated_home: Home) -> None:
        """An empty config.toml is the same as none."""
        write_config(isolated_home, "")

        assert {"default"} == set(load_config().sources.values())

    @pytest.mark.parametrize(
        ("text", "key", "message"),
        [
            ('[dream]\ntime = "25:00"\n', "dream.time", "expected HH:MM, got '25:00'"),
            (
                "[watch]\nsettle_seconds = -1\n",
                "watch.settle_seconds",
                "expected a number >= 0",
            ),
            (
                '[watch]\nsettle_seconds = "x"\n',
                "watch.settle_seconds",
                "expected a number",
            ),
            (
                "[prompt]\nteam_memory = 1\n",
                "prompt.team_memory",
                "expected true or false",
            ),
            (
                '[prompt]\nmodes = ["nightly"]\n',
                "prompt.modes",
                "expected a non-empty list",
            ),
            ("[prompt]\nmodes = []\n", "prompt.modes", "expected a non-empty list"),
            ('[dream]\ntimezone = "Mars/Base"\n', "dream.timezone", "IANA zone"),
            ("[dream]\ntimeout_seconds = 0\n", "dream.timeout_seconds", "number > 0"),
            ("[logs]\nretention_days = 0\n", "logs.retention_days", "integer >= 1"),
            (
                "[logs]\nretention_days = true\n",
                "logs.retention_days",
                "expected an integer",
            ),
            ('[logs]\nretention_action = "burn"\n', "logs.retention_action", "one of"),
            ('[telemetry]\nsink = "http"\n', "telemetry.sink", "jsonl, off"),
            ('[log]\nformat = "xml"\n', "log.format", "auto, json, console"),
            ('[paths]\nstate_dir = "relative"\n', "paths.state_dir", "absolute path"),
            ('[watch]\ndirs = "/one"\n', "watch.dirs", "list of strings"),
        ],
    )
    def test_bad_value_names_file_and_key(
        self, isolated_home: Home, text: str, key: str, message: str
    ) -> None:
        """A bad value raises ConfigError naming the file, the dotted key and what."""
        path = write_config(isolated_home, text)

        with pytest.raises(ConfigError) as raised:
            load_config()

        assert (str(path), key) == (raised.value.path, raised.value.key)
        assert str(raised.value).startswith(f"{path}:{key}: ")
        assert message in str(raised.value)

    @pytest.mark.parametrize(
        ("text", "key"),
        [
            ("[watch]\nsettle = 1\n", "watch.settle"),
            ("[nonsense]\nx = 1\n", "nonsense.x"),
            ("settle_seconds = 1\n", "settle_seconds"),
        ],
    )
    def test_unknown_key_is_an_error(
        self, isolated_home: Home, text: str, key: str
    ) -> None:
        """An unknown key or section is reported, not ignored."""
        write_config(isolated_home, text)

        with pytest.raises(ConfigError, match="unknown") as raised:
            load_config()

        assert key == raised.value.key

    def test_unknown_key_suggests_the_nearest(self, isolated_home: Home) -> None:
        """A near-miss key suggests the real one."""
        write_config(isolated_home, "settle_seconds = 1\n")

        with pytest.raises(ConfigError, match=r"did you mean watch\.settle_seconds\?"):
            load_config()

    def test_invalid_toml_names_the_file(self, isolated_home: Home) -> None:
        """A syntax error is one ConfigError with the file and TOML's message."""
        path = write_config(isolated_home, "[watch\n")

        with pytest.raises(ConfigError, match="invalid TOML") as raised:
            load_config()

        assert str(path) == raised.value.path

    def test_unreadable_file_is_a_config_error(self, isolated_home: Home) -> None:
        """A config path memd cannot read (here a directory) is a ConfigError."""
        path = isolated_home.config / "memd" / "config.toml"
        path.mkdir(parents=True)

        with pytest.raises(ConfigError, match="cannot read") as raised:
            load_config()

        assert str(path) == raised.value.path

    def test_missing_explicit_file_is_an_error(self, tmp_path: Path) -> None:
        """A MEMD_CONFIG naming no file is a mistake worth reporting."""
        env = {"HOME": str(tmp_path), "MEMD_CONFIG": str(tmp_path / "nope.toml")}

        with pytest.raises(ConfigError, match="no such file"):
            load_config(env)

    def test_bad_file_value_is_reported_even_if_a_variable_overrides_it(
        self, isolated_home: Home, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The file is checked whole, so a broken key does not hide behind MEMD_*."""
        write_config(isolated_home, '[dream]\ntime = "25:00"\n')
        monkeypatch.setenv("MEMD_DREAM_TIME", "04:00")

        with pytest.raises(ConfigError, match=r"dream\.time"):
            load_config()


class TestEnvironment:
    def test_variables_override_the_file(
        self, isolated_home: Home, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """MEMD_SETTLE_SECONDS beats watch.settle_seconds and becomes the source."""
        write_config(isolated_home, "[watch]\nsettle_seconds = 0.5\n")
        monkeypatch.setenv("MEMD_SETTLE_SECONDS", "0.05")

        config = load_config()

        assert 0.05 == config.settle_seconds
        assert "env:MEMD_SETTLE_SECONDS" == config.sources["settle_seconds"]

    def test_each_kind_of_value(self, tmp_path: Path) -> None:
        """Lists, booleans, paths, commands and severities parse from strings."""
        env = {
            "HOME": "/h",
            "MEMD_CONFIG": "",
            "MEMD_MODES": "standard, kairos,standard",
            "MEMD_TEAM_MEMORY": "1",
            "MEMD_KAIROS": "off",
            "MEMD_WATCH_DIRS": os.pathsep.join(("~/a", "/b")),
            "MEMD_CACHE_DIR": "/tmp/c/",
            "MEMD_DREAM_COMMAND": "agent --dream 'two words'",
            "MEMD_TELEMETRY_MAX_BYTES": "4096",
            "MEMD_LOG_RETENTION_DAYS": "7",
        }

        config = load_config(env)

        assert ("standard", "kairos") == config.modes
        assert (True, False) == (config.team_memory, config.kairos)
        assert ("/h/a", "/b") == config.watch_dirs
        assert "/tmp/c" == config.cache_dir
        assert ("agent", "--dream", "two words") == config.dream_command
        assert (4096, 7) == (config.telemetry_max_bytes, config.log_retention_days)
        assert "env:MEMD_MODES" == config.sources["modes"]

    def test_empty_variable_counts_as_unset(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """MEMD_DREAM_TIME= leaves the default in place."""
        monkeypatch.setenv("MEMD_DREAM_TIME", "")

        config = load_config()

        assert ("03:30", "default") == (config.dream_time, config.sources["dream_time"])

    def test_bad_variable_names_the_variable(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A bad MEMD_* value raises ConfigError keyed by the variable."""
        monkeypatch.setenv("MEMD_TEAM_MEMORY", "maybe")

        with pytest.raises(ConfigError) as raised:
            load_config()

        assert "MEMD_TEAM_MEMORY: expected true or false, got 'maybe'" == str(
            raised.value
        )

    def test_every_key_has_a_distinct_variable(self) -> None:
        """Each key is overridable by exactly one MEMD_ variable."""
        names = [key.env for key in KEYS]

        assert len(names) == len(set(names))
        assert all(name.startswith("MEMD_") for name in names)


class TestLintSeverities:
    def test_codes_and_names_are_accepted(self, isolated_home: Home) -> None:
        """[lint.severity] maps rule codes or names to levels."""
        write_config(
            isolated_home, '[lint.severity]\nM001 = "off"\ntopic-orphan = "INFO"\n'
        )

        assert {"M001": "off", "topic-orphan": "info"} == dict(
            load_config().lint_severities
        )

    def test_unknown_rule_is_an_error(self, isolated_home: Home) -> None:
        """A rule memd does not know is reported with the nearest real one."""
        write_config(isolated_home, '[lint.severity]\ntopic-orphans = "off"\n')

        with pytest.raises(ConfigError, match="did you mean topic-orphan"):
            load_config()

    def test_bad_level_is_an_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A level outside error|warning|info|off is reported."""
        monkeypatch.setenv("MEMD_LINT_SEVERITIES", "M001=loud")

        with pytest.raises(ConfigError, match="MEMD_LINT_SEVERITIES"):
            load_config()


class TestRuntimeDir:
    def test_under_xdg_runtime_dir(self, isolated_home: Home) -> None:
        """With XDG_RUNTIME_DIR set the runtime dir is $XDG_RUNTIME_DIR/memd."""
        assert str(isolated_home.runtime / "memd") == runtime_dir()

    def test_falls_back_to_the_state_dir(self) -> None:
        """Without XDG_RUNTIME_DIR it is the given state dir, else the default one."""
        assert ("/s", "/h/.local/state/memd") == (
            runtime_dir({"HOME": "/h"}, state_dir="/s"),
            runtime_dir({"HOME": "/h"}),
        )


class TestDescribe:
    def test_one_row_per_key_in_order(self) -> None:
        """describe_config yields every key with its variable, value and source."""
        config = load_config({"HOME": "/h", "MEMD_KAIROS": "yes"})

        rows = describe_config(config)

        assert [key.toml for key in KEYS] == [row[0] for row in rows]
        assert ("prompt.kairos", "MEMD_KAIROS", True, "env:MEMD_KAIROS") in rows


MEMD = os.path.join(os.path.dirname(sys.executable), "memd")


def memd_config(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real `memd config` in a subprocess, in the test's environment."""
    return subprocess.run(
        [MEMD, "config", *args],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class TestConfigCommand:
    def test_text_output_is_valid_toml_that_loads_back(
        self, isolated_home: Home
    ) -> None:
        """`memd config` prints TOML that, saved as config.toml, loads the same."""
        import tomllib

        write_config(isolated_home, '[dream]\ntime = "05:00"\n')

        done = memd_config()
        code, out = done.returncode, done.stdout
        before = load_config()
        write_config(isolated_home, out)
        after = load_config()

        assert 0 == code
        assert "dream" in tomllib.loads(out)
        assert 'time = "05:00"  # from ' + str(config_path()) in out
        assert [getattr(before, k.field) for k in KEYS] == [
            getattr(after, k.field) for k in KEYS
        ]

    def test_json_output_has_value_and_source(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`memd config --format json` gives each key's value, source and variable."""
        import json

        monkeypatch.setenv("MEMD_MODES", "standard,team")

        done = memd_config("--format", "json")
        code, data = done.returncode, json.loads(done.stdout)

        assert 0 == code
        assert {
            "value": ["standard", "team"],
            "source": "env:MEMD_MODES",
            "env": "MEMD_MODES",
        } == data["keys"]["prompt.modes"]
        assert data["config_file_exists"] is False

    def test_bad_config_is_one_line_and_exit_2(self, isolated_home: Home) -> None:
        """A broken config.toml prints one line naming file and key, and exits 2."""
        path = write_config(isolated_home, '[dream]\ntime = "25:00"\n')

        done = memd_config()

        assert 2 == done.returncode
        assert "" == done.stdout
        assert f"memd: {path}:dream.time: expected HH:MM, got '25:00'\n" == done.stderr
