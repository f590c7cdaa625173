"""The agent's provenance keys under `metadata:` (REFERENCE.md, 2.1.332).

`metadata.claudeCodeItem` is an object checked against the agent's schema; a
record without `id`, or one that fails the schema, counts as absent.
`metadata.typedTurn` is a second provenance key with no published schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# field -> allowed values (None: any value of the right kind, see _KINDS)
_ENUMS = MappingProxyType(
    {
        "state": ("legacy", "pending", "acked", "suppressed"),
        "consent": ("on", "off"),
        "src": ("typed", "inferred"),
        "scope": ("person", "repo", "unknown"),
    }
)
_LISTS = ("promoted", "ids")
_REQUIRED = ("id", "state", "consent", "account", "src", "typed", "scope", *_LISTS)


def claude_code_item_problem(value: object) -> str | None:
    """Return why `value` fails the `claudeCodeItem` schema, or None if it passes."""
    if not isinstance(value, Mapping):
        return f"is a {type(value).__name__}, not an object"
    missing = [key for key in _REQUIRED if key not in value]
    if missing:
        return f"lacks {', '.join(missing)}"
    if not isinstance(value["id"], str) or not value["id"]:
        return "`id` is not a non-empty string"
    for key, allowed in _ENUMS.items():
        if value[key] not in allowed:
            return f"`{key}` is {value[key]!r}, not one of {', '.join(allowed)}"
    if value["account"] is not None and not isinstance(value["account"], str):
        return "`account` is neither a string nor null"
    for key in _LISTS:
        if not isinstance(value[key], list):
            return f"`{key}` is not a list"
    return None
