"""`memd mcp` over stdio, driven by the `mcp` SDK's own client against a subprocess.

No mocked transport: the server is the installed `memd` started in a real git
repository, as Claude Code starts it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memd.claude_code.paths import resolve_memory_location
from tests.conftest import MemDirMaker

MEMD = os.path.join(os.path.dirname(sys.executable), "memd")
TOOLS = ["memory_lint", "memory_log", "memory_read", "memory_recall", "memory_write"]
WHY_HOW = "Never mock the DB.\n\n**Why:** mocks hid a bug.\n**How to apply:** always.\n"


def call(project: Path, *steps: tuple[str, dict[str, object]]) -> list[object]:
    """Start `memd mcp` in `project`, run each (tool, arguments), return the results.

    A step named "list" lists tools; "prompt" reads the prompt resource.
    """

    async def session() -> list[object]:
        params = StdioServerParameters(
            command=MEMD, args=["mcp"], cwd=str(project), env=dict(os.environ)
        )
        results: list[object] = []
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                for name, arguments in steps:
                    if name == "list":
                        listed = await client.list_tools()
                        results.append(sorted(t.name for t in listed.tools))
                    elif name == "prompt":
                        read_back = await client.read_resource("memory://prompt")
                        results.append(read_back.contents[0].text)  # type: ignore[union-attr]
                    else:
                        results.append(await client.call_tool(name, arguments))
        return results

    return anyio.run(session)


def text_of(result: object) -> str:
    return "\n".join(c.text for c in result.content)  # type: ignore[attr-defined]


def memory_of(project: Path) -> Path:
    memory = Path(resolve_memory_location(str(project)).memory_dir)
    memory.mkdir(parents=True, exist_ok=True)
    return memory


class TestTools:
    def test_list_write_recall_read_lint(self, git_repo: Path) -> None:
        """The five tools exist; a written memory is recalled, read, lints clean."""
        memory = memory_of(git_repo)
        write = {
            "name": "Real database in tests",
            "description": "Integration tests must hit a real Postgres, never mocks",
            "type": "feedback",
            "body": WHY_HOW,
        }

        listed, written, recalled, read, lint, prompt = call(
            git_repo,
            ("list", {}),
            ("memory_write", write),
            ("memory_recall", {"query": "can I mock postgres in my tests?"}),
            ("memory_read", {"name_or_relpath": "Real database in tests"}),
            ("memory_lint", {}),
            ("prompt", {}),
        )
        relpath = "feedback_real-database-in-tests.md"

        assert TOOLS == listed
        assert {"relpath": relpath, "replaced": False} == {
            k: v for k, v in json.loads(text_of(written)).items() if k != "index_entry"
        }
        assert relpath == json.loads(text_of(recalled))["relpath"]
        assert (memory / relpath).read_text() == text_of(read)
        assert (False, "[]") == (lint.is_error, text_of(lint) or "[]")  # type: ignore[attr-defined]
        assert f"- [Real database in tests]({relpath})" in str(prompt)

    def test_log_appends_to_today(self, git_repo: Path) -> None:
        """memory_log appends one bullet to today's KAIROS log."""
        memory = memory_of(git_repo)

        (logged,) = call(git_repo, ("memory_log", {"text": "switched CI to arm64"}))
        path = memory / text_of(logged)

        assert path.read_text().rstrip().endswith("switched CI to arm64")

    def test_write_refusal_is_a_tool_error(self, git_repo: Path) -> None:
        """A write that would not lint clean comes back as an error, nothing written."""
        memory = memory_of(git_repo)

        (refused,) = call(
            git_repo,
            (
                "memory_write",
                {"name": "x", "description": "vague", "type": "user", "body": "b"},
            ),
        )

        assert refused.is_error  # type: ignore[attr-defined]
        assert "M011" in text_of(refused)
        assert [] == list(memory.iterdir())


