"""The session-start context memd gives another agent: Claude Code's memory, read-only.

A Codex or Gemini session in a project gets what Claude Code learned there:
MEMORY.md as Claude Code loads it (frontmatter and comment blocks stripped,
cut at 200 lines or 25,000 units with Claude Code's own warning, by the
profile in force: `memd.claude_code.prompt.view_index`), named as Claude Code's,
with where its topic files are and that they are not this agent's to edit.
Only the index: the whole memory in every agent would cost tokens and mix
up their stores. The text is then kept within the agent's own limit, cut
after a line with a pointer to the file.

The warm path reads the project's resolution record and its fresh snapshot
(`memd prompt`, the daemon and the Claude Code hooks keep them), whose last
section is the index as Claude Code loads it: no config, no YAML, no regular
expressions. Otherwise the project is resolved and the index read the long
way (`memd.snapshot.serve`, `memd.claude_code.prompt.view_index`).
"""

from __future__ import annotations

import os

from memd.claude_code.terms import INDEX_NAME

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_INDEX_BYTES = 4 * 1024 * 1024  # far past what Claude Code loads; the rest is cut
# The rendered prompt's last section (memd.claude_code.prompt.render_index) and
# what it says for an empty index (memd.claude_code.wording.INDEX_EMPTY; a test
# keeps the two equal without the hook importing the wording).
INDEX_HEADING = "\n\n## MEMORY.md\n\n"
_INDEX_EMPTY = "Your MEMORY.md is empty for now. Memories you save will be listed here."


def session_start_output(
    payload: Mapping[str, object],
    env: Mapping[str, str],
    *,
    limit_bytes: int,
    agent: str = "",
) -> dict[str, object] | None:
    """The SessionStart hook's JSON output for `payload`, or None (nothing to say).

    A loss of `agent`'s own memory not told yet (memd's history) comes first.
    """
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        return None
    losses = _loss_sentences(agent, cwd, env)
    room = limit_bytes - (len(losses.encode()) + 2 if losses else 0)
    context = _memory_context_for(cwd, env, room)
    if losses:
        context = losses if context is None else f"{losses}\n\n{context}"
    if context is None:
        return None
    return {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    }


def _loss_sentences(agent: str, cwd: str, env: Mapping[str, str]) -> str:
    """The losses of `agent`'s own stores not told yet, one line each; told once."""
    from memd.agents import homes
    from memd.claude_code.paths import project_root_of
    from memd.dirs import default_state_dir, expand_home

    if agent == "codex":
        stores = [homes.codex_memories(env)]
    elif agent == "gemini":
        # Gemini keys a project by the folder it was started in (its target
        # dir); memd's project is the git root above it. Either may be known.
        project = homes.gemini_project_memory(env, cwd) or homes.gemini_project_memory(
            env, project_root_of(cwd)
        )
        stores = [homes.gemini_dir(env), *([project] if project else [])]
    else:
        return ""
    explicit = expand_home(env.get("MEMD_STATE_DIR", ""), env)
    state_dir = explicit if os.path.isabs(explicit) else default_state_dir(env)
    told = []
    for store in stores:
        sentence = _take_loss(state_dir, store)
        if sentence:
            told.append(sentence)
    return "\n".join(told)


def _take_loss(state_dir: str, store: str) -> str | None:
    from memd.history.notice import notice_path, take_sentence

    if not os.path.exists(notice_path(state_dir, store)):
        return None  # the common case, without opening anything
    return take_sentence(state_dir, store)


def _memory_context_for(
    cwd: str, env: Mapping[str, str], limit_bytes: int
) -> str | None:
    """Claude Code's index for the project at `cwd`, within `limit_bytes`."""
    warm = _warm(cwd, env)
    if warm is not None:
        root, memory_dir, index = warm
        context = (
            None
            if index is None
            else _with_heading(root, memory_dir, index, env, limit_bytes)
        )
    else:
        found = _locate(cwd, env)
        if found is None:
            return None
        root, memory_dir, profile = found
        context = memory_context(
            root, memory_dir, profile, env, limit_bytes=limit_bytes
        )
    return context


