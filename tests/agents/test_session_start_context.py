"""`memd hook session-start --agent NAME`: Claude Code's index, read-only, in budget.

The real `memd` runs the hook as the agents do (payload on stdin, JSON out);
the project's Claude Code memory is real files. The agents' own reading of
the output is in tests/e2e/test_codex.py and test_gemini.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memd.agents import get_agent
from memd.claude_code.paths import resolve_memory_location
from tests.conftest import Home

MEMD = str(Path(sys.executable).parent / "memd")


def hook(agent: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "s1", "cwd": str(cwd), "hook_event_name": "SessionStart"}
    return subprocess.run(
        [MEMD, "hook", "session-start", "--agent", agent],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=cwd,
    )


def memory_of(repo: Path) -> Path:
    memory = Path(resolve_memory_location(str(repo)).memory_dir)
    memory.mkdir(parents=True, exist_ok=True)
    return memory


def context(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = output["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_the_index_as_claude_code_loads_it_named_and_read_only(
    agent: str, git_repo: Path
) -> None:
    memory = memory_of(git_repo)
    (memory / "MEMORY.md").write_text(
        "---\nname: index\n---\n<!-- a note to self -->\n"
        "- [Deploy](deploy.md) — deploys go through `make ship`\n"
    )

    text = context(hook(agent, git_repo))

    assert text.startswith("# Claude Code's memory of ")
    assert "(read-only)" in text
    assert "do not edit them" in text
    assert str(memory) in text
    assert text.endswith("- [Deploy](deploy.md) — deploys go through `make ship`")
    assert "a note to self" not in text  # stripped, as Claude Code strips it
    assert "name: index" not in text


def test_an_index_over_claude_codes_cut_is_cut_as_claude_code_cuts_it(
    git_repo: Path,
) -> None:
    memory = memory_of(git_repo)
    lines = [f"- [T{i}](t{i}.md)" for i in range(300)]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")

    text = context(hook("gemini", git_repo))

    assert "- [T199](t199.md)\n" in text  # Claude Code keeps 200 lines
    assert "\n- [T200](t200.md)\n" not in text
    assert "> WARNING: MEMORY.md is 300 lines (limit: 200)" in text
    assert len(text.encode()) <= get_agent("gemini").context_limit_bytes


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_the_context_stays_within_the_agents_limit(agent: str, git_repo: Path) -> None:
    memory = memory_of(git_repo)
    entry = "- [A long entry](long.md) — " + "ü" * 100
    (memory / "MEMORY.md").write_text("\n".join([entry] * 150) + "\n")

    text = context(hook(agent, git_repo))

    limit = get_agent(agent).context_limit_bytes
    assert len(text.encode()) <= limit
    assert text.endswith(f"Read the whole index in {memory / 'MEMORY.md'}.]")
    body = text.rsplit("\n\n[memd:", 1)[0]
    assert body.endswith(entry)  # cut after a whole line


def test_no_index_or_memory_off_says_nothing(
    git_repo: Path, isolated_home: Home
) -> None:
    done = hook("codex", git_repo)
    assert done.returncode == 0
    assert done.stdout == ""

    memory_of(git_repo)
    (isolated_home.claude / "settings.json").write_text('{"autoMemoryEnabled": false}')
    (memory_of(git_repo) / "MEMORY.md").write_text("- [x](x.md) — x\n")
    done = hook("gemini", git_repo)
    assert done.returncode == 0
    assert done.stdout == ""


def test_bad_payloads_never_fail_the_session(git_repo: Path) -> None:
    for payload in ("not json", "[]", '{"cwd": "relative/dir"}', '{"cwd": 3}'):
        done = subprocess.run(
            [MEMD, "hook", "session-start", "--agent", "codex"],
            input=payload,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            cwd=git_repo,
        )
        assert done.returncode == 0
        assert done.stdout == ""


def test_the_warm_path_reads_the_index_from_the_snapshot(git_repo: Path) -> None:
    """Served from `memd prompt`'s fresh snapshot, the context is the same text."""
    memory = memory_of(git_repo)
    (memory / "MEMORY.md").write_text(
        "- [A](a.md) — first\n\n## MEMORY.md\n\n- [B](b.md) — a heading like memd's\n"
    )
    cold = context(hook("codex", git_repo))
    done = subprocess.run(
        [MEMD, "prompt"], cwd=git_repo, capture_output=True, check=True, timeout=60
    )
    assert b"## MEMORY.md" in done.stdout

    warm = context(hook("codex", git_repo))

    assert warm == cold
    assert warm.endswith("- [B](b.md) — a heading like memd's")


def test_the_hooks_own_copies_of_memds_wording_match() -> None:
    from memd.agents.context import _INDEX_EMPTY, INDEX_HEADING
    from memd.claude_code.prompt import render_index
    from memd.claude_code.wording import INDEX_EMPTY

    assert _INDEX_EMPTY == INDEX_EMPTY
    lines, _ = render_index(None)
    assert "\n\n" + "\n".join(lines[:2]) + "\n" == INDEX_HEADING
