"""Claude Code hooks: tell the agent what its own tool call did to its memory.

Payloads follow Claude Code's hook input schema: every event carries
`session_id`, `transcript_path`, `cwd` and `hook_event_name`; SessionStart adds
`source` (startup, resume, clear, compact, fork); PostToolUse adds `tool_name`,
`tool_input` and `tool_response` (for Write and Edit it holds `originalFile`,
the file before the call). Outputs are the JSON Claude Code reads from a hook's
stdout on exit 0:

- `{"decision": "block", "reason": ...}` (PostToolUse) shows the user a
  blocking error and feeds `reason` to the model after the tool result. memd
  blocks only for errors in files this call changed, for index errors this
  call created or made worse by touching MEMORY.md, and for a likely secret
  (`memd.lint.secrets`) in a file this call changed, logs included: the model
  is told the file, the line and the rule, and to remove it.
- `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`
  adds quiet context: the findings at session start, and a problem that was
  already there, said once per session (remembered in the session record,
  keyed by code, file and that file's stat).

What a call changed comes from `memd.hooks.session_state`: the memory
directory's stat now against the stat recorded for the session. The command,
not this module, turns any failure into "print nothing, exit 0".
"""

from __future__ import annotations

import os
import time

from memd.claude_code.terms import INDEX_NAME
from memd.hooks import session_state as ss
from memd.hooks.fastpath import hook_output, record_session, session_start_output
from memd.hooks.wording import (
    INDEX_MEASURES,
    block_reason,
    index_measure,
    is_error,
    notice_context,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from memd.config import Config
    from memd.hooks.wording import Finding

    Output = dict[str, object]


# -- pure decisions -------------------------------------------------------------


def caused_by_call(
    finding: Finding,
    *,
    changed: frozenset[str],
    maybe_changed: frozenset[str],
    errors_before: frozenset[tuple[str, str]] | None,
    index_before: tuple[int, int] | None,
    index_after: tuple[int, int] | None,
) -> bool:
    """Whether this tool call caused an error finding (else it was already there).

    `errors_before` is None when nothing was recorded for the session, and then
    only what the call demonstrably changed counts as caused.
    """
    code, path = str(finding.get("code")), str(finding.get("path"))
    is_new = errors_before is not None and (code, path) not in errors_before
    if code in INDEX_MEASURES:
        if (
            INDEX_NAME in changed
            and index_before is not None
            and index_after is not None
        ):
            measure = INDEX_MEASURES[code]
            return is_new or index_after[measure] > index_before[measure]
        return INDEX_NAME in changed or (INDEX_NAME in maybe_changed and is_new)
    return path in changed or (path in maybe_changed and is_new)


def judge(
    findings: Iterable[Finding],
    *,
    changed: frozenset[str],
    maybe_changed: frozenset[str],
    state: ss.SessionState | None,
    index_before: tuple[int, int] | None,
    index_after: tuple[int, int] | None,
    entries: ss.Entries,
) -> tuple[list[Finding], list[Finding], frozenset[str]]:
    """Split error findings into (caused, not yet said) and return the said keys."""
    said = set(state.said) if state is not None else set()
    caused: list[Finding] = []
    to_say: list[Finding] = []
    for finding in findings:
        if not is_error(finding):
            continue
        if caused_by_call(
            finding,
            changed=changed,
            maybe_changed=maybe_changed,
            errors_before=state.errors if state is not None else None,
            index_before=index_before,
            index_after=index_after,
        ):
            caused.append(finding)
            # Blocked once: the same unchanged file is not raised again as a notice.
            said.add(ss.notice_key(finding, entries))
            continue
        key = ss.notice_key(finding, entries)
        if key not in said:
            said.add(key)
            to_say.append(finding)
    return caused, to_say, frozenset(said)


# -- SessionStart ------------------------------------------------------------------


def session_start(
    payload: Mapping[str, object],
    config: Config,
    env: Mapping[str, str],
    *,
    inject_prompt: bool = False,
) -> Output | None:
    """Handle SessionStart, the long way: serve (and render) the snapshot."""
    from memd.snapshot.serve import serve

    recorded_ns = time.time_ns()
    cwd = payload.get("cwd")
    session_id = payload.get("session_id")
    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return None
    mode = "kairos" if config.kairos else "team" if config.team_memory else "standard"
    served = serve(cwd, mode, config, env)
    if not served.enabled:
        record_session(env, session_id, None, ())
        return None
    memory_dir = served.location.memory_dir
    findings = [d.to_dict() for d in served.diagnostics()]
    output = session_start_output(
        memory_dir,
        findings,
        served.text if inject_prompt else None,
        served.prompt_path,
        env=env,
        project_root=served.location.project_root,
        cache_dir=config.cache_dir,
    )
    record_session(
        env,
        session_id,
        memory_dir,
        findings,
        said_findings=[f for f in findings if is_error(f)] if output else (),
        recorded_ns=recorded_ns,
        profile=served.location.profile,
    )
    return output


# -- PostToolUse -------------------------------------------------------------------


def post_tool_use(
    payload: Mapping[str, object], env: Mapping[str, str]
) -> Output | None:
    """Handle PostToolUse: block for what this call broke; say old problems once.

    memd's config is read only when this call needs it: to resolve a session
    nothing was recorded for, or to lint when no daemon lints for it.
    """
    config = _config_loader(env)
    recorded_ns = time.time_ns()
    session_id = payload.get("session_id")
    record = ss.record_path(session_id, env)
    state = ss.read_state(record) if record is not None else None
    if state is not None:
        memory_dir, profile = state.memory_dir, state.profile
    else:
        memory_dir, profile = _session_memory_dir(payload.get("cwd"), config(), env)
    reasons: list[str] = []
    notices: list[str] = []
    if memory_dir is not None:
        reason, notice = _judge_session_dir(
            payload, config, env, memory_dir, state, recorded_ns, profile
        )
        reasons += [reason] if reason else []
        notices += [notice] if notice else []
    elif record is not None and state is None:
        record_session(env, session_id, None, (), recorded_ns=recorded_ns)
    for other_dir, relpaths in _other_memory_dirs(payload, memory_dir):
        findings = _lint(other_dir, profile, env, config)
        caused = [f for f in findings if is_error(f) and f.get("path") in relpaths]
        if caused:
            reasons.append(block_reason(other_dir, caused))
        secrets = secrets_written(other_dir, relpaths, config)
        reasons += [secrets] if secrets else []
    return hook_output(
        "PostToolUse",
        reason="\n\n".join(reasons) if reasons else None,
        context="\n\n".join(notices) if notices else None,
    )


def _config_loader(env: Mapping[str, str]) -> Callable[[], Config]:
    """Load memd's config on the first call, once."""
    loaded: list[Config] = []

    def config() -> Config:
        if not loaded:
            from memd.config import load_config

            loaded.append(load_config(env))
        return loaded[0]

    return config


def _judge_session_dir(
    payload: Mapping[str, object],
    config: Callable[[], Config],
    env: Mapping[str, str],
    memory_dir: str,
    state: ss.SessionState | None,
    recorded_ns: int,
    profile: str | None,
) -> tuple[str | None, str | None]:
    entries = ss.scan(memory_dir)
    if state is not None:
        changed, maybe = ss.changes(state.entries, entries, state.recorded_ns)
    else:  # nothing recorded: only the file the tool names is known to have changed
        changed, maybe = frozenset(_relpaths_in(payload, memory_dir)), frozenset()
    if state is not None and not changed and not maybe:
        return None, None
    secrets = secrets_written(memory_dir, changed, config)
    findings = _lint(memory_dir, profile, env, config)
    index_after = index_measure(ss.read_index_text(memory_dir))
    index_before = _index_before(payload, memory_dir, state)
    caused, to_say, said = judge(
        findings,
        changed=changed,
        maybe_changed=maybe,
        state=state,
        index_before=index_before,
        index_after=index_after,
        entries=entries,
    )
    record_session(
        env,
        payload.get("session_id"),
        memory_dir,
        findings,
        said=said,
        recorded_ns=recorded_ns,
        profile=profile,
    )
    reasons = [block_reason(memory_dir, caused)] if caused else []
    return (
        "\n\n".join([*reasons, *([secrets] if secrets else [])]) or None,
        notice_context(memory_dir, to_say) if to_say else None,
    )


MAX_SECRETS_SAID = 10


def secrets_written(
    memory_dir: str, relpaths: Iterable[str], config: Callable[[], Config]
) -> str | None:
    """The reason to feed back when this call wrote a likely secret, else None.

    Each changed file is scanned whole, as sync would scan it before a push
    (`find_secrets_in_bytes`), minus the fingerprints in `[sync] allow`;
    config is loaded only when something was found.
    """
    from memd.fsread import read_bytes
    from memd.lint.secrets import find_secrets_in_bytes

    found = []
    for relpath in sorted(relpaths):
        try:
            data = read_bytes(os.path.join(memory_dir, relpath))
        except OSError:
            continue  # gone or not a regular file: nothing of it is loaded
        found += [(relpath, f) for f in find_secrets_in_bytes(data)]
    if not found:
        return None
    allow = frozenset(config().sync_allow)
    found = [(relpath, f) for relpath, f in found if f.fingerprint not in allow]
    if not found:
        return None
    lines = [
        f"- `{relpath}` line {f.line}, column {f.column}: {f.message()}"
        for relpath, f in found[:MAX_SECRETS_SAID]
    ]
    if len(found) > MAX_SECRETS_SAID:
        lines.append(f"- … and {len(found) - MAX_SECRETS_SAID} more")
    return (
        f"Your last tool call wrote what looks like a secret into the auto memory "
        f"at `{memory_dir}`. Memory is loaded into every future session and synced, "
        "so remove it from the file now (and tell the user to rotate it if it is "
        "real); if it is not a secret, its fingerprint goes into `[sync] allow` in "
        "memd's config.toml:\n" + "\n".join(lines)
    )


def _index_before(
    payload: Mapping[str, object], memory_dir: str, state: ss.SessionState | None
) -> tuple[int, int] | None:
    """MEMORY.md's measure before the call: `originalFile` if the tool gave it."""
    response = payload.get("tool_response")
    index_path = os.path.join(memory_dir, INDEX_NAME)
    if isinstance(response, dict) and index_path in ss.named_paths(payload):
        original = response.get("originalFile")
        if isinstance(original, str):
            return index_measure(original)
        if response.get("type") == "create":
            return (0, 0)
    return state.index if state is not None else None


def _relpaths_in(payload: Mapping[str, object], memory_dir: str) -> set[str]:
    root = memory_dir.rstrip(os.sep) + os.sep
    return {
        p[len(root) :].replace(os.sep, "/")
        for p in ss.named_paths(payload)
        if p.startswith(root)
    }


def _other_memory_dirs(
    payload: Mapping[str, object], session_dir: str | None
) -> list[tuple[str, set[str]]]:
    """Memory directories other than the session's that the tool names a file in."""
    named = [
        p
        for p in ss.named_paths(payload)
        if session_dir is None or not ss.within(p, (session_dir,))
    ]
    if not named:
        return []
    from memd.lint.targets import discover_memory_dirs

    found = []
    for directory in discover_memory_dirs():
        relpaths = _relpaths_in(payload, directory)
        if relpaths:
            found.append((directory + os.sep, relpaths))
    return found


def _session_memory_dir(
    cwd: object, config: Config, env: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """The session project's memory dir (if memory is on) and the release in force."""
    from memd.claude_code.choice import resolve_in_force

    if not isinstance(cwd, str) or not os.path.isdir(cwd):
        return None, None
    location = resolve_in_force(cwd, config, env)
    memory_dir = location.memory_dir if location.enablement.enabled else None
    return memory_dir, location.profile


def _lint(
    memory_dir: str,
    profile: str | None,
    env: Mapping[str, str],
    config: Callable[[], Config],
) -> list[dict[str, object]]:
    """Lint one memory directory with memd's severities, by `profile`'s rules.

    The running daemon lints it when it can (it has the lint engine loaded);
    else this process does, with the same result.
    """
    from memd.hook_lint import lint_by_daemon

    found = lint_by_daemon(memory_dir, profile, env)
    if found is not None:
        return found
    from memd.lint.targets import lint_findings

    return lint_findings(memory_dir, config(), profile)