class TestPathEscapes:
    @pytest.mark.parametrize(
        "path",
        [
            "../secret.md",
            "sub/../../secret.md",
            "/etc/passwd",
            "~/secret.md",
            "..\\secret.md",
            "../secret.md\0.md",
            "secret.md\0",
            "../secret.md\n",
            "\n../secret.md",
            "./../secret.md",
            "C:\\secret.md",
        ],
    )
    def test_read_outside_is_refused(self, git_repo: Path, path: str) -> None:
        """`../`, absolute and home paths never leave the memory directory."""
        memory = memory_of(git_repo)
        (memory.parent / "secret.md").write_text("TOP SECRET\n")

        (result,) = call(git_repo, ("memory_read", {"name_or_relpath": path}))

        assert result.is_error  # type: ignore[attr-defined]
        assert "TOP SECRET" not in text_of(result)
        assert "root:" not in text_of(result)

    def test_symlink_out_is_refused(self, git_repo: Path, tmp_path: Path) -> None:
        """A symlink in the memory directory pointing outside is never read."""
        memory = memory_of(git_repo)
        secret = tmp_path / "secret.md"
        secret.write_text("---\nname: leak\n---\nTOP SECRET\n")
        (memory / "leak.md").symlink_to(secret)

        by_path, by_name, recalled = call(
            git_repo,
            ("memory_read", {"name_or_relpath": "leak.md"}),
            ("memory_read", {"name_or_relpath": "leak"}),
            ("memory_recall", {"query": "top secret"}),
        )

        assert (True, True) == (by_path.is_error, by_name.is_error)  # type: ignore[attr-defined]
        assert "symlink" in text_of(by_path)
        assert "TOP SECRET" not in text_of(recalled)

    def test_symlinked_directory_and_index_are_refused(
        self, git_repo: Path, tmp_path: Path
    ) -> None:
        """A linked subdirectory or a MEMORY.md linked out is never read through."""
        memory = memory_of(git_repo)
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "secret.md").write_text("---\nname: leak\n---\nTOP SECRET\n")
        (outside / "MEMORY.md").write_text("- [leak](secret.md) TOP SECRET\n")
        (memory / "sub").symlink_to(outside)
        (memory / "MEMORY.md").symlink_to(outside / "MEMORY.md")

        results = call(
            git_repo,
            ("memory_read", {"name_or_relpath": "sub/secret.md"}),
            ("memory_read", {"name_or_relpath": "MEMORY.md"}),
            ("memory_recall", {"query": "top secret leak"}),
        )

        assert [True, True] == [r.is_error for r in results[:2]]  # type: ignore[attr-defined]
        assert all("TOP SECRET" not in text_of(r) for r in results)

    @pytest.mark.parametrize(
        ("name", "relpath"),
        [
            ("evil\0../../x", None),  # refused: control characters
            ("evil\n---\ntype: user\n../x", "user_evil-----type-user-x.md"),
            ("../\n/etc/x", "user_etc-x.md"),
        ],
    )
    def test_write_names_with_nul_or_newline_stay_inside(
        self, git_repo: Path, name: str, relpath: str | None
    ) -> None:
        """NUL is refused; a newline is a space: one plain file, no injected key."""
        memory = memory_of(git_repo)
        before = sorted(p.name for p in memory.parent.iterdir())

        (written,) = call(
            git_repo,
            (
                "memory_write",
                {
                    "name": name,
                    "description": "An attempt to write outside the memory directory",
                    "type": "feedback",
                    "body": WHY_HOW,
                },
            ),
        )
        files = sorted(p.name for p in memory.iterdir())

        assert before == sorted(p.name for p in memory.parent.iterdir())
        if relpath is None:
            assert written.is_error  # type: ignore[attr-defined]
            assert "control characters" in text_of(written)
            assert [] == files
        else:
            relpath = relpath.replace("user_", "feedback_")
            assert relpath == json.loads(text_of(written))["relpath"]
            assert ["MEMORY.md", relpath] == files
            front = (memory / relpath).read_text().split("---\n")[1].splitlines()
            assert ["type: feedback"] == [k for k in front if k.startswith("type")]

    def test_write_names_cannot_place_files(
        self, git_repo: Path, tmp_path: Path
    ) -> None:
        """A name full of path syntax becomes a plain file name inside the directory."""
        memory = memory_of(git_repo)
        before = sorted(p.name for p in memory.parent.iterdir())

        (written,) = call(
            git_repo,
            (
                "memory_write",
                {
                    "name": "../../../etc/evil",
                    "description": "An attempt to write outside the memory directory",
                    "type": "user",
                    "body": "nope",
                },
            ),
        )
        relpath = json.loads(text_of(written))["relpath"]

        assert "user_etc-evil.md" == relpath
        assert (memory / relpath).is_file()
        assert before == sorted(p.name for p in memory.parent.iterdir())


