"""A MEMORY.md `memd fix` compacted loads whole into the real agent, hubs and all.

One run per release: 300 entries in sections and a table, with prose, are
compacted by the real `memd fix`; the agent then loads MEMORY.md with
nothing cut (no truncation warning, every line there), the lines linking
the hubs among them, and exactly as `memd prompt` shows it.
"""

from __future__ import annotations

from tests.e2e.harness import Project, agent_index, memd_index
from tests.e2e.model_server import text

TYPES = ("user", "feedback", "project", "reference")


def _write_long_index(project: Project) -> None:
    memory = project.memory_dir()
    memory.mkdir(parents=True, exist_ok=True)
    lines = ["# Memory", ""]
    for i in range(300):
        kind = TYPES[i % 4]
        relpath = f"{kind}_m{i}.md"
        (memory / relpath).write_text(
            f"---\nname: Memory {i}\ndescription: What memory {i} is about, exactly\n"
            f"type: {kind}\n---\nFact {i}.\n\n**Why:** a reason.\n"
            "**How to apply:** when it matters.\n"
        )
        if i % 100 == 0:
            lines += ["", f"## Area {i // 100}", ""]
            if i == 200:
                lines += ["| Memory | What |", "| --- | --- |"]
        if i >= 200:
            lines.append(f"| [Memory {i}]({relpath}) | what memory {i} is about |")
        else:
            lines.append(f"- [Memory {i}]({relpath}) — what memory {i} is about")
        if i % 50 == 0 and i < 200:
            lines += ["", f"A note the user kept after memory {i}.", ""]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n")


def test_compacted_index_loads_whole_with_its_hubs(project: Project) -> None:
    """After `memd fix`, the agent loads all of MEMORY.md, the hub lines included."""
    _write_long_index(project)
    memory = project.memory_dir()
    project.memd("fix", str(memory))
    index = (memory / "MEMORY.md").read_text()
    hub_lines = [line for line in index.split("\n") if "](index-" in line]

    model, _ = project.run_agent([text("ok")])

    loaded = agent_index(model)
    assert loaded is not None
    assert "WARNING: MEMORY.md is" not in loaded[1]
    assert index.strip() == loaded[1].strip()
    assert len(hub_lines) >= 4
    assert all(line in loaded[1] for line in hub_lines)
    assert memd_index(project) == loaded[1]
