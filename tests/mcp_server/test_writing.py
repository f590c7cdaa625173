"""memory_write: the file and index line it writes lint clean, or nothing is written.

Driven through `memd.mcp_server.tools.write_memory` on real directories; the
proof for arbitrary inputs is a Hypothesis property.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memd.claude_code.paths import resolve_memory_location
from memd.config import load_config
from memd.lint.engine import lint_memdir
from memd.mcp_server.tools import Project, ToolFailedError, write_memory
from memd.memory.index import parse_index
from memd.memory.memfile import parse_memory_file
from memd.memory.reader import load_memdir
from tests.strategies import any_text

CLEAN_INDEX = "- [Role](user_role.md) — the user is a data scientist new to Rust\n"
CLEAN_TOPIC = (
    "---\nname: Role\ndescription: The user is a data scientist new to Rust\n"
    "type: user\n---\nExplain Rust through Python analogies.\n"
)
WHY_HOW = "Rule first.\n\n**Why:** it broke before.\n**How to apply:** always.\n"


def new_project(index: str = CLEAN_INDEX, topic: str | None = CLEAN_TOPIC) -> Project:
    """A fresh project (its own directory) whose memory lints clean."""
    root = tempfile.mkdtemp(prefix="proj-")
    location = resolve_memory_location(root)
    memory = Path(location.memory_dir)
    memory.mkdir(parents=True)
    if topic is not None:
        (memory / "user_role.md").write_text(topic)
    if index:
        (memory / "MEMORY.md").write_text(index)
    return Project(location, load_config(), {})


def snapshot_of(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file()
    }


def findings(project: Project) -> list[str]:
    memdir = load_memdir(project.memory_dir)
    return [
        f"{d.path} {d.code} {d.message}"
        for d in lint_memdir(memdir)
        if d.severity in ("error", "warning")
    ]


types = st.sampled_from(["user", "feedback", "project", "reference", "Feedback", ""])


class TestArbitraryInputs:
    @given(name=any_text, description=any_text, type=types, body=any_text)
    @example(name="x", description="", type="user", body="")
    @example(name="a: b", description="- [x](y)", type="feedback", body="---\n")
    @example(
        name="名前",
        description="日本語の説明をここに書きます",
        type="user",
        body="本文",
    )
    def test_clean_or_nothing_written(
        self, name: str, description: str, type: str, body: str
    ) -> None:
        """Any input lints clean once written, or is refused with nothing changed."""
        project = new_project()
        memory = Path(project.memory_dir)
        before = snapshot_of(memory)
        try:
            result = write_memory(project, name, description, type, body)
        except ToolFailedError:
            assert before == snapshot_of(memory)
            return

        assert [] == findings(project)
        assert (memory / str(result["relpath"])).is_file()


printable = st.characters(
    whitelist_categories=("Lu", "Ll", "Lo", "Nd", "Zs"), max_codepoint=0x9FFF
)
names = st.text(printable, min_size=1, max_size=60).filter(lambda s: s.strip())
descriptions = st.text(printable, min_size=25, max_size=120).filter(
    lambda s: len(" ".join(s.split())) >= 25
)


# Markdown that, left raw on an index line, changes how it or the index reads.
HOSTILE_PIECES = (
    "<!--",
    "-->",
    "```",
    "~~~",
    "[",
    "](",
    "]",
    "[x]: other.md",
    "[x](../../../etc/passwd)",
    "[[Role]]",
    "![i](user_role.md)",
    "<div>",
    "</div>",
    "<https://example.com>",
    "|",
    "`",
    "``",
    "\\",
    "\n",
    "\r\n",
    "\u2028",
    "#",
    "*",
    "_",
)
hostile_text = st.lists(
    st.one_of(st.sampled_from(HOSTILE_PIECES), st.text(printable, max_size=8)),
    max_size=12,
).map("".join)


class TestHostileMarkdown:
    @given(name=hostile_text, description=hostile_text)
    @example(name="Comment", description="opens a comment <!-- and never closes it")
    @example(name="Fence", description="``` a fence opener in the description")
    @example(name="a ` b", description="c ` d and more words to be specific")
    @example(name="Ref", description="[x]: other.md and [Role] [[Role]] ![i](x.md)")
    @example(name="Out", description="see [x](../../../etc/passwd) for the secrets")
    def test_a_write_never_refuses_the_next(self, name: str, description: str) -> None:
        """Whatever a write holds, it is refused or written as one entry, and the
        next ordinary write is accepted."""
        project = new_project()
        memory = Path(project.memory_dir)
        before = snapshot_of(memory)
        try:
            result = write_memory(project, name, description, "user", "A body.")
        except ToolFailedError:
            assert before == snapshot_of(memory)
        else:
            relpath = str(result["relpath"])
            index = (memory / "MEMORY.md").read_text()
            last = index.rstrip("\n").count("\n") + 1
            own = [e for e in parse_index(index) if e.line == last]

            assert [relpath] == [e.target for e in own]
            assert [] == findings(project)

        after = write_memory(
            project,
            "Follow-up",
            "A later ordinary memory about the user's editor settings",
            "user",
            "A body.",
        )

        assert [] == findings(project)
        assert (memory / str(after["relpath"])).is_file()


class TestHostileMarkdownIsWritten:
    @pytest.mark.parametrize("piece", HOSTILE_PIECES)
    @pytest.mark.parametrize("field", ["name", "description"])
    def test_escaped_not_refused(self, piece: str, field: str) -> None:
        """Each piece, in a name or a description, is written as one clean entry."""
        project = new_project()
        memory = Path(project.memory_dir)
        name = f"Note {piece} x" if field == "name" else "Plain"
        description = f"The user said {piece} about the deploy pipeline"

        result = write_memory(project, name, description, "user", "A body.")
        index = (memory / "MEMORY.md").read_text()
        entries = [e for e in parse_index(index) if e.line == index.count("\n")]

        assert [str(result["relpath"])] == [e.target for e in entries]
        assert [] == findings(project)

    def test_an_open_comment_above_does_not_hide_the_entry(self) -> None:
        """An `<!--` never closed hides nothing from the agent, nor the new entry.

        Both releases strip only a top-level comment that closes (issue 23's
        finding), so an entry below an open one is loaded, and counts.
        """
        project = new_project(index=CLEAN_INDEX + "<!-- a note never closed\n")

        result = write_memory(
            project, "Shell", "The user's login shell is fish", "user", "A body."
        )

        index = (Path(project.memory_dir) / "MEMORY.md").read_text()
        assert str(result["relpath"]) in [e.target for e in parse_index(index)]
        assert [] == findings(project)


class TestWellFormedInputs:
    @given(
        name=names,
        description=descriptions,
        type=st.sampled_from(["user", "reference"]),
        body=st.text(printable, min_size=1, max_size=300).filter(str.strip),
    )
    def test_always_written(
        self, name: str, description: str, type: str, body: str
    ) -> None:
        """A specific description and a body are always accepted, and lint clean."""
        project = new_project()

        result = write_memory(project, name, description, type, body)
        parsed = parse_memory_file(
            str(result["relpath"]),
            (Path(project.memory_dir) / str(result["relpath"])).read_bytes(),
        )

        assert [] == findings(project)
        assert (" ".join(description.split()), type) == (
            parsed.description,
            parsed.type,
        )


class TestWrite:
    def test_writes_topic_and_index_line(self) -> None:
        """The topic file is classic frontmatter and the entry follows the index."""
        project = new_project()

        result = write_memory(
            project,
            "Integration tests hit a real database",
            "Tests that touch the database must use a real one, never a mock",
            "feedback",
            WHY_HOW,
        )
        memory = Path(project.memory_dir)

        assert "feedback_integration-tests-hit-a-real-database.md" == result["relpath"]
        assert (
            "---\nname: Integration tests hit a real database\n"
            "description: Tests that touch the database must use a real one, never a"
            " mock\ntype: feedback\n---\n" + WHY_HOW
        ) == (memory / str(result["relpath"])).read_text()
        assert (
            CLEAN_INDEX
            + (
                "- [Integration tests hit a real database]"
                "(feedback_integration-tests-hit-a-real-database.md) — Tests that "
                "touch "
                "the database must use a real one, nev…\n"  # the hook cut near 150
            )
            == (memory / "MEMORY.md").read_text()
        )

    def test_nested_directory_gets_nested_frontmatter(self) -> None:
        """A directory written by the current release keeps its nested dialect."""
        nested = (
            "---\nname: role\ndescription: The user is a data scientist new to Rust\n"
            "metadata:\n  node_type: memory\n  type: user\n---\nBody.\n"
        )
        project = new_project(topic=nested)

        result = write_memory(
            project,
            "Deploy Window",
            "Deploys happen on Tuesdays only",
            "project",
            WHY_HOW,
        )
        text = (Path(project.memory_dir) / str(result["relpath"])).read_text()

        assert text.startswith(
            "---\nname: deploy-window\ndescription: Deploys happen on Tuesdays only\n"
            "metadata:\n  node_type: memory\n  type: project\n---\n"
        )

    def test_same_name_replaces_in_place(self) -> None:
        """Writing a memory whose name exists rewrites it; the index keeps one entry."""
        project = new_project()

        result = write_memory(
            project, "role", "The user is a data engineer fluent in Rust", "user", "Hi."
        )
        memory = Path(project.memory_dir)

        assert ("user_role.md", True) == (result["relpath"], result["replaced"])
        assert CLEAN_INDEX == (memory / "MEMORY.md").read_text()
        assert "data engineer" in (memory / "user_role.md").read_text()

    def test_chinese_name_gets_a_safe_file_name(self) -> None:
        """A name with no ASCII letters still gives a [a-z0-9_-] file name."""
        project = new_project()

        result = write_memory(
            project,
            "部署流程",
            "生产环境部署前先在预发布环境验证",
            "reference",
            "见 wiki。",
        )

        assert str(result["relpath"]).startswith("reference_memory-")
        assert [] == findings(project)

    def test_full_index_refuses_and_writes_nothing(self) -> None:
        """An index at 200 lines has no room: a clear refusal, nothing on disk."""
        index = CLEAN_INDEX + "".join(f"note {n}\n" for n in range(199))
        project = new_project(index=index)
        memory = Path(project.memory_dir)
        before = snapshot_of(memory)

        with pytest.raises(ToolFailedError, match="no room") as refused:
            write_memory(
                project, "Tabs", "The user wants tabs in every Go file", "user", "Tabs."
            )

        assert before == snapshot_of(memory)
        assert "run `memd fix` to compact it" in str(refused.value)

    @pytest.mark.parametrize(
        ("description", "type", "body", "message"),
        [
            ("The user wants tabs in every Go file", "opinion", "x", "type must be"),
            ("short", "user", "Tabs.", "M011"),
            ("The user wants tabs in every Go file", "feedback", "Tabs.", "B002"),
            ("The user wants tabs in every Go file", "user", "  \n", "B001"),
        ],
    )
    def test_refusals_name_the_rule(
        self, description: str, type: str, body: str, message: str
    ) -> None:
        """Each refusal says which rule the write would break."""
        project = new_project()

        with pytest.raises(ToolFailedError, match=message):
            write_memory(project, "Tabs", description, type, body)


class TestConcurrentWrites:
    def test_parallel_writes_keep_every_entry(self) -> None:
        """Eight writes at once: every file exists and the index links each one."""
        from concurrent.futures import ThreadPoolExecutor

        project = new_project()

        def write(number: int) -> object:
            return write_memory(
                project,
                f"Service {number} owner",
                f"Service number {number} is owned by the platform team",
                "reference",
                "Ask in #platform.",
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(write, range(8)))
        index = (Path(project.memory_dir) / "MEMORY.md").read_text()

        assert 8 == len({r["relpath"] for r in results})  # type: ignore[index]
        assert all(f"({r['relpath']})" in index for r in results)  # type: ignore[index]
        assert [] == findings(project)

    def test_busy_directory_refuses(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """While a dream holds the directory's flock, a write waits, then refuses."""
        import fcntl
        import os

        from memd.mcp_server import tools

        monkeypatch.setattr(tools, "LOCK_WAIT_SECONDS", 0.2)
        project = new_project()
        before = snapshot_of(Path(project.memory_dir))
        fd = os.open(project.memory_dir, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            with pytest.raises(ToolFailedError, match="busy"):
                write_memory(
                    project, "Tabs", "The user wants tabs in every Go file", "user", "x"
                )
        finally:
            os.close(fd)

        assert before == snapshot_of(Path(project.memory_dir))
