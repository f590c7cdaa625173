"""Two topic files that say the same thing (pure).

Each topic file becomes a bag of words from its description and body: case
folded, Markdown and stop words dropped, a plural's ``s`` cut. Two files are
compared when they share a word (an inverted index, so unrelated files cost
nothing) and flagged when the cosine of their TF-IDF vectors reaches
`THRESHOLD` (chosen by measuring real memory, bench/README.md).

Near misses stay apart: when the two name different identifiers — a ticket
number, a port, a host, a version, anything with a digit or a dotted host
name — they are about different things even if every other word is the
same ("the staging db is on port 5432" vs "... port 5433").
The warning sits on the file later in path order and names the other.
"""

from __future__ import annotations

import math

from memd.diagnostics import Diagnostic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from memd.memory.memfile import MemoryFile

DUPLICATE = "D004"
THRESHOLD = 0.8
MIN_WORDS = 6  # shorter memories share too few words to judge
MAX_WORDS = 4000  # a file's first words only: bounded work per file
MAX_POSTINGS = 200  # a word in more files than this carries no signal
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "we",
        "you",
        "they",
        "he",
        "she",
        "i",
        "me",
        "my",
        "our",
        "your",
        "their",
        "them",
        "us",
        "do",
        "does",
        "did",
        "done",
        "not",
        "no",
        "yes",
        "so",
        "than",
        "too",
        "very",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "just",
        "also",
        "only",
        "such",
        "each",
        "any",
        "all",
        "some",
        "more",
        "most",
        "other",
        "same",
        "about",
        "over",
        "under",
        "after",
        "before",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "why",
        "how",
        "use",
        "used",
        "using",
        "uses",
        "via",
        "per",
        "vs",
        "etc",
        "e",
        "g",
        "ie",
    ]
)
_HUB_MARKER = "<!-- memd:hub -->"


def find_duplicates(files: Sequence[MemoryFile]) -> tuple[Diagnostic, ...]:
    """Return a D004 finding for each topic file that says what an earlier one says."""
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
    frequency: dict[str, int] = {}
    for _, words, _ in documents:
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    vectors = [_vector(words, frequency, len(documents)) for _, words, _ in documents]
    postings: dict[str, list[int]] = {}
    for number, vector in enumerate(vectors):
        for word in vector:
            postings.setdefault(word, []).append(number)
    rule = RULES_BY_KEY[DUPLICATE]
    flagged: dict[int, tuple[int, float]] = {}
    for number, vector in enumerate(vectors):
        candidates: set[int] = set()
        for word in vector:
            others = postings[word]
            if len(others) <= MAX_POSTINGS:
                candidates.update(other for other in others if other < number)
        best: tuple[int, float] | None = None
        for other in sorted(candidates):
            mine, theirs = documents[number][2], documents[other][2]
            if mine - theirs and theirs - mine:
                continue  # another ticket, port, host or version: another fact
            score = _cosine(vector, vectors[other])
            if score >= THRESHOLD and (best is None or score > best[1]):
                best = (other, score)
        if best is not None:
            flagged[number] = best
    return tuple(
        rule.diag(
            documents[number][0],
            f"says what {documents[other][0]} says ({round(score * 100)}% the same words)",
            f"merge the two into {documents[other][0]} and remove this one, "
            "or make each say what only it knows",
            line=1,
        )
        for number, (other, score) in sorted(flagged.items())
    )


def similarity(first: str, second: str) -> float:
    """The cosine of two texts' word vectors, weighted as if they were the whole dir."""
    (a, _), (b, _) = _words(first), _words(second)
    frequency: dict[str, int] = {}
    for words in (a, b):
        for word in set(words):
            frequency[word] = frequency.get(word, 0) + 1
    return _cosine(_vector(a, frequency, 2), _vector(b, frequency, 2))


def _words(text: str) -> tuple[list[str], frozenset[str]]:
    """The content words of `text` and its identifiers (tokens with a digit, dotted hosts)."""
    words: list[str] = []
    identifiers: set[str] = set()
    token: list[str] = []
    for char in text[: MAX_WORDS * 12].lower() + " ":
        if char.isalnum() or (char in "._-:/" and token):
            token.append(char)
            continue
        if token:
            word = "".join(token).strip("._-:/")
            token = []
            if not word:
                continue
            if any(c.isdigit() for c in word) or _is_host(word):
                identifiers.add(word)
            for part in _split(word):
                if part not in _STOP and len(part) > 1:
                    words.append(_stem(part))
            if len(words) >= MAX_WORDS:
                break
    return words, frozenset(identifiers)


def _split(word: str) -> Iterable[str]:
    start = 0
    for index, char in enumerate(word):
        if char in "._-:/":
            if index > start:
                yield word[start:index]
            start = index + 1
    if start < len(word):
        yield word[start:]


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


def _vector(
    words: list[str], frequency: dict[str, int], total: int
) -> dict[str, float]:
    counts: dict[str, int] = {}
    for word in words:
        counts[word] = counts.get(word, 0) + 1
    vector = {
        word: (1 + math.log(count)) * math.log(1 + total / frequency[word])
        for word, count in counts.items()
    }
    norm = math.sqrt(sum(value * value for value in vector.values())) or 1.0
    return {word: value / norm for word, value in vector.items()}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(value * b.get(word, 0.0) for word, value in a.items())
