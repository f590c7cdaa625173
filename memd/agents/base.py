"""What every agent module gives: one `Agent`, and the small records it is made of."""

from __future__ import annotations

import os
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True, slots=True)
class Release:
    """The agent's release tests/e2e installs from npm, and what runs it."""

    package: str  # the npm package
    version: str  # the release memd is proven against
    entry: str  # the file in the unpacked package that starts it
    binary_package: str = ""  # the platform package holding a native binary


@dataclass(frozen=True, slots=True)
class ConfigEdit:
    """One file `memd setup` changes: what it adds, where, and the edit.

    `edit(path, install=..., dry_run=...)` returns what it did (or, with
    `dry_run`, the diff); it raises `memd.errors.UsageError` with one line
    when the file cannot be read or parsed, leaving it untouched.
    """

    what: str
    path: str
    edit: Callable[..., str]


@dataclass(frozen=True, slots=True)
class Verdict:
    """One `memd doctor` line for an agent."""

    name: str
    verdict: str  # OK | WARN | FAIL
    message: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class Store:
    """A memory store an agent keeps itself: memd records it, never writes it.

    `path` is a directory (or, for a single-file store, that file);
    `label` names it for a person: the agent and the project.
    """

    agent: str  # the agent's name ("codex")
    label: str  # "Codex CLI memories" or "Gemini CLI memory of ~/code/webshop"
    path: str
    project: str | None = None  # the project root, when the store is one project's
    single_file: bool = False


@dataclass(frozen=True, slots=True)
class Agent:
    """One coding agent, as memd wires it and keeps its memory."""

    name: str  # "claude-code", "codex", "gemini": `memd setup --agent NAME`
    title: str  # "Codex CLI": what a person reads
    launcher: str  # the command on PATH
    release: Release
    # The most session-start context the agent passes on whole, in UTF-8 bytes.
    context_limit_bytes: int
    config_edits: Callable[[Mapping[str, str], str], tuple[ConfigEdit, ...]]
    checks: Callable[[Mapping[str, str], str], Iterator[Verdict]]
    stores: Callable[[Mapping[str, str]], tuple[Store, ...]]
    # Where a store will appear: the daemon looks again when one does.
    awaited_stores: Callable[[Mapping[str, str]], tuple[str, ...]] = lambda env: ()

    def on_path(self, env: Mapping[str, str]) -> str | None:
        """The agent's launcher on `env`'s PATH, or None."""
        import shutil

        return shutil.which(self.launcher, path=env.get("PATH", os.defpath))


def same_memd(command: object, executable: str) -> bool:
    """Whether `command` is this memd: the same path, or the same file by a link."""
    if not isinstance(command, str):
        return False
    if command == executable:
        return True
    try:
        return os.path.samefile(command, executable)
    except (OSError, ValueError):
        return False


def shell_word(word: str) -> str:
    """`word` quoted for a POSIX shell only when it needs it."""
    import shlex

    return shlex.quote(word)


def session_start_command(memd_executable: str, agent: str) -> str:
    """The SessionStart hook command memd installs in `agent`."""
    return f"{shell_word(memd_executable)} hook session-start --agent {agent}"


def is_memd_session_start(command: object, agent: str) -> bool:
    """Whether a hook command is memd's SessionStart hook for `agent`."""
    import shlex

    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (
        len(words) == 5
        and os.path.basename(words[0]) == "memd"
        and words[1:] == ["hook", "session-start", "--agent", agent]
    )


def release_verdict(agent: Agent, env: Mapping[str, str]) -> Verdict:
    """The agent's release on PATH (`--version`, bounded) against the one memd
    is proven against (tests/e2e runs it); a different one is a warning."""
    import re

    from memd.claude_code.choice import probe_version

    name = f"{agent.name} release"
    launcher = agent.on_path(env)
    if launcher is None:
        return Verdict(name, OK, f"no {agent.launcher} on PATH")
    output = probe_version(os.path.realpath(launcher)) or ""
    found = re.search(r"\b(\d+\.\d+\.\d+)\b", output)
    proven = agent.release.version
    if found is None:
        return Verdict(
            name,
            WARN,
            f"`{launcher} --version` gave no version within its timeout",
            f"run `{launcher} --version` by hand",
        )
    if found.group(1) != proven:
        return Verdict(
            name,
            WARN,
            f"{agent.title} {found.group(1)} on PATH; memd is proven against {proven}",
            f"from memd's checkout: python -m tests.e2e --agent {agent.name}"
            f" --release {found.group(1)}",
        )
    return Verdict(
        name, OK, f"{agent.title} {proven}, the release memd is proven against"
    )
