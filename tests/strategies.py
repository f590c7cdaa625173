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
