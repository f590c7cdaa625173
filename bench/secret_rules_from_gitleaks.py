"""Regenerate memd/lint/secret_rules.toml from gitleaks' rules, keeping the linear ones.

gitleaks (MIT, https://github.com/gitleaks/gitleaks) maintains config/gitleaks.toml:
a rule per credential shape, with keywords, an entropy floor and allowlists.
This script takes that file as data and writes the rules memd can run:

1. the regex is rewritten for Python's `re`: `\\z` is `\\Z`, a POSIX
   class inside brackets (`[[:alnum:]]`, which `re` reads as a nested set
   that never matches a token) is spelled out in ASCII ranges, and every
   unbounded repeat (`*`, `+`, `{n,}`) is bounded at `MAX_REPEAT`; a rule
   whose regex still does not compile, or compiles only with a warning
   (mid-pattern flags, a nested set), is left out, as is a path-only rule;
2. each kept regex is timed on adversarial text (runs of its keywords and of
   the characters its classes take, with and without an assignment sign) at
   N and 4N characters, in this run, in a child process with a deadline: a
   rule over `MAX_SECONDS` at 4N, or whose time grows faster than 6x and
   is over half that, is left out (super-linear backtracking);
3. `generic-api-key` is left out: memd's own `secret-assignment` rule covers
   that shape with fewer false positives on prose.

It prints every rule left out and why, then the timing of the slowest kept
rules. memd's own rules (memd/lint/secrets.py) come first in the scan; the
file records the gitleaks commit it was made from.

Usage: python bench/secret_rules_from_gitleaks.py GITLEAKS_TOML COMMIT [OUT]
"""

from __future__ import annotations

import json
import multiprocessing
import re
import sys
import time
import tomllib
import warnings
from multiprocessing import Queue

MAX_REPEAT = 512
# Over the 4N texts (about 1.4 million characters): 0.1 s is 70 ns a character.
MAX_SECONDS = 0.1
MAX_GROWTH = 6.0
SIZE = 2_000
DEADLINE_SECONDS = 3
SKIPPED_IDS = {"generic-api-key"}
# A JWT's header is base64 of '{"', so it starts "eyJ"; gitleaks' "ey" would
# run the rule on nearly every text ("key", "they").
KEYWORDS = {"jwt": ["eyj"]}
FILLERS = [
    "a",
    "A",
    "0",
    "aB3",
    "-",
    "_",
    ".",
    "=",
    " ",
    "/",
    "+",
    ":",
    "\\",
    '"',
    "\n",
]


# RE2's POSIX classes, as Python `re` ranges (ASCII, as RE2 reads them).
POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "xdigit": "0-9A-Fa-f",
    "lower": "a-z",
    "upper": "A-Z",
    "space": "\\t\\n\\v\\f\\r ",
    "word": "0-9A-Za-z_",
    "punct": "!-/:-@\\[-`{-~",
}


def spell_posix_classes(pattern: str) -> str:
    """`pattern` with each `[:name:]` inside brackets spelled out for `re`."""
    return re.sub(
        r"\[:(\w+):\]",
        lambda m: POSIX_CLASSES.get(m.group(1), m.group(0)),
        pattern,
    )


def python_regex(pattern: str) -> str:
    """A gitleaks (RE2) regex as the linear Python `re` regex memd runs."""
    return bound_repeats(spell_posix_classes(pattern))


def compiles_cleanly(pattern: str, flags: int = 0) -> bool:
    """Whether `re` takes `pattern` as written: no error, and no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(pattern, flags)
        except (re.error, FutureWarning, DeprecationWarning):
            return False
    return True


def bound_repeats(pattern: str) -> str:
    """`pattern` with `*`, `+` and `{n,}` outside classes bounded at MAX_REPEAT."""
    out: list[str] = []
    at, in_class = 0, False
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            out.append(pattern[at : at + 2])
            at += 2
            continue
        if in_class:
            if char == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            out.append(char)
            at += 1
            continue
        if char == "[":
            in_class = True
            if pattern[at + 1 : at + 2] == "^":
                out.append("[^")
                at += 2
            else:
                out.append("[")
                at += 1
            if pattern[at : at + 1] == "]":  # a literal ] first in a class
                out.append("]")
                at += 1
            continue
        previous = out[-1] if out else ""
        is_modifier = previous.endswith(("*", "+", "?", "}")) and previous != "\\}"
        if char in "*+" and not is_modifier and previous not in ("(", "|", ""):
            out.append(f"{{{0 if char == '*' else 1},{MAX_REPEAT}}}")
            at += 1
            continue
        if char == "{":
            match = re.match(r"\{(\d+),\}", pattern[at:])
            if match:
                low = match.group(1)
                out.append(f"{{{low},{max(MAX_REPEAT, int(low))}}}")
                at += match.end()
                continue
        out.append(char)
        at += 1
    return "".join(out).replace("\\z", "\\Z")


def adversarial(keywords: list[str], size: int) -> list[str]:
    texts = []
    for keyword in [*keywords[:2], ""]:
        for filler in FILLERS:
            texts.append((keyword + filler * 64) * (size // (len(keyword) + 64)))
            texts.append((keyword + " = " + filler * size)[:size])
            texts.append((keyword * (size // max(1, len(keyword))) + filler)[:size])
    return texts


def seconds(pattern: re.Pattern[str], texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        for _ in pattern.finditer(text):
            pass
    return time.perf_counter() - start


def _time_rule(
    regex: str, keywords: list[str], out: Queue[tuple[float, float]]
) -> None:
    pattern = re.compile(regex, re.ASCII)
    small = seconds(pattern, adversarial(keywords, SIZE))
    if small > MAX_SECONDS / 2:  # already slow at N: not timed at 4N
        out.put((small, float("inf")))
        return
    out.put((small, seconds(pattern, adversarial(keywords, 4 * SIZE))))


def timed_in_child(regex: str, keywords: list[str]) -> tuple[float, float] | None:
    """(seconds at N, at 4N) measured in a child process, None past the deadline.

    A backtracking regex cannot be interrupted inside `re`; the child can.
    """
    results: Queue[tuple[float, float]] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_time_rule, args=(regex, keywords, results))
    child.start()
    child.join(DEADLINE_SECONDS)
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return results.get() if not results.empty() else None


LICENCE = """MIT License

