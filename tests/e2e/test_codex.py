"""The real Codex CLI, wired by `memd setup --agent codex`, against a scripted model.

One `codex exec` session in a project whose Claude Code memory holds a
deploy fact: the SessionStart hook gives Codex Claude Code's index (trusted
by setup as Codex's own `/hooks` would record it, so Codex runs it), memd's
server is listed and offered, the model's `memory_recall` call reaches memd
without an approval (memd's read tools are `readOnlyHint`) and its answer
reaches the next request, while `memory_write` stays behind Codex's
approval and writes nothing. The binary itself reads back what setup wrote:
`codex mcp list --json` lists memd, `codex app-server`'s `hooks/list` calls
memd's hook trusted, with the hash memd computed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.ci_skips import in_ci
from tests.conftest import Home
from tests.e2e.harness import MEMD
from tests.e2e.other_agents import (
    AgentRelease,
    Call,
    ResponsesModel,
    install_agent_release,
    release_version,
    run_agent,
)
from tests.e2e.releases import ReleaseUnavailable

INDEX = "- [Deploy](deploy.md) — deploys go through `make ship`\n"
DEPLOY = (
    "---\nname: deploy\ndescription: how this project deploys\ntype: project\n---\n"
    "Deploys go through `make ship` on host alpha-7.\n"
)
# A valid memory: only the agent's approval can stop memd from saving it.
WRITE = {
    "name": "staging-host",
    "description": "the staging host is beta-3",
    "type": "project",
    "body": "Staging runs on beta-3.\n\n**Why:** alpha-7 is production.\n\n"
    "**How to apply:** deploy to beta-3 first.",
}
# What the user had in config.toml before setup: setup keeps every byte.
USER_PART = "# my codex settings\n[tui]  # keep this comment\nnotifications = false\n"


@pytest.fixture(name="codex", scope="module")
def _codex() -> AgentRelease:
    version = release_version("codex")
    try:
        return install_agent_release("codex", version)
    except ReleaseUnavailable as error:
        if in_ci():
            pytest.fail(f"Codex CLI {version} is not installable: {error}")
        pytest.skip(f"Codex CLI {version} is not installable: {error}")


def _memd(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [*MEMD, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _claude_memory(repo: Path) -> Path:
    memory = Path(
        json.loads(_memd("paths", "--format", "json", cwd=repo))["memory_dir"]
    )
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "MEMORY.md").write_text(INDEX)
    (memory / "deploy.md").write_text(DEPLOY)
    return memory


def _hooks_list(
    codex: AgentRelease, env: dict[str, str], cwd: Path
) -> list[dict[str, object]]:
    """memd's hooks as `codex app-server` lists them (`hooks/list`)."""
    requests = (
        {
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "e2e", "version": "1"}},
        },
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    )
    with subprocess.Popen(
        [*codex.argv(), "app-server"],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as server:
        assert server.stdin is not None
        assert server.stdout is not None
        try:
            for message in requests:
                server.stdin.write(json.dumps(message) + "\n")
                server.stdin.flush()
            for line in server.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    return [
                        hook
                        for entry in answer["result"]["data"]
                        for hook in entry["hooks"]
                        if "memd" in str(hook.get("command"))
                    ]
        finally:
            server.kill()
    raise AssertionError("codex app-server ended without answering hooks/list")


@pytest.mark.parametrize(
    "slug",
    [
        "e2e-model",  # unknown to Codex: its MCP tools are offered directly
        "gpt-5.5",  # a current model: MCP tools sit behind `tool_search`
    ],
)
def test_codex_session(
    codex: AgentRelease,
    isolated_home: Home,
    git_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    slug: str,
) -> None:
    """Setup wires Codex; a session gets Claude Code's index, recalls through memd."""
    monkeypatch.setenv("CODEX_HOME", str(isolated_home.home / ".codex"))
    env = dict(os.environ)
    memory = _claude_memory(git_repo)
    searches = slug != "e2e-model"
    search = [Call("tool_search", {"query": "memd"})] if searches else []
    with ResponsesModel(
        [
            *search,
            Call("memory_recall", {"query": "deploy"}),
            Call("memory_write", WRITE),
            Call(text="deploy with make ship"),
        ]
    ) as model:
        config = isolated_home.home / ".codex" / "config.toml"
        config.parent.mkdir()
        config.write_text(model.codex_config(slug) + "\n" + USER_PART)
        before = config.read_text()
        said = _memd("setup", "--agent", "codex", "--no-service", cwd=git_repo)
        assert "Codex CLI" in said
        assert "read-only" in said
        after = config.read_text()
        assert after.startswith(before), "setup changed the user's own bytes"

        listed = run_agent(codex, ["mcp", "list", "--json"], env=env, cwd=git_repo)
        assert listed.returncode == 0, listed.stderr
        servers = {s["name"]: s for s in json.loads(listed.stdout)}
        assert servers["memd"]["enabled"]
        assert servers["memd"]["transport"]["args"] == ["mcp"]

        (hook,) = _hooks_list(codex, env, git_repo)
        assert hook["trustStatus"] == "trusted", hook
        assert hook["enabled"] is True

        run = run_agent(
            codex,
            ["exec", "--skip-git-repo-check", "how do I deploy?"],
            env=env,
            cwd=git_repo,
        )
    assert run.returncode == 0, run.stderr[-2000:]
    first = model.conversation[0]
    if searches:  # Codex's tool_search found memd's tools (once its server was up)
        found = [
            item
            for item in model.conversation[-1].body["input"]
            if item.get("type") == "tool_search_output"
        ]
        assert "memory_recall" in json.dumps(found[-1]["tools"]), found
        assert "memory_recall" not in json.dumps(model.conversation[0].body["tools"])
    else:
        offered = next(r for r in model.conversation if model.memd_tools(r))
        assert {"mcp__memd.memory_recall", "mcp__memd.memory_write"} <= set(
            model.memd_tools(offered)
        )
    context = json.dumps(first.body["input"])
    assert "Claude Code's memory of" in context
    assert "deploys go through `make ship`" in context
    recalled, refused = model.outputs()[-2:]
    assert "requires approval" in refused  # the write tool asks; exec never approves
    assert "alpha-7" in recalled, recalled  # memd's answer reached the model
    assert "staging-host.md" not in {p.name for p in memory.iterdir()}, refused
    assert "deploy with make ship" in run.stdout

    undone = _memd("setup", "--undo", cwd=git_repo)
    assert "restored byte for byte" in undone
    assert config.read_text() == before
