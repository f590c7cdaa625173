"""Fuzz lint: generated memory directories and lone files, judged rule by rule."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memd.errors import UsageError
from memd.lint.engine import LEVELS, lint_memdir
from memd.lint.rules import RULES
from memd.lint.targets import lint_targets, resolve_targets
from memd.memory.memdir import MemDir
from memd.memory.memfile import decode_text, parse_memory_file
from memd.memory.reader import load_memdir
from tests.fuzz.wellformed import assert_well_formed, line_count
from tests.strategies import alphabet, index_markdown, topic_bytes

_NAME = st.text(
    alphabet=st.sampled_from("abcxyz09 -_.()[]<>#%é😀\n\r\u2028"),
    min_size=1,
    max_size=10,
).filter(lambda s: s.strip(". ") != "")
relpath = st.one_of(
    _NAME.map(lambda s: f"{s}.md"),
    st.tuples(st.sampled_from(["team", "a b", "ünï"]), _NAME).map(
        lambda p: f"{p[0]}/{p[1]}.md"
    ),
    st.sampled_from(
        [
            "logs/2026/02/2026-02-28.md",
            "logs/2026/02/2026-02-30.md",
            "logs/2026/2/2026-2-1.md",
            "logs/x.md",
            "notes.txt",
            "MEMORY.md.bak",
        ]
    ),
)
files = st.dictionaries(relpath, topic_bytes, max_size=6)
index_bytes = st.one_of(
    st.none(),
    index_markdown.map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
)
severities = st.dictionaries(
    st.one_of(
        st.sampled_from([r.code for r in RULES]),
        st.sampled_from([r.name for r in RULES]),
        st.text(max_size=5),
    ),
    st.one_of(st.sampled_from(LEVELS), st.text(max_size=5)),
    max_size=6,
)


def _in_memory(topics: dict[str, bytes], index: bytes | None) -> MemDir:
    parsed = tuple(parse_memory_file(r, data) for r, data in sorted(topics.items()))
    if index is None:
        return MemDir(path="/fuzz/memory", files=parsed)
    text, diags, _, _ = decode_text("MEMORY.md", index, normalize_newlines=False)
    return MemDir(
        path="/fuzz/memory", index_text=text, files=parsed, diagnostics=tuple(diags)
    )


def _counts(topics: dict[str, bytes], index: bytes | None) -> dict[str, int]:
    counts = {r: line_count(data) for r, data in topics.items()}
    if index is not None:
        counts["MEMORY.md"] = line_count(index)
    return counts


class TestLintMemdirFuzz:
    @given(files, index_bytes, severities)
    def test_in_memory_memdir(
        self,
        topics: dict[str, bytes],
        index: bytes | None,
        levels: dict[str, str],
    ) -> None:
        """Linting any parsed files plus any index raises nothing; findings are sane."""
        memdir = _in_memory(topics, index)
        found = lint_memdir(memdir, severities=levels)
        assert_well_formed(found, line_counts=_counts(topics, index), relative=True)
        off = {k for k, v in levels.items() if v == "off"}
        assert [] == [d for d in found if d.code in off and d.code in levels]

    @given(files, index_bytes, st.sampled_from([256 * 1024, 64, 300, 5_000]))
    def test_written_memdir(
        self, topics: dict[str, bytes], index: bytes | None, max_bytes: int
    ) -> None:
        """A real directory (some files read only in part) lints with sane paths."""
        with tempfile.TemporaryDirectory() as root:
            written = dict(topics)
            if index is not None:
                written["MEMORY.md"] = index
            for rel, data in written.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as handle:
                    handle.write(data)
            memdir = load_memdir(root, max_file_bytes=max_bytes)
            found = lint_memdir(memdir)
        assert_well_formed(found, line_counts=_counts(topics, index), relative=True)
        on_disk = set(written) | {".", "MEMORY.md"}  # I001 names the missing index
        dirs = {os.path.dirname(r) for r in written}
        assert [] == [d for d in found if d.path not in on_disk | dirs]


class TestLintFileFuzz:
    @given(topic_bytes, st.text(alphabet=alphabet, max_size=3))
    def test_lone_file(self, data: bytes, suffix: str) -> None:
        """A lone file: no exception, only findings about it, the same as its dir's."""
        name = "t" + "".join(c for c in suffix if c.isalnum()) + ".md"
        with tempfile.TemporaryDirectory() as root:
            path = os.path.join(root, name)
            with open(path, "wb") as handle:
                handle.write(data)
            found = lint_targets(resolve_targets([path]), cwd=root)
            whole = lint_targets(resolve_targets([root]), cwd=root)
        assert_well_formed(found, line_counts={name: line_count(data)})
        assert {name} >= {d.path for d in found}
        assert [d for d in whole if d.path == name] == list(found)

    @given(st.binary(max_size=50))
    def test_missing_file(self, data: bytes) -> None:
        """A path that does not exist is one usage error, never another exception."""
        with tempfile.TemporaryDirectory() as root, pytest.raises(UsageError):
            resolve_targets([os.path.join(root, f"gone-{data.hex()}.md")])


