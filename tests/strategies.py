"""Shared Hypothesis strategies: text the way the reference sees it (UTF-16 units)."""

from __future__ import annotations

from hypothesis import strategies as st

# Characters that exercise every compatibility trap: JS whitespace (and the
# near-misses U+001C..U+001F, U+0085 that JS keeps), CR/LF, astral characters
# (two UTF-16 units), combining marks and lone surrogates.
TRAP_CHARACTERS = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    "\x1c\x1d\x1e\x1f\x85\u200b"
    "é\u0301😀𝄞\ud83d\ude00"
    "aZ09-_./\\~:"
)

trap_characters = st.sampled_from(TRAP_CHARACTERS)
alphabet = st.one_of(st.characters(), trap_characters)

any_text = st.text(alphabet=alphabet, max_size=300)
"""Any str, including lone surrogates and astral characters."""


def _repeat(piece: str, times: int) -> str:
    return piece * times


long_line = st.builds(
    _repeat,
    st.text(alphabet=alphabet, min_size=1, max_size=4),
    st.integers(min_value=0, max_value=2500),
)
"""A line that is sometimes thousands of UTF-16 units long."""

index_text = st.lists(
    st.one_of(
        st.text(alphabet=alphabet, max_size=40),
        long_line,
    ),
    max_size=320,
).map("\n".join)
"""MEMORY.md-like text that crosses the 200-line and 25,000-unit limits."""

path_text = st.lists(
    st.one_of(
        st.sampled_from(["/", "//", "\\", "~", "~/", ".", "..", "a", "ab", "C:", "\0"]),
        st.text(alphabet=trap_characters, max_size=3),
        st.text(max_size=6),
    ),
    max_size=10,
).map("".join)
"""Candidate memory directories: separators, tildes, dots, drives, NUL, Unicode."""


# --- Fuzzing (tests/fuzz): frontmatter, topic files, indexes, link targets. ---

YAML_TOKENS = (
    "~",
    "null",
    "true",
    "no",
    "0x1F",
    "1e400",
    "-.inf",
    "2026-02-30",
    "2026-02-28",
    "2026-02-28T10:00:00Z",
    "!!binary aGk=",
    "!!python/object:os.system",
    "!!str 1",
    "!custom x",
    "*a",
    "&a x",
    "&a [*a]",
    "[1, 2",
    "[1, 2]",
    "{a: 1}",
    "{a: *a}",
    "|\n  block\n  lines",
    ">\n  folded",
    "'unterminated",
    '"esc \\x41 \\u00e9"',
    '"bad \\q"',
    ":",
    "- item",
    "? complex",
    "a: b: c",
    "#comment",
    "%YAML 1.1",
    "---",
    "...",
    "\t",
    "@at",
    "`tick",
    "user",
    "feedback",
    "project",
    "reference",
    "\x16",
)
"""Scalars and fragments that reach the corners of PyYAML's safe loader."""

FRONTMATTER_KEYS = (
    "name",
    "description",
    "type",
    "metadata",
    "node_type",
    "originSessionId",
    "modified",
    "tags",
    "<<",
    "? ",
    "",
)


def _huge(piece: str, times: int) -> str:
    return piece * times


yaml_scalar = st.one_of(
    st.sampled_from(YAML_TOKENS),
    st.text(alphabet=alphabet, max_size=40),
    st.builds(
        _huge,
        st.sampled_from(["x", "é", "😀", "a b ", "'"]),
        st.sampled_from([100, 1_000, 33_000, 70_000]),
    ),
)
"""A YAML value: a tricky token, any text, or a huge scalar (past the 64 KiB cap)."""


