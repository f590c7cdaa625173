"""Checks on files as files: encoding, size, symlinks, line endings, log paths.

Most of these findings are made while reading (`memd.memory.memdir` and
`memd.memory.memfile`) and passed through by `surface`; the log-path rule is checked
here against `logs/YYYY/MM/YYYY-MM-DD.md` for a real calendar date (the
reference's getAutoMemDailyLogPath, REFERENCE.md §2).
"""

from __future__ import annotations

import datetime
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memd.diagnostics import Diagnostic
    from memd.lint.context import LintContext, RuleSpec

# Retention archives consolidated logs under logs/archive/ with the same layout.
_LOG_PATH = re.compile(r"logs/(?:archive/)?(\d{4})/(\d{2})/(\d{4})-(\d{2})-(\d{2})\.md")


def surface(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Yield the reader's and the parser's findings that carry this rule's code."""
    found = [d for f in ctx.files for d in f.diagnostics]
    found.extend(ctx.dir_diagnostics)
    for d in found:
        if d.code == rule.code:
            yield rule.diag(
                d.path, d.message, d.hint or rule.summary, line=d.line, column=d.column
            )


def is_valid_log_path(relpath: str) -> bool:
    """Whether `relpath` is `logs/[archive/]YYYY/MM/YYYY-MM-DD.md` for a real date."""
    match = _LOG_PATH.fullmatch(relpath)
    if match is None:
        return False
    year, month, file_year, file_month, day = match.groups()
    if (year, month) != (file_year, file_month):
        return False
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def check_log_paths(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A file under logs/ at a path the daily-log writer and the dream never use."""
    for relpath in ctx.log_files:
        if not is_valid_log_path(relpath):
            yield rule.diag(
                relpath,
                f"{relpath} is not at logs/YYYY/MM/YYYY-MM-DD.md for a real date; "
                "the nightly dream will not consolidate it",
                "move it to logs/<year>/<month>/<year>-<month>-<day>.md, "
                "or out of logs/",
            )
