"""The lint rule table: every rule memd knows, with a stable code, name and severity.

A code is never renumbered. SARIF `tool.driver.rules` and the README's rule
table are generated from `RULES`. Each `check` is a named module-level function
`check(rule, ctx) -> Iterator[Diagnostic]`; the engine just loops over the
table, and configured severities are applied there (nothing mutates `RULES`).

Severity policy (SPEC §4): an error only when memory will not load or be
recalled as its author meant; everything else is a warning or info.
"""

from __future__ import annotations

from types import MappingProxyType

from memd.diagnostics import Severity
from memd.lint import checks_files as files
from memd.lint import checks_frontmatter as fm
from memd.lint import checks_index as index
from memd.lint import checks_profile as profile
from memd.lint.context import RuleSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

RULES: tuple[RuleSpec, ...] = (
    # Frontmatter and metadata. M001-M004 and M012 come from the parser
    # (memd.memory.memfile).
    RuleSpec(
        "M001",
        "frontmatter-missing",
        E,
        "a memory has no YAML frontmatter (a warning for other linked files)",
        files.check_frontmatter_missing,
    ),
    RuleSpec(
        "M002",
        "frontmatter-unparsable",
        E,
        "frontmatter is not valid YAML",
        files.surface,
    ),
    RuleSpec(
        "M003",
        "frontmatter-unclosed",
        E,
        "frontmatter not closed within the scan's 30 lines (and 65,536 bytes)",
        profile.check_unclosed,
    ),
    RuleSpec(
        "M004",
        "frontmatter-not-mapping",
        E,
        "frontmatter is not a key: value mapping",
        files.surface,
    ),
    RuleSpec(
        "M005", "name-missing", E, "`name` is missing or empty", fm.check_name_missing
    ),
    RuleSpec(
        "M006",
        "description-missing",
        E,
        "`description` is missing or empty",
        fm.check_description_missing,
    ),
    RuleSpec(
        "M007", "type-missing", E, "`type` is missing or empty", fm.check_type_missing
    ),
    RuleSpec(
        "M008",
        "type-invalid",
        E,
        "`type` is not user, feedback, project or reference",
        fm.check_type_invalid,
    ),
    RuleSpec(
        "M009",
        "field-wrong-type",
        W,
        "a field has the wrong YAML type",
        fm.check_wrong_yaml_type,
    ),
    RuleSpec(
        "M010",
        "description-multiline",
        W,
        "`description` spans several lines",
        fm.check_description_multiline,
    ),
    RuleSpec(
        "M011",
        "description-too-short",
        W,
        "`description` is too short to judge relevance",
        fm.check_description_short,
    ),
    RuleSpec(
        "M012",
        "type-conflict",
        W,
        "top-level and nested `type` disagree",
        files.surface,
    ),
    RuleSpec(
        "M013",
        "description-too-long",
        W,
        "`description` is too long for a one-line hook",
        fm.check_description_long,
    ),
    RuleSpec(
        "M014",
        "name-duplicate",
        W,
        "two topic files share one `name`",
        fm.check_name_duplicate,
    ),
    RuleSpec(
        "M015",
        "unknown-key",
        N,
        "frontmatter has a key memd does not know",
        fm.check_unknown_keys,
    ),
    # Rules that follow the agent profile in force (memd.claude_code.profile).
    RuleSpec(
        "M016",
        "recall-truncated",
        W,
        "topic file is larger than recall shows (4KB under 2.1.332)",
        profile.check_recall_limit,
    ),
    RuleSpec(
        "M017",
        "provenance-invalid",
        W,
        "`metadata.claudeCodeItem` fails the agent's schema",
        profile.check_provenance,
    ),
    # Body.
    RuleSpec(
        "B001",
        "body-empty",
        W,
        "topic file has frontmatter but no body",
        fm.check_body_empty,
    ),
    RuleSpec(
        "B002",
        "why-how-missing",
        W,
        "feedback/project body lacks **Why:** or **How to apply:**",
        fm.check_why_how,
    ),
    # Index (MEMORY.md).
    RuleSpec(
        "I001",
        "index-missing",
        W,
        "MEMORY.md is missing while topic files exist",
        index.check_missing,
    ),
    RuleSpec(
        "I002",
        "index-too-many-lines",
        E,
        "MEMORY.md is over 200 lines: the agent drops the rest",
        index.check_too_many_lines,
    ),
    RuleSpec(
        "I003",
        "index-too-large",
        E,
        "MEMORY.md is over 25,000 UTF-16 units: the agent drops the rest",
        index.check_too_large,
    ),
    RuleSpec(
        "I004",
        "index-line-too-long",
        W,
        "an index entry line is over 200 characters",
        index.check_line_too_long,
    ),
    RuleSpec(
        "I005",
        "index-link-dangling",
        W,
        "an index link points to a file that does not exist",
        index.check_dangling,
    ),
    RuleSpec(
        "I006",
        "topic-orphan",
        W,
        "nothing in the index or another memory links to this topic file",
        index.check_orphans,
    ),
    RuleSpec(
        "I007",
        "index-duplicate-entry",
        W,
        "two index entries link to one file",
        index.check_duplicates,
    ),
    RuleSpec(
        "I008",
        "index-link-outside",
        W,
        "an index link leaves the memory directory (never followed)",
        index.check_outside,
    ),
    RuleSpec(
        "I009",
        "wiki-link-dangling",
        N,
        "a [[name]] link names no memory yet",
        index.check_wiki_dangling,
    ),
    # Files. F003-F005 and F009 come from the directory reader (memd.memory.memdir),
    # F001/F002/F006/F007 from the parser.
    RuleSpec("F001", "file-not-utf8", E, "file is not valid UTF-8", files.surface),
    RuleSpec("F002", "file-binary", E, "file is binary", files.surface),
    RuleSpec(
        "F003",
        "file-too-large",
        W,
        "file is larger than the topic-file limit",
        files.surface,
    ),
    RuleSpec(
        "F004",
        "symlink-outside",
        E,
        "symlink points outside the memory directory (never read)",
        files.surface,
    ),
    RuleSpec(
        "F005", "file-unreadable", E, "file or directory cannot be read", files.surface
    ),
    RuleSpec(
        "F006", "crlf-line-endings", N, "file uses CRLF line endings", files.surface
    ),
    RuleSpec(
        "F007",
        "byte-order-mark",
        N,
        "file starts with a UTF-8 byte-order mark",
        files.surface,
    ),
    RuleSpec(
        "F008",
        "log-path-invalid",
        E,
        "file in logs/ is not at logs/YYYY/MM/YYYY-MM-DD.md "
        "(a warning for a flat logs/YYYY-MM-DD.md)",
        files.check_log_paths,
    ),
    RuleSpec(
        "F009",
        "log-dir-symlink",
        E,
        "logs/ or a directory under it is a symlink (never followed)",
        files.surface,
    ),
    RuleSpec(
        "F010",
        "control-characters",
        W,
        "a topic file or MEMORY.md holds control characters (ESC, DEL, bidi overrides)",
        files.check_control_characters,
    ),
    # Team memory (memd.team).
    RuleSpec(
        "T001",
        "team-conflict-copy",
        W,
        "a team sync kept both sides of a file; merge the copy by hand",
        files.check_conflict_copies,
    ),
    # What sync refuses to push (memd.lint.secrets).
    RuleSpec(
        "S001",
        "likely-secret",
        W,
        "a token, key or password in memory; team and personal sync never push it",
        files.check_secrets,
    ),
    # Memory that stays true (memd.truth judges these against the project's
    # repository and the other topic files; the engine only carries them).
    RuleSpec(
        "D001",
        "path-gone",
        W,
        "a memory names a path the project's git history removed or renamed",
        files.surface,
    ),
    RuleSpec(
        "D002",
        "command-gone",
        W,
        "a memory names a script, target or recipe the project no longer defines",
        files.surface,
    ),
    RuleSpec(
        "D003",
        "repository-unreadable",
        N,
        "the project's repository could not be read, so D001/D002 were not checked",
        files.surface,
    ),
    RuleSpec(
        "D004",
        "duplicate-topic",
        W,
        "two topic files say the same thing",
        files.surface,
    ),
    RuleSpec(
        "D005",
        "memory-dir-shared",
        W,
        "two different project roots map to this one memory dir (memd doctor: FAIL)",
        files.surface,
    ),
    RuleSpec(
        "D006",
        "memory-dir-moved",
        W,
        "an older agent release kept this project's memory in a dir still holding it",
        files.surface,
    ),
)

RULES_BY_KEY: Mapping[str, RuleSpec] = MappingProxyType(
    {**{r.code: r for r in RULES}, **{r.name: r for r in RULES}}
)
