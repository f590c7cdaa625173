"""The real Gemini CLI, wired by `memd setup --agent gemini`, against a scripted model.

One `gemini -p` session in a trusted project whose Claude Code memory holds a
deploy fact: the SessionStart hook's `additionalContext` reaches the model
(in `<hook_context>`), `gemini mcp list` connects memd's server, the model's
`memory_recall` call reaches memd without an approval (memd is in
`mcp.allowed`) and its answer reaches the next request, while
`memory_write` stays behind Gemini's approval (`tools.confirmationRequired`:
in a non-interactive session it is refused) and writes nothing. The user's
settings.json keeps its comments; `memd setup --undo` gives it back byte for
byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memd import jsonedit
from tests.ci_skips import in_ci
from tests.conftest import Home
from tests.e2e.harness import MEMD
from tests.e2e.other_agents import (
    AgentRelease,
    Call,
    GeminiModel,
    install_agent_release,
    release_version,
    run_agent,
)
from tests.e2e.releases import ReleaseUnavailable
from tests.e2e.test_codex import WRITE, _claude_memory, _memd

SETTINGS = """{
  // my Gemini settings: setup keeps this comment
  "security": {"auth": {"selectedType": "gemini-api-key"}}, /* and this one */
  "ui": {"hideTips": true}
}
"""


@pytest.fixture(name="gemini", scope="module")
def _gemini() -> AgentRelease:
    version = release_version("gemini")
    try:
        return install_agent_release("gemini", version)
    except ReleaseUnavailable as error:
        if in_ci():
            pytest.fail(f"Gemini CLI {version} is not installable: {error}")
        pytest.skip(f"Gemini CLI {version} is not installable: {error}")


def test_gemini_session(
    gemini: AgentRelease, isolated_home: Home, git_repo: Path
) -> None:
    """Setup wires Gemini; a session gets Claude Code's index, recalls through memd."""
    memory = _claude_memory(git_repo)
    settings = isolated_home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    # The user trusts the project, as Gemini's first-run dialog records it.
    (settings.parent / "trustedFolders.json").write_text(
        json.dumps({str(git_repo): "TRUST_FOLDER"})
    )
    said = _memd("setup", "--agent", "gemini", "--no-service", cwd=git_repo)
    assert "Gemini CLI" in said
    assert "mcp.allowed" in said
    text = settings.read_text()
    assert "// my Gemini settings: setup keeps this comment" in text
    assert "/* and this one */" in text
    wired = jsonedit.load(text, comments=True)
    assert isinstance(wired, dict)
    assert "memd" in wired["mcp"]["allowed"]

    with GeminiModel(
        [
            Call("mcp_memd_memory_recall", {"query": "deploy"}),
            Call(
                "mcp_memd_memory_write",
                WRITE,
            ),
            Call(text="deploy with make ship"),
        ]
    ) as model:
        env = model.env(os.environ)
        listed = run_agent(gemini, ["mcp", "list"], env=env, cwd=git_repo)
        run = run_agent(gemini, ["-p", "how do I deploy?"], env=env, cwd=git_repo)
    shown = listed.stdout + listed.stderr
    assert "memd" in shown, shown[-2000:]
    assert "Connected" in shown, shown[-2000:]
    assert run.returncode == 0, run.stderr[-2000:]
    first = model.conversation[0]
    assert {"mcp_memd_memory_recall", "mcp_memd_memory_write"} <= set(
        model.memd_tools(first)
    )
    context = json.dumps(first.body["contents"])
    assert "<hook_context># Claude Code's memory of" in context
    assert "deploys go through `make ship`" in context
    responses = model.function_responses()
    assert "alpha-7" in responses[0], responses  # memd's answer reached the model
    assert "requires user confirmation" in responses[1]  # the write tool asks
    assert "staging-host.md" not in {p.name for p in memory.iterdir()}
    assert "deploy with make ship" in run.stdout

    undone = _memd("setup", "--undo", cwd=git_repo)
    assert "restored byte for byte" in undone
    assert settings.read_text() == SETTINGS


def test_gemini_hides_a_server_setup_did_not_allow(
    gemini: AgentRelease, isolated_home: Home, git_repo: Path
) -> None:
    """Why setup allows memd: without `mcp.allowed` (or trust), `gemini -p` offers
    none of a server's tools; in an untrusted folder `gemini mcp list` disables it."""
    settings = isolated_home.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    memd_path = MEMD[0]
    settings.write_text(
        json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "mcpServers": {"memd": {"command": memd_path, "args": ["mcp"]}},
            }
        )
    )
    with GeminiModel([Call(text="no tools")]) as model:
        env = model.env(os.environ)
        untrusted = run_agent(gemini, ["mcp", "list"], env=env, cwd=git_repo)
        (settings.parent / "trustedFolders.json").write_text(
            json.dumps({str(git_repo): "TRUST_FOLDER"})
        )
        run = run_agent(gemini, ["-p", "hello"], env=env, cwd=git_repo)
    shown = untrusted.stdout + untrusted.stderr
    assert "disabled because this folder is untrusted" in shown, shown[-2000:]
    assert run.returncode == 0, run.stderr[-2000:]
    assert model.conversation
    assert model.memd_tools(model.conversation[0]) == []
