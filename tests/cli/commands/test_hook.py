"""`memd hook`: Claude Code payloads piped through the installed `memd` as subprocesses.

Payloads follow Claude Code's documented hook input: every event carries
`session_id`, `transcript_path`, `cwd` and `hook_event_name`; PostToolUse adds
`tool_name`, `tool_input` and `tool_response`, whose Write and Edit shapes
carry `originalFile` (the file before the call, null when Write created it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memd.claude_code.paths import resolve_memory_location
from tests.conftest import Home

MEMD = str(Path(sys.executable).parent / "memd")
SESSION = "0f3c9a4e-7b1d-4c2e-9a8f-5d6e7f8a9b0c"

GOOD_TOPIC = """---
name: Integration tests hit a real database
description: Tests that touch the database must use a real one, never a mock
type: feedback
---
Use the real database in integration tests.

**Why:** a mocked database hid a broken migration last quarter.
**How to apply:** any test under tests/integration.
"""

BAD_TOPIC = """---
name: Integration tests hit a real database
type: feedbak
---
Use the real database.
"""


def topic(name: str, kind: str = "project") -> str:
    """A valid topic file of type `kind`."""
    return (
        f"---\nname: {name}\ndescription: What the team decided about {name}, "
        f"and where it applies\ntype: {kind}\n---\nThe decision.\n\n"
        "**Why:** it was asked for.\n**How to apply:** everywhere.\n"
    )


def run_hook(
    args: list[str], payload: object, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Pipe `payload` (JSON, or raw text) into `memd hook …` and return the result."""
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [MEMD, "hook", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def base_payload(cwd: Path, event: str, session: str = SESSION) -> dict[str, object]:
    return {
        "session_id": session,
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
    }


def post_tool_use(
    cwd: Path,
    tool: str,
    tool_input: dict[str, object],
    tool_response: dict[str, object],
    session: str = SESSION,
) -> dict[str, object]:
    """A PostToolUse payload shaped as Claude Code documents it."""
    return {
        **base_payload(cwd, "PostToolUse", session),
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": tool_response,
        "tool_use_id": "toolu_01ABC",
    }


def write_payload(cwd: Path, path: Path, content: str, original: str | None) -> dict:
    """Write `content` to `path` for real and return the Write tool's payload."""
    path.write_text(content)
    return post_tool_use(
        cwd,
        "Write",
        {"file_path": str(path), "content": content},
        {
            "type": "create" if original is None else "update",
            "filePath": str(path),
            "content": content,
            "structuredPatch": [],
            "originalFile": original,
        },
    )


def edit_payload(cwd: Path, path: Path, old: str, new: str) -> dict[str, object]:
    """Apply an Edit to `path` for real and return the Edit tool's payload."""
    original = path.read_text()
    path.write_text(original.replace(old, new, 1))
    return post_tool_use(
        cwd,
        "Edit",
        {"file_path": str(path), "old_string": old, "new_string": new},
        {
            "filePath": str(path),
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": False,
        },
    )


def bash_payload(
    cwd: Path, command: str, env: dict[str, str], tool: str = "Bash"
) -> dict[str, object]:
    """Run `command` with the real bash in `cwd` and return the Bash tool's payload."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return post_tool_use(
        cwd,
        tool,
        {"command": command, "description": "run a command"},
        {
            "stdout": done.stdout,
            "stderr": done.stderr,
            "interrupted": False,
            "isImage": False,
        },
    )


def session_start(cwd: Path, source: str, session: str = SESSION) -> dict[str, object]:
    """A SessionStart payload shaped as Claude Code documents it."""
    return {**base_payload(cwd, "SessionStart", session), "source": source}


def output_of(result: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert 0 == result.returncode, result.stderr
    return json.loads(result.stdout) if result.stdout else {}


def context_of(output: dict[str, object]) -> str:
    specific = output.get("hookSpecificOutput")
    return specific["additionalContext"] if isinstance(specific, dict) else ""


def over_budget_index(entries: int = 230) -> str:
    return "".join(
        f"- [Entry {i}](feedback_db.md) — note {i}\n" for i in range(entries)
    )


def age(directory: Path, seconds: int = 60) -> None:
    """Move every mtime in `directory` into the past, as memory written yesterday."""
    when = time.time() - seconds
    for path in [*directory.rglob("*"), directory]:
        os.utime(path, (when, when), follow_symlinks=False)


def modules_after_hook(
    payload: dict[str, object],
    names: tuple[str, ...],
    env: dict[str, str],
    event: str = "post-tool-use",
) -> subprocess.CompletedProcess[str]:
    """Run `memd hook <event>` in a fresh interpreter; print which of
    `names` it loaded, its exit code and the memd modules it loaded, on stderr.

    -S: no site, whose .pth files (an editable install's finder) import `re`
    before memd runs; memd and its dependencies are put on the path instead.
    """
    paths = [str(Path(__file__).resolve().parents[3]), *sys.path[1:]]
    script = (
        "import sys\n"
        f"sys.path[:0] = {paths!r}\n"
        "from memd.cli.main import main\n"
        f"code = main(['hook', {event!r}])\n"
        f"print(sorted(m for m in {names!r} if m in sys.modules), code, "
        "'memd.hooks.session_state' in sys.modules, "
        "' '.join(m for m in sys.modules if m.startswith('memd.lint')), "
        "file=sys.stderr)\n"
    )
    return subprocess.run(
        [sys.executable, "-S", "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture(name="memory_dir")
def _memory_dir(git_repo: Path) -> Path:
    """The real memory directory of `git_repo`, with one good topic file indexed."""
    path = Path(resolve_memory_location(str(git_repo)).memory_dir)
    path.mkdir(parents=True)
    (path / "feedback_db.md").write_text(GOOD_TOPIC)
    (path / "MEMORY.md").write_text(
        "- [Real database](feedback_db.md) — integration tests use it\n"
    )
    return path


@pytest.fixture(name="started")
def _started(git_repo: Path, memory_dir: Path, isolated_home: Home) -> Path:
    """A session whose SessionStart hook has run (so its memory's stat is recorded)."""
    result = run_hook(
        ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
    )
    assert 0 == result.returncode, result.stderr
    return memory_dir


def _start_with_index(git_repo: Path, memory_dir: Path, text: str) -> Path:
    """Write MEMORY.md, then run SessionStart so the session records it as it is."""
    index = memory_dir / "MEMORY.md"
    index.write_text(text)
    result = run_hook(
        ["session-start"], session_start(git_repo, "startup"), os.environ.copy()
    )
    assert 0 == result.returncode, result.stderr
    return index


class TestPostToolUse:
    def test_write_of_a_bad_file_blocks_and_its_fix_is_silent(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """A broken Write blocks once, naming it; later calls and its fix are quiet."""
        target = started / "feedback_new.md"

        blocked = run_hook(
            ["post-tool-use"],
            write_payload(git_repo, target, BAD_TOPIC, None),
            isolated_home.env(),
        )
        unrelated = run_hook(
            ["post-tool-use"],
            bash_payload(git_repo, "true", isolated_home.env()),
            isolated_home.env(),
        )
        fixed = run_hook(
            ["post-tool-use"],
            edit_payload(
                git_repo,
                target,
                "type: feedbak",
                "description: Use a real database in tests\ntype: feedback",
            ),
            isolated_home.env(),
        )

        output = output_of(blocked)
        assert "block" == output["decision"]
        assert "`feedback_new.md`" in output["reason"]
        assert "M006" in output["reason"]
        assert "feedbak" in output["reason"]
        assert "did you mean `type: feedback`?" in output["reason"]
        assert {} == output_of(unrelated)
        assert {} == output_of(fixed)

    def test_bash_heredoc_to_the_tilde_path_is_blocked(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """`cat > ~/.claude/…/project_x.md <<EOF` with a bad type is blocked."""
        relative = started.relative_to(isolated_home.home)
        command = (
            f"cat > ~/{relative}/project_x.md <<'EOF'\n"
            "---\nname: Release train\ndescription: Releases leave every second "
            "Tuesday from main\ntype: projct\n---\nBody.\nEOF"
        )

        result = run_hook(
            ["post-tool-use"],
            bash_payload(git_repo, command, isolated_home.env()),
            isolated_home.env(),
        )

        output = output_of(result)
        assert "block" == output["decision"]
        assert "`project_x.md`" in output["reason"]
        assert "M008" in output["reason"]
        assert "did you mean `type: project`?" in output["reason"]

    def test_relative_write_from_a_cwd_inside_memory_is_seen(
        self, started: Path, isolated_home: Home
    ) -> None:
        """A shell in the memory directory writing `./x.md` is caught by stat."""
        payload = bash_payload(
            started, "printf -- '---\\nname: x\\n---\\n' > ./x.md", isolated_home.env()
        )

        output = output_of(run_hook(["post-tool-use"], payload, isolated_home.env()))

        assert "block" == output["decision"]
        assert "`x.md`" in output["reason"]

    def test_powershell_write_is_seen(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """A PowerShell Set-Content is seen like any writer (the test writes it).

        No pwsh runs on Debian CI; memd never reads the command, only the stat.
        """
        target = started / "user_role.md"
        target.write_text("no frontmatter here\n")
        payload = post_tool_use(
            git_repo,
            "PowerShell",
            {"command": f"Set-Content -Path '{target}' -Value 'no frontmatter here'"},
            {"stdout": "", "stderr": "", "interrupted": False},
        )

        output = output_of(run_hook(["post-tool-use"], payload, isolated_home.env()))

        assert "block" == output["decision"]
        assert "M001" in output["reason"]

    def test_a_clean_write_next_to_an_old_error_is_not_blocked(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """An old broken file is said as context, never blamed on a clean write."""
        (memory_dir / "feedback_db.md").write_text(BAD_TOPIC)
        run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )

        clean = run_hook(
            ["post-tool-use"],
            write_payload(git_repo, memory_dir / "project_a.md", topic("a"), None),
            isolated_home.env(),
        )

        assert {} == output_of(clean)

    def test_without_a_record_old_problems_are_said_once(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Without SessionStart, the first call notes old errors; the next is quiet."""
        (memory_dir / "feedback_db.md").write_text(BAD_TOPIC)
        payload = bash_payload(git_repo, "true", isolated_home.env())

        first = output_of(run_hook(["post-tool-use"], payload, isolated_home.env()))
        second = output_of(run_hook(["post-tool-use"], payload, isolated_home.env()))

        assert "decision" not in first
        assert "PostToolUse" == first["hookSpecificOutput"]["hookEventName"]
        assert "feedback_db.md" in context_of(first)
        assert "did not cause them" in context_of(first)
        assert {} == second

    def test_growing_an_over_budget_index_blocks(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """An Edit that adds a line to an index already over 200 lines is blocked."""
        index = started / "MEMORY.md"
        write = write_payload(git_repo, index, over_budget_index(), index.read_text())
        first = output_of(run_hook(["post-tool-use"], write, isolated_home.env()))
        grow = edit_payload(
            git_repo, index, "- [Entry 0]", "- [New](feedback_db.md) — new\n- [Entry 0]"
        )

        second = output_of(run_hook(["post-tool-use"], grow, isolated_home.env()))

        assert "block" == first["decision"]
        assert "block" == second["decision"]
        assert "231 lines" in second["reason"]
        assert "grew `MEMORY.md`" in second["reason"]
        assert "will not be loaded" in first["reason"]  # the lint names the entries cut
        assert "Run `memd fix` to compact it" in first["reason"]

    def test_shrinking_an_over_budget_index_does_not_block(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Shrinking an index that stays over the limit is progress, not a block."""
        index = _start_with_index(git_repo, memory_dir, over_budget_index(240))
        shrink = write_payload(
            git_repo, index, over_budget_index(220), index.read_text()
        )

        output = output_of(run_hook(["post-tool-use"], shrink, isolated_home.env()))

        assert "decision" not in output
        assert "I002" in context_of(output)

    def test_an_edit_that_keeps_an_over_budget_index_as_long_does_not_block(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Same line count over 200 (worse versus same): a note, never a block."""
        index = _start_with_index(git_repo, memory_dir, over_budget_index(240))
        same = edit_payload(git_repo, index, "note 7\n", "note seven\n")

        output = output_of(run_hook(["post-tool-use"], same, isolated_home.env()))

        assert "decision" not in output
        assert "I002" in context_of(output)

    @pytest.mark.parametrize(
        ("new", "is_blocked"), [("y" * 9, False), ("y" * 10, False), ("y" * 11, True)]
    )
    def test_an_index_over_the_unit_limit_blocks_only_when_longer(
        self,
        git_repo: Path,
        memory_dir: Path,
        isolated_home: Home,
        new: str,
        is_blocked: bool,
    ) -> None:
        """Over 25,000 units: a shorter or equal edit passes, one more unit blocks."""
        index = _start_with_index(
            git_repo,
            memory_dir,
            "".join(f"- [E{i}](feedback_db.md) — {'x' * 200}\n" for i in range(150))
            + "- [Last](feedback_db.md) — zzzzzzzzzz\n",
        )
        edit = edit_payload(git_repo, index, "z" * 10, new)

        output = output_of(run_hook(["post-tool-use"], edit, isolated_home.env()))

        assert is_blocked == ("block" == output.get("decision")), output
        assert "I003" in (output.get("reason") or context_of(output))

    def test_unrelated_tools_are_silent(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """Bash, a project Write and a NotebookEdit touching no memory say nothing."""
        (git_repo / "nb.ipynb").write_text('{"cells": []}')
        payloads = [
            bash_payload(git_repo, "ls > /dev/null", isolated_home.env()),
            write_payload(git_repo, git_repo / "README.md", "hi\n", "hello\n"),
            post_tool_use(
                git_repo,
                "NotebookEdit",
                {
                    "notebook_path": str(git_repo / "nb.ipynb"),
                    "new_source": "print(1)",
                    "cell_type": "code",
                    "edit_mode": "insert",
                },
                {"new_source": "print(1)", "cell_type": "code", "error": ""},
            ),
        ]

        results = [
            run_hook(["post-tool-use"], p, isolated_home.env()) for p in payloads
        ]

        assert [(0, "")] * 3 == [(r.returncode, r.stdout) for r in results]

    def test_no_memory_path_imports_nothing_heavy(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A call that touched no memory loads no config, YAML, logging, argparse,
        and not even `json` or `re` (memd.fastjson reads the payload)."""
        heavy = (
            *("tomllib", "yaml", "structlog", "argparse", "dataclasses"),
            *("json", "re", "enum"),
        )
        age(memory_dir)
        run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )
        payload = bash_payload(git_repo, "true", isolated_home.env())

        result = modules_after_hook(payload, heavy, isolated_home.env())

        assert "" == result.stdout
        assert "[] 0 True" == result.stderr.strip()

    def test_a_clean_write_loads_no_yaml_config_file_parser_or_logging(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Plain frontmatter, the agent's `metadata:` dialect included, skips PyYAML."""
        heavy = ("yaml", "frontmatter", "tomllib", "structlog", "logging", "argparse")
        (memory_dir / "project_release.md").write_text(
            "---\nname: release-train\ndescription: Releases leave every second "
            "Tuesday from main\nmetadata:\n  node_type: memory\n  type: project\n"
            f"  originSessionId: {SESSION}\n  modified: 2026-11-02T10:14:00Z\n---\n"
            "Release on Tuesdays.\n\n**Why:** the team asked.\n"
            "**How to apply:** plan merges for Monday.\n"
        )
        with (memory_dir / "MEMORY.md").open("a") as index:
            index.write("- [Release train](project_release.md) — every Tuesday\n")
        age(memory_dir)
        run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )
        payload = write_payload(
            git_repo, memory_dir / "feedback_db.md", GOOD_TOPIC + "More.\n", GOOD_TOPIC
        )

        result = modules_after_hook(payload, heavy, isolated_home.env())

        loaded, code, _, *lint_modules = result.stderr.split(" ")
        assert ("", "[]", "0") == (result.stdout, loaded, code)
        # the long way ran (it linted the write), and found nothing to say
        assert "memd.lint.engine" in [m.strip() for m in lint_modules]

    @pytest.mark.parametrize(
        "payload",
        [
            "",
            "not json",
            "[1, 2]",
            '{"tool_name": 5}',
            '{"cwd": 12, "tool_name": "Write", "tool_input": "x"}',
            '{"session_id": "../../etc", "cwd": "/", "tool_input": {"file_path": 3}}',
        ],
    )
    def test_malformed_payload_is_silent(
        self, payload: str, isolated_home: Home
    ) -> None:
        """A malformed payload prints nothing and exits 0."""
        result = run_hook(["post-tool-use"], payload, isolated_home.env())

        assert (0, "") == (result.returncode, result.stdout)


class TestSessionStart:
    def test_warm_start_without_a_loss_notice_loads_no_hashlib(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """With no loss notice pending anywhere, the warm start keys none (sha256)."""
        age(memory_dir)
        age(git_repo)
        env = isolated_home.env()
        for session in ("first", "second"):
            run_hook(
                ["session-start"], session_start(git_repo, "startup", session), env
            )

        result = modules_after_hook(
            session_start(git_repo, "startup"), ("hashlib",), env, "session-start"
        )

        assert ("", "[] 0") == (result.stdout, " ".join(result.stderr.split()[:2]))

    def test_clean_memory_says_nothing(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Healthy memory adds no context."""
        result = run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )

        assert (0, "") == (result.returncode, result.stdout)

    @pytest.mark.parametrize(
        "source", ["startup", "resume", "clear", "compact", "fork"]
    )
    def test_every_source_reports_the_index(
        self, source: str, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """An index over 200 lines is reported for every source, cold and then warm."""
        (memory_dir / "MEMORY.md").write_text(over_budget_index())
        age(memory_dir)
        age(git_repo)  # nothing racy: the second start is served from the snapshot

        cold = run_hook(
            ["session-start"], session_start(git_repo, source), isolated_home.env()
        )
        warm = run_hook(
            ["session-start"],
            session_start(git_repo, source, session="second"),
            isolated_home.env(),
        )

        for result in (cold, warm):
            output = output_of(result)["hookSpecificOutput"]
            assert "SessionStart" == output["hookEventName"]
            assert "I002" in output["additionalContext"]
            assert "201-230" in output["additionalContext"]

    def test_inject_prompt_carries_the_rendered_prompt(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """With --inject-prompt the memory prompt, index included, is the context."""
        result = run_hook(
            ["session-start", "--inject-prompt"],
            session_start(git_repo, "startup"),
            isolated_home.env(),
        )

        context = context_of(output_of(result))
        assert "## MEMORY.md" in context
        assert "feedback_db.md" in context

    def test_inject_prompt_stays_under_the_limit(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """A 20,000-character prompt is cut under 10,000 and points at prompt.md."""
        line = "- [Entry](feedback_db.md) — " + "a long hook that keeps going " * 4
        (memory_dir / "MEMORY.md").write_text((line + "\n") * 150)

        result = run_hook(
            ["session-start", "--inject-prompt"],
            session_start(git_repo, "startup"),
            isolated_home.env(),
        )

        context = context_of(output_of(result))
        named = [w.strip("`.]") for w in context.split() if w.endswith("prompt.md`.]")]
        full = Path(named[0]).read_text()
        assert len(context) < 10_000
        assert len(full) > 20_000
        assert context.startswith(full[:2000])

    def test_disabled_memory_says_nothing(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """When auto memory is off, the hook is silent even with --inject-prompt."""
        env = isolated_home.env(CLAUDE_CODE_DISABLE_AUTO_MEMORY="1")

        result = run_hook(
            ["session-start", "--inject-prompt"], session_start(git_repo, "fork"), env
        )

        assert (0, "") == (result.returncode, result.stdout)

    def test_internal_error_is_logged_not_raised(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """A broken memd config: silent, exit 0, a log line on stderr."""
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text("this is = = not toml\n")

        result = run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )

        assert (0, "") == (result.returncode, result.stdout)
        assert "hook_failed" in result.stderr


class TestWholeSession:
    def test_a_session_from_start_to_fork(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Over-budget index: a notice, 3 quiet writes, a block, a quiet fix, a fork."""
        env = isolated_home.env()
        (memory_dir / "MEMORY.md").write_text(over_budget_index())
        relative = memory_dir.relative_to(isolated_home.home)

        start = output_of(
            run_hook(["session-start"], session_start(git_repo, "startup"), env)
        )
        writes = [
            write_payload(git_repo, memory_dir / "project_a.md", topic("a"), None),
            bash_payload(
                git_repo,
                f"cat > ~/{relative}/project_b.md <<'EOF'\n{topic('b')}EOF",
                env,
            ),
            edit_payload(git_repo, memory_dir / "project_a.md", "The decision.", "Ok."),
        ]
        quiet = [output_of(run_hook(["post-tool-use"], p, env)) for p in writes]
        bad = bash_payload(
            git_repo,
            f"sed -i 's/type: project/type: projct/' ~/{relative}/project_b.md",
            env,
        )
        blocked = output_of(run_hook(["post-tool-use"], bad, env))
        fix = edit_payload(
            git_repo, memory_dir / "project_b.md", "type: projct", "type: project"
        )
        fixed = output_of(run_hook(["post-tool-use"], fix, env))
        fork = output_of(
            run_hook(
                ["session-start"],
                session_start(git_repo, "fork", session="fork-1"),
                env,
            )
        )

        assert "I002" in context_of(start)
        assert [{}, {}, {}] == quiet
        assert "block" == blocked["decision"]
        assert "`project_b.md`" in blocked["reason"]
        assert "MEMORY.md" not in blocked["reason"]
        assert {} == fixed
        assert "I002" in context_of(fork)


class TestInstall:
    def run_install(
        self, args: list[str], env: dict[str, str]
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [MEMD, "hook", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    def test_user_install_keeps_layout_and_uninstall_restores_the_bytes(
        self, isolated_home: Home
    ) -> None:
        """Install keeps tab indent and key order; uninstall gives the bytes back."""
        settings = isolated_home.claude / "settings.json"
        settings.parent.mkdir(parents=True)
        original = (
            '{\n\t"model": "opus",\n\t"hooks": {"Stop": [{"hooks": '
            '[{"type": "command", "command": "say hi"}]}]},\n\t"theme": "dark"\n}'
        )
        settings.write_text(original)

        first = self.run_install(["install", "--user"], isolated_home.env())
        installed_text = settings.read_text()
        installed = json.loads(installed_text)
        backup = (isolated_home.claude / "settings.json.memd-backup").read_text()
        second = self.run_install(["install"], isolated_home.env())
        removed = self.run_install(["uninstall", "--user"], isolated_home.env())

        assert 0 == first.returncode, first.stderr
        assert original == backup
        assert installed_text.startswith(  # the user's one-line hooks stay one line
            '{\n\t"model": "opus",\n\t"hooks": {"Stop": [{"hooks": '
            '[{"type": "command", "command": "say hi"}]}], "SessionStart": ['
        )
        assert ["model", "hooks", "theme"] == list(installed)
        assert not installed_text.endswith("\n")
        assert "already installed" in second.stdout
        assert 0 == removed.returncode
        assert original == settings.read_text()
        assert not (isolated_home.claude / "settings.json.memd-backup").exists()

    def test_installed_hooks_cover_every_writing_tool_and_source(
        self, isolated_home: Home
    ) -> None:
        """PostToolUse covers the five writing tools; SessionStart has no matcher."""
        self.run_install(["install"], isolated_home.env())

        hooks = json.loads((isolated_home.claude / "settings.json").read_text())[
            "hooks"
        ]

        post = hooks["PostToolUse"][0]
        assert {"Write", "Edit", "NotebookEdit", "Bash", "PowerShell"} == set(
            post["matcher"].split("|")
        )
        assert "matcher" not in hooks["SessionStart"][0]

    def test_a_backup_is_never_overwritten(self, isolated_home: Home) -> None:
        """When an edit prevents the exact restore, the first backup stays as it was."""
        settings = isolated_home.claude / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text('{"model": "opus"}\n')
        backup = isolated_home.claude / "settings.json.memd-backup"

        self.run_install(["install"], isolated_home.env())
        edited = json.loads(settings.read_text())
        edited["theme"] = "dark"
        settings.write_text(json.dumps(edited, indent=2) + "\n")
        self.run_install(["uninstall"], isolated_home.env())
        after_uninstall = json.loads(settings.read_text())
        self.run_install(["install"], isolated_home.env())

        assert {"model": "opus", "theme": "dark"} == after_uninstall
        assert '{"model": "opus"}\n' == backup.read_text()

    def test_project_file_memd_created_is_removed(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """--project install creates settings.local.json; uninstall removes it again."""
        target = git_repo / ".claude" / "settings.local.json"

        installed = self.run_install(
            ["install", "--project", str(git_repo)], isolated_home.env()
        )
        existed = target.exists()
        removed = self.run_install(
            ["uninstall", "--project", str(git_repo)], isolated_home.env()
        )

        assert (0, 0) == (installed.returncode, removed.returncode)
        assert existed
        assert not target.exists()
        assert not (git_repo / ".claude" / "settings.local.json.memd-backup").exists()

    def test_project_dry_run_writes_nothing(
        self, git_repo: Path, isolated_home: Home
    ) -> None:
        """--dry-run prints the diff and leaves no file behind."""
        result = self.run_install(
            ["install", "--project", str(git_repo), "--dry-run"], isolated_home.env()
        )

        assert 0 == result.returncode
        assert "hook post-tool-use" in result.stdout
        assert not (git_repo / ".claude" / "settings.local.json").exists()

    def test_invalid_settings_are_left_untouched(self, isolated_home: Home) -> None:
        """Settings that are not JSON: exit 2, one line, file not rewritten."""
        settings = isolated_home.claude / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text("{not json")

        result = self.run_install(["install"], isolated_home.env())

        assert 2 == result.returncode
        assert 1 == len(result.stderr.strip().splitlines())
        assert "{not json" == settings.read_text()


class TestProfileInForce:
    def test_the_session_record_carries_the_pinned_release(
        self, git_repo: Path, memory_dir: Path, isolated_home: Home
    ) -> None:
        """Later calls lint by the release in force at start, without a new probe."""
        config = isolated_home.config / "memd" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[agent]\nversion = "2.1.112"\n')
        result = run_hook(
            ["session-start"], session_start(git_repo, "startup"), isolated_home.env()
        )
        assert 0 == result.returncode, result.stderr
        (record,) = (isolated_home.state / "memd" / "hooks").iterdir()
        assert "profile 2.1.112" in record.read_text().splitlines()

        target = memory_dir / "project_new.md"
        target.write_text(topic("project_new"))
        done = run_hook(
            ["post-tool-use"],
            write_payload(git_repo, target, topic("project_new"), None),
            isolated_home.env(),
        )

        assert 0 == done.returncode, done.stderr
        assert "profile 2.1.112" in record.read_text().splitlines()


class TestSecretsWritten:
    """The agent's own write puts a likely secret in memory: it is told to remove it."""

    TOKEN = "ghp_4fJ9kLm2Qw8Rt6Yz1Xc3Vb5Nm7As0Df2Gh4J"  # noqa: S105

    def test_a_token_in_a_written_topic_file_is_named_by_file_and_line(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        content = topic("deploy") + f"\nDeploy with {self.TOKEN} as the token.\n"

        output = output_of(
            run_hook(
                ["post-tool-use"],
                write_payload(git_repo, started / "project_deploy.md", content, None),
                isolated_home.env(),
            )
        )

        line = content.splitlines().index(f"Deploy with {self.TOKEN} as the token.") + 1
        assert "block" == output["decision"]
        assert f"`project_deploy.md` line {line}" in output["reason"]
        assert "github-token" in output["reason"]
        assert "remove it" in output["reason"]
        assert self.TOKEN not in output["reason"]

    def test_a_token_appended_to_a_daily_log_is_said_too(
        self, git_repo: Path, started: Path, isolated_home: Home
    ) -> None:
        """Lint reads topic files only; the hook scans every file the call changed."""
        log = started / "logs" / "2026" / "05" / "2026-05-20.md"
        log.parent.mkdir(parents=True)
        command = (
            f"printf -- '- 10:00 db is postgres://app:Tr0ub4dor3x@db/app\\n' > {log}"
        )

        output = output_of(
            run_hook(
                ["post-tool-use"],
                bash_payload(git_repo, command, isolated_home.env()),
                isolated_home.env(),
            )
        )

        assert "block" == output["decision"]
        assert "`logs/2026/05/2026-05-20.md` line 1" in output["reason"]
        assert "database-url" in output["reason"]
