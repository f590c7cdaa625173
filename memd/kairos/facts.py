"""Facts from daily-log entries: one fact once, the newest value current (pure).

The rule, in the order it is applied (docs/dream.md, "The similarity rule"):

1. **Normalise.** Case-folded; a leading `HH:MM`, `[type]` and `#topic` tags
   dropped; every run of punctuation and whitespace becomes one space.
   Relative dates are resolved from the log's own date first
   (`resolve_relative_dates`), so "today" on two days is two dates.
2. **Tokens.** Words and numbers (`60s` is `60` and `s`); stop words and the
   verbs of an update ("raised", "now", "changed to") are left out; a token
   with a digit is masked to `#`, so "30 s" and "60 s" have one token set.
3. **Same fact**, within one topic file:
   - equal normalised text: a repeat;
   - the same *subject*: a text of the form `<subject> is|are|was|were|uses
     <value>` (the copula within the first 8 words, a subject of 1-6 tokens)
     restates the fact with that subject;
   - near-duplicates: token-set Jaccard >= `SIMILARITY` (0.75) with at least
     `MIN_TOKENS` tokens each. Candidates come from an inverted index over
     each fact's *prefix* tokens (prefix filtering: with tokens in a fixed
     hash order, two sets with Jaccard >= t share a token among the first
     `n - ceil(t n) + 1` of each), so a month is never compared pair by pair.
4. **Same value or a new one.** The value is the subject's predicate (its
   tokens, numbers unmasked) or, for a near-duplicate, its numbers in order.
   The same value merges (count, last seen); a different one from a day on or
   after the fact's last sighting supersedes it, and the old text becomes
   history ("previously: ..., until YYYY-MM-DD"). An older different value is
   filed as history only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from dataclasses import dataclass, field

SIMILARITY = 0.75
MIN_TOKENS = 2
HISTORY_KEPT = 5  # older values past this many are left to the daily logs
_MAX_SUBJECT_TOKENS = 6
_COPULA_WITHIN = 8

_WORD = re.compile(r"[0-9]+(?:[.:][0-9]+)*|[^\W\d_]+", re.UNICODE)
_LEADING_TIME = re.compile(r"^\s*\d{1,2}:\d{2}\s+")
_TAG = re.compile(
    r"\[(?:user|feedback|project|reference)\]|(?<![\w#&/])#[A-Za-z][\w-]{0,63}", re.I
)
# copula -> its class: "was raised to" restates "is", "uses" is another relation
_COPULAS = {
    "is": "is",
    "are": "is",
    "was": "is",
    "were": "is",
    "equals": "is",
    "uses": "uses",
    "use": "uses",
    "runs": "runs",
}
_STOP_WORDS = (
    "a an the of to in on at for and or but is are was were be been being it its this "
    "that these those now then still also just so as by with from into up down set "
    "raised lowered increased decreased bumped changed moved upgraded downgraded "
    "switched updated went"
)
_STOP = frozenset(_STOP_WORDS.split())


def normalise(text: str) -> str:
    """Return the comparison form of an entry: folded, untagged, unpunctuated."""
    text = _LEADING_TIME.sub("", text)
    text = _TAG.sub(" ", text)
    return " ".join(_WORD.findall(text.casefold()))


def _mask(token: str) -> str:
    return "#" if any(c.isdigit() for c in token) else token


def _content(words: list[str]) -> list[str]:
    return [w for w in words if w not in _STOP]


@dataclass(frozen=True, slots=True)
class Shape:
    """What the matching rule looks at in one text."""

    norm: str
    tokens: frozenset[str]  # masked content tokens
    subject: str | None  # normalised subject before the copula, if any
    value: tuple[str, ...]  # the predicate's content words, or the numbers


def shape(text: str) -> Shape:
    """Return the normalised text, masked tokens, subject and value of `text`."""
    norm = normalise(text)
    words = norm.split()
    tokens = frozenset(_mask(w) for w in _content(words))
    subject = None
    value = tuple(w for w in words if _mask(w) == "#")
    for i, word in enumerate(words[:_COPULA_WITHIN]):
        if word in _COPULAS and i > 0:
            head = _content(words[:i])
            if 1 <= len(head) <= _MAX_SUBJECT_TOKENS:
                subject = f"{' '.join(head)} {_COPULAS[word]}"
                value = tuple(_content(words[i + 1 :]))
            break
    return Shape(norm, tokens, subject, value)


@dataclass(slots=True)
class Past:
    """A value a fact no longer has."""

    text: str
    first: str  # YYYY-MM-DD
    until: str  # the day a newer value replaced it


@dataclass(slots=True)
class Fact:
    """One fact of a topic: its current wording, sightings and older values."""

    text: str
    first: str
    last: str
    seen: int = 1
    history: list[Past] = field(default_factory=list)


@dataclass(slots=True)
class Changes:
    """What filing entries did: counts for the dream's summary."""

    added: int = 0
    merged: int = 0
    superseded: int = 0


