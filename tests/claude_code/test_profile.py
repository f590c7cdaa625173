"""Agent profiles: 2.1.332 against every worked example in REFERENCE.md, and 2.1.112."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import memd
from memd.claude_code.enablement import is_auto_memory_enabled
from memd.claude_code.jscompat import utf16_len
from memd.claude_code.paths import resolve_memory_location, sanitize_path
from memd.claude_code.profile import (
    PROFILE_2_1_112,
    PROFILE_2_1_332,
    get_profile,
    parse_version,
    profile_for_version,
)
from memd.claude_code.provenance import claude_code_item_problem
from memd.claude_code.recall import recalled_text, scanned_header
from memd.claude_code.trust import Trust, trust_gate, workspace_trust
from tests.conftest import Home
from tests.strategies import any_text, index_text

ADVICE = (
    "Keep index entries to one line under ~200 chars; move detail into topic files."
)


def note_line(i: int) -> str:
    """`L(i)` of the reference's examples."""
    return f"- [Note {i}](note_{i}.md) — hook {i}"


def warning_of(content: str) -> str:
    return content[content.rindex("\n\n> WARNING: ") + 2 :]


class TestChoosingAProfile:
    def test_strings_and_objects(self) -> None:
        """A release string or a profile gives that profile; None the newest."""

        assert PROFILE_2_1_112 is get_profile("2.1.112")
        assert PROFILE_2_1_332 is get_profile(PROFILE_2_1_332)
        assert PROFILE_2_1_332 is get_profile(None)

    def test_unknown_release_is_refused(self) -> None:
        """A release memd has no profile for is a ValueError naming the known ones."""
        with pytest.raises(ValueError, match=r"2\.1\.112, 2\.1\.332"):
            get_profile("2.1.200")

    @pytest.mark.parametrize(
        ("output", "expected"),
        [
            ("2.1.332 (Claude Code)", "2.1.332"),
            ("2.1.400 (Claude Code)", "2.1.332"),
            ("2.1.331 (Claude Code)", "2.1.112"),
            ("2.1.112", "2.1.112"),
            ("1.0.0 (Claude Code)", "2.1.112"),
            ("no version here", "2.1.332"),
        ],
    )
    def test_newest_not_newer_than_the_agent(self, output: str, expected: str) -> None:
        """`claude --version` output picks the newest profile not newer than it."""

        assert expected == profile_for_version(parse_version(output)).version


