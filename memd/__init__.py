"""memd: keeps an AI coding agent's file-based auto memory healthy.

The public names are re-exported lazily (PEP 562), so `import memd` costs
nothing until a name is used: the warm `memd prompt` path depends on that.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:  # real names for type checkers; at runtime __getattr__ loads them
    from memd.agent.enablement import Enablement, is_auto_memory_enabled
    from memd.agent.gitroot import find_canonical_git_root, find_git_root
    from memd.agent.paths import (
        auto_mem_path,
        daily_log_path,
        sanitize_path,
        validate_memory_path,
    )
    from memd.agent.truncation import (
        EntrypointTruncation,
        format_file_size,
        truncate_entrypoint,
    )
    from memd.api import append_log, lint_path, load_memory_prompt
    from memd.diagnostics import Diagnostic, Severity
    from memd.errors import MemdError

# name -> module that defines it
_EXPORTS = {
    "Diagnostic": "memd.diagnostics",
    "Enablement": "memd.agent.enablement",
    "EntrypointTruncation": "memd.agent.truncation",
    "MemdError": "memd.errors",
    "Severity": "memd.diagnostics",
    "append_log": "memd.api",
    "auto_mem_path": "memd.agent.paths",
    "daily_log_path": "memd.agent.paths",
    "find_canonical_git_root": "memd.agent.gitroot",
    "find_git_root": "memd.agent.gitroot",
    "format_file_size": "memd.agent.truncation",
    "is_auto_memory_enabled": "memd.agent.enablement",
    "lint_path": "memd.api",
    "load_memory_prompt": "memd.api",
    "sanitize_path": "memd.agent.paths",
    "truncate_entrypoint": "memd.agent.truncation",
    "validate_memory_path": "memd.agent.paths",
}

__all__ = [
    "Diagnostic",
    "Enablement",
    "EntrypointTruncation",
    "MemdError",
    "Severity",
    "__version__",
    "append_log",
    "auto_mem_path",
    "daily_log_path",
    "find_canonical_git_root",
    "find_git_root",
    "format_file_size",
    "is_auto_memory_enabled",
    "lint_path",
    "load_memory_prompt",
    "sanitize_path",
    "truncate_entrypoint",
    "validate_memory_path",
]


def __getattr__(name: str) -> object:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'memd' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