class TestOneLineRegressions:
    """Found by probing what the fuzzers suggested: user text with line breaks."""

    def test_type_with_newline(self) -> None:
        """A quoted `type` holding a newline yields a one-line M008 message."""
        data = b'---\nname: a\ndescription: b\ntype: "us\\ner"\n---\nbody\n'
        found = lint_memdir(_in_memory({"t.md": data}, b"- [a](t.md) - b\n"))
        [m008] = [d for d in found if d.code == "M008"]
        assert "`type: us\\ner` is not a memory type" in m008.message
        assert_well_formed(found)

    def test_type_conflict_with_block_scalar(self) -> None:
        """A block-scalar top-level `type` in conflict gives a one-line M012."""
        data = (
            b"---\nname: a\ndescription: b\ntype: |\n  x\n  y\n"
            b"metadata:\n  type: user\n---\nb\n"
        )
        found = lint_memdir(_in_memory({"t.md": data}, b"- [a](t.md) - b\n"))
        assert ["M012"] == [d.code for d in found if d.code == "M012"]
        assert_well_formed(found)

    def test_key_and_name_with_newline(self) -> None:
        """An unknown key and a duplicate name holding newlines stay one line."""
        data = (
            b'---\nname: "a\\nb"\ndescription: b\ntype: user\n"we\\nird": 1\n---\nb\n'
        )
        found = lint_memdir(_in_memory({"t.md": data, "u.md": data}, b""))
        assert {"M014", "M015"} <= {d.code for d in found}
        assert_well_formed(found)

    def test_file_name_with_newline(self) -> None:
        """An orphan whose file name holds a newline gets a one-line I006 hint."""
        topic = b"---\nname: a\ndescription: long enough words\ntype: user\n---\nx\n"
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "a\nb.md"), "wb") as handle:
                handle.write(topic)
            with open(os.path.join(root, "MEMORY.md"), "wb") as handle:
                handle.write(b"# Memory\n")
            found = lint_memdir(load_memdir(root))
        [i006] = [d for d in found if d.code == "I006"]
        assert "a\nb.md" == i006.path
        assert "(a\\nb.md)" in i006.hint
        assert_well_formed(found)


MARKER = "OUTSIDE-CONTENT-7f3a"
link_target = st.sampled_from(
    [
        "../outside.md",
        "../outside-dir",
        "/etc/passwd",
        "loop.md",
        "a.md",
        "team",
        "team/../a.md",
        "missing.md",
        ".",
        "..",
    ]
)
links = st.dictionaries(
    st.sampled_from(["loop.md", "l1.md", "team/l2.md", "ldir", "MEMORY.md", "logs"]),
    link_target,
    max_size=4,
)


class TestLintSymlinkFuzz:
    @given(files, links)
    def test_symlinks_never_leak(
        self, topics: dict[str, bytes], symlinks: dict[str, str]
    ) -> None:
        """Symlinks in, out and in loops: findings are sane and never quote outside."""
        with tempfile.TemporaryDirectory() as base:
            root = os.path.join(base, "memory")
            os.makedirs(os.path.join(root, "team"))
            os.makedirs(os.path.join(base, "outside-dir"))
            for outside in ("outside.md", "outside-dir/x.md"):
                with open(os.path.join(base, outside), "w") as handle:
                    handle.write(f"---\nname: {MARKER}\n---\n{MARKER}\n")
            for rel, data in topics.items():
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as handle:
                    handle.write(data)
            for rel, target in symlinks.items():
                path = os.path.join(root, rel)
                if not os.path.lexists(path):
                    os.symlink(target, path)
            memdir = load_memdir(root)
            found = lint_memdir(memdir)
        counts = {r: line_count(data) for r, data in topics.items()}
        assert_well_formed(found, line_counts=counts, relative=True)
        assert [] == [d for d in found if MARKER in d.message + d.hint]
        assert [] == [f.relpath for f in memdir.files if MARKER in repr(f)]
        assert MARKER not in (memdir.index_text or "")
