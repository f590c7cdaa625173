"""argparse's parser, telling a person what they probably meant.

`memd stauts` gets "did you mean `status`?" and `memd lint --strcit` gets
"did you mean `--strict`?": the names a parser knows, weighed by git's
edit distance for mistyped commands (help.c): two letters swapped are
free, a letter added costs 1, one changed 2, one dropped 3, so a slip of
the fingers beats a shorter word. (argparse gains `suggest_on_error` only
in Python 3.14.)
"""

from __future__ import annotations

import argparse
import re

SWAP, CHANGE, ADD, DROP = 0, 2, 1, 3
# git's SIMILARITY_FLOOR: a name further than this is no suggestion.
MOST_DISTANT = 6
LONGEST_WORD = 64  # argv words only; the table is len(a) x len(b)

_INVALID_CHOICE = re.compile(
    r"argument ([^:]{1,100}): invalid choice: '([^']{0,200})' "
    r"\(choose from (.{0,2000})\)"
)
_UNRECOGNIZED = "unrecognized arguments: "


def distance(typed: str, name: str) -> int:
    """The cost of turning `typed` into `name`, in git's weights."""
    before: list[int] = []
    row = [j * ADD for j in range(len(name) + 1)]
    for i in range(1, len(typed) + 1):
        earlier, before = before, row
        row = [i * DROP] + [0] * len(name)
        for j in range(1, len(name) + 1):
            cost = before[j - 1] + (CHANGE if typed[i - 1] != name[j - 1] else 0)
            cost = min(cost, before[j] + DROP, row[j - 1] + ADD)
            swapped = (
                i > 1
                and j > 1
                and typed[i - 2] == name[j - 1]
                and typed[i - 1] == name[j - 2]
            )
            if swapped and typed[i - 1] != name[j - 1]:
                cost = min(cost, earlier[j - 2] + SWAP)
            row[j] = cost
    return row[-1]


def did_you_mean(word: str, known: list[str]) -> str:
    """ " (did you mean `x`?)" for the closest of `known`, or ""."""
    if not word or len(word) > LONGEST_WORD or not known:
        return ""
    best = min(known, key=lambda name: (distance(word, name), name))
    return f" (did you mean `{best}`?)" if distance(word, best) <= MOST_DISTANT else ""


class SuggestingParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors name the closest command or option."""

    def error(self, message: str) -> None:  # type: ignore[override]
        choice = _INVALID_CHOICE.match(message)
        if choice:
            argument, word, listed = choice.groups()
            choices = re.findall(r"'([^']*)'", listed)
            if argument == "COMMAND":
                message = f"no command `{word}`{did_you_mean(word, choices)}"
                message += "; `memd --help` lists them"
            else:
                who = argument if argument.startswith("-") else self.prog
                listed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
                message = (
                    f"`{who}` takes {listed}, not `{word}`{did_you_mean(word, choices)}"
                )
        elif message.startswith(_UNRECOGNIZED):
            words = message[len(_UNRECOGNIZED) :].split()
            known = [o for o in self._option_string_actions if o.startswith("--")]
            message = "unknown option " + ", ".join(
                f"`{w}`{did_you_mean(w.partition('=')[0], known)}"
                if w.startswith("-")
                else f"`{w}`"
                for w in words
            )
        self.exit(2, f"{self.prog}: {message}\n")
