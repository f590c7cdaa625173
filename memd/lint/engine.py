"""Run the rule table over a loaded memory directory, or over one lone file.

The engine decides nothing about memory: it builds a `LintContext`, loops
over `RULES`, applies configured severities (code or name -> error, warning,
info or off) and sorts the result by (path, line, code).
"""

from __future__ import annotations

import os

from memd.diagnostics import Diagnostic, Severity
from memd.index import classify_target, parse_index
from memd.lint.rules import RULES, RULES_BY_KEY, LintContext
from memd.memfile import parse_memory_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from memd.memdir import MemDir
    from memd.memfile import MemoryFile
    from memd.prompt import IndexView

LEVELS = ("error", "warning", "info", "off")
DEFAULT_MAX_FILE_BYTES = 256 * 1024


def lint_memdir(
    memdir: MemDir,
    *,
    severities: Mapping[str, str] | None = None,
    index_view: IndexView | None = None,
) -> tuple[Diagnostic, ...]:
    """Return every finding about `memdir`, sorted by (path, line, code).

    `index_view`, when given, must be `view_index(memdir.index_text)` (the
    pipeline has it from rendering): the index is then truncated only once.
    """
    index_text = memdir.index_text
    known = {f.relpath for f in memdir.files}
    known.update(memdir.log_files)
    known.update(d.path for d in memdir.diagnostics)
    if index_text is not None:
        known.add("MEMORY.md")
    entries = parse_index(index_text) if index_text is not None else ()
    ctx = LintContext(
        files=memdir.files,
        index_text=index_text,
        entries=entries,
        log_files=memdir.log_files,
        dir_diagnostics=memdir.diagnostics,
        known_paths=frozenset(known),
        is_memdir=True,
        index_view=index_view,
        targets=tuple(classify_target(e.target) for e in entries),
    )
    return run_rules(ctx, severities=severities)


def lint_file(
    path: str,
    *,
    severities: Mapping[str, str] | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> tuple[Diagnostic, ...]:
    """Return the findings about one topic file alone (no index rules)."""
    files: tuple[MemoryFile, ...] = ()
    found: list[Diagnostic] = []
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_file_bytes + 1)
    except OSError as error:
        found.append(
            _reader_diag(
                "F005", path, f"cannot read the file: {error.strerror or error}"
            )
        )
    else:
        if len(data) > max_file_bytes:
            found.append(
                _reader_diag(
                    "F003",
                    path,
                    f"file is larger than {max_file_bytes:,} bytes; "
                    "memd does not read it",
                )
            )
        else:
            files = (parse_memory_file(path, data),)
    ctx = LintContext(
        files=files,
        index_text=None,
        entries=(),
        log_files=(),
        dir_diagnostics=tuple(found),
        known_paths=frozenset({path}),
        is_memdir=False,
    )
    return run_rules(ctx, severities=severities)


def _reader_diag(code: str, path: str, message: str) -> Diagnostic:
    rule = RULES_BY_KEY[code]
    return rule.diag(path, message)


def run_rules(
    ctx: LintContext, *, severities: Mapping[str, str] | None = None
) -> tuple[Diagnostic, ...]:
    """Return every rule's findings over `ctx`, with `severities` applied, sorted."""
    found: list[Diagnostic] = []
    for rule in RULES:
        found.extend(rule.check(rule, ctx))
    # A reader finding no rule claims is passed through rather than lost.
    known_codes = {rule.code for rule in RULES}
    stray = [d for f in ctx.files for d in f.diagnostics]
    stray.extend(ctx.dir_diagnostics)
    found.extend(d for d in stray if d.code not in known_codes)
    return tuple(sorted(apply_severities(found, severities), key=sort_key))


def sort_key(d: Diagnostic) -> tuple[str, int, int, str, str]:
    """Order by path, then line (whole-file findings first), column, code."""
    return (d.path, d.line or 0, d.column or 0, d.code, d.message)


def apply_severities(
    diagnostics: Iterable[Diagnostic], severities: Mapping[str, str] | None
) -> list[Diagnostic]:
    """Return `diagnostics` with configured severities applied; `off` drops a rule.

    A key is a rule code (`I006`) or name (`topic-orphan`); a code wins over a
    name when both are given. Unknown levels are ignored (config validates them).
    """
    if not severities:
        return list(diagnostics)
    result = []
    for d in diagnostics:
        level = severities.get(d.code, severities.get(d.name))
        if level is None or level not in LEVELS:
            result.append(d)
        elif level != "off":
            result.append(_with_severity(d, Severity(level)))
    return result


def _with_severity(d: Diagnostic, severity: Severity) -> Diagnostic:
    return Diagnostic(
        code=d.code,
        name=d.name,
        severity=severity,
        path=d.path,
        message=d.message,
        hint=d.hint,
        line=d.line,
        column=d.column,
    )


def display_path(memory_dir: str, relpath: str, *, cwd: str | None = None) -> str:
    """Return a finding's path for a person: relative inside `cwd`, else absolute."""
    full = os.path.join(memory_dir, relpath)
    here = os.path.abspath(cwd or os.getcwd())
    absolute = os.path.abspath(full)
    if absolute == here or absolute.startswith(here.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, here).replace(os.sep, "/")
    return absolute