class TestTruncationWarning:
    def test_lines_only(self) -> None:
        """250 lines of L(i): 50 cut from line 201, quoted."""
        text = "\n".join(note_line(i) for i in range(1, 251))

        actual = warning_of(memd.truncate_entrypoint(text, profile="2.1.332").content)

        assert (
            "> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was "
            "loaded: 50 of 250 lines were cut off, starting at line 201 "
            f'("- [Note 201](note_201.md) — hook 201"). {ADVICE}'
        ) == actual

    def test_bytes_only_cut_at_a_newline(self) -> None:
        """100 long lines: 29,683 units, 16 cut from line 85, quote of 79 units."""
        text = "\n".join(f"- [T{i}](t{i}.md) " + "x" * 280 for i in range(1, 101))
        quote = ("- [T85](t85.md) " + "x" * 280)[:79] + "…"

        result = memd.truncate_entrypoint(text, profile="2.1.332")

        assert 29_683 == result.byte_count
        assert (
            "> WARNING: MEMORY.md is 29KB (limit: 24.4KB) — index entries are too "
            "long. Only part of it was loaded: 16 of 100 lines were cut off, "
            f'starting at line 85 ("{quote}"). {ADVICE}'
        ) == warning_of(result.content)

    def test_hard_cut_in_line_1(self) -> None:
        """One line of 30,000 `y`: everything after 25,000 characters of line 1."""
        actual = warning_of(memd.truncate_entrypoint("y" * 30_000).content)

        assert (
            "> WARNING: MEMORY.md is 29.3KB (limit: 24.4KB) — index entries are too "
            "long. Only part of it was loaded: everything after the first 25000 "
            f"characters of line 1 was cut off. {ADVICE}"
        ) == actual

    def test_both_limits(self) -> None:
        """300 lines of 200 `z`: both limits, 185 cut from line 116."""
        text = "\n".join(f"- [T{i}](t{i}.md) " + "z" * 200 for i in range(1, 301))
        quote = ("- [T116](t116.md) " + "z" * 200)[:79] + "…"

        actual = warning_of(memd.truncate_entrypoint(text).content)

        assert (
            "> WARNING: MEMORY.md is 300 lines and 63.9KB. Only part of it was "
            "loaded: 185 of 300 lines were cut off, starting at line 116 "
            f'("{quote}"). {ADVICE}'
        ) == actual

    def test_empty_first_cut_line_has_no_quote(self) -> None:
        """200 lines, an empty line, then L(202): no quote."""
        text = "\n".join([*(note_line(i) for i in range(1, 201)), "", note_line(202)])

        actual = warning_of(memd.truncate_entrypoint(text).content)

        assert (
            "> WARNING: MEMORY.md is 202 lines (limit: 200). Only part of it was "
            f"loaded: 2 of 202 lines were cut off, starting at line 201. {ADVICE}"
        ) == actual

    def test_long_quote_breaks_at_a_word(self) -> None:
        """A long line 201 is trimmed and cut at its last word within 79 units."""
        line = (
            "   This is a very long line two hundred and one, which goes on and on "
            "past eighty characters for sure"
        )
        text = "\n".join([*(note_line(i) for i in range(1, 201)), line])

        actual = warning_of(memd.truncate_entrypoint(text).content)

        assert (
            "> WARNING: MEMORY.md is 201 lines (limit: 200). Only part of it was "
            'loaded: 1 of 201 lines were cut off, starting at line 201 ("This is a '
            'very long line two hundred and one, which goes on and on past eighty…")'
            f". {ADVICE}"
        ) == actual

    def test_2_1_112_keeps_its_sentence(self) -> None:
        """The 2.1.112 profile still says only that part was loaded."""
        text = "\n".join(note_line(i) for i in range(1, 251))

        actual = warning_of(memd.truncate_entrypoint(text, profile="2.1.112").content)

        assert (
            "> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was "
            f"loaded. {ADVICE}"
        ) == actual

    @given(index_text)
    @example("a" * 24_999 + "😀" + "b")
    @example("0\n\n> WARNING: \n0")  # the user's own text holds the marker
    def test_same_cut_and_counts_in_both_releases(self, raw: str) -> None:
        """Only the sentence differs: kept text, flags and counts are the same."""
        old = memd.truncate_entrypoint(raw, profile="2.1.112")
        new = memd.truncate_entrypoint(raw, profile="2.1.332")
        truncated = old.was_line_truncated or old.was_byte_truncated

        assert (old.was_line_truncated, old.was_byte_truncated) == (
            new.was_line_truncated,
            new.was_byte_truncated,
        )
        assert (old.line_count, old.byte_count) == (new.line_count, new.byte_count)
        # The warning is appended last, so the kept text is what precedes the
        # last marker; decided by the flags, never by looking for the marker.
        cut = "\n\n> WARNING: "
        if truncated:
            assert old.content.rpartition(cut)[0] == new.content.rpartition(cut)[0]
            assert old.content != new.content
        else:
            assert old.content == new.content


