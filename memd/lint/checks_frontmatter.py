"""Checks on each topic file's frontmatter and body (SPEC §4, REFERENCE.md §5 and §8).

Both dialects are read the same way by `memd.memory.memfile`: `type` may be top level
(classic) or under `metadata:` (current release). Parse-level findings
(missing, unparsable, unclosed frontmatter, a type conflict) are made by the
parser; `surface` passes them through under this table's name and severity.
"""

from __future__ import annotations

import re
import unicodedata

from memd.claude_code.terms import MEMORY_TYPES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from memd.diagnostics import Diagnostic
    from memd.lint.context import LintContext, RuleSpec
    from memd.memory.memfile import MemoryFile

RECALL_LINES = 30  # the reference's scan reads only the first 30 lines of a topic file
# Keys either dialect writes (REFERENCE.md §5, §8; `created` is tiny mode's stamp).
KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "type",
        "metadata",
        "node_type",
        "originSessionId",
        "modified",
        "created",
    }
)
# Description length in display columns: a CJK character counts two, so a
# normal CJK sentence of five or more characters is not "too short".
DESCRIPTION_MIN_COLUMNS = 10
DESCRIPTION_MAX_COLUMNS = 250
# What may stand before a section label at the start of a line: heading marks,
# blockquote marks, a list marker, emphasis.
_LABEL_LEAD = re.compile(r"[\s>#*_+-]*")
_NOT_SPACE = re.compile(r"\S")


def _has_frontmatter(f: MemoryFile) -> bool:
    return f.dialect is not None


def _fm_line(f: MemoryFile, key: str | None = None) -> int | None:
    """Return the line of `key` (nested first), else the frontmatter's first line."""
    if key is not None:
        line = f.field_lines.get(f"metadata.{key}") or f.field_lines.get(key)
        if line is not None:
            return line
    return 1 if _has_frontmatter(f) else None


def _missing(rule: RuleSpec, ctx: LintContext, field: str) -> Iterator[Diagnostic]:
    for f in ctx.files:
        if not _has_frontmatter(f):
            continue
        present = field in f.fields
        value = f.fields.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            state = "empty" if present else "missing"
            yield rule.diag(
                f.relpath,
                f"`{field}` is {state}; the agent cannot {_PURPOSE[field]}",
                f"add a `{field}:` line to the frontmatter{_EXAMPLE[field]}",
                line=_fm_line(f, field),
            )


_PURPOSE = {
    "name": "title this memory",
    "description": "judge whether this memory is relevant",
    "type": "tell what kind of memory this is",
}
_EXAMPLE = {
    "name": " (a short title)",
    "description": " (one specific sentence)",
    "type": " (one of user, feedback, project, reference)",
}


