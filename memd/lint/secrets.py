"""Likely secrets in memory text and in the bytes a push sends; and their masking.

Real memory directories hold live credentials (tokens pasted into MEMORY.md,
a key in a "how to deploy" note). Team and personal sync refuse to commit a
file in which `find_secrets_in_bytes` finds one, lint's S001 names its file
and line, and everything memd prints of memory goes through `mask_secrets`.

The rules are data: memd's own below (`_MEMD_RULES`: the shapes memd knew
first, database URLs with a password, and the `secret-assignment` check),
then memd/lint/secret_rules.toml, gitleaks' rule list (MIT) rewritten for
Python's `re` and kept only where linear on adversarial text (its header
names the commit; bench/secret_rules_from_gitleaks.py regenerates it). A
rule's regex runs only when one of its keywords is in the lowered text, and
is compiled then, so the table costs a scan only the rules its text can
match. Every repeat in every regex is bounded, so a scan is linear in the
text; the text is scanned whole, not line by line, so nothing after a long
line hides.

`find_secrets_in_bytes` scans what a push sends, every byte: as UTF-8, and
also as UTF-16 (either byte order, either alignment) and UTF-32 when the
bytes hold a NUL or start with a byte-order mark, so a file saved as UTF-16
is read as text. Over `MAX_SCAN_BYTES` nothing is scanned and the finding is
`too-large-to-scan`: a file memd cannot read whole is not pushed.

A false positive is allowed by its fingerprint (the first 16 hex digits of
the sha256 of the matched text, which `memd sync status` and lint print):
``[sync] allow = ["3f0c..."]``. The secret itself never goes into config.

What memd masks (`mask_secrets`): each likely secret in memory text that
memd shows, as ``[secret: RULE FINGERPRINT]``: recall snippets (the CLI and
MCP `memory_recall`), MCP `memory_read`, lint messages, and the prompt that
memd's own commands show a person (`memd prompt --format json`'s metadata
aside). Not masked: the prompt the agent loads (`memd prompt`'s text, the
SessionStart hook, MCP's prompt resource), which must equal what the agent
builds byte for byte, and the files themselves; the agent reads those
anyway. Allowed fingerprints are not masked.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MAX_SCAN_BYTES = 8 * 1024 * 1024
MAX_FINDINGS = 100
MIN_ENTROPY_BITS = 3.0
RULES_FILE = "secret_rules.toml"
TOO_LARGE = "too-large-to-scan"

# (name, regex, keywords, entropy floor); group 1, when there is one, is the secret.
_MEMD_RULES: tuple[tuple[str, str, tuple[str, ...], float], ...] = (
    (
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]{1,20} ){0,4}PRIVATE KEY-----",
        ("-----begin",),
        0.0,
    ),
    (
        "github-token",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        0.0,
    ),
    ("slack-token", r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,250}", ("xox",), 0.0),
    (
        "anthropic-key",
        r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{20,250}",
        ("sk-ant-",),
        0.0,
    ),
    (
        "openai-key",
        r"(?<![A-Za-z0-9])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}"
        r"|[A-Za-z0-9]{20,250}(?![A-Za-z0-9_-]))",
        ("sk-",),
        0.0,
    ),
    (
        "aws-access-key",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("akia", "asia", "abia", "acca"),
        0.0,
    ),
    ("gitlab-token", r"(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,250}", ("glpat-",), 0.0),
    (
        "npm-token",
        r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
        ("npm_",),
        0.0,
    ),
    # scheme://user:password@host, any scheme (postgres, mysql, mongodb+srv,
    # redis, amqp, https...): the password is the secret.
    (
        "database-url",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}://"
        r"[^\s:/@'\"`<>]{0,256}:([^\s:/@'\"`<>]{3,256})@[^\s/@'\"`<>]{1,256}",
        ("://",),
        0.0,
    ),
)
_ASSIGNMENT = (
    r"(?i)(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key)"
    r"[A-Za-z0-9_-]{0,20}[\"']?[ \t]{0,5}[:=][ \t]{0,5}[\"'`]?([^\s\"'`,;<>]{8,200})"
)
_ASSIGNMENT_KEYWORDS = ("passw", "secret", "token", "key")
# Values that are obviously not a secret: templates, variables, examples.
_PLACEHOLDER_MARKS = ("${", "{{", "$(", "xxxx", "****", "example", "changeme", "redact")
_PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "secret", "pwd", "user"})


class SecretFinding:
    """One likely secret: 1-based line and column, the rule, its fingerprint.

    A plain slotted class, not a dataclass: the PostToolUse hook and a warm
    `memd recall` scan with this module, and `dataclasses` alone costs more.
    """

    __slots__ = ("column", "fingerprint", "line", "rule")

    def __init__(self, line: int, column: int, rule: str, fingerprint: str) -> None:
        self.line = line
        self.column = column
        self.rule = rule
        self.fingerprint = fingerprint

    def _key(self) -> tuple[int, int, str, str]:
        return (self.line, self.column, self.rule, self.fingerprint)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretFinding) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        line, column, rule, mark = self._key()
        return f"SecretFinding({line=}, {column=}, {rule=}, fingerprint={mark!r})"

    def message(self) -> str:
        if self.rule == TOO_LARGE:
            return (
                f"over {MAX_SCAN_BYTES:,} bytes, too large to scan whole for "
                "secrets (so it is not pushed)"
            )
        return f"likely secret ({self.rule}, fingerprint {self.fingerprint})"


class _Rule:
    """One rule of the table; its regex is compiled the first time it runs."""

    __slots__ = (
        "_compiled",
        "allow",
        "entropy",
        "group",
        "keywords",
        "name",
        "regex",
        "stopwords",
    )

    def __init__(
        self,
        name: str,
        regex: str,
        keywords: tuple[str, ...],
        entropy: float = 0.0,
        allow: tuple[str, ...] = (),
        stopwords: tuple[str, ...] = (),
        group: int = 0,
    ) -> None:
        self.group = group  # the secret's capture group; 0: the first, or the match
        self.name = name
        self.regex = regex
        self.keywords = keywords
        self.entropy = entropy
        self.allow = allow
        self.stopwords = stopwords
        self._compiled: tuple[re.Pattern[str], tuple[re.Pattern[str], ...]] | None = (
            None
        )

    def patterns(self) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
        if self._compiled is None:
            import re  # only once a keyword is in the text: most scans never get here

            self._compiled = (
                re.compile(self.regex, re.ASCII),
                tuple(re.compile(a) for a in self.allow),
            )
        return self._compiled

    def applies(self, present: frozenset[str]) -> bool:
        """Whether the rule runs, given the table's keywords `present` in the text."""
        return not self.keywords or not present.isdisjoint(self.keywords)

    def is_allowed(self, secret: str, match: str) -> bool:
        """Whether the rule's own allowlist or entropy floor says "not a secret"."""
        if self.entropy and _entropy(secret) <= self.entropy:
            return True
        lowered = secret.lower()
        if any(word in lowered for word in self.stopwords):
            return True
        _, allow = self.patterns()
        return any(a.search(secret) or a.search(match) for a in allow)