class TestValidateMemoryPath:
    @pytest.mark.parametrize(
        ("raw", "expand", "new", "old"),
        [
            ("~/../other", True, None, "/home/other/"),
            ("~/../u/x", True, None, "/home/u/x/"),
            ("~/foo/../../bar", True, None, "/home/bar/"),
            ("~\\..\\x", True, None, "/home/u/..\\x/"),
            ("~/..foo", True, "/home/u/..foo/", "/home/u/..foo/"),
            ("~/a", True, "/home/u/a/", "/home/u/a/"),
            ("~/", True, None, None),
            ("~/x", False, None, None),
            ("/\\x/y", False, None, "/\\x/y/"),
            ("//x/y", False, "/x/y/", "/x/y/"),
            ("/??/x", False, None, "/??/x/"),
            ("/a/../??/x", False, None, "/??/x/"),
            ("/net/host/x", False, None, "/net/host/x/"),
            ("/NET/h/x", False, None, "/NET/h/x/"),
            ("/a/../net/h", False, None, "/net/h/"),
            ("/net", False, "/net/", "/net/"),
            ("/net/", False, "/net/", "/net/"),
            ("/network/x", False, "/network/x/", "/network/x/"),
            ("/network/servers/h/x", False, None, "/network/servers/h/x/"),
            ("/.vol/x", False, None, "/.vol/x/"),
            ("/.file/x", False, None, "/.file/x/"),
            ("/.nofollow/x", False, None, "/.nofollow/x/"),
            ("/.resolve/x", False, None, "/.resolve/x/"),
            ("/a/.vol/x", False, "/a/.vol/x/", "/a/.vol/x/"),
            ("/ab", False, "/ab/", "/ab/"),
            ("/a", False, None, None),
        ],
    )
    def test_reference_examples(
        self, raw: str, expand: bool, new: str | None, old: str | None
    ) -> None:
        """Each example of the reference, under 2.1.332 and under 2.1.112."""
        actual_new = memd.validate_memory_path(
            raw, expand, "/home/u", profile="2.1.332"
        )
        actual_old = memd.validate_memory_path(
            raw, expand, "/home/u", profile="2.1.112"
        )

        assert (new, old) == (actual_new, actual_old)

    @given(any_text, st.booleans())
    @example("~/../x", True)
    def test_2_1_332_only_narrows(self, raw: str, expand: bool) -> None:
        """2.1.332 accepts a subset of what 2.1.112 accepts, with the same answer."""
        new = memd.validate_memory_path(raw, expand, "/home/u", profile="2.1.332")
        old = memd.validate_memory_path(raw, expand, "/home/u", profile="2.1.112")

        assert new is None or new == old


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(name="chain")
def _chain(isolated_home: Home, tmp_path: Path) -> Path:
    """A project whose user, local and project settings all choose a directory."""
    project = (tmp_path / "work" / "proj").resolve()
    project.mkdir(parents=True)
    write_json(isolated_home.claude / "settings.json", {"autoMemoryDirectory": "~/mem"})
    write_json(
        project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "/loc"}
    )
    write_json(project / ".claude" / "settings.json", {"autoMemoryDirectory": "/proj"})
    return project


def trust(home: Home, folder: Path) -> None:
    """Accept the trust dialog for `folder`, as the agent records it."""
    write_json(
        home.home / ".claude.json",
        {"projects": {str(folder): {"hasTrustDialogAccepted": True}}},
    )