def _nest(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


deep_value = st.builds(
    _nest,
    st.sampled_from(["[", "{a: ", "- ", "!!seq ["]),
    st.sampled_from(["]", "}", "", "]"]),
    st.integers(min_value=1, max_value=3_000),
)
"""A flow or block value nested up to thousands of levels."""


def _bomb(levels: int, width: int) -> str:
    lines = ["a0: &a0 [lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines)


alias_bomb = st.builds(
    _bomb, st.integers(min_value=1, max_value=9), st.integers(min_value=1, max_value=9)
)
"""A "billion laughs" frontmatter: each level repeats the previous one `width` times."""

_indent = st.sampled_from(["", "", "  ", "    ", "\t", " "])
_key = st.one_of(
    st.sampled_from(FRONTMATTER_KEYS), st.text(alphabet=alphabet, max_size=8)
)
_separator = st.sampled_from([": ", ":", " : ", ":\t"])

frontmatter_line = st.one_of(
    st.builds(
        lambda indent, key, sep, value: f"{indent}{key}{sep}{value}",
        _indent,
        _key,
        _separator,
        st.one_of(yaml_scalar, deep_value),
    ),
    st.sampled_from(YAML_TOKENS),
    st.text(alphabet=alphabet, max_size=30),
)


def _nested_dialect(name: str, description: str, kind: str, extra: list[str]) -> str:
    lines = [f"name: {name}", f"description: {description}", "metadata:"]
    lines += [f"  type: {kind}", "  node_type: memory", "  originSessionId: abc"]
    return "\n".join(lines + extra)


def _classic_dialect(name: str, description: str, kind: str, extra: list[str]) -> str:
    return "\n".join(
        [f"name: {name}", f"description: {description}", f"type: {kind}", *extra]
    )


frontmatter_body = st.one_of(
    st.builds(
        _classic_dialect,
        yaml_scalar,
        yaml_scalar,
        yaml_scalar,
        st.lists(frontmatter_line, max_size=5),
    ),
    st.builds(
        _nested_dialect,
        yaml_scalar,
        yaml_scalar,
        yaml_scalar,
        st.lists(frontmatter_line, max_size=5),
    ),
    st.lists(frontmatter_line, max_size=40).map("\n".join),
    alias_bomb,
    deep_value,
)
"""What sits between the fences: either dialect, loose lines, a bomb or deep nesting."""


def _topic(
    bom: bool, fence: str, eol: str, inner: str, close: str | None, body: str
) -> str:
    head = ("\ufeff" if bom else "") + fence + eol + inner.replace("\n", eol)
    if close is None:
        return head + eol + body
    return head + eol + close + eol + body


topic_text = st.builds(
    _topic,
    st.booleans(),
    st.sampled_from(["---", "---", "--- ", "----", "-- -", ""]),
    st.sampled_from(["\n", "\n", "\r\n", "\r"]),
    frontmatter_body,
    st.sampled_from(["---", "---", "---  ", "...", None]),
    st.one_of(
        st.text(alphabet=alphabet, max_size=80),
        st.sampled_from(["**Why:** x\n**How to apply:** y\n", "", "\n\n", "---\n"]),
    ),
)
"""A topic file's text shaped like frontmatter + body, with BOM/CRLF/fence variants."""

topic_bytes = st.one_of(
    topic_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=300),
    st.tuples(topic_text, st.binary(max_size=8)).map(
        lambda pair: pair[0].encode("utf-8", "surrogatepass") + pair[1]
    ),
)
"""Topic-file bytes: structured text (lone surrogates stay bad UTF-8) or raw bytes."""

link_target = st.one_of(
    st.sampled_from(
        [
            "x.md",
            "./x.md",
            "team/x.md",
            "../x.md",
            "../../secret.md",
            "/etc/passwd",
            "file:///etc/passwd",
            "http://example.com/x.md",
            "//host/x.md",
            "C:/x.md",
            "%2e%2e/x.md",
            "a/%2E%2E/%2e%2e/x.md",
            "x.md#anchor",
            "x.md?q=1",
            "<a b.md>",
            "a\\..\\..\\x.md",
            "a/../../x.md",
            ".",
            "..",
            "",
            "x%00.md",
            "~/x.md",
        ]
    ),
    st.text(alphabet=alphabet, max_size=20),
    path_text,
)
"""Link targets as written in MEMORY.md: local, escaping, absolute, URL, encoded."""

index_line = st.one_of(
    st.builds(
        lambda bullet, title, target, hook: f"{bullet}[{title}]({target}) — {hook}",
        st.sampled_from(["- ", "* ", "+ ", "1. ", "  - ", "> - ", "-", "- `"]),
        st.text(alphabet=alphabet, max_size=12),
        link_target,
        st.text(alphabet=alphabet, max_size=20),
    ),
    st.sampled_from(["# Memory", "```", "~~~", "<!--", "-->", "---", "", "> quote"]),
    st.text(alphabet=alphabet, max_size=40),
    long_line,
)

index_markdown = st.lists(index_line, max_size=260).map("\n".join)
"""MEMORY.md with linked list items, fences, comments, quotes and long lines."""


# How a line of MEMORY.md may link a file (issue 13). `{t}` is the target,
# `{n}` the label or name; each makes the line an entry or a reference.
ENTRY_LINK_FORMS = (
    "- [{n}]({t}) — a hook",
    "* [{n}](./{t}): a hook",
    "| [{n}]({t}) | reference | a hook |",
    "### [{n}]({t})",
    "[{n}]({t}) — a paragraph that starts with its link",
)
REFERENCE_LINK_FORMS = (
    "Details are in [{n}]({t}) for whoever needs them.",
    "> Before touching this, read [{n}](<{t}>) first.",
    "- An unlinked bullet → see [{n}]({t})",
    "| a row | see [{n}]({t}) |",
    "See [the notes][{n}] as well.\n\n[{n}]: {t}",
    "Related: [[{w}]] and more.",
)
entry_link_forms = st.sampled_from(ENTRY_LINK_FORMS)
reference_link_forms = st.sampled_from(REFERENCE_LINK_FORMS)
