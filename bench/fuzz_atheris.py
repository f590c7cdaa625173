"""Coverage-guided fuzzing of the frontmatter + lint path with atheris (issue 6).

Not run in CI. Each input is one topic file and one MEMORY.md, cut apart at
an offset taken from the first two bytes. The fast path needs no disk: the
topic file goes through `parse_memory_file`, MEMORY.md through the same
decoder `load_memdir` uses, and both into an in-memory `MemDir` that
`lint_memdir` judges; `plan_fixes` and `truncate_entrypoint` see them too.
A crash is any exception, a malformed Diagnostic (tests/fuzz/wellformed.py),
a fix that loses a parsed name/description/type, or a truncation out of limits.

Usage (from the repository root; `pip install atheris` first):
    python bench/fuzz_atheris.py -max_total_time=900 -rss_limit_mb=2048 \
        /tmp/memd-fuzz-corpus tests/hostile tests/lint/cases
libFuzzer options go straight through: -runs=N, -max_len=N, -jobs=N, ...
The first directory is the growing corpus; the others are read-only seeds
(libFuzzer reads them recursively). Crashes land in -artifact_prefix.
"""

from __future__ import annotations

import os
import sys

import atheris  # type: ignore[import-untyped]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

with atheris.instrument_imports(include=["memd", "yaml", "frontmatter"]):
    import frontmatter.default_handlers  # noqa: F401  memfile imports these lazily
    import yaml  # noqa: F401

    from memd.claude_code.jscompat import utf16_len
    from memd.claude_code.truncation import MAX_ENTRYPOINT_LINES, truncate_entrypoint
    from memd.lint.engine import lint_memdir
    from memd.lint.fixes import plan_fixes
    from memd.memory.memdir import MemDir
    from memd.memory.memfile import decode_text, parse_memory_file

from tests.fuzz.wellformed import line_count, problems  # noqa: E402

# Where the topic file lives: the top level, a subfolder, or logs/ (F008).
RELPATHS = ("topic.md", "team/topic.md", "logs/2026/02/2026-02-30.md", "a b(1).md")
INDEX = "MEMORY.md"


class FuzzFailure(Exception):
    """A property the fuzzer broke; libFuzzer saves the input as a crash."""


def check_one(data: bytes) -> None:
    """Run parse, lint, fix planning and truncation over one input; raise on a bug."""
    if len(data) < 3:
        return
    relpath = RELPATHS[data[0] % len(RELPATHS)]
    rest = data[3:]
    cut = int.from_bytes(data[1:3], "little") % (len(rest) + 1)
    topic, index = rest[:cut], rest[cut:]
    parsed = parse_memory_file(relpath, topic)
    index_text, index_diags, _, _ = decode_text(INDEX, index, normalize_newlines=False)
    memdir = MemDir(
        path="/fuzz/memory",
        index_text=index_text,
        files=(parsed,),
        diagnostics=tuple(index_diags),
    )
    counts = {relpath: line_count(topic), INDEX: line_count(index)}
    for d in lint_memdir(memdir):
        wrong = problems(d, line_counts=counts, relative=True)
        if wrong:
            raise FuzzFailure(f"{d!r}: {wrong}")
    for edit in plan_fixes(memdir, {relpath: topic, INDEX: index}):
        if edit.relpath != relpath:
            continue
        again = parse_memory_file(relpath, edit.new)
        before = (parsed.name, parsed.description, parsed.type)
        after = (again.name, again.description, again.type)
        if before != after:
            raise FuzzFailure(f"fix changed {before!r} into {after!r}")
    result = truncate_entrypoint(index_text)
    if result.was_line_truncated or result.was_byte_truncated:
        kept = result.content.split("\n\n> WARNING: MEMORY.md is ")[0]
        if len(kept.split("\n")) > MAX_ENTRYPOINT_LINES or utf16_len(kept) > 25_000:
            raise FuzzFailure("truncation kept more than the limits")


def main() -> None:
    atheris.Setup(sys.argv, check_one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
