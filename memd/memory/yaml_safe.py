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
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_KEY_CHARS = frozenset(_LETTERS + "0123456789_-")
_ID_CHARS = frozenset(_LETTERS + "0123456789-")
_DIGITS = frozenset("0123456789")
_MAX_KEY = 128  # YAML refuses a simple key over 1,024 characters
_NESTED = "  "  # the one indent the agent writes under `metadata:`

Plain = dict[str, object]


def plain_mapping(text: str) -> Plain | None:
    """Return the mapping when the frontmatter is plainly what the agent writes.

    That is `key: value` lines, and `key:` opening one level of `  key: value`
    lines (the agent's `metadata:`), where each value is a string, a date
    `YYYY-MM-DD` or a UTC time `YYYY-MM-DDTHH:MM:SSZ` (`plain_value`).

    None (use PyYAML) for anything else: a comment, a blank line, another
    indent, a repeated key, a value that could mean something else in YAML.
    What it accepts, PyYAML loads to the same value (tests/memory/
    test_yaml_safe.py checks this property).
    """
    mapping: Plain = {}
    nested: Plain | None = None  # the open `key:` block
    for line in text.removesuffix("\n").split("\n"):
        inner = line.startswith(_NESTED)
        if inner and nested is None:
            return None
        if not inner:
            if nested is not None and not nested:
                return None  # `key:` with nothing under it is null
            nested = None
            if line.endswith(":") and _is_plain_key(line[:-1], mapping):
                nested = mapping[line[:-1]] = {}
                continue
        key, sep, rest = line.removeprefix(_NESTED).partition(": ")
        target = nested if inner and nested is not None else mapping
        value = plain_value(rest.strip(" "))
        if not sep or value is None or not _is_plain_key(key, target):
            return None
        target[key] = value
    return mapping if nested is None or nested else None


def _is_plain_key(key: str, taken: Plain) -> bool:
    return (
        key[:1].isascii()
        and key[:1].isalpha()
        and len(key) <= _MAX_KEY
        and set(key) <= _KEY_CHARS
        and key not in _NOT_STRINGS
        and key not in taken
    )


def plain_value(value: str) -> object | None:
    """Return the value PyYAML gives a plain scalar, when that is plain; else None.

    Among YAML 1.1's implicit types only bool and null start with a letter, so
    a printable value starting with one, with no `: ` or ` #` in it and not a
    bool or null word, is a string. So is an id of letters, digits and `-`
    starting with a digit that holds a letter, no `0x`/`0b`/`0o`, and no `-`
    at index 4: ints need only digits (or those prefixes), floats a `.`,
    dates `YYYY-`. Dates and UTC times are built as PyYAML builds them.
    """
    if not value.isprintable() or ": " in value or " #" in value:
        return None
    if value.endswith(":"):
        return None
    first = value[:1]
    if first.isalpha():
        return None if value in _NOT_STRINGS else value
    if first not in _DIGITS:
        return None
    if value[4:5] == "-":
        return _timestamp(value)
    if (
        set(value) <= _ID_CHARS
        and not set(value) <= _DIGITS | {"-"}
        and value[:2].lower() not in ("0x", "0b", "0o")
    ):
        return value
    return None


def _timestamp(value: str) -> object | None:
    """`YYYY-MM-DD` as a date, `YYYY-MM-DDTHH:MM:SSZ` as a UTC datetime."""
    digits = value[:4] + value[5:7] + value[8:10]
    if len(value) == 20 and value[10] == "T" and value[13] == ":" == value[16]:
        digits += value[11:13] + value[14:16] + value[17:19]
        if value[19] != "Z":
            return None
    elif len(value) != 10:
        return None
    if value[7] != "-" or not set(digits) <= _DIGITS:
        return None
    import datetime  # only here: most frontmatter has no date

    year, month, day = int(digits[:4]), int(digits[4:6]), int(digits[6:8])
    try:
        if len(digits) == 8:
            return datetime.date(year, month, day)
        hour, minute, second = int(digits[8:10]), int(digits[10:12]), int(digits[12:])
        return datetime.datetime(
            year, month, day, hour, minute, second, tzinfo=datetime.UTC
        )
    except ValueError:  # 2026-02-30: PyYAML refuses it, and says why
        return None


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
