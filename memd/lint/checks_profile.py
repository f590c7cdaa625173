"""Checks that follow the agent profile in force (REFERENCE.md, 2.1.332).

A topic file past the profile's recall limit is shown cut, so the rest never
reaches the model; a frontmatter that closes past the header scan's byte cap
is not parsed (the line cap is the parser's M003); a `claudeCodeItem` that
fails the agent's schema counts as absent. Under a profile without these
limits or keys (2.1.112), the checks find nothing.
"""

from __future__ import annotations

from memd.claude_code.recall import kept_lines
from memd.claude_code.truncation import format_file_size
from memd.lint.checks_files import surface

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from memd.diagnostics import Diagnostic
    from memd.lint.context import LintContext, RuleSpec


def check_recall_limit(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A topic file larger than recall shows: name the size and the last line shown."""
    profile = ctx.profile
    max_bytes = profile.recall_max_bytes
    if max_bytes is None:
        return
    for f in ctx.files:
        if f.is_binary or f.size_bytes <= max_bytes:
            continue
        shown, _ = kept_lines(f.line_ends, profile.recall_max_lines, max_bytes)
        where = (
            f"recall shows lines 1-{shown} only"
            if shown
            else "its first line alone is longer, so recall shows nothing"
        )
        yield rule.diag(
            f.relpath,
            f"topic file is {f.size_bytes:,} bytes; recall shows only the first "
            f"{format_file_size(max_bytes)} in whole lines ({max_bytes:,} bytes): "
            f"{where}",
            f"split it into smaller topic files or summarise it to under "
            f"{format_file_size(max_bytes)}, frontmatter included",
            line=shown + 1,
        )


def check_unclosed(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """Frontmatter never closed, or closed past the scan's line or byte cap.

    The parser finds the line cap (30 lines, every release so far); the byte
    cap is the profile's (65,536 bytes under 2.1.332).
    """
    yield from surface(rule, ctx)
    profile = ctx.profile
    cap = profile.scan_max_bytes
    if cap is None:
        return
    for f in ctx.files:
        end = f.frontmatter_end_line
        if end is None or not f.is_frontmatter_in_scan or end > len(f.line_ends):
            continue
        if f.line_ends[end - 1] > cap:
            yield rule.diag(
                f.relpath,
                f"frontmatter closes on line {end}, past the header scan's cap of "
                f"{cap:,} bytes: the agent sees no name, description or type",
                "shorten the frontmatter to a few short lines",
                line=end,
            )


def check_provenance(rule: RuleSpec, ctx: LintContext) -> Iterator[Diagnostic]:
    """A provenance key under `metadata:` that fails the agent's schema."""
    checks = ctx.profile.metadata_checks
    for f in ctx.files:
        for key, problem_of in checks.items():
            if key not in f.metadata:
                continue
            problem = problem_of(f.metadata[key])
            if problem is not None:
                yield rule.diag(
                    f.relpath,
                    f"`metadata.{key}` {problem}; the agent treats it as absent",
                    f"fix `{key}` or remove it; the agent rewrites it on its next save",
                    line=f.field_lines.get(f"metadata.{key}") or f.field_lines.get(key),
                )
