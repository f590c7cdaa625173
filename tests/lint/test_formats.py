"""Renderers: text by file, JSON with a summary, SARIF 2.1.0, GitHub annotations."""

from __future__ import annotations

import json

import pytest

from memd.diagnostics import Diagnostic, Severity
from memd.lint.formats import escape_data, escape_property, render, sarif_log
from memd.lint.rules import RULES, RULES_BY_KEY

DIAGS = (
    RULES_BY_KEY["I005"].diag(
        "MEMORY.md", "entry links to gone.md", "remove it", line=4, column=3
    ),
    RULES_BY_KEY["M008"].diag(
        "a.md", "`type: Feedbak` is not a memory type", "did you mean feedback?", line=4
    ),
    RULES_BY_KEY["M015"].diag("a.md", "unknown frontmatter key `tags`"),
)


def check_sarif(log: dict[str, object]) -> list[str]:
    """Return which keys SARIF 2.1.0 consumers require are missing or wrong."""
    problems = []
    if log.get("version") != "2.1.0" or "sarif-2.1.0" not in str(log.get("$schema")):
        problems.append("version/$schema")
    runs = log.get("runs")
    if not isinstance(runs, list) or len(runs) != 1:
        return [*problems, "runs"]
    driver = runs[0]["tool"]["driver"]
    for key in ("name", "version", "informationUri", "rules"):
        if key not in driver:
            problems.append(f"driver.{key}")
    for rule in driver.get("rules", []):
        if (
            not {"id", "name", "shortDescription", "defaultConfiguration"}
            <= rule.keys()
        ):
            problems.append(f"rule {rule.get('id')}")
        elif rule["defaultConfiguration"]["level"] not in ("error", "warning", "note"):
            problems.append(f"rule level {rule['id']}")
    ids = {rule["id"] for rule in driver.get("rules", [])}
    for result in runs[0].get("results", []):
        if result.get("ruleId") not in ids or result.get("level") not in (
            "error",
            "warning",
            "note",
        ):
            problems.append(f"result {result.get('ruleId')}")
        if not result.get("message", {}).get("text"):
            problems.append("result message")
        for location in result.get("locations", []):
            physical = location["physicalLocation"]
            if not physical["artifactLocation"].get("uri"):
                problems.append("result uri")
            region = physical.get("region", {})
            if any(not isinstance(v, int) or v < 1 for v in region.values()):
                problems.append("result region")
    return problems


class TestText:
    def test_grouped_by_file_with_summary(self) -> None:
        """Each file's path heads its findings; the last line counts them."""
        out = render(DIAGS, "text")

        lines = out.splitlines()
        assert "MEMORY.md" == lines[0]
        assert "a.md" in lines
        assert "1 error, 1 warning, 1 info in 2 files" == lines[-1]
        assert "\033[" not in out

    def test_color_only_when_asked(self) -> None:
        """ANSI colour appears with color=True."""
        assert "\033[31m" in render(DIAGS, "text", color=True)

    def test_clean(self) -> None:
        """No findings says so."""
        assert "no problems found\n" == render((), "text")


class TestJson:
    def test_round_trips_with_summary(self) -> None:
        """The JSON lists every finding as a dict and counts them by severity."""
        document = json.loads(render(DIAGS, "json"))

        assert list(DIAGS) == [Diagnostic.from_dict(d) for d in document["diagnostics"]]
        assert {"errors": 1, "warnings": 1, "infos": 1, "files": 2} == document[
            "summary"
        ]


class TestSarif:
    def test_structure_is_valid(self) -> None:
        """The log has every key SARIF 2.1.0 consumers require."""
        log = json.loads(render(DIAGS, "sarif"))

        assert [] == check_sarif(log)

    def test_checker_catches_a_broken_log(self) -> None:
        """The checker itself fails on a result with an unknown rule and a bad level."""
        log = sarif_log(DIAGS)
        log["runs"][0]["results"][0].update(ruleId="X999", level="fatal")  # type: ignore[index]

        assert ["result X999"] == check_sarif(log)

    def test_rules_come_from_the_table(self) -> None:
        """tool.driver.rules lists every rule in RULES with its default level."""
        driver = sarif_log(())["runs"][0]["tool"]["driver"]  # type: ignore[index]

        assert [r.code for r in RULES] == [r["id"] for r in driver["rules"]]
        assert (
            "note"
            == driver["rules"][[r.code for r in RULES].index("M015")][
                "defaultConfiguration"
            ]["level"]
        )

    def test_result_location(self) -> None:
        """A result carries the file, line and column."""
        result = sarif_log(DIAGS[:1])["runs"][0]["results"][0]  # type: ignore[index]

        assert {
            "artifactLocation": {"uri": "MEMORY.md"},
            "region": {"startLine": 4, "startColumn": 3},
        } == result["locations"][0]["physicalLocation"]
        assert "warning" == result["level"]

    def test_absolute_paths_become_file_uris(self) -> None:
        """An absolute path becomes an encoded file:// URI; a relative one stays."""
        diags = (
            RULES_BY_KEY["I006"].diag("/m y/a.md", "orphan"),
            RULES_BY_KEY["I006"].diag("team/b c.md", "orphan"),
        )

        runs = sarif_log(diags)["runs"]
        uris = [
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in runs[0]["results"]  # type: ignore[index]
        ]

        assert ["file:///m%20y/a.md", "team/b%20c.md"] == uris


class TestGithub:
    def test_annotation_lines(self) -> None:
        """One workflow command per finding, with file, line, col and title."""
        out = render(DIAGS[:1], "github")

        assert (
            "::warning file=MEMORY.md,line=4,col=3,title=I005 index-link-dangling::"
            "entry links to gone.md (hint: remove it)\n"
        ) == out

    def test_info_is_a_notice(self) -> None:
        """Info findings become ::notice."""
        assert render(DIAGS[2:], "github").startswith(
            "::notice file=a.md,title=M015 unknown-key::"
        )

    def test_escaping(self) -> None:
        """%, CR and LF are escaped everywhere; `:` and `,` also in properties."""
        d = Diagnostic(
            code="M010", name="n", severity=Severity.ERROR, path="we,ird:name.md",
            message="50% done\r\nnext: line",
        )  # fmt: skip

        out = render((d,), "github")

        assert (
            "::error file=we%2Cird%3Aname.md,title=M010 n::50%25 done%0D%0Anext: line\n"
            == out
        )
        assert "a%25%0A%3A%2C" == escape_property("a%\n:,")
        assert "a%25%0A:," == escape_data("a%\n:,")


class TestRender:
    def test_unknown_format(self) -> None:
        """An unknown format is a programming error."""
        with pytest.raises(ValueError, match="unknown format"):
            render(DIAGS, "xml")
