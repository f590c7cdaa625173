"""Checks on files as files: encoding, size, symlinks, line endings, log paths.

Most of these findings are made while reading (`memd.memory.memdir` and
`memd.memory.memfile`) and passed through by `surface`; the log-path rule is checked
here against `logs/YYYY/MM/YYYY-MM-DD.md` for a real calendar date (the
reference's getAutoMemDailyLogPath, REFERENCE.md §2).
"""

from __future__ import annotations

import re

from memd.claude_code.terms import INDEX_NAME
from memd.diagnostics import Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memd.diagnostics import Diagnostic
    from memd.lint.context import LintContext, RuleSpec

# Retention archives consolidated logs under logs/archive/ with the same layout.
_LOG_PATH = re.compile(r"logs/(?:archive/)?(\d{4})/(\d{2})/(\d{4})-(\d{2})-(\d{2})\.md")
_FLAT_LOG = re.compile(r"logs/(?:archive/)?(\d{4})-(\d{2})-(\d{2})\.md")
# Characters no memory needs and a terminal or a model may act on: C0 controls
# but tab and line feed (NUL makes a file F002 binary first), DEL, the C1
# controls, and the bidirectional overrides and isolates that reorder text.
CONTROL_CHARACTERS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)
# How the agent names the memories it writes (REFERENCE.md §4, the four types).
MEMORY_PREFIXES = ("user_", "feedback_", "project_", "reference_")


def looks_like_memory(relpath: str) -> bool:
    """Whether `relpath` was meant as a memory: top level (of the dir or of team/)
    or named as the agent names memories."""
    parts = relpath.split("/")
    if len(parts) == 1 or (len(parts) == 2 and parts[0] == "team"):
        return True
    return parts[-1].startswith(MEMORY_PREFIXES)


def check_frontmatter_missing(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """No frontmatter: an error for a memory, a warning for a linked document."""
    for f in ctx.files:
        for d in f.diagnostics:
            if d.code != rule.code:
                continue
            if looks_like_memory(d.path):
                yield rule.diag(d.path, d.message, d.hint, line=d.line)
            else:
                yield rule.diag(
                    d.path,
                    "file has no YAML frontmatter, so it is not a memory: "
                    "recall sees only its file name",
                    "fine for a reference document linked from MEMORY.md; "
                    "if it is meant as a memory, open it with `---`, `name:`, "
                    "`description:`, `type:` lines, then `---`",
                    line=d.line,
                    severity=Severity.WARNING,
                )


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
    return (year, month) == (file_year, file_month) and _is_date(year, month, day)


def _is_date(year: str, month: str, day: str) -> bool:
    import datetime  # only for a log file; a hook after a topic write needs none

    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def check_control_characters(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A control character in a topic file's body or in MEMORY.md: the first of each."""
    texts = [
        (f.relpath, f.body, f.body_start_line) for f in ctx.files if not f.is_binary
    ]
    if ctx.index_text is not None:
        texts.append((INDEX_NAME, ctx.index_text, 1))
    for relpath, text, first_line in texts:
        found = CONTROL_CHARACTERS.search(text)
        if found is None:
            continue
        at = found.start()
        count = sum(1 for _ in CONTROL_CHARACTERS.finditer(text))
        line_start = text.rfind("\n", 0, at) + 1
        yield rule.diag(
            relpath,
            f"holds {count} control character(s), the first U+{ord(found.group()):04X}",
            "delete them; a terminal or the model may act on them "
            "(`cat -v` shows where)",
            line=first_line + text.count("\n", 0, at),
            column=at - line_start + 1,
        )


def check_log_paths(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A file under logs/ at a path the daily-log writer and the dream never use."""
    for relpath in ctx.log_files:
        flat = _FLAT_LOG.fullmatch(relpath)
        if flat is not None and _is_date(*flat.groups()):
            year, month, _ = flat.groups()
            expected = relpath.replace(
                f"logs/{year}-", f"logs/{year}/{month}/{year}-", 1
            )
            yield rule.diag(
                relpath,
                f"{relpath} is a flat daily log; memd and the agent write {expected}",
                f"move it to {expected} so the nightly dream consolidates it",
                severity=Severity.WARNING,
            )
        elif not is_valid_log_path(relpath):
            yield rule.diag(
                relpath,
                f"{relpath} is not at logs/YYYY/MM/YYYY-MM-DD.md for a real date; "
                "the nightly dream will not consolidate it",
                "move it to logs/<year>/<month>/<year>-<month>-<day>.md, "
                "or out of logs/",
            )


# <stem>.from-<author>[-N].md : the copy a team sync wrote (memd.gitsync.merge).
_CONFLICT_COPY = re.compile(r"\.from-[a-z0-9]+(?:-[a-z0-9]+){0,20}\.md\Z")


def is_conflict_copy(relpath: str) -> bool:
    """Return True when `relpath` is a copy a team sync wrote for a person to merge."""
    return _CONFLICT_COPY.search(relpath.rpartition("/")[2]) is not None


def check_conflict_copies(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A team sync's conflict copy: two people changed one file; a person must merge."""
    for f in ctx.files:
        if is_conflict_copy(f.relpath):
            head, _, name = f.relpath.rpartition("/")
            original = (head + "/" if head else "") + name.split(".from-", 1)[0] + ".md"
            yield rule.diag(
                f.relpath,
                f"both sides of a team sync changed {original}; this is their version",
                f"merge what matters into {original}, then delete {f.relpath}",
            )


def check_secrets(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A likely secret (a token, a key, a password) in a topic file or the index.

    Sync refuses to commit such a file whatever this rule's severity; the
    finding's fingerprint goes into ``[sync] allow`` to mark a false positive.
    """
    from memd.lint.secrets import find_secrets

    hint = (
        "remove it from memory (and rotate it); if it is not a secret, add its "
        "fingerprint to [sync] allow in config.toml"
    )
    for f in ctx.files:
        for key, value in f.raw_frontmatter.items():
            if isinstance(value, str):
                line = f.field_lines.get(str(key), f.frontmatter_start_line or 1)
                for found in find_secrets(value, allow=ctx.secret_allow):
                    yield rule.diag(f.relpath, found.message(), hint, line=line)
        for found in find_secrets(
            f.body, allow=ctx.secret_allow, first_line=f.body_start_line
        ):
            yield rule.diag(
                f.relpath, found.message(), hint, line=found.line, column=found.column
            )
    if ctx.index_text is not None:
        for found in find_secrets(ctx.index_text, allow=ctx.secret_allow):
            yield rule.diag(
                INDEX_NAME, found.message(), hint, line=found.line, column=found.column
            )