def test_unknown_project_is_a_usage_error(tmp_path: Path) -> None:
    """`memd mcp --project` of a missing directory: one line, exit 2."""
    import subprocess

    result = subprocess.run(
        [MEMD, "mcp", "--project", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )

    assert (2, 1) == (result.returncode, len(result.stderr.splitlines()))
    assert "not a directory" in result.stderr


def test_other_commands_never_import_mcp(make_memdir: MemDirMaker) -> None:
    """`memd recall` (and every other command) leaves the mcp SDK unloaded."""
    import subprocess

    code = (
        "import sys\n"
        "from memd.cli.main import main\n"
        "main(['recall', '--all', 'anything'])\n"
        "heavy = ('mcp', 'pydantic', 'starlette')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )

    assert "" == result.stdout.strip()


INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {'
    b'"protocolVersion": "2025-06-18", "capabilities": {}, '
    b'"clientInfo": {"name": "raw", "version": "1"}}}\n'
)


def raw_replies(project: Path, data: bytes, count: int) -> list[dict[str, object]]:
    """Write `data` to a real `memd mcp`'s stdin; return its first `count` replies."""
    proc = subprocess.Popen(
        [MEMD, "mcp"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None
    assert stdout is not None

    def feed() -> None:
        with contextlib.suppress(OSError):
            stdin.write(data)
            stdin.flush()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    replies: list[dict[str, object]] = []
    buffer = b""
    deadline = time.monotonic() + 60
    try:
        while len(replies) < count:
            ready, _, _ = select.select([stdout], [], [], deadline - time.monotonic())
            if not ready:
                pytest.fail(f"no answer after {replies!r}")
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                pytest.fail(f"memd mcp closed its stdout after {replies!r}")
            *lines, buffer = (buffer + chunk).split(b"\n")
            replies.extend(json.loads(line) for line in lines if line.strip())
    finally:
        proc.kill()
        writer.join(timeout=60)
        proc.wait()
        stdin.close()
        stdout.close()
    return replies


# Lines the SDK's own reader would drop unanswered, what memd answers, and
# under which id: the request's own whenever the line has one.
BAD_LINES = [
    (
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", '
        b'"params": {"_meta": {"x": "\\ud83d"}}}',
        -32600,
        5,
    ),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "ping\\udc00"}', -32600, 5),
    (b'{"\\ud800": 1}', -32700, None),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "p\xffing"}', -32600, 5),
    (b"\xed\xa0\xbd", -32700, None),  # a surrogate encoded as UTF-8 bytes
    (b"[" * 100_000, -32700, None),
    (b'{"a":' * 50_000, -32700, None),
    (b"not json at all", -32700, None),
    (b'{"jsonrpc": "2.0", "id": 5, "method": "x"', -32700, None),
    (b"[]", -32600, None),
    (b'{"jsonrpc": "1.0", "method": "ping"}', -32600, None),
    (b"x" * (9 * 1024 * 1024), -32700, None),
    # Over the line bound, with the id first (the SDK's client) or last
    # (Claude Code's): still answered under it, and the next line read.
    (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": '
        b'{"name": "memory_write", "arguments": {"body": "'
        + b"x" * (9 * 1024 * 1024)
        + b'"}}}',
        -32600,
        7,
    ),
    (
        b'{"method": "tools/call", "params": {"name": "memory_write", '
        b'"arguments": {"id": 3, "body": "'
        + b'\\u00e9\\"' * (1024 * 1024)
        + b'"}}, "jsonrpc": "2.0", "id": "last"}',
        -32600,
        "last",
    ),
]


class TestTheWire:
    @pytest.mark.parametrize("before_handshake", [True, False])
    def test_a_bad_line_is_answered_and_the_next_served(
        self, git_repo: Path, before_handshake: bool
    ) -> None:
        """Each bad line gets its JSON-RPC error, in order, under its id when it
        has one, and memd goes on: the request after them all is answered.
        Before the handshake the lobby answers them, after it the SDK's reader."""
        memory_of(git_repo)
        lines = [line for line, _, _ in BAD_LINES]
        ping = b'{"jsonrpc": "2.0", "id": 99, "method": "ping"}\n'
        first, last = ([], [INITIALIZE]) if before_handshake else ([INITIALIZE], [ping])
        data = b"\n".join([*first, *lines, *last])

        replies = raw_replies(git_repo, data, len(lines) + 2 - before_handshake)
        errors = replies[1 - before_handshake : -1]

        assert [(code, id_) for _, code, id_ in BAD_LINES] == [
            (e["error"]["code"], e["id"])  # type: ignore[index]
            for e in errors
        ]
        assert "result" in replies[-1]

    def test_an_invalid_request_keeps_its_id(self, git_repo: Path) -> None:
        """A JSON object with a usable id but no method is answered under that id."""
        memory_of(git_repo)

        (error,) = raw_replies(git_repo, b'{"jsonrpc": "2.0", "id": 9}\n', 1)

        assert (9, -32600) == (error["id"], error["error"]["code"])  # type: ignore[index]


def test_recall_follows_a_symlinked_memory_dir(git_repo: Path, tmp_path: Path) -> None:
    """The memory dir itself a link: memory_recall finds what the agent reads."""
    real = tmp_path / "real-memory"
    real.mkdir()
    (real / "user_editor.md").write_text(
        "---\nname: Editor\ndescription: The user edits in Helix\ntype: user\n---\nB.\n"
    )
    memory = Path(resolve_memory_location(str(git_repo)).memory_dir)
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.symlink_to(real, target_is_directory=True)

    (recalled,) = call(git_repo, ("memory_recall", {"query": "helix"}))

    assert "user_editor.md" == json.loads(text_of(recalled))["relpath"]


def test_log_escapes_control_characters(git_repo: Path) -> None:
    """memory_log with NUL, ESC and DEL writes visible escapes, never the bytes."""
    memory = memory_of(git_repo)

    (logged,) = call(git_repo, ("memory_log", {"text": "a\x00b\x1b[2Jc\x7fd"}))
    data = (memory / text_of(logged)).read_bytes()

    assert data.rstrip().endswith(b"a\\x00b\\x1b[2Jc\\x7fd")
    assert not any(byte < 0x20 and byte != 0x0A for byte in data)


def test_a_name_that_is_not_utf8_is_recalled_and_linted(git_repo: Path) -> None:
    """Results naming an undecodable file reach the client (its byte as `\\xe9`),
    and the server answers the next call."""
    memory = memory_of(git_repo)
    (memory / os.fsdecode(b"user_caf\xe9.md")).write_text(
        "---\nname: Cafe\ndescription: The user drinks flat whites\n"
        "type: user\n---\nB.\n"
    )
    (memory / "MEMORY.md").write_text("# Index\n")  # the file is an orphan (I006)

    recalled, linted, listed = call(
        git_repo,
        ("memory_recall", {"query": "flat whites"}),
        ("memory_lint", {}),
        ("list", {}),
    )

    assert "user_caf\\xe9.md" == json.loads(text_of(recalled))["relpath"]
    assert '"path": "user_caf\\\\xe9.md"' in text_of(linted)
    assert TOOLS == listed


def test_recall_read_and_lint_mask_a_secret(git_repo: Path) -> None:
    """memory_recall's snippet, memory_read's text and memory_lint's messages
    hand the agent no token from memory; the file itself keeps it."""
    token = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"  # noqa: S105
    memory = memory_of(git_repo)
    body = f"Charge cards with the key {token} in production.\n"
    (memory / "reference_billing.md").write_text(
        f"---\nname: Billing\ndescription: {token}\ntype: reference\n---\n{body}"
    )

    recalled, read, linted = call(
        git_repo,
        ("memory_recall", {"query": "charge cards production"}),
        ("memory_read", {"name_or_relpath": "reference_billing.md"}),
        ("memory_lint", {}),
    )

    shown = text_of(recalled) + text_of(read) + text_of(linted)
    assert token not in shown
    assert "[secret: stripe-access-token " in text_of(recalled)
    assert "[secret: stripe-access-token " in text_of(read)
    assert token in (memory / "reference_billing.md").read_text()
