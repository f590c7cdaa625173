"""Facts from daily-log entries: one fact once, the newest value current (pure).

The rule (docs/dream.md, "The similarity rule"): two entries state the same
fact when they have the same *subject*; the same subject with another
*value* is an update. Everything else is two facts: a duplicate is a
nuisance, a lost fact is a failure.

1. **Normalise.** Case-folded; a leading `HH:MM`, `[type]` and `#topic` tags
   dropped; relative dates already resolved from the log's own date
   (memd.kairos.dates), so "today" on two days is two dates.
2. **Tokens**, each of one shape: a date, a time, a version (`1.4.2`, `v2`),
   a quantity (a number with `%` or a unit: `60 s`, `60s`, `512 MB`, and
   with a hyphen before a unit, `35-day`, `30-minute`, `64-bit`), a code
   (letters and digits otherwise: `db-7`, `us-east-1`, `p3`, `#4411`,
   `4411-hotfix`), a number, or a word. A quantity is a value wherever it
   stands; a code names a thing, so it is always subject. Stop words and
   the verbs of an update ("raised", "changed") carry no meaning here.
3. **Value positions.** Only these hold values:
   - the predicate of `<subject> is|are|was|were|equals|runs|uses <...>`
     (copula within the first 8 words, a subject of 1-6 words), and what
     follows `to` after an update verb ("moved the standup to 10:00"). In
     such a position the numbers, versions, quantities, dates and times are
     the value and the words beside them (the product of a version, the
     thing counted) stay in the subject; a predicate with no number is a
     value whole ("the on-call lead is Bob");
   - anywhere else, a date, a time, a version, a quantity with its unit, a
     number right after a stop word and before a word (a count: "has 3
     replicas").
   A number right after a word names that thing ("ticket 4411", "port
   5432", "rack 12"), and a code always does: both are part of the subject,
   never a value. A participle before a preposition ("is blocked by") is
   part of the relation, so it is subject too.
4. **Same fact.** Equal normalised text is a repeat. Otherwise the subject
   key (every other word, in order, with identifiers as written) must be
   equal: one dictionary look-up, so filing is linear in the entries. The
   same value merges (count, last seen; another wording of it is kept in
   `also`); a different one from a day on or
   after the fact's last sighting supersedes it, and the old text becomes
   history ("previously: ..., until YYYY-MM-DD"). An older different value
   is filed as history only. A fact keeps every older value; the topic file
   shows the newest `HISTORY_KEPT` and the archive the rest.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from memd.kairos.dates import resolve_relative_dates

__all__ = [
    "HISTORY_KEPT",
    "Changes",
    "Fact",
    "FactBook",
    "Past",
    "Shape",
    "normalise",
    "resolve_relative_dates",
    "shape",
]

HISTORY_KEPT = 5  # older values the topic file shows; the rest go to the archive
_MAX_SUBJECT_TOKENS = 6
_COPULA_WITHIN = 8

_WORD = re.compile(r"[0-9]+(?:[.:][0-9]+)*|[^\W\d_]+", re.UNICODE)
_LEADING_TIME = re.compile(r"^\s*\d{1,2}:\d{2}\s+")
_TAG = re.compile(
    r"\[(?:user|feedback|project|reference)\]|(?<![\w#&/])#[A-Za-z][\w-]{0,63}", re.I
)
# One token of one shape; alternatives in priority order, each a bounded class
# run (no nested quantifier over an unbounded group): linear in the text.
_TOKEN = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?![\w-])"
    r"|(?P<time>\d{1,2}:\d{2}(?::\d{2})?)(?![\w:])"
    r"|(?P<version>v\d+(?:\.\d+){0,6}|\d+(?:\.\d+){1,6})(?![\w.-])"
    r"|(?P<percent>\d+(?:[.,]\d+)?)\s?%"
    r"|(?P<hash>#\d+)(?!\w)"
    r"|(?P<chunk>[^\W_]+(?:[-_][^\W_]+)*)",
    re.UNICODE,
)
_DIGITS = re.compile(r"\d+")
# A number and its unit run together: "60s", "512mb", and with a hyphen only
# before a unit ("35-day", "30-minute"): "4411-hotfix" stays a code, as does
# anything word first ("db-7", "us-east-1").
_NUMBER_UNIT = re.compile(r"(\d+)([^\W\d_]+)")
_NUMBER_DASH_UNIT = re.compile(r"(\d+)[-_]([^\W\d_]+)((?:[-_][^\W\d_]+)*)")
# copula -> its class: "was raised to" restates "is", "uses" is another relation
_COPULAS = {
    "is": "is",
    "are": "is",
    "was": "is",
    "were": "is",
    "equals": "is",
    "runs": "is",
    "run": "is",
    "uses": "uses",
    "use": "uses",
}
_UPDATE_WORDS = (
    "set raised lowered increased decreased bumped changed moved upgraded "
    "downgraded switched updated went reduced extended shortened"
)
_UPDATE_VERBS = frozenset(_UPDATE_WORDS.split())
_STOP_WORDS = (
    "a an the of to in on at for and or but is are was were be been being it its this "
    "that these those now then still also just so as by with from into "
    "has have had"
)
_STOP = frozenset(_STOP_WORDS.split()) | _UPDATE_VERBS
_PREPOSITION_WORDS = "by to on at in for with from of under into onto via behind over"
_PREPOSITIONS = frozenset(_PREPOSITION_WORDS.split())
# Units of a quantity: time, size, rate, ratio. A number followed by one is a
# measured value ("60 s"); the grammar of a unit, not a list of examples.
_UNIT_WORDS = (
    "s sec secs second seconds ms msec millisecond milliseconds ns "
    "m min mins minute minutes h hr hrs hour hours d day days w wk week weeks "
    "month months y yr yrs year years "
    "b byte bytes k kb kib m mb mib g gb gib t tb tib pb "
    "bit bits kbps mbps gbps rps qps rpm hz khz mhz ghz x percent pct "
    "c f deg degrees"
)
_UNITS = frozenset(_UNIT_WORDS.split())


def normalise(text: str) -> str:
    """Return the comparison form of an entry: folded, untagged, unpunctuated."""
    text = _LEADING_TIME.sub("", text)
    text = _TAG.sub(" ", text)
    return " ".join(_WORD.findall(text.casefold()))


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # word, stop, num, value (date/time/version/quantity), code, unit
    text: str  # case-folded
    raw: str  # as written


def _tokens(text: str) -> list[_Token]:
    text = _TAG.sub(" ", _LEADING_TIME.sub("", text))
    out: list[_Token] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "chunk"
        raw = match.group(kind)
        folded = raw.casefold()
        if kind == "percent":
            out.append(_Token("value", folded + " %", raw + " %"))
        elif kind in ("date", "time", "version"):
            out.append(_Token("value", folded, raw))
        elif kind == "hash":
            out.append(_Token("code", folded, raw))
        else:
            out += _chunk_tokens(raw)
    return out


def _chunk_tokens(raw: str) -> list[_Token]:
    """Split a run of letters, digits, `-` and `_` into words, numbers and codes."""
    folded = raw.casefold()
    if folded == "re":  # "we're": the apostrophe split it off; it is "are"
        return [_Token("stop", "are", raw)]
    if not any(c.isdigit() for c in folded):
        return [
            _Token("stop" if part in _STOP else "word", part, part_raw)
            for part, part_raw in zip(
                re.split(r"[-_]", folded), re.split(r"[-_]", raw), strict=True
            )
            if part
        ]
    if folded.isdigit():
        return [_Token("num", folded, raw)]
    unit = _NUMBER_UNIT.fullmatch(folded)
    if unit is not None:  # "60s", "512mb": a number and its unit
        return [
            _Token("num", unit.group(1), unit.group(1)),
            _Token("word", unit.group(2), unit.group(2)),
        ]
    dashed = _NUMBER_DASH_UNIT.fullmatch(folded)
    if dashed is not None and dashed.group(2) in _UNITS:  # "35-day", "5-minute"
        rest = [w for w in re.split(r"[-_]", dashed.group(3)) if w]
        return [
            _Token("num", dashed.group(1), dashed.group(1)),
            _Token("word", dashed.group(2), dashed.group(2)),
            *(_Token("stop" if w in _STOP else "word", w, w) for w in rest),
        ]
    if _DIGITS.fullmatch(folded.replace("-", "")) is not None:
        return [_Token("num", part, part) for part in folded.split("-") if part]
    return [_Token("code", folded, raw)]


@dataclass(frozen=True, slots=True)
class Shape:
    """What the matching rule looks at in one text."""

    norm: str
    key: str  # the subject: every non-value token, in order ("" for none)
    value: tuple[str, ...]  # the tokens in value positions
    label: str  # a few words of the subject, as written, for descriptions
    group: str  # the one word that names what the fact is about ("" if none)


def shape(text: str) -> Shape:
    """Return the normalised text, subject key, value and label of `text`."""
    norm = normalise(text)
    tokens = _tokens(text)
    at = _copula_at(tokens)
    if at is not None:
        head = [t for t in tokens[:at] if t.kind != "stop"]
        relation, rest = _relation(tokens[at + 1 :])
        key_tail, value = _split_value_region(rest)
        kind = _COPULAS[tokens[at].text]
        marker = [] if kind == "is" else [_Token("stop", f"<{kind}>", "")]
        key = [*head, *marker, *relation, *key_tail]
        label = head
    else:
        key, value, label = _plain(tokens)
    key_text = " ".join(
        t.text for t in key if t.kind != "stop" or t.text.startswith("<")
    )
    if not any(t.kind != "stop" for t in key):
        key_text = ""
    words = [_as_label(t.raw) for t in label if t.kind in ("word", "code", "num")][:4]
    group = _group(label)
    return Shape(norm, key_text, tuple(value), " ".join(words), group)


def _as_label(raw: str) -> str:
    """Return a word for a description: as written, but not shouted."""
    return raw.lower() if len(raw) > 1 and raw.isupper() and raw.isalpha() else raw


def _group(label: list[_Token]) -> str:
    """Return the word a fact is about, "" for none.

    The thing an identifier names ("ticket" of "ticket 4411"), else the
    subject's first word that is no verb form (`-ed`, `-ing`): the same word
    whichever way the fact is put ("the gateway timeout is 30 s", "gateway
    timeout = 60s"), so a restatement always lands where the fact is.
    """
    for before, token in itertools.pairwise(label):
        named = token.kind in ("num", "code") and before.kind == "word"
        if named and len(before.text) >= 3 and before.text.isalpha():
            return before.text
    words = [t.text for t in label if t.kind == "word" and t.text.isalpha()]
    words = [w for w in words if len(w) >= 3]
    return next((w for w in words if not w.endswith(("ed", "ing"))), "")


def _copula_at(tokens: list[_Token]) -> int | None:
    for i, token in enumerate(tokens[:_COPULA_WITHIN]):
        if token.text in _COPULAS and i > 0:
            head = [t for t in tokens[:i] if t.kind != "stop"]
            return i if 1 <= len(head) <= _MAX_SUBJECT_TOKENS else None
        if token.text in _UPDATE_VERBS:
            return None
    return None


def _relation(tokens: list[_Token]) -> tuple[list[_Token], list[_Token]]:
    """Split "blocked by X" into the relation ("blocked") and the rest ("X")."""
    for i, token in enumerate(tokens):
        if token.kind == "stop":
            continue
        follows = tokens[i + 1] if i + 1 < len(tokens) else None
        if (
            token.kind == "word"
            and follows is not None
            and follows.text in _PREPOSITIONS
        ):
            return [token], tokens[i + 2 :]
        break
    return [], tokens


def _is_value_shaped(token: _Token) -> bool:
    return token.kind in ("value", "num")


def _split_value_region(tokens: list[_Token]) -> tuple[list[_Token], list[str]]:
    """Return (subject words, value) of a value position's tokens.

    With a number in it, the numbers (and their units) are the value and the
    words beside them name what is measured; without one, it is a value whole.
    """
    content = [t for t in tokens if t.kind != "stop"]
    if not any(_is_value_shaped(t) for t in content):
        return [], [t.text for t in content]
    key: list[_Token] = []
    value: list[str] = []
    after_number = False
    for token in content:
        if _is_value_shaped(token):
            value.append(token.text)
            after_number = True
        elif after_number and token.kind == "word" and token.text in _UNITS:
            value.append(token.text)
            after_number = False
        else:
            key.append(token)
            after_number = False
    return key, value


def _names_the_first_word(token: _Token, key: list[_Token]) -> bool:
    """A version right after a text's first word names it ("build 1.4.2 failed")."""
    is_version = (
        token.text[:1].isdigit() and "." in token.text and "-" not in token.text
    )
    return is_version and len(key) == 1 and key[0].kind == "word"


def _plain(tokens: list[_Token]) -> tuple[list[_Token], list[str], list[_Token]]:
    """Return (subject, value, label) of a text with no copula."""
    update = next((i for i, t in enumerate(tokens) if t.text in _UPDATE_VERBS), None)
    region_at = None
    if update is not None:
        region_at = next(
            (i for i in range(update + 1, len(tokens)) if tokens[i].text == "to"), None
        )
    head = tokens if region_at is None else tokens[:region_at]
    key: list[_Token] = []
    value: list[str] = []
    skip = -1
    for i, token in enumerate(head):
        if i <= skip or token.kind == "stop":
            continue
        before = head[i - 1] if i > 0 else None
        after = head[i + 1] if i + 1 < len(head) else None
        if token.kind == "value" and _names_the_first_word(token, key):
            key.append(token)  # "release 2.3 ships": the subject's own version
        elif token.kind == "value":
            value.append(token.text)
            if after is not None and after.kind == "word" and after.text in _UNITS:
                value.append(after.text)
                skip = i + 1
        elif token.kind == "num":
            if after is not None and after.kind == "word" and after.text in _UNITS:
                value += [token.text, after.text]  # a quantity: "60 s"
                skip = i + 1
            elif before is not None and before.kind in ("word", "code"):
                key.append(token)  # names the thing before it: "ticket 4411"
            elif after is not None and after.kind == "word":
                value.append(token.text)  # a count: "3 replicas"
            else:
                key.append(token)  # unsure: part of the subject, keeps both
        else:
            key.append(token)
    if region_at is not None:
        tail_key, tail_value = _split_value_region(tokens[region_at + 1 :])
        key += tail_key
        value += tail_value
    label = [t for t in key if t.kind in ("word", "code", "num")]
    return key, value, label


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
    history: list[Past] = field(default_factory=list)  # newest first, all of them
    also: list[str] = field(default_factory=list)  # other wordings of this value


@dataclass(slots=True)
class Changes:
    """What filing entries did: counts for the dream's summary."""

    added: int = 0
    merged: int = 0
    superseded: int = 0


class FactBook:
    """The facts of one topic file, indexed so filing an entry is constant time."""

    def __init__(self, facts: list[Fact] | None = None) -> None:
        self.facts: list[Fact] = []
        self._shapes: list[Shape] = []
        self._by_norm: dict[str, int] = {}
        self._by_key: dict[str, int] = {}
        self._past_norms: list[set[str]] = []
        for fact in facts or ():
            self.load(fact)

    def load(self, fact: Fact) -> None:
        """Add a fact read back from a file; a second copy (a crash) merges."""
        s = shape(fact.text)
        found = self._by_norm.get(s.norm)
        if found is None:
            self._add(fact, s)
            return
        kept = self.facts[found]
        kept.first = min(kept.first, fact.first)
        kept.last = max(kept.last, fact.last)
        kept.seen = max(kept.seen, fact.seen)
        known = {(p.text, p.until) for p in kept.history}
        kept.history += [p for p in fact.history if (p.text, p.until) not in known]
        kept.history.sort(key=lambda p: p.until, reverse=True)
        self._past_norms[found].update(normalise(p.text) for p in fact.history)
        kept.also += [text for text in fact.also if text not in kept.also]

    def restore(self, fact: Fact) -> None:
        """Add a fact a rebuild kept from an old file, as of its own dates.

        Unlike `load`, a fact with the subject of one already here is the
        same fact: the one seen last is current, the other becomes history,
        so a kept old value never stands beside a newer one as current.
        """
        s = shape(fact.text)
        index = self._by_norm.get(s.norm)
        if index is None and s.key:
            index = self._by_key.get(s.key)
        if index is None or s.norm == self._shapes[index].norm:
            self.load(fact)
            return
        kept = self.facts[index]
        if fact.last < kept.last:  # older: its text and values are history
            older = [Past(fact.text, fact.first, kept.first), *fact.history]
            kept.history += older
            self._past_norms[index].update(normalise(p.text) for p in older)
        else:  # newer: it is current, what was current is history
            older = [Past(kept.text, kept.first, fact.first), *kept.history]
            fact.history = [*fact.history, *older]
            self._past_norms[index] = {normalise(p.text) for p in fact.history}
            if self._by_norm.get(self._shapes[index].norm) == index:
                del self._by_norm[self._shapes[index].norm]
            self.facts[index] = fact
            self._shapes[index] = s
            self._index(index, s)
        self.facts[index].history.sort(key=lambda p: p.until, reverse=True)

    def _add(self, fact: Fact, s: Shape) -> int:
        index = len(self.facts)
        self.facts.append(fact)
        self._shapes.append(s)
        self._past_norms.append({normalise(p.text) for p in fact.history})
        self._index(index, s)
        return index

    def _index(self, index: int, s: Shape) -> None:
        self._by_norm.setdefault(s.norm, index)
        if s.key:
            self._by_key.setdefault(s.key, index)

    def find(self, s: Shape) -> int | None:
        """Return the index of the fact `s` restates, or None for a new fact."""
        found = self._by_norm.get(s.norm)
        if found is None and s.key:
            found = self._by_key.get(s.key)
        return found

    def shape_of(self, index: int) -> Shape:
        """Return the shape of fact `index`'s current text."""
        return self._shapes[index]

    def file(self, text: str, day: str, changes: Changes) -> None:
        """File one entry's text seen on `day` (entries come oldest first)."""
        s = shape(text)
        if not s.norm:
            return
        index = self.find(s)
        if index is None:
            self._add(Fact(text=text, first=day, last=day), s)
            changes.added += 1
            return
        fact = self.facts[index]
        old = self._shapes[index]
        pasts = self._past_norms[index]
        if s.norm == old.norm or s.value == old.value:
            wordings = {old.norm, *(normalise(text) for text in fact.also)}
            if s.norm not in wordings:  # the same value put another way: kept too
                fact.also.append(text)
            fact.seen += 1
            fact.first = min(fact.first, day)
            fact.last = max(fact.last, day)
            changes.merged += 1
            return
        if day < fact.last:  # an older value logged late: history only
            if s.norm not in pasts:
                fact.history.append(Past(text, day, fact.first))
                fact.history.sort(key=lambda p: p.until, reverse=True)
                pasts.add(s.norm)
            changes.merged += 1
            return
        if s.norm in pasts:  # a value that comes back leaves the history
            fact.history = [p for p in fact.history if normalise(p.text) != s.norm]
            pasts.discard(s.norm)
        older = [Past(w, fact.first, day) for w in (fact.text, *fact.also)]
        fact.history[:0] = older
        pasts.update(normalise(p.text) for p in older)
        fact.text, fact.first, fact.last, fact.seen = text, day, day, 1
        fact.also = []
        if self._by_norm.get(old.norm) == index:
            del self._by_norm[old.norm]
        self._shapes[index] = s
        self._index(index, s)
        changes.superseded += 1