def check_name_missing(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A file with frontmatter but no usable `name`."""
    yield from _missing(rule, ctx, "name")


def check_description_missing(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A file with frontmatter but no usable `description`."""
    yield from _missing(rule, ctx, "description")


def check_type_missing(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A file with frontmatter but no `type` in either dialect."""
    yield from _missing(rule, ctx, "type")


def check_type_invalid(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A `type` that is not one of the four exact strings; suggests the nearest."""
    for f in ctx.files:
        value = f.fields.get("type")
        if (
            value is None
            or (isinstance(value, str) and not value.strip())
            or value in MEMORY_TYPES
        ):
            continue
        text = str(value)
        close = _close_matches(text.strip().lower(), MEMORY_TYPES, cutoff=0.5)
        hint = (
            f"did you mean `type: {close[0]}`?"
            if close
            else "use one of: " + ", ".join(MEMORY_TYPES)
        )
        yield rule.diag(
            f.relpath,
            f"`type: {text}` is not a memory type; "
            "the agent treats the file as having no type",
            hint,
            line=_fm_line(f, "type"),
        )


def check_wrong_yaml_type(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """`name`/`description` not text (number, list, date...); `metadata` not a mapping.

    A non-text `type` is an invalid type (M008), so it is not reported twice.
    """
    for f in ctx.files:
        for field in ("name", "description"):
            value = f.fields.get(field)
            if value is not None and not isinstance(value, str):
                yield rule.diag(
                    f.relpath,
                    f"`{field}` is a YAML {_yaml_kind(value)}, not text; "
                    "memd reads it as missing",
                    f'quote the value: {field}: "..."',
                    line=_fm_line(f, field),
                )
        meta = f.raw_frontmatter.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            yield rule.diag(
                f.relpath,
                f"`metadata` is a YAML {_yaml_kind(meta)}, not a mapping; "
                "its keys are ignored",
                "write `metadata:` followed by indented `key: value` lines",
                line=_fm_line(f, "metadata"),
            )


def _yaml_kind(value: object) -> str:
    kinds = (
        (bool, "boolean"),
        (int, "number"),
        (float, "number"),
        (list, "list"),
        (dict, "mapping"),
    )
    for kind, label in kinds:
        if isinstance(value, kind):
            return label
    return type(value).__name__


def display_columns(text: str) -> int:
    """Return the width of `text` in columns: East Asian wide characters count two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _descriptions(ctx: LintContext) -> Iterator[tuple[MemoryFile, str]]:
    for f in ctx.files:
        if isinstance(f.description, str) and f.description.strip():
            yield f, f.description


def check_description_multiline(
    rule: RuleSpec, ctx: LintContext
) -> Iterator[Diagnostic]:
    """A description with a line break: the manifest and the index show one line."""
    for f, text in _descriptions(ctx):
        if "\n" in text.strip():
            yield rule.diag(
                f.relpath,
                "`description` spans several lines; recall shows it as one line",
                "make the description one sentence and move detail into the body",
                line=_fm_line(f, "description"),
            )


def check_description_short(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A description too short to tell the recall model what the memory is about."""
    for f, text in _descriptions(ctx):
        width = display_columns(text.strip())
        if width < DESCRIPTION_MIN_COLUMNS:
            yield rule.diag(
                f.relpath,
                f"`description: {text.strip()}` is vague "
                f"({width} columns; aim for a specific sentence)",
                "say what the memory is about, specifically enough "
                "to judge relevance later",
                line=_fm_line(f, "description"),
            )


def check_description_long(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A description too long for the one-line hook it becomes in index and manifest."""
    for f, text in _descriptions(ctx):
        width = display_columns(" ".join(text.split()))
        if width > DESCRIPTION_MAX_COLUMNS:
            yield rule.diag(
                f.relpath,
                f"`description` is {width} columns long "
                f"(limit {DESCRIPTION_MAX_COLUMNS})",
                "keep the description to one short sentence; move detail into the body",
                line=_fm_line(f, "description"),
            )


def check_name_duplicate(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Two topic files with the same `name` (case and spacing ignored)."""
    first: dict[str, str] = {}
    for f in ctx.files:
        if not isinstance(f.name, str) or not f.name.strip():
            continue
        key = " ".join(f.name.split()).casefold()
        if key in first:
            yield rule.diag(
                f.relpath,
                f"`name: {f.name.strip()}` is also the name of {first[key]}",
                "merge the two memories, or give each a distinct name",
                line=_fm_line(f, "name"),
            )
        else:
            first[key] = f.relpath


def check_unknown_keys(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Frontmatter keys neither dialect uses (info: harmless, maybe a typo)."""
    for f in ctx.files:
        if not _has_frontmatter(f):
            continue
        for key in sorted(str(k) for k in f.metadata):
            known = KNOWN_KEYS | ctx.profile.known_metadata_keys
            if key not in known:
                close = _close_matches(key, sorted(known), cutoff=0.75)
                hint = (
                    f"did you mean `{close[0]}`?"
                    if close
                    else "remove it if it is not needed"
                )
                yield rule.diag(
                    f.relpath,
                    f"unknown frontmatter key `{key}`",
                    hint,
                    line=_fm_line(f, key),
                )


def check_body_empty(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Frontmatter and nothing else: the memory has no content to recall."""
    for f in ctx.files:
        if _has_frontmatter(f) and not f.body.strip():
            yield rule.diag(
                f.relpath,
                "the file has frontmatter but no body",
                "write the fact or rule below the frontmatter, or delete the file",
                line=f.frontmatter_end_line,
            )


def has_section(body: str, labels: tuple[str, ...]) -> bool:
    """Whether a line of `body` opens a section with one of `labels`.

    A label counts as a heading (`## Why`), a bold or plain label
    (`**Why:**`, `**Why (DEF-029):**`, `How to apply.`), at the start of a
    line or bold inside one, when no letter follows it: `Why (x):` counts,
    `Whyever` does not. Line by line, each line scanned once per label.
    """
    for line in body.lower().split("\n"):
        starts = [_LABEL_LEAD.match(line).end()]  # type: ignore[union-attr]
        bold = line.find("**")
        while bold >= 0:
            # Where the text after `**` starts, found without slicing the rest
            # of the line: a slice per `**` is quadratic on a line of them.
            text = _NOT_SPACE.search(line, bold + 2)
            starts.append(text.start() if text else len(line))
            bold = line.find("**", bold + 2)
        for start in starts:
            for label in labels:
                if line.startswith(label, start):
                    after = line[start + len(label) : start + len(label) + 1]
                    if not after or not after.isalnum():
                        return True
    return False


def check_why_how(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A feedback or project memory without its **Why:** and **How to apply:** lines."""
    sections = (("**Why:**", ctx.why_labels), ("**How to apply:**", ctx.how_labels))
    for f in ctx.files:
        if f.type not in ("feedback", "project") or not f.body.strip():
            continue
        missing = [
            label for label, labels in sections if not has_section(f.body, labels)
        ]
        if missing:
            yield rule.diag(
                f.relpath,
                f"{f.type} memory has no {' or '.join(missing)} line",
                "add `**Why:**` (the reason) and `**How to apply:**` "
                "(when it applies) after the rule, as a label or a heading; "
                "other languages' labels are set by lint.why_labels and "
                "lint.how_labels",
                line=f.frontmatter_end_line,
            )


def _close_matches(word: str, choices: Iterable[str], *, cutoff: float) -> list[str]:
    """The nearest choice, if near enough; difflib loads only for a finding."""
    import difflib

    return difflib.get_close_matches(word, choices, n=1, cutoff=cutoff)
