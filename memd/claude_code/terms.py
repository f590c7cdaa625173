"""The names the agent gives things in a memory directory (REFERENCE.md §1-2).

One home for each: `tests/test_terms.py` fails on another definition of
them, or on a bare "MEMORY.md" in code. Standard library only, and nothing
imported, so the warm paths can use it.
"""

from __future__ import annotations

INDEX_NAME = "MEMORY.md"  # the index, at the top of every memory directory
MEMORY_TYPES = ("user", "feedback", "project", "reference")  # frontmatter `type`
TEAM_DIR = "team"  # team memory: a directory of its own, with its own MEMORY.md
