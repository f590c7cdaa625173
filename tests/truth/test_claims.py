"""What a memory names: paths, bare names, commands, and what is left alone (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.truth.claims import MAX_CLAIMS, extract_claims
from memd.truth.scripts import defined_commands


def named(text: str, root: str | None = None) -> list[tuple[str, str]]:
    return [(c.kind, c.value) for c in extract_claims(text, root=root)]


class TestPaths:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("in `src/auth/session.ts`", [("path", "src/auth/session.ts")]),
            ("in `./src/a.py:42:7`", [("path", "src/a.py")]),
            ("see `src/a.py#L10-L20`", [("path", "src/a.py")]),
            ("folder `src/auth/`", [("path", "src/auth/")]),
            ("glob `src/game/**`", [("path", "src/game/")]),
            ("prose src/legacy.py, and more", [("path", "src/legacy.py")]),
            ("prose (scripts/deploy.sh).", [("path", "scripts/deploy.sh")]),
            ("now under src/renderware/map", [("path", "src/renderware/map")]),
            (
                "`python tools/gen.py --fast`",
                [("pyscript", "python"), ("path", "tools/gen.py")],
            ),
            ("bare `session.ts`", [("name", "session.ts")]),
            (
                "bare `Makefile` and `.nvmrc`",
                [("name", "Makefile"), ("name", ".nvmrc")],
            ),
        ],
    )
    def test_named(self, text: str, expected: list[tuple[str, str]]) -> None:
        """Each form a memory names a project path in."""
        assert expected == named(text)

    @pytest.mark.parametrize(
        "text",
        [
            "```\nsrc/a.py\n`src/b.py`\n```",
            "~~~~\nmake deploy\n~~~~",
            "> ```\n> src/a.py\n> ```",
            "https://github.com/o/r/blob/main/src/a.py and www.x.com/a/b.py",
            "`/tmp/build/out.js` and `~/notes/todo.md` and `/etc/hosts.d/x.conf`",
            "`src/*.py` `src/a?.py` `$HOME/x/y.py` `@scope/pkg` `../up/x.py`",
            "a [link](src/a.py) to code",
            "1/2, 24/7",
            "`v1.2.3` and `3.14`",
        ],
    )
    def test_left_alone(self, text: str) -> None:
        """Fences, URLs, /tmp, ~, absolute paths, globs, links, versions: nothing."""
        assert [] == [kind for kind, _ in named(text) if kind in ("path", "name")]

    def test_an_absolute_path_inside_the_project(self) -> None:
        """An absolute path under the project root names the relative path."""
        assert [("path", "src/a.py")] == named(
            "`/home/u/shop/src/a.py`", root="/home/u/shop"
        )

    def test_lines_and_columns(self) -> None:
        """A claim records its 1-based line and column."""
        (claim,) = extract_claims("---\n\nx `src/a.py`\n")

        assert (3, 4, "src/a.py") == (claim.line, claim.column, claim.text)

    def test_a_fence_closes_only_with_its_own_kind(self) -> None:
        """A ``` fence is not closed by ~~~ nor by a shorter run."""
        text = "````\n```\n~~~\n`src/a.py`\n````\n`src/b.py`\n"

        assert [("path", "src/b.py")] == named(text)


class TestCommands:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("`npm run build`", [("npm", "build")]),
            ("`npm test`", [("npm", "test")]),
            ("`pnpm dev` and `pnpm run e2e`", [("npm", "dev"), ("npm", "e2e")]),
            ("`yarn lint --fix`", [("npm", "lint")]),
            ("`pnpm install`", []),
            ("`make -j4 build test`", [("make", "build"), ("make", "test")]),
            ("`make FOO=1 deploy`", [("make", "deploy")]),
            ("`make -C sub deploy`", []),
            ("`just release 1.2`", [("just", "release")]),
            ("`uv run shop-admin --help`", [("pyscript", "shop-admin")]),
            ("`cd web && npm run dev`", []),
            ("`npm ci && npm run build`", [("npm", "build")]),
            ("then run make deploy to ship", [("make", "deploy")]),
            ("make sure the tests pass", [("make", "sure")]),
        ],
    )
    def test_commands(self, text: str, expected: list[tuple[str, str]]) -> None:
        """Scripts, targets, recipes and project scripts, as the tools take them."""
        assert expected == [
            (k, v) for k, v in named(text) if k != "pyscript" or "run" in text
        ]


class TestDefinitions:
    def test_package_json(self) -> None:
        assert frozenset({"build", "lint"}) == defined_commands(
            "npm", b'{"scripts": {"build": "tsc", "lint": "x"}}'
        )

    def test_makefile(self) -> None:
        text = b"X := 1\n.PHONY: a\na b: c\n\tcmd\n%.o: %.c\nlong \\\n  wrapped:\n"
        assert frozenset({"a", "b", "long", "wrapped"}) == defined_commands(
            "make", text
        )

    def test_justfile(self) -> None:
        text = (
            b"set shell := ['bash']\nx := 'y'\ntest:\n  pytest\n"
            b"@quiet arg='1':\n  echo\n"
        )
        assert frozenset({"test", "quiet"}) == defined_commands("just", text)

    def test_pyproject(self) -> None:
        text = b'[project.scripts]\nshop = "a:b"\n[tool.poetry.scripts]\nold = "c:d"\n'
        assert frozenset({"shop", "old"}) == defined_commands("pyscript", text)

    def test_unreadable_is_unknown(self) -> None:
        """A file that does not parse defines "unknown" (None), never "nothing"."""
        assert None is defined_commands("npm", b"{not json")
        assert None is defined_commands("pyscript", b"[project\n")


class TestBounds:
    def test_at_most_max_claims(self) -> None:
        """A file naming thousands of paths gives MAX_CLAIMS claims."""
        text = "\n".join(f"`src/f{i}.py`" for i in range(5000))

        assert MAX_CLAIMS == len(extract_claims(text))

    @pytest.mark.parametrize(
        "hostile", ["`" * 200_000, "` `` " * 40_000, "a/" * 100_000, "](" * 100_000]
    )
    def test_hostile_lines_finish(self, hostile: str) -> None:
        """Runs of backticks, slashes and link openers never hang or crash."""
        extract_claims(hostile)

    @given(st.text(max_size=2000))
    def test_never_raises(self, text: str) -> None:
        """Any text gives claims, never an exception."""
        for claim in extract_claims(text):
            assert claim.line >= 1
            assert claim.column >= 1


class TestUnknownDefinitions:
    def test_an_included_makefile_or_a_catch_all_rule_is_unknown(self) -> None:
        """Targets may come from elsewhere: never "gone"."""
        assert None is defined_commands("make", b"include common.mk\nbuild:\n\tx\n")
        assert None is defined_commands("make", b"build:\n\tx\n%:\n\t@true\n")

    def test_a_justfile_importing_another_is_unknown(self) -> None:
        assert None is defined_commands("just", b"import 'ci.just'\ntest:\n  x\n")
