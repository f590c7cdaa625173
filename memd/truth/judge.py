"""Which claims name what the project no longer has, and what took its place (pure).

A path is gone only with git's word for it: it is not at `HEAD` and git's
history records it being removed or renamed. A path that never existed (a
plan, a typo, another repository's path) is left alone, and so is one the
edge finds on disk or ignored (`Finding.path`, checked there). A bare name
counts when exactly one path of the project's history had it and no file
at `HEAD` has it. A command is gone when no definition file at `HEAD`
defines it and an older version of the root definition file did; the
version after the last one that defined it is where it went.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from memd.claude_code.terms import INDEX_NAME
from memd.truth.claims import NAME, PATH

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from memd.truth.claims import Claim
    from memd.truth.facts import Event, RepoFacts

PATH_GONE = "D001"
COMMAND_GONE = "D002"
RENAME_HOPS = 8  # a rename chain followed this far
# Bare names too common to say which file a memory meant: the agent's own
# settings, a home dotfile, any package's manifest. Only a path with a folder
# names one of these.
AMBIGUOUS_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".gitignore",
        ".mcp.json",
        ".claude.json",
        ".bashrc",
        ".zshrc",
        ".profile",
        "settings.json",
        "settings.local.json",
        "config.json",
        "config.yaml",
        "config.yml",
        "config.toml",
        "package.json",
        "tsconfig.json",
        "pyproject.toml",
        "requirements.txt",
        "setup.py",
        "__init__.py",
        "index.ts",
        "index.js",
        "main.py",
        "Makefile",
        "Dockerfile",
        "docker-compose.yml",
        "README.md",
        "CLAUDE.md",
        "AGENTS.md",
        "GEMINI.md",
        INDEX_NAME,
    }
)
_KEEP_HINT = "check the memory against the code, then update or remove it"
_DEFINITION_WORD = {
    "npm": "script",
    "make": "target",
    "just": "recipe",
    "pyscript": "script",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One claim found gone: the rule, where, the message and the repository path.

    `path` is the repository path the edge must still find absent on disk and
    not ignored before the finding stands (None for a command); `renamed_to`
    the path it became, when it was renamed and that path is still there.
    """

    code: str
    claim: Claim
    message: str
    hint: str
    path: str | None
    renamed_to: str | None = None


class TreeIndex:
    """Look-ups over `RepoFacts` built on first use: folders, names, gone folders."""

    def __init__(self, facts: RepoFacts) -> None:
        self.facts = facts
        self._sorted: list[str] | None = None
        self._names: frozenset[str] | None = None
        self._gone_names: dict[str, list[str]] | None = None
        self._gone_dirs: dict[str, Event] | None = None

    def is_folder(self, path: str) -> bool:
        """Whether some file at `HEAD` lies under `path` (bisecting the sorted tree)."""
        if self._sorted is None:
            self._sorted = list(self.facts.ordered or sorted(self.facts.files))
        prefix = path.rstrip("/") + "/"
        at = bisect.bisect_left(self._sorted, prefix)
        return at < len(self._sorted) and self._sorted[at].startswith(prefix)

    @property
    def names(self) -> frozenset[str]:
        if self._names is None:
            self._names = frozenset(
                path.rsplit("/", 1)[-1] for path in self.facts.files
            )
        return self._names

    def gone_with_name(self, name: str) -> list[str]:
        if self._gone_names is None:
            self._gone_names = {}
            for path in self.facts.gone:
                self._gone_names.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        return self._gone_names.get(name, [])

    def gone_dir(self, folder: str) -> Event | None:
        if self._gone_dirs is None:
            # `gone` holds the newest departures first (git log's order), so
            # the first one seen under a folder is the newest.
            newest: dict[str, Event] = {}
            for path, event in self.facts.gone.items():
                slash = path.rfind("/")
                while slash > 0:
                    newest.setdefault(path[:slash], event)
                    slash = path.rfind("/", 0, slash)
            self._gone_dirs = newest
        if self.is_folder(folder):
            return None
        return self._gone_dirs.get(folder)


