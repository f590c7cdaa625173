"""Memory text and user queries as FTS5 terms, and snippets: pure and linear.

SQLite's `unicode61` tokenizer splits on spaces and punctuation, so a Chinese
or Japanese sentence, written without spaces, would be one token that no
query ever matches. Every run of CJK characters is therefore indexed as its
overlapping character bigrams (the Lucene CJK analyzer's rule), and queries
are cut the same way; `porter` stems the English words. The `trigram`
tokenizer needs no help with CJK but cannot match terms under three
characters (most Chinese words are two); `bench/bench_recall.py` measures
both, and `unicode61` with bigrams recalls better on memd's labelled set.

Queries are split by one pass over their characters (no `re`: compiling the
CJK class costs more than a search); documents by one repeated character
class. Both are linear in the text.
"""

from __future__ import annotations

# Han (with extension A and compatibility ideographs), kana and Hangul
# syllables. CJK punctuation is outside them, so it separates words.
_CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xAC00, 0xD7AF),
)
_CJK_CHARS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES)

TOKENIZERS = {
    "unicode61": "porter unicode61 remove_diacritics 2",
    "trigram": "trigram case_sensitive 0",
}
DEFAULT_TOKENIZER = "unicode61"

# Words a user asks with but that say nothing about the memory wanted.
STOPWORDS = frozenset(
    (
        "a",
        "about",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "us",
        "again",
        "anything",
        "something",
        "tell",
        "know",
        "remember",
        "recall",
        "said",
        "say",
        "whats",
        # Porter stems all four to "us", which every other note contains:
        # the term would rank thousands of rows and tell none apart. MySQL's
        # full-text stopword list drops them too.
        "use",
        "used",
        "uses",
        "using",
    )
)
MAX_QUERY_TERMS = 64


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def index_text(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> str:
    """Return `text` as the tokenizer should see it (unicode61: CJK runs as bigrams)."""
    if tokenizer == "trigram":
        return text
    # `re` only here, on the indexing side: compiling this class costs a
    # query more than the search itself.
    import re

    return re.sub(f"[{_CJK_CHARS}]+", lambda m: " " + _bigrams(m.group()) + " ", text)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _words(text: str) -> list[tuple[bool, str]]:
    """Split into (is_cjk, run) words: CJK runs, and runs of other word characters."""
    words: list[tuple[bool, str]] = []
    run: list[str] = []
    run_cjk = False
    for char in text:
        is_cjk = _is_cjk(char)
        if is_cjk or char.isalnum() or char == "_":
            if run and is_cjk != run_cjk:
                words.append((run_cjk, "".join(run)))
                run = []
            run.append(char)
            run_cjk = is_cjk
        elif run:
            words.append((run_cjk, "".join(run)))
            run = []
    if run:
        words.append((run_cjk, "".join(run)))
    return words


def query_terms(query: str, tokenizer: str = DEFAULT_TOKENIZER) -> tuple[str, ...]:
    """Return the distinct FTS5 terms of a user's query, in order, at most 64."""
    terms: list[str] = []
    for is_cjk, word in _words(query.lower()):
        if is_cjk:
            if tokenizer == "trigram":
                pieces = [word[i : i + 3] for i in range(max(len(word) - 2, 1))]
            else:
                pieces = _bigrams(word).split()
            terms.extend(pieces)
        elif word not in STOPWORDS:
            terms.append(word)
    if tokenizer == "trigram":
        terms = [t for t in terms if len(t) >= 3]
    return tuple(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def match_expression(terms: tuple[str, ...]) -> str | None:
    """Return an FTS5 MATCH string ORing `terms` (each quoted), or None for no terms."""
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def snippet(text: str, terms: tuple[str, ...], *, width: int = 160) -> str:
    """Return about `width` characters of `text` around the first matched term.

    Matched terms are wrapped in `[` `]`; whitespace runs become one space. A
    term matches where a word starts, so a stemmed English term still marks
    its longer forms (`test` in `tests`) but never the inside of another word
    (`use` in `because`); CJK terms, written without spaces, match anywhere.
    """
    flat = " ".join(text.split())
    lowered = flat.lower()
    found = [(i, t) for t in terms if (i := _find_word(lowered, t, 0)) >= 0]
    start = max(min(found)[0] - width // 4, 0) if found else 0
    window = flat[start : start + width]
    lowered_window = window.lower()
    marks: list[tuple[int, int]] = []
    for term in sorted({t for _, t in found}, key=len, reverse=True):
        at = _find_word(lowered_window, term, 0)
        while at >= 0:
            end = at + len(term)
            if all(end <= a or at >= b for a, b in marks):
                marks.append((at, end))
            at = _find_word(lowered_window, term, end)
    pieces, last = [], 0
    for a, b in sorted(marks):
        pieces += [window[last:a], "[", window[a:b], "]"]
        last = b
    pieces.append(window[last:])
    prefix = "…" if start else ""
    suffix = "…" if start + width < len(flat) else ""
    return prefix + "".join(pieces).strip() + suffix


def _find_word(text: str, term: str, start: int) -> int:
    """The first index >= `start` where `term` starts a word of `text`, or -1.

    Each `find` resumes past the last refusal, so this stays linear.
    """
    at = text.find(term, start)
    if term and _is_cjk(term[0]):
        return at
    while at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_"):
        at = text.find(term, at + 1)
    return at


def recency_factor(age_days: float, *, weight: float = 0.1) -> float:
    """Return the multiplier (1 to 1 + `weight`) a memory's freshness adds to its score.

    Small on purpose: it orders near-ties by age, and never lifts a weak
    lexical match over a strong one. A month old halves the bonus.
    """
    return 1.0 + weight / (1.0 + max(age_days, 0.0) / 30.0)
