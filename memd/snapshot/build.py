"""From a loaded memory directory to a `Snapshot`: render, lint, manifest, digest.

The daemon and the CLI share this. `STEPS` is the ordered chain (structlog's
processor idea): each step takes the draft and returns a new one, so adding a
step is one line. The daemon re-renders one directory cheaply by passing its
`ParseCache` through `load_and_build`, which reparses only changed files.

`built_ns` is the wall clock taken *before* any input is read: the snapshot
store treats an input modified at or after `built_ns - RACY_WINDOW_NS` as
changed (git's racily-clean rule), which is only sound if the clock was read
first.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memd.claude_code.profile import NEWEST, AgentProfile, ProfileSpec, get_profile
from memd.claude_code.prompt import IndexView, render_prompt, view_index
from memd.claude_code.truncation import EntrypointTruncation
from memd.diagnostics import Diagnostic, count_by_severity
from memd.snapshot.store import encode_prompt, guidelines_fingerprint

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memd.claude_code.manifest import ManifestEntry
    from memd.lint.engine import LintCache
    from memd.memory.memdir import InputStat, MemDir, ParseCache


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """One rendered prompt with everything needed to tell whether it is still fresh."""

    memory_dir: str  # ends with os.sep
    mode: str
    text: str
    sha256: str  # of the UTF-8 bytes written to prompt.md
    built_ns: int
    inputs: tuple[InputStat, ...]
    truncation: EntrypointTruncation | None
    diagnostics: tuple[Diagnostic, ...]
    manifest: tuple[ManifestEntry, ...]
    lint_errors: int
    lint_warnings: int
    total_file_count: int
    total_subdir_count: int
    render_seconds: float
    env_fingerprint: str = "-"  # of the extra guidelines the text was rendered with
    profile: str = NEWEST.version  # the agent release whose rules built it


@dataclass(frozen=True, slots=True, kw_only=True)
class _Draft:
    memdir: MemDir
    mode: str
    extra_guidelines: str | None
    severities: Mapping[str, str] | None
    labels: Mapping[str, Sequence[str]]  # lint.why_labels / how_labels, when set
    profile: AgentProfile = NEWEST
    lint_cache: LintCache | None = None  # the daemon's, per directory
    text: str = ""
    index_view: IndexView | None = None  # shared by render and lint: truncate once
    truncation: EntrypointTruncation | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    manifest: tuple[ManifestEntry, ...] = ()
    sha256: str = ""


def render(draft: _Draft) -> _Draft:
    """Render the prompt text and the index truncation facts."""
    view = view_index(
        draft.memdir.index_text,
        profile=draft.profile,
        has_bom=draft.memdir.index_has_bom,
    )
    text, truncation = render_prompt(
        mode=draft.mode,
        memory_dir=_with_sep(draft.memdir.path),
        index_text=draft.memdir.index_text,
        extra_guidelines=draft.extra_guidelines,
        index_view=view,
        profile=draft.profile,
    )
    return dataclasses.replace(draft, text=text, index_view=view, truncation=truncation)


def lint(draft: _Draft) -> _Draft:
    """Lint the directory (file-level findings included)."""
    from memd.lint.engine import lint_memdir

    diagnostics = lint_memdir(
        draft.memdir,
        severities=draft.severities,
        index_view=draft.index_view,
        cache=draft.lint_cache,
        **draft.labels,
        profile=draft.profile,
    )
    return dataclasses.replace(draft, diagnostics=diagnostics)


def manifest(draft: _Draft) -> _Draft:
    """Build the recall manifest, newest first."""
    from memd.claude_code.manifest import build_manifest

    return dataclasses.replace(
        draft, manifest=build_manifest(draft.memdir, profile=draft.profile)
    )


def digest(draft: _Draft) -> _Draft:
    """Hash the exact bytes prompt.md will hold."""
    sha = hashlib.sha256(encode_prompt(draft.text)).hexdigest()
    return dataclasses.replace(draft, sha256=sha)


STEPS: tuple[Callable[[_Draft], _Draft], ...] = (render, lint, manifest, digest)


def build_snapshot(
    memdir: MemDir,
    mode: str,
    *,
    extra_guidelines: str | None = None,
    severities: Mapping[str, str] | None = None,
    started_ns: int | None = None,
    extra_inputs: tuple[InputStat, ...] = (),
    lint_cache: LintCache | None = None,
    why_labels: Sequence[str] | None = None,
    how_labels: Sequence[str] | None = None,
    profile: ProfileSpec = None,
) -> Snapshot:
    """Render, lint and index `memdir` for `mode`, under `profile` (default newest).

    `lint_cache`, kept across builds of one directory, re-lints only what changed.

    Pass `started_ns` (`time.time_ns()` taken before `load_memdir`) for a
    correct racy-input check; without it the build time is taken now, which is
    only safe when the caller knows the inputs were read just before.
    """
    built_ns = time.time_ns() if started_ns is None else started_ns
    clock = time.perf_counter()
    draft = _Draft(
        memdir=memdir,
        mode=mode,
        extra_guidelines=extra_guidelines,
        severities=severities,
        labels=_labels(why_labels, how_labels),
        profile=get_profile(profile),
        lint_cache=lint_cache,
    )
    for step in STEPS:
        draft = step(draft)
    errors, warnings, _ = count_by_severity(draft.diagnostics)
    return Snapshot(
        memory_dir=_with_sep(memdir.path),
        mode=mode,
        text=draft.text,
        sha256=draft.sha256,
        built_ns=built_ns,
        inputs=tuple(memdir.inputs) + tuple(extra_inputs),
        truncation=draft.truncation,
        diagnostics=draft.diagnostics,
        manifest=draft.manifest,
        lint_errors=errors,
        lint_warnings=warnings,
        total_file_count=memdir.total_file_count,
        total_subdir_count=memdir.total_subdir_count,
        render_seconds=time.perf_counter() - clock,
        env_fingerprint=guidelines_fingerprint(extra_guidelines),
        profile=draft.profile.version,
    )


def load_and_build(
    memory_dir: str,
    mode: str,
    *,
    cache: ParseCache | None = None,
    max_file_bytes: int = 256 * 1024,
    extra_guidelines: str | None = None,
    severities: Mapping[str, str] | None = None,
    why_labels: Sequence[str] | None = None,
    how_labels: Sequence[str] | None = None,
    profile: ProfileSpec = None,
) -> Snapshot:
    """Read `memory_dir` (reusing `cache`) and build its snapshot, clock read first."""
    from memd.memory.reader import load_memdir

    started_ns = time.time_ns()
    memdir = load_memdir(
        memory_dir.rstrip(os.sep) or os.sep, cache=cache, max_file_bytes=max_file_bytes
    )
    return build_snapshot(
        memdir,
        mode,
        extra_guidelines=extra_guidelines,
        severities=severities,
        started_ns=started_ns,
        why_labels=why_labels,
        how_labels=how_labels,
        profile=profile,
    )


def _labels(
    why_labels: Sequence[str] | None, how_labels: Sequence[str] | None
) -> dict[str, Sequence[str]]:
    """The label keywords for lint_memdir: only those configured."""
    labels = {"why_labels": why_labels, "how_labels": how_labels}
    return {key: value for key, value in labels.items() if value is not None}


def _with_sep(path: str) -> str:
    return path if path.endswith(os.sep) else path + os.sep
