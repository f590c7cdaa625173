"""Run the rule table over a loaded memory directory, or over one lone file.

The engine decides nothing about memory: it builds a `LintContext`, loops
over `RULES`, applies configured severities (code or name -> error, warning,
info or off) and sorts the result by (path, line, code).
"""

from __future__ import annotations

import dataclasses
import os

from memd.claude_code.profile import ProfileSpec, get_profile
from memd.claude_code.terms import INDEX_NAME
from memd.diagnostics import Diagnostic, Severity
from memd.lint import checks_files, checks_profile
from memd.lint import checks_frontmatter as fm
from memd.lint.context import LintContext
from memd.lint.reach import classify_links
from memd.lint.rules import RULES, RULES_BY_KEY
from memd.memory.index import classify_target, parse_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping, Sequence

    from memd.claude_code.prompt import IndexView
    from memd.memory.index import IndexEntry
    from memd.memory.memdir import MemDir
    from memd.memory.memfile import MemoryFile

LEVELS = ("error", "warning", "info", "off")
DEFAULT_MAX_FILE_BYTES = 256 * 1024


def lint_memdir(
    memdir: MemDir,
    *,
    severities: Mapping[str, str] | None = None,
    index_view: IndexView | None = None,
    cache: LintCache | None = None,
    why_labels: Sequence[str] | None = None,
    how_labels: Sequence[str] | None = None,
    profile: ProfileSpec = None,
    secret_allow: Collection[str] = (),
) -> tuple[Diagnostic, ...]:
    """Return every finding about `memdir`, sorted by (path, line, code).

    `profile` (default the newest release) gives the limits and keys to judge by.

    `index_view`, when given, must be `view_index(memdir.index_text)` (the
    pipeline has it from rendering): the index is then truncated only once.
    `cache`, kept by the caller across lints of one directory, makes a lint
    after one changed file re-check only that file (same result).
    `why_labels`/`how_labels` (config `lint.why_labels`/`lint.how_labels`)
    replace the section labels B002 accepts; `secret_allow` (config
    `sync.allow`) holds the fingerprints S001 does not report.
    """
    index_text = memdir.index_text
    known = {f.relpath for f in memdir.files}
    known.update(memdir.log_files)
    known.update(d.path for d in memdir.diagnostics)
    if index_text is not None:
        known.add(INDEX_NAME)
    entries, targets = (cache or LintCache()).parse_index(index_text)
    if any(e.is_wiki for e in entries):
        targets = classify_links(entries, memdir.files)
    ctx = LintContext(
        files=memdir.files,
        index_text=index_text,
        entries=entries,
        log_files=memdir.log_files,
        dir_diagnostics=memdir.diagnostics,
        known_paths=frozenset(known),
        is_memdir=True,
        index_view=index_view,
        targets=targets,
        **_labels(why_labels, how_labels),
        profile=get_profile(profile),
        secret_allow=frozenset(secret_allow),
    )
    if cache is not None:
        return cache.run(ctx, severities=severities)
    return run_rules(ctx, severities=severities)


def _labels(
    why_labels: Sequence[str] | None, how_labels: Sequence[str] | None
) -> dict[str, tuple[str, ...]]:
    labels = {}
    if why_labels is not None:
        labels["why_labels"] = tuple(label.lower() for label in why_labels)
    if how_labels is not None:
        labels["how_labels"] = tuple(label.lower() for label in how_labels)
    return labels


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


# Rules whose findings about a file depend on that file alone.
_PER_FILE = frozenset(
    {
        checks_files.surface,
        checks_files.check_frontmatter_missing,
        checks_profile.check_unclosed,
        checks_profile.check_recall_limit,
        checks_profile.check_provenance,
        fm.check_name_missing,
        fm.check_description_missing,
        fm.check_type_missing,
        fm.check_type_invalid,
        fm.check_wrong_yaml_type,
        fm.check_description_multiline,
        fm.check_description_short,
        fm.check_description_long,
        fm.check_unknown_keys,
        fm.check_body_empty,
        fm.check_why_how,
    }
)
KEEP_INDEX_FROM_CHARS = 16_384
_KNOWN_CODES = frozenset(rule.code for rule in RULES)
_Index = tuple[tuple["IndexEntry", ...], tuple[tuple[str | None, str], ...]]
_Last = tuple[list[Diagnostic], object, tuple[Diagnostic, ...]]  # found, levels, out
_Found = tuple[tuple[int, tuple[Diagnostic, ...]], ...]  # (rule position, findings)


