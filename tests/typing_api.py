"""Usage code that mypy --strict checks: the public API keeps its types."""

from __future__ import annotations

import datetime

import memd


def use_api(project: str) -> None:
    prompt: str | None = memd.load_memory_prompt(project, mode="standard")
    findings: list[memd.Diagnostic] = memd.lint_path(project)
    errors = [d for d in findings if d.severity is memd.Severity.ERROR]
    log_path: str | None = memd.append_log(project, "note", now=datetime.datetime.now())
    truncated: memd.EntrypointTruncation = memd.truncate_entrypoint(prompt or "")
    size: str = memd.format_file_size(truncated.byte_count)
    enabled: bool = memd.is_auto_memory_enabled().enabled
    root: str | None = memd.find_canonical_git_root(project)
    print(errors, log_path, size, enabled, root, memd.sanitize_path(project))
