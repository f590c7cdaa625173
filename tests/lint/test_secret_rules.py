"""Every rule of the secret table finds a token of its shape and passes a cut one.

The samples are drawn from each rule's own regex (tests/lint/regex_sample.py),
so a rule added to the table is tested the day it lands. A regex `re` takes
only with a warning (a POSIX class read as a nested set) is a rule that never
matches what it was written for: refused outright.
"""

from __future__ import annotations

import random
import re
import warnings

import pytest

from memd.lint import secrets
from memd.lint.secrets import find_secrets
from tests.lint.regex_sample import sample

RULES = {rule.name: rule for rule in secrets._rules()}
TRIES = 30


def _reported_by(rule: secrets._Rule, text: str) -> list[str]:
    """The secrets `rule` alone reports in `text`, its allowlist applied."""
    pattern, _ = rule.patterns()
    group = rule.group or (1 if pattern.groups else 0)
    found = []
    for match in pattern.finditer(text):
        secret = match.group(group)
        if (
            secret
            and not secrets._is_placeholder(secret)
            and not rule.is_allowed(secret, match.group(0))
        ):
            found.append(secret)
    return found


def _token_line(rule: secrets._Rule, token: str) -> str:
    lowered = token.lower()
    named = not rule.keywords or any(k in lowered for k in rule.keywords)
    return token if named else f"{rule.keywords[0]} {token}"


def _a_found_sample(rule: secrets._Rule) -> tuple[str, str]:
    rng = random.Random(rule.name)  # noqa: S311  (a reproducible draw, no key)
    for _ in range(TRIES):
        line = f"note: {_token_line(rule, sample(rule.regex, rng, flags=re.ASCII))} \n"
        found = _reported_by(rule, line)
        if found:
            return line, found[0]
    raise AssertionError(f"{rule.name}: no sample of its own regex is reported")


@pytest.mark.parametrize("name", sorted(RULES))
def test_the_regex_compiles_without_a_warning(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        re.compile(RULES[name].regex, re.ASCII)
        for allow in RULES[name].allow:
            re.compile(allow)


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_token_of_the_rules_shape_is_found(name: str) -> None:
    line, _ = _a_found_sample(RULES[name])

    found = find_secrets(line)
    assert found, f"{name}: {line!r} is reported by no rule of the scan"


@pytest.mark.parametrize("name", sorted(RULES))
def test_the_same_token_cut_short_is_not(name: str) -> None:
    """A third of the token, the rest of the line as it was, is not this rule's."""
    line, secret = _a_found_sample(RULES[name])
    cut = line.replace(secret, secret[: len(secret) // 3], 1)

    assert [] == _reported_by(RULES[name], cut)


# Real shapes written out, for rules a drawn sample cannot speak for alone.
TOKENS = {
    "airtable-personnal-access-token": (
        "airtable: patAbC12dEf34GhI5." + "0123456789abcdef" * 4
    ),
}


@pytest.mark.parametrize("name", sorted(TOKENS))
def test_a_written_out_token_is_found_by_its_rule(name: str) -> None:
    assert name in {f.rule for f in find_secrets(TOKENS[name])}