Copyright (c) 2019 Zachary Rice

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE."""


def toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)  # a TOML basic string is a JSON one


def main() -> None:
    source, commit = sys.argv[1], sys.argv[2]
    out_path = sys.argv[3] if len(sys.argv) > 3 else "memd/lint/secret_rules.toml"
    with open(source, "rb") as handle:
        rules = tomllib.load(handle)["rules"]
    kept: list[dict[str, object]] = []
    timings: list[tuple[float, str]] = []
    for rule in rules:
        rule_id = rule["id"]
        if rule_id in SKIPPED_IDS or "regex" not in rule:
            print(
                f"left out {rule_id}: {'generic' if 'regex' in rule else 'path only'}"
            )
            continue
        text = python_regex(rule["regex"])
        if not compiles_cleanly(text, re.ASCII):
            print(f"left out {rule_id}: not plain Python re")
            continue
        keywords = KEYWORDS.get(rule_id) or [
            k.lower() for k in rule.get("keywords", [])
        ]
        timed = timed_in_child(text, keywords)
        if timed is None:
            print(f"left out {rule_id}: over {DEADLINE_SECONDS} s on adversarial text")
            continue
        small, large = timed
        growth = large / max(small, 1e-6)
        if large > MAX_SECONDS or (growth > MAX_GROWTH and large > MAX_SECONDS / 2):
            print(f"left out {rule_id}: {small * 1000:.1f} ms -> {large * 1000:.1f} ms")
            continue
        timings.append((large, rule_id))
        allow = [
            a
            for a in rule.get("allowlists", [])
            if "paths" not in a
            and a.get("regexTarget", "secret") in ("secret", "match")
        ]
        allow_regexes = []
        for entry in allow:
            for regex in entry.get("regexes", []):
                if compiles_cleanly(python_regex(regex)):
                    allow_regexes.append(python_regex(regex))
        kept.append(
            {
                "id": rule_id,
                "regex": text,
                "keywords": keywords,
                "entropy": float(rule.get("entropy", 0.0)),
                "group": int(rule.get("secretGroup", 0)),
                "allow": allow_regexes,
                "stopwords": [w for entry in allow for w in entry.get("stopwords", [])],
            }
        )
    lines = [
        "# Secret rules for memd's scan (memd/lint/secrets.py), as data.",
        "#",
        "# Made by bench/secret_rules_from_gitleaks.py from gitleaks' "
        "config/gitleaks.toml",
        f"# at commit {commit} (https://github.com/gitleaks/gitleaks).",
        "# gitleaks' licence, which covers the rules below:",
        "#",
        *(f"# {line}".rstrip() for line in LICENCE.splitlines()),
        "#",
        f"# Rewritten for Python `re` (unbounded repeats bounded at {MAX_REPEAT}, "
        "\\z as \\Z)",
        "# and kept only if linear on adversarial text. Per rule: the regex (ASCII",
        "# classes), keywords (the regex runs only if one is in the lowered text),",
        "# entropy (Shannon bits per character the secret must exceed), group (the",
        "# secret's capture group; 0 is the first group, or the whole match),",
        "# allow (regexes that mark a match as not a secret) and stopwords.",
        "",
    ]
    for rule in kept:
        lines.append("[[rules]]")
        lines.append(f"id = {toml_string(str(rule['id']))}")
        lines.append(f"regex = {toml_string(str(rule['regex']))}")
        for key in ("keywords", "allow", "stopwords"):
            values = ", ".join(toml_string(v) for v in rule[key])  # type: ignore[attr-defined]
            lines.append(f"{key} = [{values}]")
        lines.append(f"entropy = {rule['entropy']}")
        lines.append(f"group = {rule['group']}")
        lines.append("")
    with open(out_path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    print(f"kept {len(kept)} of {len(rules)} rules; slowest at {4 * SIZE} characters:")
    for large, rule_id in sorted(timings, reverse=True)[:5]:
        print(f"  {rule_id}: {large * 1000:.1f} ms over {len(FILLERS) * 12} texts")


if __name__ == "__main__":
    main()