def memory_context(
    root: str,
    memory_dir: str,
    profile: str | None,
    env: Mapping[str, str],
    *,
    limit_bytes: int,
) -> str | None:
    """Claude Code's index of `memory_dir` with its heading, within `limit_bytes`."""
    from memd.claude_code.prompt import view_index
    from memd.fsread import read_bytes

    index_path = os.path.join(memory_dir, INDEX_NAME)
    try:
        raw = read_bytes(index_path, MAX_INDEX_BYTES + 1)
    except OSError:
        return None
    text = raw[:MAX_INDEX_BYTES].decode("utf-8", "replace")
    has_bom = text.startswith("\ufeff")
    view = view_index(text.removeprefix("\ufeff"), profile=profile, has_bom=has_bom)
    if view.truncation is None:
        return None
    return _with_heading(root, memory_dir, view.truncation.content, env, limit_bytes)


def _with_heading(
    root: str, memory_dir: str, index: str, env: Mapping[str, str], limit_bytes: int
) -> str:
    index_path = os.path.join(memory_dir, INDEX_NAME)
    return _within(_heading(root, memory_dir, env), index, index_path, limit_bytes)


def _warm(cwd: str, env: Mapping[str, str]) -> tuple[str, str, str | None] | None:
    """(root, memory dir, index or None when empty) from a fresh snapshot; else None."""
    from memd.claude_code.paths import project_root_of
    from memd.snapshot.serve import EXTRA_GUIDELINES_ENV, read_record
    from memd.snapshot.store import SnapshotReader

    if env.get(EXTRA_GUIDELINES_ENV):
        return None  # text of the user's could hold the section's heading
    root = project_root_of(cwd)
    record = read_record(root, env)
    if record is None:
        return None
    memory_dir, cache_dir, mode, profile = record
    if "\n" in memory_dir:
        return None  # the heading is found by its line; a path holding one is odd
    data = SnapshotReader(cache_dir).read_fresh_bytes(memory_dir, mode, profile=profile)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    at = text.find(INDEX_HEADING)  # the first: every section before is memd's text
    if at < 0:
        return None
    index = text[at + len(INDEX_HEADING) :].removesuffix("\n")
    return root, memory_dir.rstrip(os.sep), None if index == _INDEX_EMPTY else index


def tilde(path: str, home: str) -> str:
    """`path` with the home directory written `~`, as a person reads it."""
    home = home.rstrip(os.sep)
    if home and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _heading(root: str, memory_dir: str, env: Mapping[str, str]) -> str:
    shown = tilde(root, env.get("HOME") or os.path.expanduser("~"))
    return (
        f"# Claude Code's memory of {shown} (read-only)\n\n"
        f"Claude Code keeps what it learned in this project in {memory_dir}/. "
        "Below is its index, MEMORY.md, as Claude Code loads it at the start of "
        "a session. Read a linked file there when it bears on the task, or call "
        "memd's `memory_recall` tool. These files are Claude Code's: do not edit "
        "them.\n\n"
    )


def _within(heading: str, index: str, index_path: str, limit_bytes: int) -> str:
    """Heading and index, cut after a line (with a pointer) to fit `limit_bytes`."""
    whole = heading + index
    if len(whole.encode("utf-8")) <= limit_bytes:
        return whole
    pointer = (
        f"\n\n[memd: the index is longer than fits here; this is its beginning. "
        f"Read the whole index in {index_path}.]"
    )
    room = limit_bytes - len((heading + pointer).encode("utf-8"))
    cut = index.encode("utf-8")[: max(room, 0)].decode("utf-8", "ignore")
    newline = cut.rfind("\n")
    return heading + (cut[:newline] if newline > 0 else cut) + pointer


def _locate(cwd: str, env: Mapping[str, str]) -> tuple[str, str, str | None] | None:
    """(project root, memory dir, profile) for `cwd`; None when memory is off."""
    from memd.claude_code.paths import project_root_of
    from memd.snapshot.serve import read_record

    root = project_root_of(cwd)
    record = read_record(root, env)
    if record is not None:
        memory_dir, _, _, profile = record
        return root, memory_dir.rstrip(os.sep), profile
    from memd.config import load_config
    from memd.snapshot.serve import serve

    served = serve(root, None, load_config(env), env, create=False)
    if not served.enabled:
        return None
    location = served.location
    return root, location.memory_dir.rstrip(os.sep), location.profile
