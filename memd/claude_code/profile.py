"""Each supported Claude Code release as one `AgentProfile`: its behaviour as data.

A profile holds what differs between releases: the truncation sentence, the
path-validation predicates, the `autoMemoryDirectory` chain and which of its
sources sit behind the workspace-trust gate, the enablement rules, the project
folder name rule, the reserved folders, the recall and scan limits, the known
metadata keys, the `memdir_loaded` fields, the prompt's frontmatter example
and its `[[name]]` advice, and the git-root checks. Code asks the profile; only
`profile_for_version` compares versions. Adding a release means adding one
profile to `PROFILES` and its tests.

REFERENCE.md §1-5 (2.1.112) and "2.1.332: what changed".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from memd.claude_code import enablement_rules as en
from memd.claude_code import path_rules as pr
from memd.claude_code import wording
from memd.claude_code.enablement_rules import Enablement
from memd.claude_code.provenance import claude_code_item_problem
from memd.claude_code.truncation_notice import notice_2_1_112, notice_2_1_332

Notice = Callable[[str, str, str, int], str]
EnablementRule = Callable[
    [Mapping[str, str], Mapping[str, object] | None], Enablement | None
]
MetadataCheck = Callable[[object], str | None]

# Metadata keys the agent itself writes or reads, in either release.
_BASE_METADATA_KEYS = ("node_type", "type", "originSessionId", "modified")
_BASE_TELEMETRY = ("memory_type", "total_file_count", "total_subdir_count")


@dataclass(frozen=True, slots=True, kw_only=True)
class GitRootRules:
    """How strictly `find_git_root` and `find_canonical_git_root` check `.git`.

    REFERENCE.md "2.1.332: what changed", "Git roots: stricter checks".
    """

    unsafe_targets: tuple[Callable[[str], bool], ...]  # network or device paths
    confine_links: bool  # a link may not carry `.git` or a git dir out of place
    refuse_backslash: bool  # in a `gitdir:` or `commondir` target, on POSIX
    bare_common_with_git_is_own_root: bool
    skip_autofs_roots: bool  # Linux: never look for `.git` in an autofs map root


# 2.1.112 follows any `.git` and any target, as git itself would.
LENIENT_GIT_ROOTS = GitRootRules(
    unsafe_targets=(),
    confine_links=False,
    refuse_backslash=False,
    bare_common_with_git_is_own_root=False,
    skip_autofs_roots=False,
)

# What 2.1.332 calls a network or device path, for memory paths and git alike.
_NETWORK_OR_DEVICE = (
    pr.starts_with_two_separators,
    pr.is_nt_device_path,
    pr.is_network_mount,
    pr.is_macos_special_root,
)

STRICT_GIT_ROOTS = GitRootRules(
    unsafe_targets=_NETWORK_OR_DEVICE,
    confine_links=True,
    refuse_backslash=True,
    bare_common_with_git_is_own_root=True,
    skip_autofs_roots=True,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentProfile:
    """What one Claude Code release does with auto memory."""

    version: str
    entrypoint_max_lines: int
    entrypoint_max_units: int  # UTF-16 units, which the reference calls bytes
    truncation_notice: Notice  # (reason, trimmed, kept, line_count) -> sentence
    tilde_rest_rejected: Callable[[str], bool]
    path_rejections: tuple[Callable[[str], bool], ...]  # beyond the shared rules
    directory_sources: tuple[str, ...]  # autoMemoryDirectory, highest first
    trust_gated_sources: frozenset[str]  # read only when the trust gate passes
    enablement_rules: tuple[EnablementRule, ...]
    project_dir_name: Callable[[Mapping[str, str]], str | None]
    reserved_folders: frozenset[str]  # first segments that are not topic files
    reserves_dot_segments: bool
    recall_max_lines: int | None  # what recall shows of a topic file
    recall_max_bytes: int | None  # UTF-8 bytes, whole lines
    scan_max_lines: int  # the header scan of each topic file
    scan_max_bytes: int | None
    known_metadata_keys: frozenset[str]
    metadata_checks: Mapping[str, MetadataCheck]  # key -> problem or None
    telemetry_fields: tuple[
        str, ...
    ]  # memdir_loaded fields beyond the agent-memory ones
    prompt_frontmatter: tuple[str, ...]  # the example block in "How to save"
    prompt_link_advice: str | None  # the `[[name]]` sentence after it
    git_roots: GitRootRules
    # How MEMORY.md becomes the loaded index (REFERENCE.md "Running the real
    # releases"; memd/claude_code/html_comments.py): whether a BOM is dropped before
    # the frontmatter is looked for, whether any `<!--` rebuilds the text with
    # LF line ends, whether control and invisible characters are removed, and
    # whether reserved tags are neutralized (memd/claude_code/reserved_tags.py).
    index_drops_bom_first: bool
    index_rebuilt_from_tokens: bool
    index_sanitized: bool
    index_tags_neutralized: bool

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return parse_version(self.version) or (0,)


PROFILE_2_1_112 = AgentProfile(
    version="2.1.112",
    entrypoint_max_lines=200,
    entrypoint_max_units=25_000,
    truncation_notice=notice_2_1_112,
    tilde_rest_rejected=pr.tilde_rest_is_dot,
    path_rejections=(),
    directory_sources=("policy", "local", "user"),
    trust_gated_sources=frozenset(),
    enablement_rules=(
        en.disable_variable,
        en.simple_mode,
        en.remote_without_memory_dir,
        en.setting,
        en.default_on,
    ),
    project_dir_name=pr.no_project_dir_name,
    reserved_folders=frozenset({"logs"}),
    reserves_dot_segments=True,
    recall_max_lines=None,
    recall_max_bytes=None,
    scan_max_lines=30,
    scan_max_bytes=None,
    known_metadata_keys=frozenset(_BASE_METADATA_KEYS),
    metadata_checks=MappingProxyType({}),
    telemetry_fields=_BASE_TELEMETRY,
    prompt_frontmatter=wording.FRONTMATTER_EXAMPLE,
    prompt_link_advice=None,
    git_roots=LENIENT_GIT_ROOTS,
    index_drops_bom_first=False,
    index_rebuilt_from_tokens=True,
    index_sanitized=False,
    index_tags_neutralized=False,
)

PROFILE_2_1_332 = AgentProfile(
    version="2.1.332",
    entrypoint_max_lines=200,
    entrypoint_max_units=25_000,
    truncation_notice=notice_2_1_332,
    tilde_rest_rejected=pr.tilde_rest_climbs,
    path_rejections=_NETWORK_OR_DEVICE,
    # The CLI's flag settings (`--settings`) never reach memd, so no "flag" source.
    directory_sources=("policy", "local", "project", "user"),
    trust_gated_sources=frozenset({"local", "project"}),
    enablement_rules=(
        en.safe_mode,
        en.disable_variable,
        en.simple_mode,
        en.remote_without_memory_dir_or_override,
        en.setting,
        en.default_on,
    ),
    project_dir_name=pr.project_dir_name_from_env,
    reserved_folders=frozenset({"logs", "sessions", "proposals"}),
    reserves_dot_segments=True,
    recall_max_lines=200,
    recall_max_bytes=4096,
    scan_max_lines=30,
    scan_max_bytes=65_536,
    known_metadata_keys=frozenset(
        (*_BASE_METADATA_KEYS, "claudeCodeItem", "typedTurn")
    ),
    metadata_checks=MappingProxyType({"claudeCodeItem": claude_code_item_problem}),
    telemetry_fields=(
        *_BASE_TELEMETRY,
        "memory_access_mode",
        "prompt_variant",
        "team_write_steered",
    ),
    prompt_frontmatter=wording.FRONTMATTER_EXAMPLE_NESTED,
    prompt_link_advice=wording.LINK_ADVICE,
    git_roots=STRICT_GIT_ROOTS,
    index_drops_bom_first=True,
    index_rebuilt_from_tokens=False,
    index_sanitized=True,
    index_tags_neutralized=True,
)

# Oldest first; the last is the default.
PROFILES: tuple[AgentProfile, ...] = (PROFILE_2_1_112, PROFILE_2_1_332)
NEWEST = PROFILES[-1]
BY_VERSION: Mapping[str, AgentProfile] = MappingProxyType(
    {p.version: p for p in PROFILES}
)

ProfileSpec = AgentProfile | str | None


def get_profile(spec: ProfileSpec = None) -> AgentProfile:
    """Return the profile for a supported release string, a profile, or the newest.

    Raises:
        ValueError: `spec` names a release memd has no profile for.
    """
    if spec is None:
        return NEWEST
    if isinstance(spec, AgentProfile):
        return spec
    profile = BY_VERSION.get(spec.strip())
    if profile is None:
        supported = ", ".join(BY_VERSION)
        raise ValueError(f"no agent profile for {spec!r}; memd knows {supported}")
    return profile


def parse_version(text: str) -> tuple[int, ...] | None:
    """Return `2.1.332` from `2.1.332 (Claude Code)`, or None without a version."""
    for word in text.split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return tuple(int(p) for p in parts)
    return None


def profile_for_version(version: tuple[int, ...] | None) -> AgentProfile:
    """Return the newest profile not newer than `version`; the newest for None.

    A version older than every profile gets the oldest profile.
    """
    return fit_version(version)[0]


def fit_version(
    version: tuple[int, ...] | None,
) -> tuple[AgentProfile, str, str | None]:
    """Return the profile for `version`, why in a few words, and a warning or None.

    The warning is for a release outside what memd's profiles cover (older
    than the oldest, newer than the newest): memd guesses its behaviour.
    """
    if version is None:
        return NEWEST, "no version, so the newest profile", None
    shown = ".".join(map(str, version))
    known = ", ".join(BY_VERSION)
    if version < PROFILES[0].version_tuple:
        oldest = PROFILES[0].version
        return (
            PROFILES[0],
            f"older than every profile, so the oldest, {oldest}",
            f"Claude Code {shown} is older than every release memd knows ({known});"
            f" memd assumes it behaves as {oldest}",
        )
    exact = [p for p in PROFILES if p.version_tuple == version]
    if exact:
        return exact[0], "its own profile", None
    if version > NEWEST.version_tuple:
        return (
            NEWEST,
            f"newer than every profile, so the newest, {NEWEST.version}",
            f"Claude Code {shown} is newer than every release memd knows ({known});"
            f" memd assumes it behaves as {NEWEST.version} (upgrade memd, or pin"
            " [agent] version)",
        )
    fitting = [p for p in PROFILES if p.version_tuple <= version][-1]
    return fitting, f"the newest profile before it, {fitting.version}", None