def _order(token: str) -> bytes:
    return hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()


def _prefix(tokens: frozenset[str]) -> list[str]:
    ordered = sorted(tokens, key=_order)
    keep = len(ordered) - math.ceil(SIMILARITY * len(ordered)) + 1
    return ordered[:keep]


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Return |a & b| / |a | b| (1.0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 1.0


class FactBook:
    """The facts of one topic file, indexed so filing an entry is near constant."""

    def __init__(self, facts: list[Fact] | None = None) -> None:
        self.facts: list[Fact] = []
        self._shapes: list[Shape] = []
        self._by_norm: dict[str, int] = {}
        self._by_subject: dict[str, int] = {}
        self._by_prefix: dict[str, list[int]] = {}
        for fact in facts or ():
            self.load(fact)

    def load(self, fact: Fact) -> None:
        """Add a fact read back from a file; a second copy (a crash) merges."""
        found = self.find(shape(fact.text))
        if found is None:
            self._add(fact)
            return
        kept = self.facts[found]
        if shape(kept.text).norm == shape(fact.text).norm:
            kept.first = min(kept.first, fact.first)
            kept.last = max(kept.last, fact.last)
            kept.seen = max(kept.seen, fact.seen)
            known = {(p.text, p.until) for p in kept.history}
            kept.history += [p for p in fact.history if (p.text, p.until) not in known]
            kept.history.sort(key=lambda p: p.until, reverse=True)
        else:
            self._add(fact)  # the user's own two wordings stay two facts

    def _add(self, fact: Fact) -> int:
        index = len(self.facts)
        self.facts.append(fact)
        self._index(index, shape(fact.text))
        self._shapes.append(shape(fact.text))
        return index

    def _index(self, index: int, s: Shape) -> None:
        self._by_norm.setdefault(s.norm, index)
        if s.subject is not None:
            self._by_subject.setdefault(s.subject, index)
        if len(s.tokens) >= MIN_TOKENS:
            for token in _prefix(s.tokens):
                self._by_prefix.setdefault(token, []).append(index)

    def _reindex(self, index: int, old: Shape) -> None:
        if self._by_norm.get(old.norm) == index:
            del self._by_norm[old.norm]
        new = shape(self.facts[index].text)
        self._shapes[index] = new
        self._index(index, new)

    def find(self, s: Shape) -> int | None:
        """Return the index of the fact `s` restates, or None for a new fact."""
        if s.norm in self._by_norm:
            return self._by_norm[s.norm]
        if s.subject is not None and s.subject in self._by_subject:
            return self._by_subject[s.subject]
        if len(s.tokens) < MIN_TOKENS:
            return None
        best: tuple[float, int] | None = None
        for token in _prefix(s.tokens):
            for index in self._by_prefix.get(token, ()):
                score = jaccard(s.tokens, self._shapes[index].tokens)
                if score >= SIMILARITY and (best is None or score > best[0]):
                    best = (score, index)
        return best[1] if best else None

    def file(self, text: str, day: str, changes: Changes) -> None:
        """File one entry's text seen on `day` (entries come oldest first)."""
        s = shape(text)
        if not s.norm:
            return
        index = self.find(s)
        if index is None:
            self._add(Fact(text=text, first=day, last=day))
            changes.added += 1
            return
        fact = self.facts[index]
        old = self._shapes[index]
        if s.norm == old.norm or s.value == old.value:
            fact.seen += 1
            fact.first = min(fact.first, day)
            fact.last = max(fact.last, day)
            changes.merged += 1
            return
        if day < fact.last:  # an older value logged late: history only
            if all(shape(p.text).norm != s.norm for p in fact.history):
                fact.history.append(Past(text, day, fact.first))
                fact.history.sort(key=lambda p: p.until, reverse=True)
                del fact.history[HISTORY_KEPT:]
            changes.merged += 1
            return
        fact.history = [p for p in fact.history if shape(p.text).norm != s.norm]
        fact.history.insert(0, Past(fact.text, fact.first, day))
        del fact.history[HISTORY_KEPT:]
        fact.text, fact.first, fact.last, fact.seen = text, day, day, 1
        self._reindex(index, old)
        changes.superseded += 1


# --- relative dates ---------------------------------------------------------

_WEEKDAYS = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7}
_RELATIVE = re.compile(
    r"\b(?:(?P<simple>today|tonight|this morning|this afternoon|this evening|"
    r"yesterday|tomorrow)"
    r"|(?P<which>last|next|this|coming|on)\s+(?P<day>" + "|".join(_WEEKDAYS) + r"|week)"
    r"|in\s+(?P<ahead>\d{1,3})\s+(?P<ahead_unit>days?|weeks?)"
    r"|(?P<ago>\d{1,3})\s+(?P<ago_unit>days?|weeks?)\s+ago)\b",
    re.IGNORECASE,
)


