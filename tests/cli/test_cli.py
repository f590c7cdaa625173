"""The `memd` command line as a user meets it, and the README tables generated from it.

`python tests/test_cli.py` rewrites the generated tables in README.md; the tests
here fail when README.md and the code disagree.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import memd
from memd.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMAND_MODULES = {name: module for name, (module, _) in COMMANDS.items()}


def memd_script() -> str:
    """Return the installed `memd` console script of the running interpreter."""
    script = Path(sys.executable).with_name("memd")
    if not script.exists():
        pytest.fail(f"no memd console script next to {sys.executable}; install memd")
    return str(script)


# -- README generation -------------------------------------------------------


def command_table() -> str:
    """Return the README's command list, one line per entry of memd.cli.COMMANDS."""
    return "\n".join(
        f"- `memd {name}`: {summary}" for name, (_, summary) in COMMANDS.items()
    )


def rule_table() -> str:
    """Return the README's lint rule table, one row per memd.lint.rules.RULES entry."""
    from memd.lint.rules import RULES

    rows = [
        "| code | name | default | what it finds |",
        "| --- | --- | --- | --- |",
    ]
    rows.extend(
        f"| {rule.code} | `{rule.name}` | {rule.default_severity} | {rule.summary} |"
        for rule in RULES
    )
    return "\n".join(rows)


def config_table() -> str:
    """Return the README's configuration key table from memd.config_keys.KEYS."""
    from memd.config import load_config
    from memd.config_keys import KEYS

    defaults = load_config({"HOME": "~"})
    rows = [
        "| key | variable | default |",
        "| --- | --- | --- |",
    ]
    for key in KEYS:
        value = getattr(defaults, key.field)
        shown = "unset" if value is None else f"`{_default_text(value)}`"
        rows.append(f"| `{key.toml}` | `{key.env}` | {shown} |")
    return "\n".join(rows)


def _default_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(f'"{item}"' for item in value) + "]"
    if hasattr(value, "items"):
        return "{}"
    return str(value)


GENERATED = {"commands": command_table, "rules": rule_table, "config": config_table}


def generated_block(readme: str, name: str) -> str:
    """Return the text between `<!-- name:start -->` and `<!-- name:end -->`."""
    match = re.search(
        rf"<!-- {name}:start -->\n(.*?)\n?<!-- {name}:end -->", readme, re.DOTALL
    )
    assert match is not None, f"README.md has no {name} block"
    return match.group(1)


def regenerate(readme: str) -> str:
    """Return `readme` with every generated block rewritten from the code."""
    for name, make in GENERATED.items():
        readme = re.sub(
            rf"(<!-- {name}:start -->\n).*?\n?(<!-- {name}:end -->)",
            lambda m, make=make: m.group(1) + make() + "\n" + m.group(2),  # type: ignore[misc]
            readme,
            flags=re.DOTALL,
        )
    return readme


class TestCommandTable:
    @pytest.mark.parametrize("name", sorted(COMMANDS))
    def test_every_command_module_exists(self, name: str) -> None:
        """Each command in the table has its module (the parser imports them all)."""
        module = COMMAND_MODULES[name]

        assert (ROOT / Path(*module.split("."))).with_suffix(".py").exists()


class TestReadme:
    @pytest.mark.parametrize("name", sorted(GENERATED))
    def test_generated_block_matches_the_code(self, name: str) -> None:
        """README.md's generated blocks match the code (`python tests/test_cli.py`)."""
        assert GENERATED[name]() == generated_block(README.read_text("utf-8"), name)

    def test_test_command_is_what_ci_runs(self) -> None:
        """The README's test command is the last line .ci/run executes."""
        readme = README.read_text("utf-8")
        ci = (ROOT / ".ci" / "run").read_text("utf-8").strip().splitlines()
        block = generated_block(readme, "test-command")

        assert ["```sh", ci[-1], "```"] == block.splitlines()

    def test_links_changelog_and_architecture(self) -> None:
        """The README points at the changelog and the module contracts."""
        readme = README.read_text("utf-8")

        assert ("CHANGELOG.md" in readme, "docs/architecture.md" in readme) == (
            True,
            True,
        )


# -- The command line --------------------------------------------------------


