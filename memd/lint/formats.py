"""Render diagnostics for people and machines: text, json, sarif 2.1.0, github.

SARIF follows the OASIS SARIF 2.1.0 schema: one run, `tool.driver.rules`
generated from `RULES`, results with `ruleId`, `level`, `message.text` and a
physical location. GitHub workflow commands escape `%`, CR and LF in the
message, and additionally `:` and `,` in properties (actions/toolkit `command.ts`).
"""

from __future__ import annotations

import json
from itertools import groupby

from memd._version import __version__
from memd.diagnostics import Diagnostic, Severity, count_by_severity
from memd.lint.rules import RULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/memd/memd"
_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
}
_GITHUB_COMMAND = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
}
_COLOR = {
    Severity.ERROR: "\033[31m",
    Severity.WARNING: "\033[33m",
    Severity.INFO: "\033[36m",
}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def render(
    diagnostics: Iterable[Diagnostic],
    fmt: str,
    *,
    color: bool = False,
    heading: Callable[[str], str] | None = None,
) -> str:
    """Return `diagnostics` rendered as `fmt` (text, json, sarif or github).

    A message or hint that quotes memory has its likely secrets masked
    (`memd.lint.secrets.mask_secrets`). `heading` names each file in text.
    """
    diags = masked_diagnostics(diagnostics)
    if fmt == "text":
        return render_text(diags, color=color, heading=heading)
    if fmt == "json":
        return render_json(diags)
    if fmt == "sarif":
        return json.dumps(sarif_log(diags), indent=2, ensure_ascii=False) + "\n"
    if fmt == "github":
        return render_github(diags)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def masked_diagnostics(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """`diagnostics` with likely secrets masked in each message and hint."""
    import dataclasses

    from memd.lint.secrets import mask_secrets

    return tuple(
        dataclasses.replace(
            d, message=mask_secrets(d.message), hint=mask_secrets(d.hint)
        )
        for d in diagnostics
    )


def summary_line(diagnostics: tuple[Diagnostic, ...]) -> str:
    """Return `N errors, N warnings, N infos in N files` (or `no problems`)."""
    if not diagnostics:
        return "no problems found"
    errors, warnings, infos = count_by_severity(diagnostics)
    files = len({d.path for d in diagnostics})
    return (
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}, "
        f"{_plural(infos, 'info')}"
        f" in {_plural(files, 'file')}"
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word == "info" else f"{n} {word}s"


def render_text(
    diagnostics: tuple[Diagnostic, ...],
    *,
    color: bool = False,
    summary: bool = True,
    heading: Callable[[str], str] | None = None,
) -> str:
    """Return findings grouped by file, each with its hint, then a summary line.

    `summary` False: no summary line (`memd run` writes findings as they come).
    `heading` names each file for a person (`MEMORY.md in ~/code/webshop`,
    memd.projects); else its path.
    """

    def paint(text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if color else text

    out: list[str] = []
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        out.append(paint(path if heading is None else heading(path), _BOLD))
        for d in group:
            where = (
                f"{d.line}:{d.column}"
                if d.line and d.column
                else f"{d.line}"
                if d.line
                else "-"
            )
            severity = paint(f"{d.severity!s:<7}", _COLOR[d.severity])
            out.append(
                f"  {where:>7}  {severity}  {d.code} {d.message}  {paint(d.name, _DIM)}"
            )
            if d.hint:
                out.append(paint(f"{'':>11}hint: {d.hint}", _DIM))
        out.append("")
    if summary:
        out.append(summary_line(diagnostics))
    return "\n".join(out) + "\n"


def render_json(diagnostics: tuple[Diagnostic, ...]) -> str:
    """Return `{"diagnostics": [...], "summary": {...}}` as indented JSON."""
    errors, warnings, infos = count_by_severity(diagnostics)
    document = {
        "diagnostics": [d.to_dict() for d in diagnostics],
        "summary": {
            "errors": errors,
            "warnings": warnings,
            "infos": infos,
            "files": len({d.path for d in diagnostics}),
        },
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def sarif_rules() -> list[dict[str, object]]:
    """Return SARIF reportingDescriptor objects for every rule in `RULES`."""
    return [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.default_severity]},
        }
        for rule in RULES
    ]


def artifact_uri(path: str) -> str:
    """Return `path` as a SARIF URI: relative paths stay relative, absolute become file://."""
    from urllib.parse import quote

    posix = path.replace("\\", "/")
    return f"file://{quote(posix)}" if posix.startswith("/") else quote(posix)


def sarif_log(diagnostics: tuple[Diagnostic, ...]) -> dict[str, object]:
    """Return a SARIF 2.1.0 log with one run of memd."""
    index = {rule.code: i for i, rule in enumerate(RULES)}
    results = []
    for d in diagnostics:
        region: dict[str, int] = {}
        if d.line:
            region["startLine"] = d.line
            if d.column:
                region["startColumn"] = d.column
        location: dict[str, object] = {
            "artifactLocation": {"uri": artifact_uri(d.path)}
        }
        if region:
            location["region"] = region
        text = f"{d.message} (hint: {d.hint})" if d.hint else d.message
        result: dict[str, object] = {
            "ruleId": d.code,
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": text},
            "locations": [{"physicalLocation": location}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memd",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": sarif_rules(),
                    }
                },
                "results": results,
            }
        ],
    }


def escape_data(text: str) -> str:
    """Escape a workflow-command message: `%`, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow-command property value: as a message, plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: tuple[Diagnostic, ...]) -> str:
    """Return one `::error file=…,line=…,col=…,title=…::message` line per finding."""
    lines = []
    for d in diagnostics:
        props = [f"file={escape_property(d.path)}"]
        if d.line:
            props.append(f"line={d.line}")
            if d.column:
                props.append(f"col={d.column}")
        props.append(f"title={escape_property(f'{d.code} {d.name}')}")
        text = f"{d.message} (hint: {d.hint})" if d.hint else d.message
        lines.append(
            f"::{_GITHUB_COMMAND[d.severity]} {','.join(props)}::{escape_data(text)}"
        )
    return "".join(line + "\n" for line in lines)