def judge(claims: Iterable[Claim], index: TreeIndex) -> list[Finding]:
    """Return a finding for each claim naming what the project no longer has."""
    found = []
    for claim in claims:
        if claim.kind == PATH:
            finding = _judge_path(claim, index)
        elif claim.kind == NAME:
            finding = _judge_name(claim, index)
        else:
            finding = _judge_command(claim, index.facts)
        if finding is not None:
            found.append(finding)
    return found


def _judge_path(claim: Claim, index: TreeIndex) -> Finding | None:
    facts = index.facts
    path = claim.value.rstrip("/")
    is_folder = claim.value.endswith("/")
    if not is_folder and path in facts.files:
        return None
    if index.is_folder(path):
        return None
    event = None if is_folder else facts.gone.get(path)
    if event is not None:
        message, renamed_to = _departure(claim.text, path, event, facts)
        return Finding(
            code=PATH_GONE,
            claim=claim,
            message=message,
            hint=_hint(renamed_to),
            path=path,
            renamed_to=renamed_to,
        )
    folder_event = index.gone_dir(path)
    if folder_event is None:
        return None
    return Finding(
        code=PATH_GONE,
        claim=claim,
        message=f"`{claim.text}` no longer exists: the last of its files went in "
        f"{folder_event.sha} on {folder_event.date}",
        hint=_KEEP_HINT,
        path=path,
    )


def _judge_name(claim: Claim, index: TreeIndex) -> Finding | None:
    if claim.value in AMBIGUOUS_NAMES or claim.value in index.names:
        return None
    paths = index.gone_with_name(claim.value)
    if len(paths) != 1:
        return None  # never a file here, or several: not one file's name
    path = paths[0]
    message, renamed_to = _departure(
        claim.text, path, index.facts.gone[path], index.facts
    )
    if path != claim.value:
        message = message.replace(
            f"`{claim.text}` no longer exists",
            f"`{claim.text}` (`{path}`) no longer exists",
            1,
        )
    return Finding(
        code=PATH_GONE,
        claim=claim,
        message=message,
        hint=_hint(renamed_to),
        path=path,
        renamed_to=renamed_to,
    )


def _departure(
    text: str, path: str, event: Event, facts: RepoFacts
) -> tuple[str, str | None]:
    """The message for a path that left by `event`, renames followed; its new path."""
    steps = []
    current, hops = event, 0
    while True:
        if current.renamed_to is None:
            steps.append(f"removed in {current.sha} on {current.date}")
            return f"`{text}` no longer exists: " + ", then ".join(steps), None
        steps.append(
            f"renamed to `{current.renamed_to}` in {current.sha} on {current.date}"
        )
        target = current.renamed_to
        if target in facts.files:
            return f"`{text}` no longer exists: " + ", then ".join(steps), target
        following = facts.gone.get(target)
        hops += 1
        if following is None or hops >= RENAME_HOPS:
            return f"`{text}` no longer exists: " + ", then ".join(steps), None
        current = following


def _hint(renamed_to: str | None) -> str:
    if renamed_to is None:
        return _KEEP_HINT
    return (
        f"if it is the same file, name `{renamed_to}` (`memd fix --renames` does); "
        f"else {_KEEP_HINT}"
    )


def _judge_command(claim: Claim, facts: RepoFacts) -> Finding | None:
    defined = facts.commands.get(claim.kind)
    if defined is None or claim.value in defined:
        return None  # a definition file memd could not read: unknown, not gone
    versions = facts.versions.get(claim.kind, ())
    file_name = facts.definition_names.get(claim.kind, "")
    word = _DEFINITION_WORD.get(claim.kind, "command")
    for position, version in enumerate(versions):
        if version.names is not None and claim.value in version.names:
            if position == 0:
                return None  # the newest root version defines it: say nothing
            went = versions[position - 1]
            if went.names is None:
                how = f"{file_name} was removed in {went.sha} on {went.date}"
            else:
                how = (
                    f"{word} `{claim.value}` was removed from {file_name}"
                    f" in {went.sha} on {went.date}"
                )
            return Finding(
                code=COMMAND_GONE,
                claim=claim,
                message=f"`{claim.text}` is no longer defined: {how}",
                hint=_KEEP_HINT,
                path=None,
            )
    return None
