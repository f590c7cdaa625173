"""After `memd hook install`, the real agent runs memd's hooks and the model hears them.

One agent session per release plays: a bad Write and a bad Bash heredoc
into memory and a bad Edit of an existing memory after its Read (each
blocked, with memd's reason naming the file), a clean Write into memory and
a Write outside it (neither sends anything).

The bad Edit makes `type:` invalid. An Edit that breaks the name (`name:
[edited`) is no test: 2.1.332 rewrites every memory file it writes, and its
rewrite turns the name into a slug (`name: edited`), so the file it leaves is
clean and memd rightly says nothing (docs/e2e.md). Neither release offers
MultiEdit.
SessionStart's context reaches the first request. 2.1.112 delivers hook text
as `<system-reminder>` blocks in user messages, 2.1.332 as role `system`
messages (REFERENCE.md "Running the real releases"); both are read here.
"""

from __future__ import annotations

import json

from tests.e2e.harness import Project
from tests.e2e.model_server import Request, text, tool_use

BLOCKED = "Your last tool call left `{}`"
GOOD = "---\nname: good\ndescription: a clean memory\ntype: user\n---\nFact.\n"
BROKEN = "---\nname: [unclosed\ndescription: x\n---\nFact.\n"


def _said(request: Request) -> str:
    """Everything the agent told the model in `request`, but tool inputs."""
    return (
        request.user_text()
        + "\n"
        + request.system_text()
        + "\n"
        + json.dumps(
            [b for b in request.blocks("user") if b.get("type") == "tool_result"]
        )
    )


def test_hooks_reach_the_model(project: Project) -> None:
    """Blocks name the broken file; clean and outside writes send nothing."""
    memory = project.memory_dir()
    memory.mkdir(parents=True, exist_ok=True)
    (memory / "MEMORY.md").write_text("- [Edited](edited.md) — to be broken\n")
    (memory / "edited.md").write_text(GOOD.replace("good", "edited"))
    (memory / "already-broken.md").write_text(BROKEN)  # SessionStart names it
    project.memd("hook", "install")
    heredoc = f"cat > {memory}/shell.md <<'EOF'\n{BROKEN}EOF\n"
    turns = [
        tool_use("Write", {"file_path": f"{memory}/written.md", "content": BROKEN}),
        tool_use("Read", {"file_path": f"{memory}/edited.md"}),
        tool_use(
            "Edit",
            {
                "file_path": f"{memory}/edited.md",
                "old_string": "type: user",
                "new_string": "type: usr",
            },
        ),
        tool_use("Bash", {"command": heredoc, "description": "write memory"}),
        tool_use("Write", {"file_path": f"{memory}/clean.md", "content": GOOD}),
        tool_use(
            "Write", {"file_path": f"{project.root}/outside.md", "content": BROKEN}
        ),
        text("done"),
    ]
    model, _ = project.run_agent(turns, args=["--dangerously-skip-permissions"])

    said = [_said(r) for r in model.conversation]
    assert len(said) == len(turns)
    assert "already-broken.md" in said[0]  # SessionStart's additionalContext
    # A hook's answer may reach the model a request late on a loaded machine,
    # so each block is looked for from its step on, and never before it.
    for step, name in ((1, "written.md"), (3, "edited.md"), (4, "shell.md")):
        marker = BLOCKED.format(name)
        assert marker not in said[step - 1], name
        assert marker in said[-1], (name, said[-1][-3000:])
    for name in ("clean.md", "outside.md"):
        assert BLOCKED.format(name) not in said[-1]
    # One block per bad step: nothing said twice, nothing for the clean ones.
    assert said[-1].count("Your last tool call") == 3, said[-1][-3000:]
    # The agent rewrote the clean file its own way (2.1.112 adds
    # originSessionId, 2.1.332 nests under metadata:); memd lints it clean.
    rewritten = (memory / "clean.md").read_text()
    assert "originSessionId" in rewritten
    project.memd("lint", str(memory / "clean.md"))
