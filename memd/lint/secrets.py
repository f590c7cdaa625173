"""Likely secrets in memory text: a small rule table of linear regexes.

Real memory directories hold live credentials (tokens pasted into MEMORY.md,
a key in a "how to deploy" note). Team and personal sync refuse to commit a
file in which `find_secrets` finds one, and lint's S001 names its file and
line. No detector library fits the rules here (no third-party imports below
the wiring layer, a few milliseconds per file), so this is the table below,
each pattern built from bounded quantifiers over one line at a time, so the
scan is linear in the text:

- github-token: ``gh[pousr]_`` + 36 or more, ``github_pat_``;
- slack-token: ``xox[abposr]-``;
- anthropic-key: ``sk-ant-``;
- openai-key: ``sk-`` + 20 or more letters and digits, ``sk-proj-``,
  ``sk-svcacct-``, ``sk-admin-``;
- aws-access-key: ``AKIA``/``ASIA``/``ABIA``/``ACCA`` + 16 upper-case
  letters or digits;
- gitlab-token: ``glpat-``; npm-token: ``npm_`` + 36;
- private-key: a ``-----BEGIN ... PRIVATE KEY-----`` line;
- secret-assignment: a ``password``/``token``/``secret``/``api_key`` name,
  ``=`` or ``:``, and a value of 8 or more characters that mixes letter
  cases or digits, has over 3 bits of entropy per character and is not a
  placeholder (``${VAR}``, ``xxxx``, ``example``...).

A false positive is allowed by its fingerprint (the first 16 hex digits of
the sha256 of the matched text, which `memd sync status` and lint print):
``[sync] allow = ["3f0c..."]``. The secret itself never goes into config.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_LINE_CHARS = 64 * 1024  # a longer line is scanned only that far
MAX_FINDINGS = 100
# No rule matches fewer characters ("token=" and 8 more): shorter lines, the
# blank ones above all, are skipped without running the table over them.
_SHORTEST_MATCH = 14

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY-----")),
    (
        "github-token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}"
            r"|github_pat_[A-Za-z0-9_]{22,255})"
        ),
    ),
    ("slack-token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,250}")),
    ("anthropic-key", re.compile(r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,250}")),
    (
        "openai-key",
        re.compile(
            r"(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}"
            r"|[A-Za-z0-9]{20,250}(?![A-Za-z0-9_-]))"
        ),
    ),
    (
        "aws-access-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
    ),
    ("gitlab-token", re.compile(r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,250}")),
    ("npm-token", re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
)
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key)"
    r"[A-Za-z0-9_-]{0,20}[\"']?[ \t]{0,5}[:=][ \t]{0,5}[\"'`]?([^\s\"'`,;<>]{8,200})"
)
RULE_NAMES = (*(name for name, _ in _RULES), "secret-assignment")
# Values that are obviously not a secret: templates, variables, examples.
_PLACEHOLDER_MARKS = ("${", "{{", "$(", "xxxx", "****", "example", "changeme", "redact")
MIN_ENTROPY_BITS = 3.0


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One likely secret: 1-based line and column, the rule, its fingerprint."""

    line: int
    column: int
    rule: str
    fingerprint: str

    def message(self) -> str:
        return f"likely secret ({self.rule}, fingerprint {self.fingerprint})"


def fingerprint(secret: str) -> str:
    """Return the first 16 hex digits of the sha256 of `secret`."""
    import hashlib

    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


def _looks_secret(value: str) -> bool:
    lowered = value.lower()
    if any(mark in lowered for mark in _PLACEHOLDER_MARKS):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    return classes >= 2 and _entropy(value) > MIN_ENTROPY_BITS


def find_secrets(
    text: str, *, allow: frozenset[str] = frozenset(), first_line: int = 1
) -> tuple[SecretFinding, ...]:
    """Return the likely secrets in `text`, in order, minus fingerprints in `allow`.

    `first_line` is the number of the text's first line in its file (a
    topic file's body starts after its frontmatter).
    """
    findings: list[SecretFinding] = []
    for number, line in enumerate(text.split("\n"), start=first_line):
        if len(line) < _SHORTEST_MATCH:
            continue
        line = line[:MAX_LINE_CHARS]
        taken: list[tuple[int, int]] = []
        for name, pattern in _RULES:
            for match in pattern.finditer(line):
                span = match.span()
                if any(start < span[1] and span[0] < end for start, end in taken):
                    continue  # sk-ant- is not an openai-key too
                taken.append(span)
                _add(findings, number, span[0], name, match.group(0), allow)
        for match in _ASSIGNMENT.finditer(line):
            value = match.group(1)
            span = match.span(1)
            if any(start < span[1] and span[0] < end for start, end in taken):
                continue
            if _looks_secret(value):
                _add(findings, number, span[0], "secret-assignment", value, allow)
        if len(findings) >= MAX_FINDINGS:
            break
    return tuple(findings[:MAX_FINDINGS])


def _add(
    findings: list[SecretFinding],
    line: int,
    start: int,
    rule: str,
    secret: str,
    allow: frozenset[str],
) -> None:
    mark = fingerprint(secret)
    if mark not in allow:
        findings.append(SecretFinding(line, start + 1, rule, mark))


def find_secrets_in_bytes(
    data: bytes, *, allow: frozenset[str] = frozenset()
) -> tuple[SecretFinding, ...]:
    """Return `find_secrets` of a file's bytes (undecodable bytes as U+FFFD)."""
    return find_secrets(data.decode("utf-8", "replace"), allow=allow)