_TABLE: tuple[_Rule, ...] | None = None


_KEYWORDS: tuple[str, ...] = ()


def _rules() -> tuple[_Rule, ...]:
    """memd's rules, then the data file's, loaded once per process."""
    global _TABLE, _KEYWORDS
    if _TABLE is None:
        own = tuple(_Rule(n, r, k, e) for n, r, k, e in _MEMD_RULES)
        _TABLE = own + _data_rules({rule.name for rule in own})
        _KEYWORDS = tuple(sorted({k for rule in _TABLE for k in rule.keywords}))
    return _TABLE


def _keywords_in(lowered: str) -> frozenset[str]:
    """The table's keywords in `lowered`: each looked for once, not once per rule."""
    _rules()
    return frozenset(k for k in _KEYWORDS if k in lowered)


def read_rules_file(text: str) -> list[dict[str, object]]:
    """The `[[rules]]` tables of secret_rules.toml, as dicts.

    The file is the TOML subset its generator writes: `[[rules]]` headers and
    `key = value` lines whose values are JSON (a TOML basic string, array or
    number is one), read with `memd.fastjson`, not `tomllib`, which with
    `datetime` and `re` costs more than the hook's whole budget.
    tests/sync/test_secrets.py holds this reading equal to tomllib's.
    """
    from memd import fastjson

    rules: list[dict[str, object]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line == "[[rules]]":
            rules.append({})
            continue
        key, sign, value = line.partition(" = ")
        if not sign or not rules:
            raise ValueError(f"{RULES_FILE}: not a rule line: {line[:60]!r}")
        rules[-1][key] = fastjson.loads(value, max_depth=2)
    return rules


def _data_rules(taken: set[str]) -> tuple[_Rule, ...]:
    from memd.fsread import read_bytes

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), RULES_FILE)
    table = read_rules_file(read_bytes(path).decode("utf-8"))  # package data
    rules = []
    for item in table:
        if item["id"] in taken:
            continue
        rules.append(
            _Rule(
                str(item["id"]),
                str(item["regex"]),
                _strings(item.get("keywords")),
                float(item.get("entropy", 0.0)),  # type: ignore[arg-type]
                _strings(item.get("allow")),
                _strings(item.get("stopwords")),
                int(item.get("group", 0)),  # type: ignore[call-overload]
            )
        )
    return tuple(rules)


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def rule_names() -> tuple[str, ...]:
    """Every rule's name, memd's first, then the data file's, then the assignment."""
    return (*(rule.name for rule in _rules()), "secret-assignment")


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


