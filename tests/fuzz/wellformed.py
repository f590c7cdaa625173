"""What every Diagnostic must look like, whatever input produced it (issue 6).

Shared by the hypothesis properties in this folder and by bench/fuzz_atheris.py,
so both fuzzers judge findings by one rule set.
"""

from __future__ import annotations

import re

from memd.diagnostics import Diagnostic, Severity
from memd.lint.rules import RULES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

RULE_NAMES = {rule.code: rule.name for rule in RULES}
_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def line_count(data: bytes | str) -> int:
    """Return the number of LF-separated lines, counting a final empty one."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    return data.count(newline) + 1  # type: ignore[arg-type]


def problems(
    d: Diagnostic,
    *,
    line_counts: Mapping[str, int] | None = None,
    relative: bool = False,
) -> list[str]:
    """Return what is wrong with `d` (empty when it is well-formed).

    `line_counts` maps a path to its file's line count; a finding on a path in
    it must not point past that count + 1. `relative` demands a path inside a
    memory directory (never absolute).
    """
    wrong = []
    if RULE_NAMES.get(d.code) is None:
        wrong.append(f"code {d.code!r} is not in RULES")
    elif RULE_NAMES[d.code] != d.name:
        wrong.append(f"name {d.name!r} is not {d.code}'s {RULE_NAMES[d.code]!r}")
    if not _KEBAB.fullmatch(d.name):
        wrong.append(f"name {d.name!r} is not kebab-case")
    # Typed fields are checked at run time too: a fuzzer trusts no annotation.
    severity: object = d.severity
    line: object = d.line
    column: object = d.column
    if not isinstance(severity, Severity):
        wrong.append(f"severity {d.severity!r} is not a Severity")
    if not d.path:
        wrong.append("path is empty")
    elif relative and (d.path.startswith("/") or "\\" in d.path[:1]):
        wrong.append(f"path {d.path!r} is absolute")
    if line is not None:
        limit = (line_counts or {}).get(d.path)
        if not isinstance(line, int) or line < 1:
            wrong.append(f"line {line!r} is not >= 1")
        elif limit is not None and line > limit + 1:
            wrong.append(f"line {line} is past the file's {limit} lines + 1")
    if column is not None and (not isinstance(column, int) or column < 1):
        wrong.append(f"column {column!r} is not >= 1")
    if not d.message.strip():
        wrong.append("message is empty")
    if len(d.message.splitlines()) > 1 or len(d.hint.splitlines()) > 1:
        wrong.append(f"message or hint is not one line: {d.message!r} {d.hint!r}")
    return wrong


def assert_well_formed(
    diagnostics: Iterable[Diagnostic],
    *,
    line_counts: Mapping[str, int] | None = None,
    relative: bool = False,
) -> None:
    """Fail with every malformed finding listed, if there is one."""
    bad = [
        (d, wrong)
        for d in diagnostics
        if (wrong := problems(d, line_counts=line_counts, relative=relative))
    ]
    assert [] == bad
