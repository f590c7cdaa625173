"""Two topic files that say the same thing (pure).

Each topic file becomes a bag of words from its description and body: case
folded, stop words dropped, a plural's ``s`` cut, each word weighted by how
rare it is in the directory (IDF). File A *says what B says* when the words
of A, weighted, are found in B to at least `THRESHOLD` (a containment, so a
short memory repeated inside a longer one counts, as a rewrite of the same
size does). Candidates come from an inverted index: files that share no
word cost nothing.

Near misses stay apart: what tells two facts apart is an identifier — a
ticket number, a port, a host, a version, any token with a digit or a dotted
host name. When A names identifiers B lacks (any, for a memory with three or
fewer; more than a quarter of them otherwise, since a long note edited once
still says the same thing), they are different facts.

The warning sits on A and names B; when each holds the other, on the one
later in path order. `THRESHOLD` was chosen on real memory (bench/README.md).
"""

from __future__ import annotations

import math
import re

from memd.diagnostics import Diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memd.memory.memfile import MemoryFile

DUPLICATE = "D004"
THRESHOLD = 0.65
MIN_WORDS = 6  # shorter memories share too few words to judge
MAX_WORDS = 4000  # a file's first words only: bounded work per file
MAX_POSTINGS = 200  # a word in more files than this carries no signal
# A word list reads better as text than as a list literal.
_STOP = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto
    as is are was were be been being it its this that these those there here we
    you they he she i me my our your their them us do does did done not no yes
    so than too very can could should would will shall may might must just also
    only such each any all some more most other same about over under after
    before when where which who whom whose what why how use used using uses via
    per vs etc e g ie""".split()  # noqa: SIM905
)
_HUB_MARKER = "<!-- memd:hub -->"
_TOKEN = re.compile(r"[^\W_][\w.:/-]*")
_PARTS = re.compile(r"[._:/-]+")
_DIGIT = re.compile(r"\d")
_SEPARATOR = re.compile(r"[._:/-]")

Weights = dict[str, tuple[int, float]]  # word -> (count, idf)


def find_duplicates(files: Sequence[MemoryFile]) -> tuple[Diagnostic, ...]:
    """Return a D004 finding for each topic file whose words another one holds."""
    from memd.lint.rules import RULES_BY_KEY

    documents = []
    for memory in files:
        if _HUB_MARKER in memory.body:
            continue  # memd fix's hubs hold index entries, not memories
        words, identifiers = _words(f"{memory.description or ''}\n{memory.body}")
        if len(words) >= MIN_WORDS:
            documents.append((memory.relpath, words, identifiers))
    if len(documents) < 2:
        return ()
    weights = _weights([words for _, words, _ in documents])
    postings: dict[str, list[int]] = {}
    for number, weight in enumerate(weights):
        for word in weight:
            postings.setdefault(word, []).append(number)
    rule = RULES_BY_KEY[DUPLICATE]
    flagged: dict[int, tuple[int, float]] = {}
    for number, weight in enumerate(weights):
        candidates: set[int] = set()
        for word in weight:
            others = postings[word]
            if len(others) <= MAX_POSTINGS:
                candidates.update(others)
        candidates.discard(number)
        best: tuple[int, float] | None = None
        for other in sorted(candidates):
            if _is_near_miss(documents[number][2], documents[other][2]):
                continue  # another ticket, port, host or version: another fact
            score = containment(weight, weights[other])
            if score < THRESHOLD or (best is not None and score <= best[1]):
                continue
            if other < number or containment(weights[other], weight) < THRESHOLD:
                best = (other, score)  # mutual: only the later one is flagged
        if best is not None:
            flagged[number] = best
    return tuple(
        rule.diag(
            documents[number][0],
            f"says what {documents[other][0]} says "
            f"({round(score * 100)}% of its words are there)",
            f"merge it into {documents[other][0]} and remove it, "
            "or make each say what only it knows",
            line=1,
        )
        for number, (other, score) in sorted(flagged.items())
    )


def similarity(first: str, second: str) -> float:
    """How much of `first` `second` holds, weighted as if they were the whole dir."""
    (a, _), (b, _) = _words(first), _words(second)
    wa, wb = _weights([a, b])
    return containment(wa, wb)


def containment(a: Weights, b: Weights) -> float:
    """The share of `a`'s distinct words, weighted by rarity, that `b` holds.

    Distinct, not counted: a description repeats its body's words, and that
    must not make a memory look less contained in one that says it once.
    """
    held = sum(idf for word, (_, idf) in a.items() if word in b)
    whole = sum(idf for _, idf in a.values())
    return held / whole if whole else 0.0


def _is_near_miss(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    missing = len(mine - theirs)
    return bool(missing) and (len(mine) <= 3 or missing * 4 > len(mine))


def _weights(documents: list[list[str]]) -> list[Weights]:
    frequency: dict[str, int] = {}
    for words in documents:
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    total = len(documents)
    result = []
    for words in documents:
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        result.append(
            {w: (c, math.log(1 + total / frequency[w])) for w, c in counts.items()}
        )
    return result


def _words(text: str) -> tuple[list[str], frozenset[str]]:
    """The content words of `text`, and its identifiers (with a digit, dotted hosts).

    One pass of two linear patterns: a token is a letter or digit followed by
    letters, digits and ``._-:/``; its parts between those are the words.
    """
    words: list[str] = []
    identifiers: set[str] = set()
    stems: dict[str, str] = {}
    for match in _TOKEN.finditer(text[: MAX_WORDS * 12].lower()):
        word = match.group().rstrip("._-:/")
        if _DIGIT.search(word) or ("." in word and _is_host(word)):
            identifiers.add(word)
        for part in _PARTS.split(word) if _SEPARATOR.search(word) else (word,):
            if len(part) > 1 and part not in _STOP:
                stem = stems.get(part)
                if stem is None:
                    stem = stems[part] = _stem(part)
                words.append(stem)
        if len(words) >= MAX_WORDS:
            break
    return words, frozenset(identifiers)


def _is_host(word: str) -> bool:
    parts = word.split(".")
    return (
        len(parts) >= 3
        and all(parts)
        and parts[-1].isalpha()
        and 2 <= len(parts[-1]) <= 6
    )


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