class TestSettingsChainAndTrust:
    def test_untrusted_gives_user(self, isolated_home: Home, chain: Path) -> None:
        """Interactive and untrusted: local and project are skipped."""
        location = resolve_memory_location(str(chain), profile="2.1.332")

        assert (f"{isolated_home.home}/mem/", "settings:user") == (
            location.memory_dir,
            location.source,
        )
        assert location.trust is not None
        assert location.trust.endswith("ignored")

    def test_trusted_gives_local_then_project(
        self, isolated_home: Home, chain: Path
    ) -> None:
        """Trusted: local wins, and project applies once local is unset."""
        trust(isolated_home, chain)

        first = resolve_memory_location(str(chain), profile="2.1.332")
        (chain / ".claude" / "settings.local.json").unlink()
        second = resolve_memory_location(str(chain), profile="2.1.332")

        assert ("/loc/", "settings:local") == (first.memory_dir, first.source)
        assert ("/proj/", "settings:project") == (second.memory_dir, second.source)
        assert second.trust == f"trusted project folder {chain}: project settings read"

    def test_trusted_parent_folder(self, isolated_home: Home, chain: Path) -> None:
        """A trusted parent folder covers the project."""
        trust(isolated_home, chain.parent)

        location = resolve_memory_location(str(chain), profile="2.1.332")

        assert "/loc/" == location.memory_dir

    def test_sandbox_variable_trusts(
        self, chain: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`CLAUDE_CODE_SANDBOXED` passes the trust check."""
        monkeypatch.setenv("CLAUDE_CODE_SANDBOXED", "1")

        assert "/loc/" == memd.auto_mem_path(str(chain), profile="2.1.332")

    def test_2_1_112_ignores_trust(self, isolated_home: Home, chain: Path) -> None:
        """2.1.112 always reads local and never project, trusted or not."""
        untrusted = memd.auto_mem_path(str(chain), profile="2.1.112")
        (chain / ".claude" / "settings.local.json").unlink()
        trust(isolated_home, chain)

        assert "/loc/" == untrusted
        assert f"{isolated_home.home}/mem/" == memd.auto_mem_path(
            str(chain), profile="2.1.112"
        )

    def test_empty_policy_hides_everything(
        self, isolated_home: Home, chain: Path
    ) -> None:
        """Policy `""` hides the lower sources: the default path."""
        write_json(
            isolated_home.root / "managed-settings.json", {"autoMemoryDirectory": ""}
        )
        trust(isolated_home, chain)

        location = resolve_memory_location(str(chain), profile="2.1.332")

        assert "default" == location.source

    def test_broken_global_config_is_untrusted(
        self, isolated_home: Home, chain: Path
    ) -> None:
        """An invalid ~/.claude.json means not trusted, never a crash."""
        (isolated_home.home / ".claude.json").write_text("{not json")

        assert f"{isolated_home.home}/mem/" == memd.auto_mem_path(str(chain))

    @pytest.mark.parametrize(
        ("non_interactive", "accepted", "ignores", "expected"),
        [
            (False, False, False, False),  # interactive, untrusted: user
            (False, True, False, True),  # trusted: local or project
            (True, False, False, True),  # -p / SDK: project or local
            (True, False, True, False),  # -p with --ignore-persisted-trust: user
            (True, True, True, False),
            (False, True, True, True),  # ignoring applies to non-interactive only
        ],
    )
    def test_gate(
        self, non_interactive: bool, accepted: bool, ignores: bool, expected: bool
    ) -> None:
        """The gate's truth table from the reference's results."""
        actual = trust_gate(
            Trust(accepted, "test"),
            is_non_interactive=non_interactive,
            ignores_persisted=ignores,
        )

        assert expected == actual

    def test_trust_read_from_global_config(self) -> None:
        """projects[<path>].hasTrustDialogAccepted must be exactly true."""
        config = {"projects": {"/a": {"hasTrustDialogAccepted": "yes"}}}

        assert not workspace_trust("/a/b", {}, config).accepted
        assert workspace_trust(
            "/a/b", {}, {"projects": {"/a": {"hasTrustDialogAccepted": True}}}
        ).accepted


class TestProjectDirName:
    @pytest.mark.parametrize(
        ("env", "named"),
        [
            (
                {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "my-proj"},
                True,
            ),
            ({"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "con"}, False),
            (
                {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "LPT9"},
                False,
            ),
            ({"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "a.b"}, False),
            (
                {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "x" * 65},
                False,
            ),
            (
                {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "x" * 64},
                True,
            ),
            (
                {
                    "CLAUDE_CONFIG_DIR": "/c",
                    "CLAUDE_CODE_PROJECT_DIR_NAME": "my-proj",
                    "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r",
                },
                False,
            ),
        ],
    )
    def test_rule(self, tmp_path: Path, env: dict[str, str], named: bool) -> None:
        """The name is used only under the config home with a valid value."""
        root = str(tmp_path.resolve())
        base = env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR", "/c")
        name = env["CLAUDE_CODE_PROJECT_DIR_NAME"] if named else sanitize_path(root)
        full = {**env, "HOME": str(tmp_path)}

        actual = memd.auto_mem_path(root, full, profile="2.1.332")

        assert f"{base}/projects/{name}/memory/" == actual

    def test_needs_claude_config_dir(self, isolated_home: Home, tmp_path: Path) -> None:
        """Without CLAUDE_CONFIG_DIR the sanitized name stays."""
        root = str(tmp_path.resolve())
        env = {
            "HOME": str(isolated_home.home),
            "CLAUDE_CODE_PROJECT_DIR_NAME": "my-proj",
        }

        actual = memd.auto_mem_path(root, env)

        assert (
            f"{isolated_home.claude}/projects/{sanitize_path(root)}/memory/" == actual
        )

    def test_2_1_112_ignores_it(self, tmp_path: Path) -> None:
        """2.1.112 has no such variable."""
        root = str(tmp_path.resolve())
        env = {"CLAUDE_CONFIG_DIR": "/c", "CLAUDE_CODE_PROJECT_DIR_NAME": "my-proj"}

        actual = memd.auto_mem_path(root, env, profile="2.1.112")

        assert f"/c/projects/{sanitize_path(root)}/memory/" == actual


class TestEnablement:
    @pytest.mark.parametrize(
        ("env", "new", "old"),
        [
            (
                {"CLAUDE_CODE_SAFE_MODE": "1"},
                (False, "env:CLAUDE_CODE_SAFE_MODE"),
                (True, "default"),
            ),
            (
                {
                    "CLAUDE_CODE_SAFE_MODE": "yes",
                    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0",
                },
                (False, "env:CLAUDE_CODE_SAFE_MODE"),
                (True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY"),
            ),
            (
                {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "off", "CLAUDE_CODE_SIMPLE": "1"},
                (True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY"),
                (True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY"),
            ),
            (
                {"CLAUDE_CODE_SIMPLE": "1"},
                (False, "env:CLAUDE_CODE_SIMPLE"),
                (False, "env:CLAUDE_CODE_SIMPLE"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "1"},
                (False, "env:CLAUDE_CODE_REMOTE"),
                (False, "env:CLAUDE_CODE_REMOTE"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "1", "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE": "/x"},
                (True, "default"),
                (False, "env:CLAUDE_CODE_REMOTE"),
            ),
            (
                {"CLAUDE_CODE_REMOTE": "true", "CLAUDE_CODE_REMOTE_MEMORY_DIR": "/r"},
                (True, "default"),
                (True, "default"),
            ),
        ],
    )
    def test_rules(
        self, env: dict[str, str], new: tuple[bool, str], old: tuple[bool, str]
    ) -> None:
        """Safe mode first, and the override spares a remote session, in 2.1.332."""
        actual_new = is_auto_memory_enabled(env, None, profile="2.1.332")
        actual_old = is_auto_memory_enabled(env, None, profile="2.1.112")

        assert (new, old) == (
            (actual_new.enabled, actual_new.reason),
            (actual_old.enabled, actual_old.reason),
        )

    def test_defined_falsy_beats_settings(self) -> None:
        """Defined-falsy beats a settings `autoMemoryEnabled: false`."""
        actual = memd.is_auto_memory_enabled(
            {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "no"}, {"autoMemoryEnabled": False}
        )

        assert (True, "env:CLAUDE_CODE_DISABLE_AUTO_MEMORY") == (
            actual.enabled,
            actual.reason,
        )


class TestRecallLimits:
    @pytest.mark.parametrize(
        ("data", "lines", "by_bytes", "truncated"),
        [
            (b"\n".join([b"l"] * 300), 200, False, True),
            (b"x" * 4096, 1, False, False),
            (b"x" * 4095 + b"\ny", 1, True, True),
            (b"\n".join([b"a" * 99] * 50), 40, True, True),
            (b"x" * 4097, 0, True, True),
            (b"\xef\xbb\xbf" + b"x" * 4096, 1, False, False),
        ],
    )
    def test_recall_read(
        self, data: bytes, lines: int, by_bytes: bool, truncated: bool
    ) -> None:
        """Whole lines, 200 lines and 4096 UTF-8 bytes at most, BOM stripped."""
        actual = recalled_text(data, profile="2.1.332")

        assert (lines, by_bytes, truncated) == (
            actual.line_count,
            actual.was_cut_by_bytes,
            actual.was_truncated,
        )

    def test_fifty_lines_keep_3999_bytes(self) -> None:
        """50 lines of 100 bytes keep 40 lines, 3,999 bytes."""
        actual = recalled_text(b"\n".join([b"a" * 99] * 50))

        assert 3999 == len(actual.text.encode())

    def test_2_1_112_has_no_byte_limit(self) -> None:
        """2.1.112 shows the file whole."""
        actual = recalled_text(b"x" * 10_000, profile="2.1.112")

        assert (1, False) == (actual.line_count, actual.was_truncated)

    def test_scan_stops_before_the_line_that_crosses_the_cap(self) -> None:
        """The header scan keeps 30 lines, but not a line past 65,536 bytes."""
        data = b"---\n" + b"d" * 65_533 + b"\n---\nbody"

        new = scanned_header(data, profile="2.1.332")
        old = scanned_header(data, profile="2.1.112")

        assert (1, True) == (new.line_count, new.was_cut_by_bytes)
        assert 4 == old.line_count

    @given(st.binary(max_size=6000))
    def test_recall_is_a_bounded_prefix(self, data: bytes) -> None:
        """What recall shows is whole lines from the start, within the limits."""
        shown = recalled_text(data)
        body = data.removeprefix(b"\xef\xbb\xbf")
        kept = b"\n".join(body.split(b"\n")[: shown.line_count])

        assert len(kept) <= 4096
        assert shown.line_count <= 200
        assert shown.text == kept.decode("utf-8", "replace")


class TestProvenance:
    GOOD: ClassVar[dict[str, object]] = {
        "id": "i1",
        "state": "acked",
        "consent": "on",
        "account": None,
        "src": "typed",
        "typed": None,
        "scope": "repo",
        "promoted": [],
        "ids": ["i1"],
    }

    def test_good_item_passes(self) -> None:
        """A record with every field, minted optional, passes."""
        assert claude_code_item_problem(self.GOOD) is None
        assert claude_code_item_problem({**self.GOOD, "minted": "2026-11-01"}) is None

    @pytest.mark.parametrize(
        ("change", "problem"),
        [
            ({"id": ""}, "`id` is not a non-empty string"),
            (
                {"state": "done"},
                "`state` is 'done', not one of legacy, pending, acked, suppressed",
            ),
            ({"account": 5}, "`account` is neither a string nor null"),
            ({"ids": "i1"}, "`ids` is not a list"),
        ],
    )
    def test_bad_item(self, change: dict[str, object], problem: str) -> None:
        """Each failing field is named."""
        assert problem == claude_code_item_problem({**self.GOOD, **change})

    def test_keys_are_known_in_2_1_332_only(self) -> None:
        """claudeCodeItem and typedTurn are known keys from 2.1.332 on."""
        assert {"claudeCodeItem", "typedTurn"} <= PROFILE_2_1_332.known_metadata_keys
        assert not {"claudeCodeItem", "typedTurn"} & PROFILE_2_1_112.known_metadata_keys


def test_quote_never_exceeds_80_units() -> None:
    """Every quote is at most 80 units with its ellipsis."""
    from memd.claude_code.truncation_notice import shorten_quote

    for line in ("a" * 200, "word " * 40, "😀" * 60, "x" * 40 + " " + "y" * 60):
        assert utf16_len(shorten_quote(line)) <= 80


class TestReservedFolders:
    def test_reference_scan_example(self, tmp_path: Path) -> None:
        """Of the reference's example tree only sub/ok.md, team/t.md, a.md remain."""
        from memd.memory.reader import load_memdir

        root = tmp_path / "memory"
        for rel in (
            "a.md",
            "team/t.md",
            "logs/2026/11/2026-11-30.md",
            "sessions/s.md",
            "proposals/p.md",
            "Logs./q.md",
            ".hidden/h.md",
            "sub/.x.md",
            "sub/ok.md",
            "sub/MEMORY.md",
            "x.MD",
        ):
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("---\nname: n\ndescription: d\ntype: user\n---\nbody\n")

        memdir = load_memdir(str(root))

        assert ["a.md", "sub/ok.md", "team/t.md"] == [f.relpath for f in memdir.files]

    @pytest.mark.parametrize(
        ("name", "new", "old"),
        [
            ("sessions", True, False),
            ("Proposals", True, False),
            ("logs. ", True, True),
            ("team", False, False),
            ("notes", False, False),
        ],
    )
    def test_folder_names(self, name: str, new: bool, old: bool) -> None:
        """Reserved names are compared NFC, trailing dots and spaces off, any case."""
        from memd.claude_code.recall import is_reserved_folder

        assert (new, old) == (
            is_reserved_folder(name),
            is_reserved_folder(name, profile="2.1.112"),
        )


class TestPromptAdvice:
    SENTENCE = (
        "Keep each memory file under 4KB including frontmatter (recall shows only "
        "the first 4KB) and the description to one specific line; when a file "
        "outgrows that, split or summarize it rather than continuing it in a second "
        "file."
    )

    def test_2_1_332_tells_the_model_about_4kb(self) -> None:
        """The 2.1.332 prompt carries the agent's 4KB sentence; 2.1.112's does not."""
        from memd.claude_code.prompt import render_prompt

        new, _ = render_prompt(mode="standard", memory_dir="/m/", index_text=None)
        old, _ = render_prompt(
            mode="standard", memory_dir="/m/", index_text=None, profile="2.1.112"
        )

        assert self.SENTENCE in new
        assert self.SENTENCE not in old