def _is_placeholder(secret: str) -> bool:
    lowered = secret.lower().strip("<>[]{}")
    return lowered in _PLACEHOLDER_WORDS or any(
        m in lowered for m in _PLACEHOLDER_MARKS
    )


class _Span:
    """A likely secret's place in the text scanned: [start, end), rule, fingerprint."""

    __slots__ = ("end", "mark", "rule", "start")

    def __init__(self, start: int, end: int, rule: str, mark: str) -> None:
        self.start, self.end, self.rule, self.mark = start, end, rule, mark


def _spans(text: str, allow: frozenset[str], limit: int = MAX_FINDINGS) -> list[_Span]:
    """The likely secrets of `text`, in order, none overlapping, at most `limit`.

    Rules run in table order; a match overlapping an earlier rule's is
    dropped (sk-ant- is not an openai-key too). The spans stay sorted, so
    each overlap check is a bisection.
    """
    import bisect

    lowered = text.lower()
    found: list[_Span] = []
    starts: list[int] = []

    def take(start: int, end: int, rule: str, secret: str) -> bool:
        """Add the span unless it overlaps or is allowed; False: the limit is hit."""
        at = bisect.bisect_left(starts, start)
        if at < len(found) and found[at].start < end:
            return True
        if at > 0 and found[at - 1].end > start:
            return True
        mark = fingerprint(secret)
        if mark not in allow:
            found.insert(at, _Span(start, end, rule, mark))
            starts.insert(at, start)
        return len(found) < limit

    present = _keywords_in(lowered)
    for rule in _rules():
        if not rule.applies(present):
            continue
        pattern, _ = rule.patterns()
        group = rule.group or (1 if pattern.groups else 0)
        for match in pattern.finditer(text):
            secret = match.group(group)
            if not secret or _is_placeholder(secret):
                continue
            if rule.is_allowed(secret, match.group(0)):
                continue
            if not take(*match.span(group), rule.name, secret):
                return found
    if any(k in lowered for k in _ASSIGNMENT_KEYWORDS):
        for match in _assignment().finditer(text):
            secret = match.group(1)
            if _looks_secret(secret) and not take(
                *match.span(1), "secret-assignment", secret
            ):
                break
    return found


_ASSIGNMENT_PATTERN: re.Pattern[str] | None = None


def _assignment() -> re.Pattern[str]:
    global _ASSIGNMENT_PATTERN
    if _ASSIGNMENT_PATTERN is None:
        import re

        _ASSIGNMENT_PATTERN = re.compile(_ASSIGNMENT)
    return _ASSIGNMENT_PATTERN


