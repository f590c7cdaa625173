"""What a lint check is given and what it belongs to: `LintContext` and `RuleSpec`.

Kept apart from the rule table (`memd.lint.rules`) so the checks can name these
types without importing the table that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from memd.claude_code.profile import NEWEST, AgentProfile
from memd.diagnostics import Diagnostic, Severity, one_line

# The labels B002 (why-how-missing) accepts by default: English, Chinese,
# Japanese, Korean. lint.why_labels / lint.how_labels replace them.
DEFAULT_WHY_LABELS = ("why", "reason", "为什么", "原因", "理由", "なぜ", "이유", "왜")
DEFAULT_HOW_LABELS = (
    "how to apply",
    "how to use",
    "如何应用",
    "应用方式",
    "适用场景",
    "適用方法",
    "適用",
    "使い方",
    "적용 방법",
    "적용법",
    "적용",
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from memd.claude_code.prompt import IndexView
    from memd.memory.index import IndexEntry
    from memd.memory.memfile import MemoryFile

    Check = Callable[["RuleSpec", "LintContext"], Iterator[Diagnostic]]


@dataclass(frozen=True, slots=True, kw_only=True)
class LintContext:
    """Everything a check may look at; built once per lint run by the engine."""

    files: tuple[MemoryFile, ...]
    index_text: str | None
    entries: tuple[IndexEntry, ...]
    log_files: tuple[str, ...]
    dir_diagnostics: tuple[Diagnostic, ...]
    known_paths: frozenset[
        str
    ]  # relpaths that exist: topic files, logs, files diagnosed unreadable
    is_memdir: bool  # False for a lone file: index and directory rules do not apply
    # view_index(index_text) when the caller has it; the index checks compute it if not
    index_view: IndexView | None = None
    # classify_target(e.target) for each of `entries`, so four checks classify once;
    # a wiki-link is resolved by name ("ok") or "wiki-dangling"
    targets: tuple[tuple[str | None, str], ...] | None = None
    # the labels that open a **Why:** / **How to apply:** section (lint.why_labels,
    # lint.how_labels), lower-cased
    why_labels: tuple[str, ...] = DEFAULT_WHY_LABELS
    how_labels: tuple[str, ...] = DEFAULT_HOW_LABELS
    profile: AgentProfile = NEWEST  # the agent release whose limits and keys apply
    # fingerprints of likely secrets marked as false positives ([sync] allow)
    secret_allow: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One lint rule: code (`M005`), kebab-case name, severity, summary, check."""

    code: str
    name: str
    default_severity: Severity
    summary: str
    check: Check

    def diag(
        self,
        path: str,
        message: str,
        hint: str = "",
        *,
        line: int | None = None,
        column: int | None = None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        """Return a Diagnostic of this rule, at its default severity unless given."""
        return Diagnostic(
            code=self.code,
            name=self.name,
            severity=severity or self.default_severity,
            path=path,
            message=one_line(message),
            hint=one_line(hint),
            line=line,
            column=column,
        )