def _week_of(day: dt.date) -> str:
    return f"the week of {day - dt.timedelta(days=day.weekday())}"


def _resolve(match: re.Match[str], today: dt.date) -> str:
    simple = match.group("simple")
    if simple:
        word = simple.lower()
        shift = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
        when = str(today + dt.timedelta(days=shift))
        return (
            when if word in ("today", "yesterday", "tomorrow") else f"{word} ({when})"
        )
    if match.group("ahead"):
        days = int(match.group("ahead")) * _UNITS[match.group("ahead_unit").lower()]
        return f"on {today + dt.timedelta(days=days)}"
    if match.group("ago"):
        days = int(match.group("ago")) * _UNITS[match.group("ago_unit").lower()]
        return f"on {today - dt.timedelta(days=days)}"
    which, day = match.group("which").lower(), match.group("day").lower()
    if day == "week":
        if which == "on":
            return match.group(0)
        shift = {"last": -7, "next": 7, "coming": 7}.get(which, 0)
        return _week_of(today + dt.timedelta(days=shift))
    target = _WEEKDAYS.index(day)
    delta = target - today.weekday()
    if which == "last":
        delta = delta - 7 if delta >= 0 else delta
    elif which in ("next", "coming"):
        delta = delta + 7 if delta <= 0 else delta
    elif which == "this":
        delta = delta if delta >= 0 else delta + 7
    else:  # "on Monday" in a log: the most recent one, today included
        delta = delta if delta <= 0 else delta - 7
    return f"on {today + dt.timedelta(days=delta)}"


def resolve_relative_dates(text: str, day: str) -> str:
    """Replace "today", "last Monday", "next week", "3 days ago"... with dates.

    `day` is the log's own date (YYYY-MM-DD); text that names no relative
    date comes back unchanged. One pass of one regex: linear in the text.
    """
    today = dt.date.fromisoformat(day)
    return _RELATIVE.sub(lambda m: _resolve(m, today), text)
