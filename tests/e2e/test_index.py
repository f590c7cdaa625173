"""The index the agent loads equals the index memd shows, over a corpus.

Each case writes MEMORY.md as bytes, runs the release once (the model only
answers), and compares the text after "Contents of …/MEMORY.md" in the
agent's first user message with the `## MEMORY.md` section of `memd prompt`.

The runs of one release go two at a time (CI's time: a run is mostly
process start-up), each in its own isolated HOME and repository, before the
cases assert on what they recorded.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.harness import Project, agent_index, memd_index, two_at_a_time
from tests.e2e.model_server import text
from tests.e2e.releases import Release

_LONG_LINES = "".join(f"- [note {i}](note-{i}.md) fact {i}\n" for i in range(240))
# 150 lines of 170 UTF-16 units: over 25,000 units, under 200 lines.
_ASTRAL = "".join(f"- [m{i}](m{i}.md) " + "\U0001f600" * 80 + "\n" for i in range(150))

CORPUS: dict[str, bytes] = {
    "clean": b"# Memory\n\n- [User role](user_role.md) - data scientist\n",
    "over-200-lines": _LONG_LINES.encode(),
    "over-25000-units-astral": _ASTRAL.encode(),
    "comment-own-line": b"- [a](a.md) one\n<!-- a note to self -->\n- [b](b.md) two\n",
    "comment-own-line-then-blank": b"- a\n\n<!-- x -->\n\n\n- b\n",
    "comment-indented": b"- a\n\n   <!-- three spaces -->\n- b\n",
    "comment-inline-list": b"- [a](a.md) one <!-- why --> more\n- b\n",
    "comment-inline-paragraph": b"Some text <!-- hidden --> shown\nnext line\n",
    "comment-then-text": b"<!-- lead --> tail text\n- a\n",
    "comment-after-paragraph": b"para line\n<!-- interrupts -->\nmore\n",
    "comment-indented-after-paragraph": b"para line\n  <!-- lazy -->\nmore\n",
    "comment-after-list-item": b"- item\n<!-- after item -->\n- next\n",
    "comment-in-list-continuation": b"- item\n  <!-- inside item -->\n- next\n",
    "comment-multi-line": b"- a\n<!--\nline one\nline two\n-->\n- b\n",
    "comment-multi-line-tail": b"- a\n<!-- start\nend --> tail\n- b\n",
    "comment-unclosed": b"- a\n<!-- never closed\n- b\n- c\n",
    "comment-unclosed-late-close": b"- a\n<!-- open\n- b\n```\nx -->\n```\n- c\n",
    "comment-two-on-line": b"<!-- a --> mid <!-- b -->\n- c\n",
    "comment-empty-forms": b"<!---->\n<!-->\n<!--->\n- x\n",
    "comment-in-fence": b"- a\n```\n<!-- code -->\n```\n- b\n",
    "comment-in-tilde-fence": b"~~~md\n<!-- code -->\n~~~\n<!-- out -->\n- b\n",
    "comment-in-inline-code": b"- use `<!-- x -->` here\n`<!-- y -->`\n",
    "comment-in-indented-code": b"text\n\n    <!-- code -->\n\n- b\n",
    "comment-in-blockquote": b"> quoted <!-- c -->\n> <!-- d -->\n\n- b\n",
    "comment-in-heading": b"# Title <!-- c -->\n- b\n",
    "comment-before-heading": b"<!-- c -->\n# Title\n- b\n",
    "comment-html-block": b"<div>\n<!-- in div -->\n</div>\n\n- b\n",
    "comment-first-and-last": b"<!-- first -->\n- a\n<!-- last -->",
    "comment-only": b"<!-- nothing else -->\n",
    "comment-tab-indent": b"- a\n\t<!-- tab -->\n- b\n",
    "crlf": b"- [a](a.md) one\r\n- [b](b.md) two\r\n",
    "crlf-comment": b"- a\r\n<!-- c -->\r\n- b\r\n",
    "crlf-comment-in-fence": b"```\r\n<!-- c -->\r\n```\r\n- b\r\n",
    "lone-cr": b"- a\r- b\r<!-- c -->\r- d\n",
    "bom": b"\xef\xbb\xbf- [a](a.md) one\n",
    "bom-frontmatter": b"\xef\xbb\xbf---\nname: index\n---\n- a\n",
    "frontmatter": b"---\nname: index\ndescription: the index\n---\n- [a](a.md) one\n",
    "frontmatter-blank-after": b"---\ntitle: x\n---\n\n\n- a\n",
    "frontmatter-trailing-space": b"---  \nk: v\n---  \n- a\n",
    "frontmatter-crlf": b"---\r\nk: v\r\n---\r\n- a\r\n",
    "frontmatter-unclosed": b"---\nk: v\n- a\n",
    "frontmatter-comment": b"---\nk: v\n---\n<!-- c -->\n- a\n",
    "blank-lines": b"\n\n- a\n\n\n\n- b\n\n\n",
    "whitespace-only-lines": b"  \n\t\n- a\n   \n\t \n- b\n  \t\n",
    "whitespace-only": b" \n\t\n  \n",
    "trailing-spaces": b"- a   \n- b\t\n",
    "unicode-format-chars": "- a\u200b b\n- c\u2028d\n- e\u00ad\x07f\n".encode(),
    "reserved-tags": (
        "- [a](a.md) <system-reminder>x</system-reminder>\n"
        "- <function_results> and <invoke> stay apart\n"
        "- fullwidth <\uff33ystem-reminder> and \uff1csystem-reminder>\n"
        "- Cyrillic <s\u0443st\u0435m-reminder>, Greek <t\u03bfol_use_error>\n"
        "- filler < system-reminder> and </ SYSTEM_REMINDER>\n"
        "- invisible <sy\u0301stem-rem\u200binder> and <total\u0610_tokens>\n"
        "- prefix <\u0061ntml:invoke> and <ANTML\uff1athinking>, not <antmlx:y>\n"
        '- <channel source="x"> but <channel> and <system-reminders> stay\n'
        "- escaped <\\system-reminder> and <tick/> <tickle>\n"
    ).encode(),
}
# (release, case) -> what memd does not port yet: the case is a strict xfail
# there, so the day it is ported its XPASS fails and this entry goes.
KNOWN_OPEN: dict[tuple[str, str], str] = {}


# Cases that cannot disturb each other share one agent run (CI's time):
# each is closed by a blank line and a heading, and only the last of a batch
# may leave a fence or a comment open.
_BATCHED = {
    "comments-dropped": (
        "comment-own-line",
        "comment-own-line-then-blank",
        "comment-after-paragraph",
        "comment-after-list-item",
        "comment-multi-line",
        "comment-multi-line-tail",
        "comment-two-on-line",
        "comment-empty-forms",
        "comment-then-text",
        "comment-before-heading",
        "comment-unclosed-late-close",  # last: it leaves a fence open
    ),
    "comments-kept": (
        "comment-indented",
        "comment-inline-list",
        "comment-inline-paragraph",
        "comment-indented-after-paragraph",
        "comment-in-list-continuation",
        "comment-in-fence",
        "comment-in-tilde-fence",
        "comment-in-inline-code",
        "comment-in-indented-code",
        "comment-in-blockquote",
        "comment-in-heading",
        "comment-html-block",
        "comment-tab-indent",
        "comment-unclosed",  # last: it leaves a comment open
    ),
    "blank-and-whitespace": (
        "blank-lines",  # first: its blank lines lead the file
        "whitespace-only-lines",
        "trailing-spaces",
        "clean",
        "unicode-format-chars",
    ),
}
RUNS: dict[str, bytes] = {
    name: b"\n\n# next\n\n".join(CORPUS[c].rstrip(b"\n") for c in cases) + b"\n"
    for name, cases in _BATCHED.items()
}
RUNS.update(
    (case, content)
    for case, content in CORPUS.items()
    if not any(case in cases for cases in _BATCHED.values())
)


@dataclass(frozen=True, slots=True)
class Loaded:
    """One case's run: the memory dir memd names, what the agent and memd showed."""

    memory_dir: Path
    agent: tuple[str, str] | None
    memd: str | None


def _load(project: Project, case: str) -> Loaded:
    """Run the release once on the index of `case`."""
    index = project.write_index(RUNS[case])
    model, _ = project.run_agent([text("ok")])
    return Loaded(index.parent, agent_index(model), memd_index(project))


@pytest.fixture(name="loaded", scope="module")
def _loaded(
    release: Release, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Future[Loaded]]:
    return two_at_a_time(release, tmp_path_factory, list(RUNS), _load)


@pytest.fixture(name="known_open")
def _known_open(request: pytest.FixtureRequest, release: Release) -> None:
    """Mark this case a strict xfail where KNOWN_OPEN names it."""
    reason = KNOWN_OPEN.get((release.version, request.node.callspec.params["case"]))
    if reason is not None:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("case", list(RUNS))
@pytest.mark.usefixtures("known_open")
def test_index_equals(loaded: dict[str, Future[Loaded]], case: str) -> None:
    """The index the agent loads is byte for byte the index memd shows."""
    run = loaded[case].result()

    assert (run.memd is None) == (run.agent is None), (run.agent, run.memd)
    if run.agent is not None:
        assert str(run.memory_dir).rstrip("/") == run.agent[0]
        assert run.memd == run.agent[1]