class LintCache:
    """Findings kept between lints of one directory; `run` equals `run_rules`.

    Per-file rules run on each topic file alone and are kept per `MemoryFile`
    object, which a `ParseCache` hands back unchanged for an unchanged file.
    Cross-file rules (index, duplicate names, logs) read only relpaths, names,
    the index and the directory's findings, plus the line of a name in a file
    they report: they rerun when any of those changed or a reported file did.
    """

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, profile: object) -> None:
        self._profile = profile  # findings depend on it: a new one drops them all
        self._files: dict[int, tuple[MemoryFile, _Found]] = {}
        self._cross_key: tuple[object, ...] | None = None
        self._cross: _Found = ()
        self._cross_paths: set[str] = set()  # the files the cross findings name
        self._index: tuple[str | None, _Index] = (None, ((), ()))
        self._last: _Last | None = None
        self._labels: tuple[tuple[str, ...], ...] = ()

    def parse_index(self, index_text: str | None) -> _Index:
        """Return the index entries and their classified targets.

        Kept per text only for a big index: a small one parses in well under a
        millisecond, and keeping its entries for 1,000 projects costs ~8 MB.
        """
        if index_text is None:
            return ((), ())
        if index_text == self._index[0]:
            return self._index[1]
        entries = parse_index(index_text)
        parsed = (entries, tuple(classify_target(e.target) for e in entries))
        if len(index_text) >= KEEP_INDEX_FROM_CHARS:
            self._index = (index_text, parsed)
        return parsed

    def run(
        self, ctx: LintContext, *, severities: Mapping[str, str] | None = None
    ) -> tuple[Diagnostic, ...]:
        """Return what `run_rules(ctx, severities=severities)` returns."""
        if ctx.profile is not self._profile:
            self._reset(ctx.profile)
        by_rule: list[list[Diagnostic]] = [[] for _ in range(len(RULES) + 1)]
        labels = (ctx.why_labels, ctx.how_labels)
        if labels != self._labels:
            self._files, self._labels = {}, labels  # B002's findings depend on them
        kept: dict[int, tuple[MemoryFile, _Found]] = {}
        relinted: set[str] = set()  # relpaths whose parsed file is new
        for f in ctx.files:
            found = self._files.get(id(f))
            if found is None or found[0] is not f:
                found = (f, _per_file_findings(ctx, f))
                relinted.add(f.relpath)
            kept[id(f)] = found
            for position, diagnostics in found[1]:
                by_rule[position].extend(diagnostics)
        self._files = kept
        for position, diagnostics in self._cross_findings(ctx, relinted):
            by_rule[position].extend(diagnostics)
        # Rule order, then file order within a rule: exactly run_rules' order.
        found_all = [d for diagnostics in by_rule for d in diagnostics]
        wanted = dict(severities or {})
        if self._last is not None and self._last[:2] == (found_all, wanted):
            return self._last[2]  # an edit that changed no finding: no re-sort
        result = tuple(sorted(apply_severities(found_all, severities), key=sort_key))
        self._last = (found_all, wanted, result)
        return result

    def _cross_findings(self, ctx: LintContext, relinted: set[str]) -> _Found:
        key = (
            ctx.index_text,
            ctx.known_paths,
            ctx.log_files,
            ctx.dir_diagnostics,
            ctx.is_memdir,
            tuple(f.relpath for f in ctx.files),
            tuple(f.name for f in ctx.files),
            # `[[name]]` links in a file decide other files' orphan findings
            tuple(id(f) for f in ctx.files if "[[" in f.body),
        )
        if key == self._cross_key and relinted.isdisjoint(self._cross_paths):
            return self._cross
        alone = dataclasses.replace(ctx, files=())
        found: list[tuple[int, tuple[Diagnostic, ...]]] = []
        for position, rule in enumerate(RULES):
            diagnostics = tuple(
                rule.check(rule, alone if rule.check in _PER_FILE else ctx)
            )
            if diagnostics:
                found.append((position, diagnostics))
        stray = tuple(d for d in ctx.dir_diagnostics if d.code not in _KNOWN_CODES)
        if stray:
            found.append((len(RULES), stray))
        reported = {d.path for _, diagnostics in found for d in diagnostics}
        self._cross_key, self._cross, self._cross_paths = key, tuple(found), reported
        return self._cross


def _per_file_findings(ctx: LintContext, f: MemoryFile) -> _Found:
    """Run the per-file rules over `f` alone (directory findings left out)."""
    alone = dataclasses.replace(ctx, files=(f,), dir_diagnostics=())
    found: list[tuple[int, tuple[Diagnostic, ...]]] = []
    for position, rule in enumerate(RULES):
        if rule.check in _PER_FILE:
            diagnostics = tuple(rule.check(rule, alone))
            if diagnostics:
                found.append((position, diagnostics))
    stray = tuple(d for d in f.diagnostics if d.code not in _KNOWN_CODES)
    if stray:
        found.append((len(RULES), stray))
    return tuple(found)


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
