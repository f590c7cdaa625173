"""A random string a regex matches, drawn from the regex's own parse tree.

For testing a rule table: each rule gets a sample made from its own regex,
with characters drawn at random from each class (so a sample has the
entropy of a real token), instead of a hand-written case per rule. It reads
`re`'s parser, so it takes exactly the regex `re` compiles: a rule whose
class does not say what it meant (a nested set) yields a sample of what it
does say, which a test then holds against the rule's intent.
"""

from __future__ import annotations

import random
import re
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

# What a class may draw from: printable ASCII and the blanks a token sits in.
ALPHABET = [chr(n) for n in range(33, 127)] + [" ", "\t", "\n", "\r"]
_BOUNDARY = "\\b"  # a marker, told apart by identity from any drawn string
_CATEGORIES = {
    c.CATEGORY_DIGIT: str.isdigit,
    c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdigit(),
    c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
    c.CATEGORY_SPACE: str.isspace,
    c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
}


def sample(regex: str, rng: random.Random, *, flags: int = 0) -> str:
    """A string `regex` matches (with `re.search`), made with `rng`'s draws."""
    drawn = _emit(_parser.parse(regex, flags), rng, ignore_case=bool(flags & re.I))
    return "".join(_boundaries_kept(drawn))


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _boundaries_kept(drawn: list[str]) -> list[str]:
    """`drawn` with each `\\b` made true: a blank where two word characters meet."""
    out: list[str] = []
    for at, ch in enumerate(drawn):
        if ch is not _BOUNDARY:
            out.append(ch)
            continue
        after = next((d for d in drawn[at + 1 :] if d is not _BOUNDARY), "")
        if out and _is_word(out[-1]) and _is_word(after[:1]):
            out.append(" ")
    return out


def _class_members(items: list[tuple[object, object]]) -> list[str]:
    negate = any(op is c.NEGATE for op, _ in items)

    def member(ch: str) -> bool:
        for op, arg in items:
            if op is c.LITERAL and ord(ch) == arg:
                return True
            if op is c.RANGE and arg[0] <= ord(ch) <= arg[1]:  # type: ignore[index]
                return True
            if op is c.CATEGORY and _CATEGORIES[arg](ch):  # type: ignore[index]
                return True
        return False

    return [ch for ch in ALPHABET if member(ch) != negate and not ch.isspace()] or [
        ch for ch in ALPHABET if member(ch) != negate
    ]


def _emit(tree: object, rng: random.Random, *, ignore_case: bool) -> list[str]:
    out: list[str] = []
    for op, arg in tree:  # type: ignore[attr-defined]
        if op is c.LITERAL:
            out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            out.append(rng.choice([ch for ch in ALPHABET[:94] if ord(ch) != arg]))
        elif op is c.ANY:
            out.append(rng.choice(ALPHABET[:94]))
        elif op is c.IN:
            out.append(rng.choice(_class_members(arg)))
        elif op is c.BRANCH:
            out += _emit(rng.choice(arg[1]), rng, ignore_case=ignore_case)
        elif op is c.SUBPATTERN:
            out += _emit(arg[-1], rng, ignore_case=ignore_case)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, body = arg
            # A token's run is its shortest allowed length; an optional part
            # (min 0) is left out unless it is all there is.
            for _ in range(low if low or high == c.MAXREPEAT else 0):
                out += _emit(body, rng, ignore_case=ignore_case)
        elif op is c.ATOMIC_GROUP:
            out += _emit(arg, rng, ignore_case=ignore_case)
        elif op is c.AT and arg is c.AT_BOUNDARY:
            out.append(_BOUNDARY)
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # anchors and lookarounds: the caller pads with blanks
        else:
            raise ValueError(f"regex_sample: no sample for {op}")
    return out
