"""Check one memory dir against its project: what lint, the daemon and MCP call (edge).

`check_memory` reads the memory dir (or takes the `MemDir` the caller read),
extracts every topic file's and MEMORY.md's claims (`memd.truth.claims`),
reads the project's repository once (`memd.truth.repo`, cached by `HEAD`),
judges the claims (`memd.truth.judge`), drops what is on disk or ignored,
and returns lint findings: D001 path-gone, D002 command-gone, D003
repository-unreadable (info, once), plus D004 duplicate-topic
(`memd.truth.duplicates`), which needs no repository. Configured severities
apply as to every rule.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memd.claude_code.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from memd.diagnostics import Diagnostic
    from memd.lint.fixes import FileEdit
    from memd.memory.memdir import MemDir
    from memd.truth.claims import Claim
    from memd.truth.judge import Finding

UNREADABLE = "D003"
REPORTED_FINDINGS = 200  # kept in the report for the viewer
GONE_CODES = ("D001", "D002")


@dataclass(frozen=True, slots=True, kw_only=True)
class TruthReport:
    """What one check found: the findings, and the `HEAD` it read (or None)."""

    diagnostics: tuple[Diagnostic, ...]
    head: str | None
    project_root: str | None

    @property
    def gone_files(self) -> tuple[str, ...]:
        """The memory files that name something gone (D001/D002), each once."""
        return tuple(
            dict.fromkeys(d.path for d in self.diagnostics if d.code in GONE_CODES)
        )


def check_memory(
    memory_dir: str,
    project_root: str | None,
    *,
    cache_dir: str | None,
    roots: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    profile: object = None,
    severities: Mapping[str, str] | None = None,
    memdir: MemDir | None = None,
    max_file_bytes: int = 256 * 1024,
    timeout_seconds: float | None = None,
) -> TruthReport:
    """Return what `memory_dir`'s memories name that `project_root` no longer has.

    With no `project_root` only the checks that need no repository run.
    `roots` are every project root memd knows for `memory_dir`
    (`memd.projects.roots`): two different ones are a D005, and a root whose
    memory an older release kept elsewhere a D006.
    """
    from memd.lint.engine import apply_severities, sort_key
    from memd.memory.reader import load_memdir
    from memd.truth.duplicates import find_duplicates

    if memdir is None:
        memdir = load_memdir(memory_dir, max_file_bytes=max_file_bytes)
    found: list[Diagnostic] = list(find_duplicates(memdir.files))
    sharing, once = _sharing(memory_dir, roots, env=env, profile=profile)
    found.extend(sharing)
    head = None
    if project_root is not None:
        gone, head = _gone(memdir, project_root, cache_dir, timeout_seconds)
        found.extend(gone)
    result = tuple(sorted(apply_severities(found, severities), key=sort_key))
    report = TruthReport(diagnostics=result, head=head, project_root=project_root)
    if cache_dir is not None:
        from memd.truth.notice import leave_report

        leave_report(
            cache_dir,
            memory_dir,
            {
                "head": head,
                "gone_files": list(report.gone_files),
                "once": once,
                "findings": [d.to_dict() for d in result[:REPORTED_FINDINGS]],
            },
        )
    return report


def memory_claims(memdir: MemDir, root: str | None) -> list[tuple[str, Claim]]:
    """(relpath, claim) for every claim in the topic files and MEMORY.md."""
    from memd.truth.claims import NAME, extract_claims

    found: list[tuple[str, Claim]] = []
    own = {memory.relpath.rsplit("/", 1)[-1] for memory in memdir.files}
    for memory in memdir.files:
        offset = memory.body_start_line - 1
        for claim in extract_claims(memory.body, root=root):
            found.append((memory.relpath, _shifted(claim, offset)))
        line = memory.field_lines.get("description")
        if memory.description and line is not None:
            for claim in extract_claims(
                memory.description.split("\n", 1)[0], root=root
            ):
                found.append((memory.relpath, _shifted(claim, line - 1)))
    if memdir.index_text is not None:
        found.extend(
            (INDEX_NAME, claim)
            for claim in extract_claims(memdir.index_text, root=root)
        )
    # A bare name of another memory is a link between memories: lint's business.
    return [
        (relpath, claim)
        for relpath, claim in found
        if not (claim.kind == NAME and claim.value in own)
    ]


def _shifted(claim: Claim, offset: int) -> Claim:
    if not offset:
        return claim
    import dataclasses

    return dataclasses.replace(claim, line=claim.line + offset)


def gone_findings(
    memdir: MemDir,
    project_root: str,
    cache_dir: str | None,
    timeout_seconds: float | None = None,
) -> tuple[list[tuple[str, Finding]], str | None, Diagnostic | None]:
    """(relpath, finding) of each claim gone, the `HEAD` read, or the D003 info."""
    from memd.lint.rules import RULES_BY_KEY
    from memd.truth.judge import TreeIndex, judge
    from memd.truth.repo import TIMEOUT_SECONDS, Unreadable, open_repository

    root = os.path.realpath(project_root)
    claims = memory_claims(memdir, root)
    if not claims:
        return [], None, None
    try:
        repo = open_repository(root, timeout_seconds=timeout_seconds or TIMEOUT_SECONDS)
        facts = repo.facts(cache_dir)
    except Unreadable as error:
        return (
            [],
            None,
            RULES_BY_KEY[UNREADABLE].diag(
                INDEX_NAME,
                f"memd could not read the repository of {_person_path(root)}: {error}; "
                "the paths and commands memory names were not checked",
                "memd reads git only through bounded plumbing and never runs "
                "what a repository asks for",
            ),
        )
    by_claim = {id(claim): relpath for relpath, claim in claims}
    findings = judge((claim for _, claim in claims), TreeIndex(facts))
    present = repo.present(f.path for f in findings if f.path is not None)
    kept = [
        (by_claim[id(f.claim)], f)
        for f in findings
        if f.path is None or f.path not in present
    ]
    return kept, facts.head, None


def _gone(
    memdir: MemDir,
    project_root: str,
    cache_dir: str | None,
    timeout_seconds: float | None = None,
) -> tuple[list[Diagnostic], str | None]:
    from memd.lint.rules import RULES_BY_KEY

    found, head, unreadable = gone_findings(
        memdir, project_root, cache_dir, timeout_seconds
    )
    if unreadable is not None:
        return [unreadable], None
    return [
        RULES_BY_KEY[finding.code].diag(
            relpath,
            finding.message,
            finding.hint,
            line=finding.claim.line,
            column=finding.claim.column,
        )
        for relpath, finding in found
    ], head


def _person_path(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and (
        path == home or path.startswith(home.rstrip("/") + "/")
    ):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def _sharing(
    memory_dir: str,
    roots: tuple[str, ...],
    *,
    env: Mapping[str, str] | None = None,
    profile: object = None,
) -> tuple[list[Diagnostic], list[dict[str, str]]]:
    """D005 when different `roots` share `memory_dir`; D006 for memory left behind.

    Also what SessionStart says once per project about each (memd.truth.notice).
    """
    from memd.lint.rules import RULES_BY_KEY
    from memd.truth.sharing import (
        MOVED,
        SHARED,
        describe_moved,
        describe_shared,
        moved_dirs,
        moved_fix,
        shared_dirs,
    )

    if not roots:
        return [], []
    home = (env or os.environ).get("HOME", "")
    key = memory_dir.rstrip(os.sep)
    found = []
    once = []
    for shared in shared_dirs({key: roots}, env=env, profile=profile):  # type: ignore[arg-type]
        text = describe_shared(shared, home)
        found.append(RULES_BY_KEY[SHARED].diag(INDEX_NAME, text, shared.fix))
        once.append(
            {
                "key": "shared:" + "|".join(shared.roots),
                "text": f"{text}. Fix: {shared.fix}.",
            }
        )
    for moved in moved_dirs(roots, env=env, profile=profile):  # type: ignore[arg-type]
        text = describe_moved(moved, home)
        fix = moved_fix(moved, home)
        found.append(RULES_BY_KEY[MOVED].diag(INDEX_NAME, text, fix))
        once.append({"key": "moved:" + moved.old_dir, "text": f"{text}. Fix: {fix}."})
    return found, once


def check_targets(
    memory_dirs: Mapping[str, tuple[str | None, tuple[str, ...]]],
    *,
    cache_dir: str | None,
    severities: Mapping[str, str] | None,
    max_file_bytes: int = 256 * 1024,
    cwd: str | None = None,
    profile: object = None,
) -> tuple[Diagnostic, ...]:
    """`check_memory` of each memory dir against its root; paths shown as lint shows."""
    import dataclasses

    from memd.lint.engine import display_path

    found: list[Diagnostic] = []
    for memory_dir, (root, roots) in memory_dirs.items():
        report = check_memory(
            memory_dir,
            root,
            roots=roots,
            profile=profile,
            cache_dir=cache_dir,
            severities=severities,
            max_file_bytes=max_file_bytes,
        )
        found.extend(
            dataclasses.replace(d, path=display_path(memory_dir, d.path, cwd=cwd))
            for d in report.diagnostics
        )
    return tuple(found)


def rename_edits(
    memory_dir: str,
    project_root: str,
    *,
    cache_dir: str | None,
    max_file_bytes: int = 256 * 1024,
) -> list[FileEdit]:
    """The edits naming what git renamed (memd.truth.renames), read beneath the dir."""
    from memd.fsread import open_dir, read_beneath
    from memd.memory.reader import load_memdir
    from memd.truth.renames import plan_renames

    memdir = load_memdir(memory_dir, max_file_bytes=max_file_bytes)
    found, _, _ = gone_findings(memdir, project_root, cache_dir)
    wanted = {relpath for relpath, finding in found if finding.renamed_to is not None}
    if not wanted:
        return []
    texts: dict[str, bytes] = {}
    try:
        root_fd = open_dir(memory_dir)
    except OSError:
        return []
    try:
        for relpath in wanted:
            try:
                texts[relpath] = read_beneath(root_fd, relpath, max_file_bytes)
            except OSError:
                continue  # gone, a link, too large: nothing offered for it
    finally:
        os.close(root_fd)
    return plan_renames(texts, found)
