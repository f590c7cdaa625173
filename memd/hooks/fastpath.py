"""The hooks' warm paths: SessionStart from a warm snapshot, and the session record.

PostToolUse's common case (the call touched no memory) is answered by
`memd.hooks.session_state.untouched` alone, before this module loads.

SessionStart served warm reads the resolution record and the snapshot as the
warm `memd prompt` does (`memd.snapshot.serve.serve_warm`), words the
snapshot's diagnostics.json with `memd.hooks.wording`, and records the session.

Each function returns None when it cannot answer; the caller then takes the
long way through `memd.hooks.feedback`.
"""

from __future__ import annotations

import os

from memd.hooks import session_state as ss

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from memd.hooks.wording import Finding

    Output = dict[str, object]


def session_start_warm(
    payload: Mapping[str, object], env: Mapping[str, str]
) -> tuple[Output | None] | None:
    """Return `(output,)` served from a fresh snapshot, or None when not warm."""
    import time

    from memd.claude_code.paths import project_root_of
    from memd.snapshot.serve import EXTRA_GUIDELINES_ENV, read_record
    from memd.snapshot.store import SnapshotReader

    recorded_ns = time.time_ns()
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return None
    found = read_record(project_root_of(cwd), env)
    if found is None:
        return None
    memory_dir, cache_dir, mode, profile = found
    reader = SnapshotReader(cache_dir)
    guidelines = env.get(EXTRA_GUIDELINES_ENV)
    if not reader.is_fresh(
        memory_dir, mode, extra_guidelines=guidelines, profile=profile
    ):
        return None
    findings = reader.read_diagnostic_dicts(memory_dir, mode)
    if findings is None:
        return None
    from memd.hooks.wording import is_error

    output = session_start_output(
        memory_dir,
        findings,
        None,
        reader.prompt_path(memory_dir, mode),
        env=env,
        project_root=project_root_of(cwd),
        cache_dir=cache_dir,
    )
    record_session(
        env,
        payload.get("session_id"),
        memory_dir,
        findings,
        said_findings=[f for f in findings if is_error(f)] if output else (),
        recorded_ns=recorded_ns,
        profile=profile,
    )
    return (output,)


# -- shared with the long way (memd.hooks.feedback) -------------------------------


def hook_output(
    event: str, *, context: str | None = None, reason: str | None = None
) -> Output | None:
    """Return the JSON object a hook prints, or None when there is nothing to say."""
    output: Output = {}
    if reason is not None:
        output.update(decision="block", reason=reason)
    if context is not None:
        output["hookSpecificOutput"] = {
            "hookEventName": event,
            "additionalContext": context,
        }
    return output or None


def record_session(
    env: Mapping[str, str],
    session_id: object,
    memory_dir: str | None,
    findings: Iterable[Finding],
    *,
    said: frozenset[str] = frozenset(),
    said_findings: Iterable[Finding] = (),
    recorded_ns: int | None = None,
    profile: str | None = None,
) -> None:
    """Record the directory's stat, its errors and what was said, for later calls.

    `profile`: the agent release in force, so later calls lint by its rules
    without probing `claude` again.
    """
    path = ss.record_path(session_id, env)
    if path is None:
        return
    import time

    from memd.claude_code.terms import INDEX_NAME
    from memd.hooks.wording import index_measure, is_error

    recorded_ns = time.time_ns() if recorded_ns is None else recorded_ns
    entries = ss.scan(memory_dir) if memory_dir is not None else {}
    index = None
    if memory_dir is not None and INDEX_NAME in entries:
        index = index_measure(ss.read_index_text(memory_dir))
    keys = set(said) | {ss.notice_key(f, entries) for f in said_findings}
    state = ss.SessionState(
        memory_dir=memory_dir,
        recorded_ns=recorded_ns,
        entries=entries,
        index=index,
        errors=frozenset(
            (str(f.get("code")), str(f.get("path"))) for f in findings if is_error(f)
        ),
        said=frozenset(keys),
        profile=profile,
    )
    try:
        ss.write_state(path, state)
    except OSError:  # a read-only state dir costs only the memory of what was said
        return


def session_start_output(
    memory_dir: str,
    findings: Sequence[Finding],
    prompt: str | None,
    prompt_path: str,
    *,
    env: Mapping[str, str] | None = None,
    project_root: str | None = None,
    cache_dir: str | None = None,
) -> Output | None:
    """The SessionStart output for these findings (and the prompt, if injected).

    With `env`, a memory loss not told yet (memd.history.notice) comes first,
    naming the session's project (`project_root`) by its folder. With
    `cache_dir` too, the last truth check's lines follow it
    (memd.truth.notice): how many memories name something gone, and, once
    per project, a memory dir shared with another project or left behind.
    """
    from memd.hooks.wording import (
        findings_context,
        is_session_start_finding,
        session_start_context,
    )

    shown = [f for f in findings if is_session_start_finding(f)]
    text = findings_context(memory_dir, shown) if shown else None
    if env is not None:
        from memd.history.notice import take_sentence

        loss = take_sentence(os.path.dirname(ss.state_dir(env)), memory_dir)
        if loss is not None and project_root is not None:
            loss = _named(loss, memory_dir, project_root, env)
        if loss is not None:
            text = loss if text is None else f"{loss}\n\n{text}"
        if cache_dir is not None:
            from memd.truth.notice import session_sentences

            truth = session_sentences(
                cache_dir,
                ss.state_dir(env),
                memory_dir,
                project_root=project_root,
                home=env.get("HOME", ""),
            )
            if truth:
                lines = "\n".join(truth)
                text = lines if text is None else f"{lines}\n\n{text}"
    context = session_start_context(text, prompt, prompt_path)
    return hook_output("SessionStart", context=context)


def _named(
    sentence: str, memory_dir: str, project_root: str, env: Mapping[str, str]
) -> str:
    """A loss notice said of the session's project, by its folder (memd.projects).

    The git root is looked up only here, when there is a notice to tell.
    """
    from memd.claude_code.gitroot import find_canonical_git_root
    from memd.projects.naming import placed, project_label

    root = find_canonical_git_root(project_root) or project_root
    return placed(sentence, project_label(memory_dir, [root], env.get("HOME", "")))
