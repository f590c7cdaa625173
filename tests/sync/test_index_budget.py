"""Personal sync merging two machines' indexes never pushes an entry past the cut.

Two real machines, one private bare remote, the real `memd sync`: each adds
110 entries; the union is compacted in the merge (`memd.gitsync.index_budget`),
so every machine ends with a MEMORY.md that loads whole and reaches every file.
"""

from __future__ import annotations

from memd.lint.compact import loads_whole, reachable
from tests.sync.conftest import Machines, synced, topic_text


class TestMergedIndexBudget:
    def test_union_past_the_cut_is_compacted(self, machines: Machines) -> None:
        """Both machines grew the index; the merged one loads whole, nothing lost."""
        linux, mac, _ = machines.all
        linux.write("MEMORY.md", "# Memory\n")
        for machine in machines.all:
            done = machine.memd("sync", "init", "--remote", machines.url)
            assert 0 == done.returncode, done.stdout + done.stderr
        added: set[str] = set()
        for machine, who in ((linux, "linux"), (mac, "mac")):
            lines = ["# Memory"]
            for n in range(110):
                relpath = f"{who}-{n}.md"
                machine.write(relpath, topic_text(f"{who} note {n}"))
                lines.append(f"- [{who} {n}]({relpath}) — a note from {who}")
                added.add(relpath)
            machine.write("MEMORY.md", "\n".join(lines) + "\n")
        synced(linux)

        synced(mac)
        synced(linux)

        for machine in (linux, mac):
            files = machine.files()
            assert loads_whole(files["MEMORY.md"])
            assert added <= reachable(files["MEMORY.md"], files)
