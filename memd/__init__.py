"""memd: keeps an AI coding agent's file-based auto memory healthy.

The public names are re-exported lazily (PEP 562), so `import memd` costs
nothing until a name is used: the warm `memd prompt` path depends on that.
`_EXPORTS` is the one list of them; `__all__` and `dir(memd)` are read from
it, and tests/test_public_api.py checks that the type checkers' imports below
name the same things. What is public and why: docs/architecture.md, "The
public API".
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # real names for type checkers; at runtime __getattr__ loads them
    from memd._version import __version__ as __version__
    from memd.api import append_log as append_log
    from memd.api import lint_path as lint_path
    from memd.api import load_memory_prompt as load_memory_prompt
    from memd.claude_code.enablement import Enablement as Enablement
    from memd.claude_code.enablement import (
        is_auto_memory_enabled as is_auto_memory_enabled,
    )
    from memd.claude_code.gitroot import (
        find_canonical_git_root as find_canonical_git_root,
    )
    from memd.claude_code.gitroot import find_git_root as find_git_root
    from memd.claude_code.paths import auto_mem_path as auto_mem_path
    from memd.claude_code.paths import daily_log_path as daily_log_path
    from memd.claude_code.paths import sanitize_path as sanitize_path
    from memd.claude_code.paths import validate_memory_path as validate_memory_path
    from memd.claude_code.truncation import EntrypointTruncation as EntrypointTruncation
    from memd.claude_code.truncation import format_file_size as format_file_size
    from memd.claude_code.truncation import truncate_entrypoint as truncate_entrypoint
    from memd.diagnostics import Diagnostic as Diagnostic
    from memd.diagnostics import Severity as Severity
    from memd.errors import MemdError as MemdError

# public name -> the module that defines it
_EXPORTS = {
    # SPEC §1: the agent's behaviour, computed exactly as the reference does
    "Enablement": "memd.claude_code.enablement",
    "EntrypointTruncation": "memd.claude_code.truncation",
    "auto_mem_path": "memd.claude_code.paths",
    "daily_log_path": "memd.claude_code.paths",
    "find_canonical_git_root": "memd.claude_code.gitroot",
    "find_git_root": "memd.claude_code.gitroot",
    "format_file_size": "memd.claude_code.truncation",
    "is_auto_memory_enabled": "memd.claude_code.enablement",
    "sanitize_path": "memd.claude_code.paths",
    "truncate_entrypoint": "memd.claude_code.truncation",
    "validate_memory_path": "memd.claude_code.paths",
    # the library API (memd/api.py) and what it returns or raises
    "Diagnostic": "memd.diagnostics",
    "MemdError": "memd.errors",
    "Severity": "memd.diagnostics",
    "append_log": "memd.api",
    "lint_path": "memd.api",
    "load_memory_prompt": "memd.api",
    "__version__": "memd._version",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'memd' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