def find_secrets(
    text: str, *, allow: frozenset[str] = frozenset(), first_line: int = 1
) -> tuple[SecretFinding, ...]:
    """Return the likely secrets in `text`, in order, minus fingerprints in `allow`.

    `first_line` is the number of the text's first line in its file (a
    topic file's body starts after its frontmatter). A text over
    `MAX_SCAN_BYTES` characters is one `too-large-to-scan` finding.
    """
    if len(text) > MAX_SCAN_BYTES:
        return (_too_large(len(text), first_line),)
    spans = _spans(text, allow)
    findings = []
    line, line_start, at = first_line, 0, 0
    for span in spans:
        while (newline := text.find("\n", at, span.start)) >= 0:
            line, line_start, at = line + 1, newline + 1, newline + 1
        at = span.start
        findings.append(
            SecretFinding(line, span.start - line_start + 1, span.rule, span.mark)
        )
    return tuple(findings)


def _too_large(size: int, line: int) -> SecretFinding:
    return SecretFinding(line, 1, TOO_LARGE, fingerprint(f"{TOO_LARGE} {size}"))


def find_secrets_in_bytes(
    data: bytes, *, allow: frozenset[str] = frozenset()
) -> tuple[SecretFinding, ...]:
    """Return the likely secrets in a file's bytes, every byte of them.

    Scanned as UTF-8 (undecodable bytes as U+FFFD), and also in each UTF-16
    and UTF-32 reading when the bytes hold a NUL or start with a byte-order
    mark; a secret found in more than one reading is reported once.
    """
    if len(data) > MAX_SCAN_BYTES:
        return (_too_large(len(data), 1),)
    findings: list[SecretFinding] = []
    seen: set[tuple[str, str]] = set()
    for text in _readings(data):
        for found in find_secrets(text, allow=allow):
            if (found.rule, found.fingerprint) not in seen:
                seen.add((found.rule, found.fingerprint))
                findings.append(found)
        if len(findings) >= MAX_FINDINGS:
            break
    return tuple(findings[:MAX_FINDINGS])


def _readings(data: bytes) -> list[str]:
    """The texts a file's bytes may be: UTF-8 always; UTF-16/32 where they may be."""
    import codecs

    readings = [data.decode("utf-8", "replace").removeprefix("\ufeff")]
    boms = (
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
    )
    marked = next((codec for bom, codec in boms if data.startswith(bom)), None)
    if marked is None and b"\0" not in data:
        return readings
    # UTF-16 of mostly ASCII text has its NULs on one parity of offsets: at
    # odd ones little-endian, at even ones big-endian (or little-endian one
    # byte on, as a UTF-16 run inside other bytes may be): one reading each.
    if marked == "utf-16-le" or (marked is None and b"\0" in data[1::2]):
        readings.append(data.decode("utf-16-le", "replace").removeprefix("\ufeff"))
    if marked == "utf-16-be" or (marked is None and b"\0" in data[0::2]):
        readings.append(data.decode("utf-16-be", "replace").removeprefix("\ufeff"))
    if (marked or "").startswith("utf-32") or b"\0\0\0" in data:
        for codec in ("utf-32-le", "utf-32-be"):
            readings.append(data.decode(codec, "replace").removeprefix("\ufeff"))
    return readings


def mask_secrets(text: str, *, allow: frozenset[str] = frozenset()) -> str:
    """`text` with each likely secret replaced by ``[secret: RULE FINGERPRINT]``.

    The one masking memd applies to memory it shows (see the module's note);
    a text too large to scan is returned as a notice, never unmasked.
    """
    if len(text) > MAX_SCAN_BYTES:
        return f"[not shown: over {MAX_SCAN_BYTES:,} characters, too large to scan]"
    spans = _spans(text, allow, limit=len(text) + 1)  # every one of them
    if not spans:
        return text
    pieces, last = [], 0
    for span in spans:
        pieces += [text[last : span.start], f"[secret: {span.rule} {span.mark}]"]
        last = span.end
    pieces.append(text[last:])
    return "".join(pieces)


def mask_fields(record: dict[str, object], keys: tuple[str, ...]) -> dict[str, object]:
    """`record` with `mask_secrets` applied to its string values under `keys`."""
    return {
        k: mask_secrets(v) if k in keys and isinstance(v, str) else v
        for k, v in record.items()
    }
