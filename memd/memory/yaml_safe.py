"""Load frontmatter YAML safely: text in, a value or a `YamlProblem` out, never raising.

Hostile input (SPEC §11): the loader is PyYAML's safe loader (the C one when
available, through python-frontmatter's `YAMLHandler`); a document nesting too
deeply to parse is refused, and so is one whose aliases expand past a node
budget (a "billion laughs" bomb) or refer to themselves. The 64 KiB cap is
applied before this, where `memd.memory.memfile` finds the frontmatter's end.

PyYAML and python-frontmatter are imported inside `load_yaml` only: the warm
path never parses YAML. Nor does the commonest frontmatter: lines of
`key: value` whose values are plainly strings (`plain_mapping`) give what
PyYAML gives without loading it (its import alone costs 8 ms of a hook).
"""

from __future__ import annotations

from dataclasses import dataclass

# Nodes a walk of the loaded frontmatter may visit; a real one has a few dozen.
MAX_EXPANDED_NODES = 10_000


@dataclass(frozen=True, slots=True)
class YamlProblem:
    """Why YAML text was refused; `line` is 1-based within the YAML text."""

    message: str
    line: int = 1
    column: int | None = None


# Plain scalars YAML 1.1 resolves to a bool or null, not a string (PyYAML's
# resolver: yes/no/true/false/on/off and null, in three casings each).
_NOT_STRINGS = frozenset(
    casing
    for word in ("yes", "no", "true", "false", "on", "off", "null")
    for casing in (word, word.capitalize(), word.upper())
)
_KEY_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)
_MAX_KEY = 128  # YAML refuses a simple key over 1,024 characters


def plain_mapping(text: str) -> dict[str, str] | None:
    """Return the mapping when every line is `key: value` with a plain string value.

    None (use PyYAML) for anything else: an indent, a comment, a blank line, a
    value not starting with a letter (a quote, an indicator, a number or a
    date), `: ` or ` #` inside a value, a value YAML reads as bool or null, a
    repeated key, a character `str.isprintable` refuses (tabs, CR, NEL, U+2028,
    a BOM). Only bool and null words start with a letter among the implicit
    types, so what it accepts PyYAML loads to the same dict of strings
    (tests/memory/test_yaml_safe.py checks this property).
    """
    mapping: dict[str, str] = {}
    for line in text.removesuffix("\n").split("\n"):
        key, sep, rest = line.partition(": ")
        value = rest.strip(" ")
        if not (
            sep
            and key[:1].isascii()
            and key[:1].isalpha()
            and len(key) <= _MAX_KEY
            and set(key) <= _KEY_CHARS
            and value[:1].isalpha()
            and ": " not in value
            and " #" not in value
            and not value.endswith(":")
            and value.isprintable()
            and key not in _NOT_STRINGS
            and value not in _NOT_STRINGS
            and key not in mapping
        ):
            return None
        mapping[key] = value
    return mapping


def load_yaml(text: str) -> tuple[object, YamlProblem | None]:
    """Return (value, None) for safe YAML, (None, problem) otherwise; blank is None."""
    plain = plain_mapping(text)
    if plain is not None:
        return plain, None
    import yaml  # heavy: only the cold path parses YAML
    from frontmatter.default_handlers import YAMLHandler

    if not text.strip():
        return None, None
    try:
        loaded = YAMLHandler().load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "invalid YAML"
        line, column = 1, None
        if mark is not None:
            # YAML also breaks lines at CR, NEL and U+2028/9; files break at LF only.
            index = min(mark.index, len(text))
            line = 1 + text.count("\n", 0, index)
            column = index - text.rfind("\n", 0, index)
        return None, YamlProblem(f"frontmatter is not valid YAML: {what}", line, column)
    except (yaml.YAMLError, ValueError, OverflowError, TypeError) as exc:
        # PyYAML's constructors raise ValueError for dates such as 2026-02-30.
        # A ReaderError's str() has a second `in "<unicode string>"` line: drop it.
        what = str(exc).split("\n", 1)[0]
        return None, YamlProblem(f"frontmatter is not valid YAML: {what}")
    except RecursionError:
        return None, YamlProblem("frontmatter nests too deeply to parse")
    if "&" in text and "*" in text and not is_within_budget(loaded):
        return None, YamlProblem(
            "frontmatter YAML aliases expand too far or loop; it was not used"
        )
    return loaded, None


def is_within_budget(value: object, budget: int = MAX_EXPANDED_NODES) -> bool:
    """Return False when `value`, walked as a tree, is too big or has a cycle."""
    stack: list[tuple[object, frozenset[int]]] = [(value, frozenset())]
    while stack:
        node, ancestors = stack.pop()
        budget -= 1
        if budget < 0:
            return False
        if isinstance(node, dict):
            children: list[object] = [*node.keys(), *node.values()]
        elif isinstance(node, list | tuple | set | frozenset):
            children = list(node)
        else:
            continue
        if id(node) in ancestors:
            return False
        inner = ancestors | {id(node)}
        stack.extend((child, inner) for child in children)
    return True


def dump_yaml(mapping: dict[str, object]) -> str:
    """Return `mapping` as block-style YAML in the given key order, Unicode kept."""
    import yaml

    dumped: str = yaml.safe_dump(
        mapping,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,  # never fold a long description onto a second line
    )
    return dumped