class TestUnknownOption:
    def test_subcommand_option_is_one_line(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd lint --frobnicate` is one line naming the option, exit 2."""
        code = main(["lint", "--frobnicate"])
        err = capsys.readouterr().err

        assert (2, "memd lint: unknown option `--frobnicate`\n") == (code, err)

    @pytest.mark.parametrize(
        ("argv", "line"),
        [
            (["stauts"], "memd: no command `stauts` (did you mean `status`?)"),
            (["histroy"], "memd: no command `histroy` (did you mean `history`?)"),
            (["lint", "--strcit"], "memd lint: unknown option `--strcit` "
             "(did you mean `--strict`?)"),
            (["lint", "--formt=json"], "memd lint: unknown option `--formt=json` "
             "(did you mean `--format`?)"),
            (["lint", "--format", "jsn"], "memd lint: `--format` takes text, json, "
             "sarif or github, not `jsn` (did you mean `json`?)"),
            (["service", "instal"], "memd service: `memd service` takes install, "
             "uninstall or status, not `instal` (did you mean `install`?)"),
        ],
    )  # fmt: skip
    def test_a_mistyped_word_gets_the_closest_name(
        self, argv: list[str], line: str
    ) -> None:
        """A slip of the fingers is answered with what was meant, on one line."""
        result = subprocess.run(
            [memd_script(), *argv], capture_output=True, text=True, check=False
        )

        assert 2 == result.returncode
        assert [line] == [result.stderr.strip().split(";")[0]]

    def test_a_word_far_from_every_name_gets_no_guess(self) -> None:
        result = subprocess.run(
            [memd_script(), "zzzz"], capture_output=True, text=True, check=False
        )

        assert "memd: no command `zzzz`; `memd --help` lists them\n" == result.stderr


class TestVersion:
    def test_version_prints_and_exits_0(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd --version` prints the package version and exits 0."""
        code = main(["--version"])

        assert (0, f"memd {memd.__version__}\n") == (code, capsys.readouterr().out)


class TestHelp:
    def test_help_lists_every_command(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`memd --help` names every command with its summary."""
        code = main(["--help"])
        out = " ".join(capsys.readouterr().out.split())

        assert 0 == code
        assert [] == [
            name
            for name, (_, summary) in COMMANDS.items()
            if name not in out or " ".join(summary.split()) not in out
        ]

    @pytest.mark.parametrize("name", sorted(COMMANDS))
    def test_every_command_has_help(
        self, name: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`memd <command> --help` works and describes the command."""
        code = main([name, "--help"])
        out = capsys.readouterr().out

        assert 0 == code
        assert f"usage: memd {name}" in out

    def test_no_command_prints_help_and_exits_2(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Bare `memd` shows the usage and exits 2."""
        code = main([])

        assert 2 == code
        assert "usage: memd" in capsys.readouterr().out

    def test_unknown_command_is_one_line_exit_2(self) -> None:
        """An unknown command exits 2 with a short usage error and no traceback."""
        result = subprocess.run(
            [memd_script(), "frobnicate"], capture_output=True, text=True, check=False
        )
        lines = result.stderr.strip().splitlines()

        assert (2, "") == (result.returncode, result.stdout)
        assert ["memd: no command `frobnicate`; `memd --help` lists them"] == lines
        assert "Traceback" not in result.stderr

    def test_unknown_option_is_exit_2_without_traceback(self) -> None:
        """A bad option is a usage error, not a crash."""
        result = subprocess.run(
            [memd_script(), "config", "--bogus"],
            capture_output=True,
            text=True,
            check=False,
        )

        assert 2 == result.returncode
        assert "memd config: unknown option `--bogus`\n" == result.stderr
        assert "Traceback" not in result.stderr

    def test_config_error_is_one_line_through_the_script(
        self, isolated_home: object
    ) -> None:
        """A bad config.toml makes `memd config` print one line on stderr and exit 2."""
        import os

        config = Path(os.environ["XDG_CONFIG_HOME"]) / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("[watch]\nsettle = 1\n")

        result = subprocess.run(
            [memd_script(), "config"], capture_output=True, text=True, check=False
        )

        assert (2, "") == (result.returncode, result.stdout)
        hint = "did you mean watch.settle_seconds?"
        assert [f"memd: {config}:watch.settle: unknown key ({hint})"] == (
            result.stderr.splitlines()
        )


if __name__ == "__main__":
    README.write_text(regenerate(README.read_text("utf-8")), "utf-8")
    print(f"rewrote the generated blocks in {README}")
